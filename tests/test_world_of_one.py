"""A world of one process that a launch command or the code shows: torchrun (or
torch.distributed.launch) with no count of its own starts one process, and a script that leaves
itself one visible GPU spawns one process per visible GPU."""

from __future__ import annotations

import pytest

from ddplint.model import project
from ddplint.model.records import LaunchCommand, Place

_TRAIN = """\
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def keep(state, path):
    torch.save(state, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--resume", default=None)
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    net = torch.nn.Linear(4, 4).cuda()
    if args.resume:
        saved = torch.load(args.resume)
        net.load_state_dict(saved["weights"])
    model = DistributedDataParallel(net, device_ids=[args.local_rank])
    for step in range(10):
        model(torch.randn(2, 4).cuda()).sum().backward()
        keep({"weights": net.state_dict(), "step": step}, "last.pt")


if __name__ == "__main__":
    main()
"""


def _command(text: str) -> LaunchCommand:
    launcher = "torchrun" if "torchrun" in text or "distributed.run" in text else "torch.distributed.launch"
    return LaunchCommand(Place("run.sh", 1), text, launcher)


@pytest.mark.parametrize(
    "text, one",
    [
        ("torchrun --master_port=29511 train.py --lr 0.1", True),
        ("torchrun --standalone --nnodes=1 train.py", True),
        ("python -m torch.distributed.launch --use_env train.py \\\n    --epochs 3", True),
        ("python -m torch.distributed.run -m trainer.main", True),
        ("CUDA_VISIBLE_DEVICES=0,1 torchrun train.py $EXTRA", True),  # a variable of the script's, not the launcher's
        ("torchrun --nproc_per_node 2 train.py", False),
        ("torchrun --nproc-per-node=gpu train.py", False),
        ("torchrun --nnodes 2 train.py", False),
        ("torchrun --nnodes=1:4 train.py", False),
        ("torchrun $DIST_ARGS train.py", False),  # the variable may hold a count
        ('torchrun "$@" train.py', False),
        ("torchrun --master_port $PORT train.py", False),
        ("PET_NPROC_PER_NODE=4 torchrun train.py", False),  # torchrun reads its options from PET_* variables
        ("srun torchrun train.py", False),  # SLURM may start several torchruns
        ("torchrun $SCRIPT", False),  # no script written: the options are not known to end
    ],
)
def test_a_torch_launcher_that_names_no_count_starts_one_process(text, one):
    assert project._one_process(_command(text)) is one


def _findings(run, *codes: str) -> list[tuple[str, str]]:
    out = run("check", "--no-cache", "--select", ",".join(codes), ".").stdout
    return sorted((line.split(":")[0], line.split()[1]) for line in out.splitlines() if ": DDP" in line)


def test_a_script_torchrun_starts_with_its_default_count_runs_as_one_process(tmp_path, run):
    """train.sh runs `torchrun --master_port=29511 train.py`: torch's default of one process per
    node, on one node. Its save on every rank (DDP014), its --local_rank default (DDP012) and its
    load without map_location (DDP004) harm no second rank; with `--nproc_per_node 2` they do."""
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(_TRAIN)
    (tmp_path / "train.sh").write_text("torchrun --master_port=29511 train.py \\\n    --resume last.pt\n")
    assert project.build(str(tmp_path)).view(str(tmp_path / "train.py")).single_process
    assert _findings(run, "DDP004", "DDP012", "DDP014") == []
    (tmp_path / "train.sh").write_text("torchrun --nproc_per_node 2 --master_port=29511 train.py --resume last.pt\n")
    assert _findings(run, "DDP004", "DDP012", "DDP014") == [("train.py", "DDP004"), ("train.py", "DDP012"), ("train.py", "DDP014")]
    # torch.distributed.launch without --use_env appends --local-rank=0, which this parser rejects in one process too
    (tmp_path / "train.sh").write_text("python -m torch.distributed.launch train.py\n")
    assert _findings(run, "DDP012") == [("train.py", "DDP012")]
    (tmp_path / "train.sh").write_text("python -m torch.distributed.launch --use_env train.py\n")
    assert _findings(run, "DDP012") == []
    # another command runs it with several processes: not one
    (tmp_path / "train.sh").write_text("torchrun train.py\ntorchrun --nnodes 2 train.py\n")
    assert not project.build(str(tmp_path)).view(str(tmp_path / "train.py")).single_process


_SPAWNING = """\
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

{pin}
parser = argparse.ArgumentParser()
parser.add_argument("--distributed", action="store_true")
parser.add_argument("--resume", default=None)


def worker(gpu, args):
    if args.distributed:
        dist.init_process_group("nccl", rank=gpu, world_size=args.gpus)
    torch.cuda.set_device(gpu)
    net = torch.nn.Linear(4, 4).cuda(gpu)
    if args.resume:
        net.load_state_dict(torch.load(args.resume)["weights"])
    model = DistributedDataParallel(net, device_ids=[gpu]) if args.distributed else net
    model(torch.randn(2, 4).cuda(gpu)).sum().backward()
    if gpu == 0:
        torch.save({{"weights": net.state_dict()}}, "best.pt")


def main():
    args = parser.parse_args()
    if args.distributed:
        args.gpus = {count}
        mp.spawn(worker, nprocs=args.gpus, args=(args,))
    else:
        worker(0, args)


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(
    "pin, count, silent",
    [
        ('os.environ["CUDA_VISIBLE_DEVICES"] = "3"', "torch.cuda.device_count()", True),
        ("os.environ['CUDA_VISIBLE_DEVICES'] = '0'", "torch.cuda.device_count()", True),
        ("", "torch.cuda.device_count()", False),  # every GPU of the machine: one process each
        ('os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"', "torch.cuda.device_count()", False),  # two GPUs
        ('os.environ["CUDA_VISIBLE_DEVICES"] = "3"', "4", False),  # four processes, whatever is visible
        ('os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("GPU", "3")', "torch.cuda.device_count()", False),
        ("", "1", True),  # a literal one process, whatever is visible: a world of one
        ("", "2", False),
    ],
)
def test_a_script_that_leaves_itself_one_gpu_spawns_one_process_per_visible_gpu(tmp_path, run, pin, count, silent):
    """main.py sets CUDA_VISIBLE_DEVICES to one GPU at import, then spawns one process per GPU
    torch.cuda.device_count() sees: one. Its load without map_location lands on cuda:0, its
    own and only device (DDP004 silent); with no pin, two GPUs visible, or a count of its own,
    several ranks load onto the saving device. A spawn of a literal one process needs no pin:
    one process runs the worker, whatever GPUs are visible."""
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "main.py").write_text(_SPAWNING.format(pin=pin, count=count))
    assert project.build(str(tmp_path)).view(str(tmp_path / "main.py")).single_process is silent
    assert _findings(run, "DDP004") == ([] if silent else [("main.py", "DDP004")])


def test_a_script_that_spawns_nothing_is_no_spawn_of_one(tmp_path):
    """`spawns_one` reads the spawns a script makes: one that makes none is started by something
    else (a launcher whose command the project keeps in a text file), which may start several."""
    (tmp_path / "pyproject.toml").write_text("")
    body = (
        "import argparse\nimport torch.distributed as dist\nimport torch.multiprocessing as mp\n\n\n"
        "def main(rank=0):\n    dist.init_process_group('nccl', rank=rank, world_size=2)\n\n\n"
        "if __name__ == '__main__':\n    {start}\n"
    )
    cases = (
        ("main()", False), ("mp.spawn(main, nprocs=1)", True), ("mp.spawn(main, nprocs=2)", False),
        ("main()  # mp.spawn(main, nprocs=world_size)", False),  # a spawn in a comment makes none
    )
    for start, one in cases:
        (tmp_path / "train.py").write_text(body.format(start=start))
        assert project.build(str(tmp_path)).spawns_one("train") is one, start


_UNCALLED_SPAWN = """\
import argparse

import torch
import torch.multiprocessing as mp
import tracker


def log_samples(model, folder: str = "{default}"):
    torch.save(model.state_dict(), f"{{folder}}/last.pt")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=40)
    args = parser.parse_args()
    {bind} = tracker.start()
    torch.manual_seed(args.seed)
    model = torch.nn.Linear(4, 4)
    for x in range(10):
        loss = model(x + torch.randn(4)).sum()
        loss.backward()
    log_samples(model, {bind}.name)


def run(main_fn, world_size):
    mp.spawn(main_fn, args=(world_size,), nprocs=world_size)


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(
    "bind, default, one",
    [
        ("run", "run", True),  # `run` is main's own local, "run" a default value: nothing calls run()
        ("session", "samples", True),
        ("run", "run\", spawner=run", False),  # a default that is the function itself names it
    ],
)
def test_a_spawn_in_a_function_that_only_a_local_of_its_name_or_a_default_string_says_starts_nothing(tmp_path, run, bind, default, one):
    """A script that `python train.py` runs spawns only in `run()`, which nothing calls: `run =
    tracker.start()` in main binds main's own `run` (Python's scopes: a name a function assigns
    is local to it), and a parameter default "run" is a value handed to that parameter, no
    lookup of a function by its name. The one process's shared seed correlates nothing (DDP027)."""
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(_UNCALLED_SPAWN.format(bind=bind, default=default))
    (tmp_path / "run.sh").write_text("python train.py --seed 40\n")
    assert project.build(str(tmp_path)).view(str(tmp_path / "train.py")).single_process is one
    if one:
        assert _findings(run, "DDP027") == []


_SPAWNED_BY_OPTIONS = """\
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(4, 4)

    def encode(self, x):
        return self.body(x)


def worker(gpu, args):
    dist.init_process_group("nccl", rank=args.node_rank * args.gpus + gpu, world_size=args.world_size)
    model = DistributedDataParallel(Net().cuda(gpu), device_ids=[gpu])
    for step in range(10):
        loss = model.module.encode(torch.randn(2, 4).cuda(gpu)).sum()
        loss.backward()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--node_rank", type=int, default=0)
    parser.add_argument("--gpu_ids", type=str, default="0")
    parser.add_argument("--ddp", action="store_true")
    args = parser.parse_args()
    os.environ["MASTER_ADDR"] = "localhost"
    if args.ddp:
        args.world_size = {count}
    else:
        args.world_size = 1
    mp.spawn(worker, nprocs={spawned}, args=(args,))
"""


@pytest.mark.parametrize(
    "count, runs, one, spawned",
    [
        ("args.nodes * args.gpus", "python -u train.py --gpus 1 --ddp\n", True, "args.world_size"),
        ("args.nodes * args.gpus", "python train.py --ddp\n", True, "args.world_size"),  # both left at their default 1
        ("args.nodes * args.gpus", "", False, "args.world_size"),  # no run shown: the count's options are there to be passed
        ("args.nodes * args.gpus", "python train.py --gpus 2 --ddp\n", False, "args.world_size"),
        ("args.nodes * args.gpus", "python train.py --nodes=2 --ddp\n", False, "args.world_size"),
        ("args.nodes * args.gpus", "python train.py --gpus 1 --ddp\npython train.py --gpus 4 --ddp\n", False, "args.world_size"),
        ("args.nodes * args.gpus", "python train.py --gpus $NGPU --ddp\n", False, "args.world_size"),  # not shown
        ("args.nodes * args.gpus", "python train.py --gpus --ddp\n", False, "args.world_size"),
        ("len(args.gpu_ids.split(','))", "python train.py --gpu_ids 3 --ddp\n", True, "args.world_size"),
        ("len(args.gpu_ids.split(','))", "python train.py --gpu_ids 0,1 --ddp\n", False, "args.world_size"),
        ("args.gpus", "python train.py --ddp\n", True, "args.world_size"),
        ("args.gpus + 1", "python train.py --ddp\n", False, "args.world_size"),
        ("torch.cuda.device_count()", "python train.py --ddp\n", False, "args.world_size"),
        # one process on each of four machines, all in one group of four
        ("args.nodes * args.gpus", "python train.py --nodes 4 --ddp\n", False, "args.gpus"),
        ("args.nodes * args.gpus", "python train.py --ddp\n", True, "args.gpus"),
    ],
)
def test_a_spawn_whose_count_every_documented_run_makes_one_starts_one_process(tmp_path, run, count, runs, one, spawned):
    """train.py spawns `args.world_size` processes, computed from its options (`args.nodes *
    args.gpus`, one per listed GPU id): where every documented run, by what it passes or the
    options' defaults, makes that one, the spawn starts one process, a world of one, and the
    training step through model.module loses no all-reduce (DDP019 silent). A run that makes it
    two or more, or passes a value not shown (a shell variable), keeps the world unknown; so
    does a script with no run shown, and one spawning one process on each of several machines
    (the size init_process_group is told, `args.nodes * args.gpus`, is four)."""
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(_SPAWNED_BY_OPTIONS.format(count=count, spawned=spawned))
    if runs:
        (tmp_path / "train.sh").write_text(runs)
    assert project.build(str(tmp_path)).spawns_one("train") is one
    assert _findings(run, "DDP019") == ([] if one else [("train.py", "DDP019")])


_UTILS_WITH_LAUNCHER_COMMENT = """\
import os

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    # launched with torch.distributed.launch
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.gpu = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(args.gpu)
"""


@pytest.mark.parametrize("count, one", [("1", True), ("2", False)])
def test_a_launcher_named_in_a_comment_starts_nothing(tmp_path, run, count, one):
    """eval.sh launches eval.py with `torch.distributed.launch --nproc_per_node=1`; the helper it
    imports names that launcher only in a comment (`# launched with torch.distributed.launch`),
    which starts no process. The world is one rank: its load without map_location lands on the
    one rank's own GPU (DDP004 silent). Two processes per node pile onto the saving GPU."""
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(_TRAIN)
    (tmp_path / "utils.py").write_text(_UTILS_WITH_LAUNCHER_COMMENT)
    (tmp_path / "eval.py").write_text(
        "import argparse\n\nimport torch\nfrom torch.nn.parallel import DistributedDataParallel\n\nimport utils\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--local_rank', type=int, default=0)\n"
        "    parser.add_argument('--weights', default='last.pt')\n    args = parser.parse_args()\n"
        "    utils.init_distributed_mode(args)\n    net = torch.nn.Linear(4, 4).cuda()\n"
        "    net.load_state_dict(torch.load(args.weights)['weights'])\n"
        "    model = DistributedDataParallel(net, device_ids=[args.gpu])\n    print(model(torch.randn(2, 4).cuda()))\n\n\n"
        "if __name__ == '__main__':\n    main()\n"
    )
    (tmp_path / "train.sh").write_text("torchrun --nproc_per_node 2 train.py\n")
    (tmp_path / "eval.sh").write_text(f"python -m torch.distributed.launch --nproc_per_node={count} eval.py --weights last.pt\n")
    assert project.build(str(tmp_path)).view(str(tmp_path / "eval.py")).one_rank is one
    assert ("eval.py", "DDP004") not in _findings(run, "DDP004") if one else ("eval.py", "DDP004") in _findings(run, "DDP004")


@pytest.mark.parametrize(
    "launch, flagged",
    [
        ("python -W ignore -m torch.distributed.launch --nproc_per_node=1 --master_port=$PORT --use_env train.py --resume last.pt\n", []),
        ("torchrun --nnodes 1 --nproc_per_node 1 train.py\ntorchrun --nproc_per_node=1 train.py --resume last.pt\n", []),
        ("torchrun --nproc_per_node 2 train.py --resume last.pt\n", [("train.py", "DDP014")]),
        ("torchrun --nproc_per_node=1 train.py\ntorchrun --nproc_per_node=4 train.py\n", [("train.py", "DDP014")]),
    ],
)
def test_a_save_on_every_rank_of_a_script_launched_only_as_one_process_has_no_second_writer(tmp_path, run, launch, flagged):
    """Every command launches train.py with `--nproc_per_node 1` (the single-card copy of a DDP
    trainer): one process writes last.pt, no rank writes beside it (DDP014 needs a second rank,
    as DDP004 does); one command with two processes or more is a second writer."""
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(_TRAIN)
    (tmp_path / "train.sh").write_text(launch)
    assert _findings(run, "DDP014") == flagged
