"""Code under an option branch that no documented run takes (ProjectView.runs_reaching): the
`if`s and conditional expressions around a line whose tests are made of the script's options,
read on each documented run of the scripts that run it, and, for a line in a function, every
call of that function in the project. An option a run leaves out takes its default, save one
whose branch resumes a training. Unknown (no documented run, a run nobody documents, an option a
document tells the user to set, a value a command writes that is no literal) stays reported."""

import pytest

from ddplint.model import project

OPTS = """import argparse


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loader", type=str, default=None)
    parser.add_argument("--fsdp", action="store_true")
    parser.add_argument("--dataset", default="cifar")
    parser.add_argument("--full", action="store_true", default=True)
    return parser.parse_args()
"""

HELPER = """import torch
import torch.distributed as dist


def torch_state(model, path):
    model.load_state_dict(torch.load(path))
"""

TRAIN = """import torch
import torch.distributed as dist

import data
import opts


def main():
    args = opts.parse_args()
    dist.init_process_group("nccl")
    if args.dataset == "imagenet":
        if args.loader is None:
            state = data.torch_state(None, "x.pt")
    weights = None if args.fsdp else torch.load("w.pt")
    shards = torch.load("s_ckpt.pt") if args.fsdp else None
    return state, weights, shards


if __name__ == "__main__":
    main()
"""

HELPER_LOAD, ELSE_LOAD, TAKEN_LOAD = "data.py:6:", "train.py:14:", "train.py:15:"


def _write(tmp_path, runs, readme="", train=TRAIN, extra=None):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "opts.py").write_text(OPTS)
    (tmp_path / "data.py").write_text(HELPER)
    (tmp_path / "train.py").write_text(train)
    (tmp_path / "run.sh").write_text("".join(f"{command}\n" for command in runs))
    (tmp_path / "README.md").write_text(readme)
    for name, text in (extra or {}).items():
        (tmp_path / name).write_text(text)


def test_a_branch_every_documented_run_leaves_is_not_reported(tmp_path, run):
    """SimKD builds its torch loaders (a padding DistributedSampler) only without `--dali`, and
    every multi-process ImageNet run passes `--dali gpu`; open_lm saves `cpu_state if args.fsdp
    else model.state_dict()` with `--fsdp` on every launch. The way not taken is not reported,
    in the line's own function (a conditional expression) and through the only call of a helper
    of another module; the way taken is."""
    _write(tmp_path, ["torchrun --nproc_per_node=4 train.py --dataset imagenet --loader dali --fsdp"])
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
    assert HELPER_LOAD not in output and ELSE_LOAD not in output, output
    assert TAKEN_LOAD in output, output
    view = project.build(str(tmp_path)).module_view("train")
    assert view.runs_reaching((("main", False, False),), 15, 14) and view.runs_reaching((("main", False, False),), 14, 37) == []


def test_a_run_that_leaves_an_option_out_takes_its_default(tmp_path, run):
    """A documented run that leaves out an option takes its default, whether another documented
    run of the script passes it (SimKD's CIFAR runs leave `--dataset` at cifar100) or none does
    (deit's `--dist_eval`, which no README command passes): the ImageNet branch is not taken."""
    runs = ["torchrun --nproc_per_node=4 train.py --dataset imagenet --loader dali --fsdp", "torchrun --nproc_per_node=4 train.py --fsdp"]
    _write(tmp_path, runs)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
    assert HELPER_LOAD not in output and ELSE_LOAD not in output, output
    _write(tmp_path, ["torchrun --nproc_per_node=4 train.py --fsdp"])
    output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
    assert HELPER_LOAD not in output and ELSE_LOAD not in output, output


GATED = """import argparse

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler


def resume(model, optimizer, path):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])


@torch.no_grad()
def evaluate(model, loader):
    hits = torch.zeros(2, device="cuda")
    for x, y in loader:
        hits += torch.stack([(model(x).argmax(1) == y).sum(), torch.tensor(len(y))])
    dist.all_reduce(hits)
    return hits[0] / hits[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dist_eval", action="store_true")
    parser.add_argument("--finetune", default="")
    parser.add_argument("--resume", default="")
    parser.add_argument("--auto_resume", default="")
    parser.add_argument("--last", default="")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank())
    model = torch.nn.Linear(2, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.dist_eval:
        sampler_val = DistributedSampler(args, shuffle=False)
    else:
        sampler_val = SequentialSampler(args)
    if args.finetune:
        model.load_state_dict(torch.load(args.finetune))
    if args.resume:
        checkpoint = torch.load(args.resume)
    model = torch.nn.parallel.DistributedDataParallel(model)
    if args.resume:
        model.module.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    if args.auto_resume:
        resume(model, optimizer, args.auto_resume)
    start = 0
    if args.last:
        checkpoint = torch.load(args.last)
        model.module.load_state_dict(checkpoint["model"])
        start = checkpoint["epoch"] + 1
    for epoch in range(start, 10):
        print(evaluate(model, DataLoader(args, sampler=sampler_val)))


if __name__ == "__main__":
    main()
"""

SAMPLER, FINETUNE, RESUME, HELPER_RESUME, LAST = "train.py:36:", "train.py:40:", "train.py:42:", "train.py:9:", "train.py:51:"


@pytest.mark.parametrize(
    "runs, readme, reported",
    [
        # no documented run passes `--dist_eval` or `--finetune`: their branches run in none;
        # the resume branches (a load that restores the model and its optimizer) run after any crash
        (["torchrun --nproc_per_node=4 train.py"], "", (RESUME, HELPER_RESUME, LAST)),
        # a run that passes the option takes its branch
        (["torchrun --nproc_per_node=4 train.py --dist_eval --finetune w.pt"], "", (SAMPLER, FINETUNE, RESUME, HELPER_RESUME, LAST)),
        # the documents tell the user to pass it
        (["torchrun --nproc_per_node=4 train.py"], "Add `--dist_eval` to evaluate on every GPU.\n", (SAMPLER, RESUME, HELPER_RESUME, LAST)),
        # no documented run at all: unknown, reported
        ([], "", (SAMPLER, FINETUNE, RESUME, HELPER_RESUME, LAST)),
    ],
)
def test_an_option_no_documented_run_passes_takes_its_default_unless_its_branch_resumes(tmp_path, run, runs, readme, reported):
    """deit builds its padded evaluation sampler only under `if args.dist_eval:` (a `store_true`
    flag), and loads fine-tuning weights only under `if args.finetune:`: where no documented run
    passes the option (no README command, no shipped script) and no document tells the user to
    set it, every documented run takes its default, and the code only the other value reaches is
    not reported (DDP022, DDP004). A branch that resumes a training, restoring the model and its
    optimizer from the checkpoint the option names (inline, also where DMGNet loads under one `if
    config.resume:` and restores under another, or through a helper it calls), or the model and
    the epoch its loop starts from (PointTAD's `args.start_epoch = checkpoint['epoch']`), runs in
    every training that was stopped and started again: reported though no command passes it."""
    _write(tmp_path, runs, readme, train=GATED)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP004,DDP022", ".").stdout
    found = tuple(where for where in (SAMPLER, FINETUNE, RESUME, HELPER_RESUME, LAST) if where in output)
    assert found == reported, output


def test_unknown_runs_stay_reported(tmp_path, run):
    """A run that takes the branch, a value the command does not write literally, a document
    telling the user to set the option, a script nobody documents that calls the helper, a
    call of the helper outside the branch, or no documented run at all: reported."""
    base = "torchrun --nproc_per_node=4 train.py --dataset imagenet --loader dali --fsdp"
    unguarded = TRAIN.replace("    weights =", '    data.torch_state(None, "y.pt")\n    weights =')
    script = "import data\n\nif __name__ == '__main__':\n    data.torch_state(None, 'z.pt')\n"
    cases = (
        ([base, "torchrun --nproc_per_node=4 train.py --dataset imagenet --fsdp"], "", TRAIN, None),
        (["torchrun --nproc_per_node=4 train.py --dataset imagenet --loader $LOADER --fsdp"], "", TRAIN, None),
        ([base], "Pass `--loader torch` to read the images with torch.\n", TRAIN, None),
        ([base], "", TRAIN, {"export.py": script}),
        ([base], "", unguarded, None),
        ([], "", TRAIN, None),
    )
    run.cwd = tmp_path
    for runs, readme, train, extra in cases:
        _write(tmp_path, runs, readme, train, extra)
        output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
        assert HELPER_LOAD in output, (runs, readme, extra, output)
        if extra:
            (tmp_path / "export.py").unlink()


def test_prose_and_tests_are_no_runs(tmp_path, run):
    """open_lm's README says "the main training script, `open_lm/main.py`. Distributed
    computation is handled via `torchrun`": no code span runs the script, so the line is no
    run of it; and its tests set `args.fsdp = False` for their own runs, which no documented
    run of the script makes."""
    prose = "The training script, `train.py`, runs under `torchrun` with a variety of options.\n"
    test = "import train\n\n\ndef test_main(args):\n    args.fsdp = False\n    train.main()\n"
    _write(tmp_path, ["torchrun --nproc_per_node=4 train.py --dataset imagenet --loader dali --fsdp"], prose, extra={"test_train.py": test})
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
    assert ELSE_LOAD not in output and TAKEN_LOAD in output, output
    assert [command.place.line for command in project.build(str(tmp_path)).launch_commands] == [1]


def test_options_a_mapping_sets_as_defaults_are_not_shown(tmp_path, run):
    """ml-4m reads its YAML config into `parser.set_defaults(**cfg)`, and every documented run
    passes `--config`: any option's default may come from the file (`num_eval_metrics_samples:
    50000`), so a run that leaves the option out does not show its value, and the branches it
    decides stay reported."""
    configured = GATED.replace("    args = parser.parse_args()", "    parser.set_defaults(**json.load(open(\"defaults.json\")))\n    args = parser.parse_args()")
    _write(tmp_path, ["torchrun --nproc_per_node=4 train.py"], train="import json\n" + configured)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP004,DDP022", ".").stdout
    assert "train.py:38:" in output and "train.py:42:" in output, output


SPAWNING = """import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import opts


def worker(rank, args):
    dist.init_process_group("nccl", rank=rank, world_size=2)
    if args.full:
        return torch.load("w.pt")


def main():
    args = opts.parse_args()
    if args.fsdp:
        mp.spawn(worker, nprocs=2, args=(args,))
    else:
        worker(0, args)


if __name__ == "__main__":
    main()
"""


def test_a_function_handed_on_runs_where_it_is_handed_and_a_flag_passed_stores_its_action(tmp_path, run):
    """MoPro's `main_worker` is called directly only in the `else:` of `if
    args.multiprocessing_distributed:`, whose body hands it to `mp.spawn`: every documented run
    passes the flag, and the worker still runs (the spawn calls it). UVC's `--uvc_train` is a
    `store_true` flag with `default=True`: a run that passes it takes `if args.uvc_train:`."""
    _write(tmp_path, ["python train.py --fsdp --full"], train=SPAWNING)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
    assert "train.py:11:" in output, output


def test_a_value_the_documents_name_but_no_run_passes_leaves_the_branch_undecided(tmp_path, run):
    """hyperfuture's scripts train on FineGym and Kinetics (`--dataset finegym`), and its README
    says it trains on four datasets, Hollywood2 among them: `if args.dataset == 'hollywood2':`
    is a branch users are told of, so it stays reported. Where no document names the value,
    the runs decide it."""
    runs = ["torchrun --nproc_per_node=4 train.py --dataset cifar --fsdp"]
    _write(tmp_path, runs, "We train on two datasets, CIFAR and ImageNet.\n")
    run.cwd = tmp_path
    assert HELPER_LOAD in run("check", "--no-cache", "--select", "DDP004", ".").stdout
    _write(tmp_path, runs, "We train on CIFAR.\n")
    assert HELPER_LOAD not in run("check", "--no-cache", "--select", "DDP004", ".").stdout


PACK = """import sys

from torch.utils.data import DataLoader


def convert(folder):
    loader = DataLoader(folder, num_workers=4, collate_fn=lambda batch: batch)
    return list(loader)


if __name__ == "__main__":
    convert(sys.argv[1])
    rows = DataLoader(sys.argv[2], num_workers=2, collate_fn=lambda batch: batch)
"""

DDP_TRAIN = """import torch.distributed as dist


def main():
    dist.init_process_group("nccl")


if __name__ == "__main__":
    main()
"""

PACK_IN_FUNCTION, PACK_IN_BLOCK = "pack.py:7:", "pack.py:13:"


def test_code_only_a_one_process_tools_main_block_reaches_needs_a_documented_run_of_it(tmp_path, run):
    """RepVGG's folder2lmdb builds a DataLoader with a lambda collate_fn for its workers, and
    only its file's `if __name__ == "__main__":` block calls it: a conversion tool of one
    process (it names nothing distributed), which no document runs, in a project whose
    documents run the DDP trainer. Code inside that block runs only when the module is the
    script; no documented run, and no run of more than one process, reaches it. A documented
    run of the tool, a project that documents no run, and a tool that names distribution (a
    trainer nobody documents) leave it reported."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(DDP_TRAIN)
    run.cwd = tmp_path
    cases = (
        (["torchrun --nproc_per_node=4 train.py"], PACK, False),
        (["torchrun --nproc_per_node=4 train.py", "python pack.py images rows"], PACK, True),
        ([], PACK, True),
        (["torchrun --nproc_per_node=4 train.py"], "import torch.distributed as dist\n" + PACK, True),
    )
    for runs, pack, reported in cases:
        (tmp_path / "run.sh").write_text("".join(f"{command}\n" for command in runs))
        (tmp_path / "pack.py").write_text(pack)
        output = run("check", "--no-cache", "--select", "DDP016", ".").stdout
        line = 1 if pack != PACK else 0
        function, block = f"pack.py:{7 + line}:", f"pack.py:{13 + line}:"
        assert (function in output, block in output) == (reported, reported), (runs, pack[:40], output)


TOOL = """from torch.utils.data import DataLoader

import opts


def helper():
    return 1


if __name__ == "__main__":
    args = opts.parse_args()
    if args.dataset == "imagenet":
        loader = DataLoader(args.dataset, num_workers=4, collate_fn=lambda batch: batch)
"""


def test_another_scripts_run_never_reaches_a_main_block_of_a_module_it_imports(tmp_path, run):
    """A documented run of a script that imports a module never runs that module's `__main__`
    block: only the module's own runs decide which of the block's branches are taken."""
    _write(
        tmp_path,
        ["torchrun --nproc_per_node=4 train.py --dataset imagenet", "python tool.py --dataset cifar"],
        train=TRAIN.replace("import opts\n", "import opts\nimport tool\n"),
        extra={"tool.py": TOOL},
    )
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP016", ".").stdout
    assert "tool.py:13:" not in output, output
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node=4 train.py --dataset imagenet\npython tool.py --dataset imagenet\n")
    output = run("check", "--no-cache", "--select", "DDP016", ".").stdout
    assert "tool.py:13:" in output, output


DEFAULTS = """from yacs.config import CfgNode as CN

_C = CN()
_C.SOLVER = CN()
_C.SOLVER.ACCUM = 1
_C.DATA = CN()
_C.DATA.NAME = "coco"


def setup(args):
    cfg = _C.clone()
    cfg.defrost()
    if args.opts:
        cfg.merge_from_list(args.opts)
    if args.accum:
        cfg.SOLVER.ACCUM = args.accum
    cfg.freeze()
    return cfg
"""

YACS_TRAIN = """import argparse

import torch
import torch.distributed as dist

from defaults import setup


def train(cfg):
    if cfg.SOLVER.ACCUM > 1:
        torch.load("accum.pt")
    if cfg.DATA.NAME == "voc":
        torch.load("voc.pt")
    torch.load("always.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--accum", type=int)
    parser.add_argument("--opts", nargs="+", default=None)
    dist.init_process_group("nccl")
    train(setup(parser.parse_args()))
"""

ACCUM_LOAD, VOC_LOAD, ALWAYS_LOAD = "train.py:11:", "train.py:13:", "train.py:14:"


def test_a_yacs_setting_no_documented_run_changes_keeps_its_default(tmp_path, run):
    """RepVGG's (Swin's) trainer accumulates micro-batches only under `if
    config.TRAIN.ACCUMULATION_STEPS > 1:`, a yacs setting whose default is 0 and that only
    `--accumulation-steps` (default None, passed by no command) overwrites, and builds CIFAR-100
    only where `DATA.DATASET` is cf100, while every run passes `--opts DATA.DATASET imagenet`: a
    yacs config's default holds on a run unless the run writes the key after `--opts` or the code
    assigns it under options that run sets. Neither branch is reported; the unguarded line is."""
    _write(tmp_path, ["torchrun --nproc_per_node=4 train.py --opts DATA.NAME coco"], train=YACS_TRAIN, extra={"defaults.py": DEFAULTS})
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
    assert ACCUM_LOAD not in output and VOC_LOAD not in output, output
    assert ALWAYS_LOAD in output, output


def test_a_yacs_setting_a_run_or_a_document_may_change_stays_reported(tmp_path, run):
    """A run that writes the key (`--opts SOLVER.ACCUM 4`, `DATA.NAME voc`), a run that passes
    the option the code copies into it, a value the command does not write literally, a
    document naming the key, a file merged into the config (where the run writes no pair of its
    own, merged last as yacs projects do), a list of pairs the code builds: the branch may run,
    and is reported."""
    base = "torchrun --nproc_per_node=4 train.py --opts DATA.NAME coco"
    cases = (
        ([base, "torchrun --nproc_per_node=4 train.py --opts SOLVER.ACCUM 4 DATA.NAME voc"], "", DEFAULTS),
        ([base, "torchrun --nproc_per_node=4 train.py --accum 4 --opts DATA.NAME voc"], "", DEFAULTS),
        (["torchrun --nproc_per_node=4 train.py --opts SOLVER.ACCUM $ACCUM DATA.NAME $DATA"], "", DEFAULTS),
        ([base], "Set `SOLVER.ACCUM` and `DATA.NAME voc` to train on VOC with a small batch.\n", DEFAULTS),
        (["torchrun --nproc_per_node=4 train.py"], "", DEFAULTS.replace("    if args.opts:", '    cfg.merge_from_file("voc.yaml")\n    if args.opts:')),
        ([base], "", DEFAULTS.replace("    if args.opts:", '    cfg.merge_from_list(["SOLVER.ACCUM", 2, "DATA.NAME", "voc"])\n    if args.opts:')),
    )
    run.cwd = tmp_path
    for runs, readme, defaults in cases:
        _write(tmp_path, runs, readme, YACS_TRAIN, {"defaults.py": defaults})
        output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
        assert ACCUM_LOAD in output and VOC_LOAD in output, (runs, readme, output)


DATASET = """import torch
from torch.utils.data import Dataset, random_split


class Tiles(Dataset):
    def __len__(self):
        return 100

    def __getitem__(self, index):
        return torch.zeros(3), index % 10


if __name__ == "__main__":
    tiles = Tiles()
    train_set, val_set = random_split(tiles, [50, 50])
    print(len(train_set), len(val_set))
"""

SPLIT_TRAIN = """import torch.distributed as dist

from tiles import Tiles


def main():
    dist.init_process_group("nccl")
    return Tiles()


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(
    "runs, tiles, reported",
    [
        (["torchrun --nproc_per_node=4 train.py"], DATASET, False),
        (["torchrun --nproc_per_node=4 train.py", "torchrun --nproc_per_node=2 tiles.py"], DATASET, True),
        (["torchrun --nproc_per_node=4 train.py"], "import torch.distributed as dist\n" + DATASET, False),
        (["torchrun --nproc_per_node=4 train.py"], "import torch.distributed as dist\ndist.init_process_group('nccl')\n" + DATASET, True),
    ],
)
def test_a_main_block_of_a_module_the_training_scripts_import_runs_only_in_its_own_runs(tmp_path, run, runs, tiles, reported):
    """SSL4EO's EuroSAT dataset module ends in an `if __name__ == "__main__":` self-test that
    splits the data without a generator; the DDP scripts only import its Dataset class. An
    import never runs that block, and run by hand the module (naming nothing distributed) is one
    process: no rank of a documented run reaches the split. Being imported does not make the
    block's own run a run of several processes, nor does torch.distributed named in the module
    (Project.script_runs_alone: the block's own run starts nothing). A documented launch of the
    module itself, or a module whose own run starts a process group, leaves it reported."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(SPLIT_TRAIN)
    (tmp_path / "run.sh").write_text("\n".join(runs) + "\n")
    (tmp_path / "tiles.py").write_text(tiles)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP010", ".").stdout
    assert (f"tiles.py:{15 + tiles.count(chr(10)) - DATASET.count(chr(10))}:" in output) == reported, output


UTILS = """import os

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    dist.init_process_group("nccl", init_method="env://")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


def reduce_tensor(tensor):
    dist.all_reduce(tensor)
    return tensor / dist.get_world_size()


def save_best(working_dir, model, optimizer):
    best = "{}/model_best.pt".format(working_dir)
    torch.save({"model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict()}, best)


class Meter:
    def sync(self):
        rank = dist.get_rank()
        self.value = reduce_tensor(torch.tensor(self.value).cuda()).item()


def mean_average_precision(probs, labels):
    return (probs.argmax(1) == labels).float().mean().cuda()


if __name__ == "__main__":
    probs = torch.load("similarity.pth")
    print(mean_average_precision(probs, torch.arange(10)))
"""

EVALUATE = """import torch
from utils import init_distributed_mode, reduce_tensor


def main():
    init_distributed_mode(None)
    model = torch.load("model_best.pt")
    return reduce_tensor(model(torch.ones(1)))


if __name__ == "__main__":
    raise SystemExit(main())
"""


@pytest.mark.parametrize(
    "runs, block, reported",
    [
        ("torchrun --nproc_per_node=8 evaluate.py\n", "", False),
        ("torchrun --nproc_per_node=8 evaluate.py\ntorchrun --nproc_per_node=2 utils.py\n", "", True),
        ("torchrun --nproc_per_node=8 evaluate.py\n", "    init_distributed_mode(None)\n", True),
    ],
)
def test_a_self_test_of_a_utils_module_that_names_distribution_runs_as_one_process(tmp_path, run, runs, block, reported):
    """whwu95's utils/utils.py: the DDP scripts call its `init_distributed_mode()` and its
    collectives; its `if __name__ == "__main__":` block loads saved score tensors to check its
    metric. That block runs only as `python utils.py`, which no document starts and which starts
    nothing (the process-group function is one only the importers call): one process, so DDP004
    says nothing of the load (Project.script_runs_alone). The block calling
    `init_distributed_mode()` itself, or a launch of utils.py, keeps it reported."""
    utils = UTILS.replace('if __name__ == "__main__":\n', 'if __name__ == "__main__":\n' + block)
    for name, text in {"pyproject.toml": "", "evaluate.py": EVALUATE, "utils.py": utils, "run.sh": runs}.items():
        (tmp_path / name).write_text(text)
    run.cwd = tmp_path
    assert project.build(str(tmp_path)).script_runs_alone("utils") == (not reported)
    if not reported:  # a script nothing imports exists for its own run: how it runs is not known
        (tmp_path / "evaluate.py").write_text(EVALUATE.replace("from utils import", "from helpers import"))
        assert not project.build(str(tmp_path)).script_runs_alone("utils")
        (tmp_path / "evaluate.py").write_text(EVALUATE)
    output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
    load = f"utils.py:{33 + bool(block)}:"
    assert (load in output) == reported, output


YOLO_TRAIN = """import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))


def train(net, loader, optimizer, accumulate):
    model = net
    if LOCAL_RANK != -1:
        dist.init_process_group("nccl")
        model = DDP(net.cuda(LOCAL_RANK), device_ids=[LOCAL_RANK])
    for i, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        if i % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    train(None, [], None, 2)
"""

YOLO_README = (
    "python -m torch.distributed.launch --nproc_per_node 8 train.py --batch 128\n\n"
    "Segmentation:\n\n```\npython segment/train.py --device 0 --batch 32\n```\n"
)


def _lines(output):
    """The `path:line` of each finding in `check`'s text output, in order."""
    return sorted(":".join(line.split(":")[:2]) for line in output.splitlines() if " DDP" in line)


def _yolo(tmp_path, files):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "README.md").write_text(YOLO_README)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)


def test_a_launch_of_another_file_of_the_same_name_leaves_a_script_run_plainly_one_process(tmp_path, run):
    """yolov9's README launches the root train.py with torch.distributed.launch and runs
    segment/train.py (a copy that forms its process group only under a launcher's LOCAL_RANK)
    only as `python segment/train.py --device 0`: the launch names the root file, not this one,
    so every documented run of segment/train.py is one process, and DDP021 says nothing there."""
    _yolo(tmp_path, {"train.py": YOLO_TRAIN, "segment/train.py": YOLO_TRAIN})
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP021", ".").stdout
    assert _lines(output) == ["train.py:17"], output
    built = project.build(str(tmp_path))
    assert built.module_view("segment.train").single_process and not built.module_view("train").single_process



SLURM_TRAIN = """import argparse
import os

import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", default=0, type=int, help="this argument is not used")
args = parser.parse_args()
if "SLURM_JOB_ID" in os.environ:
    args.rank = int(os.environ["SLURM_PROCID"])
else:
    # jobs started with torch.distributed.launch: read the environment
    args.rank = int(os.environ["RANK"])
dist.init_process_group("nccl", rank=args.rank)
"""


def test_prose_naming_the_old_launcher_beside_documented_srun_runs_launches_nothing(tmp_path, run):
    """SSL4EO-S12's linear_*_moco.py name torch.distributed.launch only in a comment of their
    non-slurm branch, and every documented run is a slurm script's `srun python -u x.py`
    (srun passes no --local-rank): DDP012 says nothing. Where the project documents no run of
    the script, the file's own word on its launcher is all there is (PINN_seaice's help text
    "for the torch.distributed.launch utility"), and so is it where a document launches with it
    a script it does not name (DPR's `{non distributed script name & parameters}`); a usage line
    that runs it is a documented run beside any other: flagged."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "linear.py").write_text(SLURM_TRAIN)
    (tmp_path / "job.sh").write_text("#SBATCH --ntasks=4\nsrun python -u linear.py --epochs 100\n")
    run.cwd = tmp_path
    assert _lines(run("check", "--no-cache", "--select", "DDP012", ".").stdout) == []
    usage = "# python -m torch.distributed.launch --nproc_per_node=4 linear.py\n"
    (tmp_path / "linear.py").write_text(usage + SLURM_TRAIN)
    assert _lines(run("check", "--no-cache", "--select", "DDP012", ".").stdout) == ["linear.py:8"]
    (tmp_path / "linear.py").write_text(SLURM_TRAIN)
    (tmp_path / "job.sh").unlink()
    assert _lines(run("check", "--no-cache", "--select", "DDP012", ".").stdout) == ["linear.py:7"]
    (tmp_path / "job.sh").write_text("#SBATCH --ntasks=4\nsrun python -u linear.py --epochs 100\n")
    (tmp_path / "README.md").write_text("```\npython -m torch.distributed.launch --nproc_per_node=8 {script & parameters}\n```\n")
    assert _lines(run("check", "--no-cache", "--select", "DDP012", ".").stdout) == ["linear.py:7"]


DIST_TEST = """import argparse

import torch
import torch.distributed as dist

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
"""


def test_a_script_of_the_test_suite_no_command_runs_is_launched_by_nobody(tmp_path, run):
    """VALOR's vendored apex/tests/L0/run_optimizers/test_dist_adam.py: a script in the project's
    test folder that forms a process group and reads --local_rank, beside a README that launches
    the trainer: the test runner imports it (one process, its `__main__` block never runs), and
    no command of the project runs it, so no launcher's missing option is shown and DDP012 says
    nothing, also beside a README whose prose links torch.distributed.launch (a launch command
    that names no script, which no document names this file to). A shell script of the suite
    that runs it with torchrun shows the launch; the same
    script outside a test folder (an undocumented trainer or tool) stays reported."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(DIST_TEST)
    (tmp_path / "README.md").write_text("```\ntorchrun --nproc_per_node=8 train.py\n```\n")
    (tmp_path / "apex/tests/L0").mkdir(parents=True)
    (tmp_path / "apex/tests/L0/test_dist_adam.py").write_text(DIST_TEST)
    run.cwd = tmp_path
    assert _lines(run("check", "--no-cache", "--select", "DDP012", ".").stdout) == ["train.py:8"]
    # prose that links the old launcher, in another folder's README, launches no test
    (tmp_path / "apex/README.md").write_text("Use the [torch.distributed.launch](https://pytorch.org/docs) utility.\n")
    assert _lines(run("check", "--no-cache", "--select", "DDP012", ".").stdout) == ["train.py:8"]
    (tmp_path / "apex/tests/L0/run.sh").write_text("torchrun --nproc_per_node=2 test_dist_adam.py\n")
    assert _lines(run("check", "--no-cache", "--select", "DDP012", ".").stdout) == ["apex/tests/L0/test_dist_adam.py:8", "train.py:8"]
    (tmp_path / "apex/tests/L0/run.sh").unlink()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools/dist_check.py").write_text(DIST_TEST)
    assert _lines(run("check", "--no-cache", "--select", "DDP012", ".").stdout) == ["tools/dist_check.py:8", "train.py:8"]


SHARED_INIT = """import argparse

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--init", default=None)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank())
    student, teacher = torch.nn.Linear(2, 2).cuda(), torch.nn.Linear(2, 2).cuda()
    if args.init is not None:
        checkpoint = torch.load(args.init)
        student.load_state_dict({restore_student})
        teacher.load_state_dict(checkpoint["teacher"])
    model = torch.nn.parallel.DistributedDataParallel(student)
    for epoch in range(10):
        model(torch.randn(2, 2).cuda()).sum().backward()
        if dist.get_rank() == 0:
            torch.save({{"student": student.state_dict(), "teacher": teacher.state_dict()}}, "checkpoint.pth")


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(
    "restore_student, reported",
    [
        ('checkpoint["teacher"]', False),  # one state copied into both: an initialisation
        ('checkpoint["student"]', True),  # each model's own saved state: a resume
    ],
)
def test_one_state_loaded_into_two_models_is_no_resume(tmp_path, run, restore_student, reported):
    """svt initialises its student and its teacher from the teacher of a pretrained checkpoint
    under `if args.pretrained_rgb is not None:`, an option no documented run passes. One state
    copied into two models restores one thing, not a training's several: the branch is no
    resume, and no documented run takes it (DDP004 silent). Restoring each model from its own
    item of the checkpoint is a resume, which runs after any crash: reported."""
    _write(tmp_path, ["torchrun --nproc_per_node=4 train.py"], train=SHARED_INIT.format(restore_student=restore_student))
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
    assert ("train.py:15:" in output) is reported, output


LOADED_TRAIN = """import argparse

import torch
import torch.distributed as dist
import yaml
from dotmap import DotMap


def train(config):
    if config.solver.loss_type in ["NCE", "DS"]:
        state = torch.load("nce.pt")
    elif config.solver.loss_type == "CE":
        state = torch.load("ce.pt")
    return state


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", "-cfg", type=str, default="clip.yaml")
    args = parser.parse_args()
    with open(args.config, "r") as f:
        config = yaml.load(f, Loader=yaml.FullLoader)
    config = DotMap(config)
    dist.init_process_group("nccl")
    train(config)


if __name__ == "__main__":
    main()
"""

NCE_LOAD, CE_LOAD = "train.py:11:", "train.py:13:"
NCE_CONFIG = "solver:\n    loss_type: NCE\n    lr: 0.001\n"


def _write_loaded(tmp_path, runs, configs, readme="", train=LOADED_TRAIN):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(train)
    (tmp_path / "run.sh").write_text("".join(f"{command}\n" for command in runs))
    (tmp_path / "README.md").write_text(readme)
    (tmp_path / "configs").mkdir(exist_ok=True)
    for old in (tmp_path / "configs").iterdir():
        old.unlink()
    for name, text in configs.items():
        (tmp_path / "configs" / name).write_text(text)


def test_a_branch_no_shipped_config_file_turns_on_is_not_reported(tmp_path, run):
    """BIKE's train_attributes.py loads its config from the YAML file `--config` names
    (`with open(args.config) as f: config = yaml.load(f)`, wrapped in a DotMap) and branches on
    `config.solver.loss_type`; its launch passes `--config ${config}`, and every config file the
    project ships for it sets NCE: the CE branch is taken by no documented run, the NCE one is
    (the config files that do not hold the key belong to other scripts). A run naming one of the
    project's files reads that file alone."""
    configs = {"k400.yaml": NCE_CONFIG, "ucf.yaml": NCE_CONFIG, "data.yaml": "dataset:\n    name: k400\n"}
    _write_loaded(tmp_path, ["torchrun --nproc_per_node=8 train.py --config ${config}"], configs)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
    assert CE_LOAD not in output and NCE_LOAD in output, output
    view = project.build(str(tmp_path)).module_view("train")
    assert view.documented_values(("config", "solver", "loss_type")) == {"NCE"}
    _write_loaded(tmp_path, ["torchrun --nproc_per_node=8 train.py --config configs/ucf.yaml"],
                  {**configs, "ucf.yaml": NCE_CONFIG.replace("NCE", "DS")})
    view = project.build(str(tmp_path)).module_view("train")
    assert view.documented_values(("config", "solver", "loss_type")) == {"DS"}


@pytest.mark.parametrize(
    "runs, configs, readme, train",
    [
        # a shipped config turns it on
        (["torchrun --nproc_per_node=8 train.py --config ${config}"], {"a.yaml": NCE_CONFIG, "b.yaml": "solver:\n    loss_type: CE\n"}, "", LOADED_TRAIN),
        # the run names a file the project does not hold
        (["torchrun --nproc_per_node=8 train.py --config /data/mine.yaml"], {"a.yaml": NCE_CONFIG}, "", LOADED_TRAIN),
        # no shipped file holds the key
        (["torchrun --nproc_per_node=8 train.py --config ${config}"], {"a.yaml": "solver:\n    lr: 0.1\n"}, "", LOADED_TRAIN),
        # a document tells the user to set the key
        (["torchrun --nproc_per_node=8 train.py --config ${config}"], {"a.yaml": NCE_CONFIG}, "Set `loss_type` to CE for a plain classifier.\n", LOADED_TRAIN),
        # the code assigns the setting
        (["torchrun --nproc_per_node=8 train.py --config ${config}"], {"a.yaml": NCE_CONFIG}, "",
         LOADED_TRAIN.replace("    config = DotMap(config)\n", "    config = DotMap(config)\n    config.solver.loss_type = pick()\n")),
        # `config` is also bound to something that is no loaded file
        (["torchrun --nproc_per_node=8 train.py --config ${config}"], {"a.yaml": NCE_CONFIG}, "",
         LOADED_TRAIN.replace("    config = DotMap(config)\n", "    config = DotMap(config)\n    config = build(args)\n")),
    ],
)
def test_a_loaded_setting_a_run_may_change_stays_reported(tmp_path, run, runs, configs, readme, train):
    """Where a file the run may load turns the branch on, the run loads a file the project does
    not ship, no shipped file holds the key, a document names it, code assigns it, or the name
    read is bound to something else too, a run may take the CE branch: it is reported."""
    _write_loaded(tmp_path, runs, configs, readme, train)
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
    assert CE_LOAD in output and NCE_LOAD in output, output
