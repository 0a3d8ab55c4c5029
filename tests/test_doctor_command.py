"""`ddplint doctor`'s reading of a launch command: words, a shell script, a SLURM script."""

from __future__ import annotations

import shlex

import pytest

from ddplint.doctor.checks import Unknown
from ddplint.doctor.command import (
    ACCELERATE, DEEPSPEED, OLD_LAUNCHER, PYTHON, TORCHRUN_LAUNCHER, CommandError, nodes, option_value, parse_script,
    parse_words, ranks_per_node, read_command,
)


def words(text: str):
    return parse_words(shlex.split(text))


@pytest.mark.parametrize(
    ("text", "launcher", "script", "arguments"),
    [
        ("torchrun --nproc_per_node 8 train.py --lr 0.1", TORCHRUN_LAUNCHER, "train.py", ("--lr", "0.1")),
        ("python -m torch.distributed.run --nproc-per-node=8 train.py", TORCHRUN_LAUNCHER, "train.py", ()),
        ("python3 -m torch.distributed.launch --use_env --nproc_per_node=2 main.py -b 4", OLD_LAUNCHER, "main.py", ("-b", "4")),
        ("deepspeed --num_gpus 4 train.py --deepspeed ds.json", DEEPSPEED, "train.py", ("--deepspeed", "ds.json")),
        ("accelerate launch --multi_gpu --num_processes 2 train.py", ACCELERATE, "train.py", ()),
        ("python -u train.py --epochs 3", PYTHON, "train.py", ("--epochs", "3")),
        ("nohup env NCCL_DEBUG=INFO torchrun train.py", TORCHRUN_LAUNCHER, "train.py", ()),
        ("torchrun --standalone --nproc_per_node 2 -- train.py --x", TORCHRUN_LAUNCHER, "train.py", ("--x",)),
    ],
)
def test_launchers_their_scripts_and_the_scripts_arguments(text, launcher, script, arguments):
    launch = words(text)
    assert (launch.launcher, launch.script, launch.script_args) == (launcher, script, arguments)


def test_options_are_named_without_dashes_and_with_hyphens():
    launch = words("torchrun --nnodes=2 --nproc_per_node 4 --rdzv-endpoint host:29500 --standalone train.py")
    assert launch.options == {"nnodes": "2", "nproc-per-node": "4", "rdzv-endpoint": "host:29500", "standalone": True}


def test_assignments_before_the_command_are_its_environment():
    launch = words("CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=INFO torchrun train.py")
    assert launch.environment == {"CUDA_VISIBLE_DEVICES": "0,1", "NCCL_DEBUG": "INFO"}


def test_a_module_is_not_a_script():
    launch = words("torchrun --nproc_per_node 2 -m pkg.train --x 1")
    assert (launch.script, launch.module, launch.script_args) == (None, "pkg.train", ("--x", "1"))


def test_what_runs_no_launcher_and_no_script_is_not_a_launch():
    assert words("ls -l") is None and words("python -c 'print(1)'") is None


def test_srun_gives_the_tasks_and_nodes():
    launch = words("srun -N 2 --ntasks-per-node=4 --gres=gpu:a100:4 python train.py")
    assert launch.launcher == PYTHON and launch.under_srun
    assert launch.scheduler == {"nodes": "2", "ntasks-per-node": "4", "gpus-per-node": "4", "wrapper": "srun"}
    assert ranks_per_node(launch, 4, 32, False) == 4 and nodes(launch) == 2


RUN_SH = """\
#!/bin/bash
# train on one node
set -e
export NGPU=${NGPU:-8}
PORT=29501
export NCCL_P2P_DISABLE=1
cd "$(dirname "$0")" && python prepare.py
torchrun --nproc_per_node $NGPU \\
    --master_port $PORT train.py --data "/data/my set" > log.txt 2>&1 &
wait; echo done
"""


def test_a_shell_script_expands_its_variables_and_exports_its_environment():
    launch = parse_script("run.sh", RUN_SH)
    assert launch.origin == "run.sh:8" and launch.launcher == TORCHRUN_LAUNCHER
    assert launch.options == {"nproc-per-node": "8", "master-port": "29501"}
    assert launch.script_args == ("--data", "/data/my set")  # the redirections are not the script's
    assert launch.environment == {"NGPU": "8", "NCCL_P2P_DISABLE": "1"}  # PORT is not exported
    assert launch.notes == ["run.sh runs 2 commands that could be the launch; the one at run.sh:8 is checked"]


def test_a_variable_known_only_at_run_time_stays_unknown():
    launch = parse_script("run.sh", "torchrun --nproc_per_node $SLURM_GPUS_ON_NODE train.py\n")
    count = ranks_per_node(launch, 4, 32, False)
    assert isinstance(count, Unknown) and "$SLURM_GPUS_ON_NODE, known only when the job runs" in count.reason


def test_a_slurm_script_gives_nodes_from_sbatch():
    launch = parse_script("job.slurm", "#SBATCH --nodes=4\n#SBATCH --gpus-per-node=8\nsrun torchrun --nnodes $SLURM_NNODES "
                                       "--nproc_per_node 8 train.py\n")
    assert nodes(launch) == 4 and ranks_per_node(launch, 8, 32, False) == 8


def test_a_script_without_a_launch_is_a_usage_error():
    with pytest.raises(CommandError, match="no launch command found"):
        parse_script("setup.sh", "pip install -r requirements.txt\n")


@pytest.mark.parametrize(
    ("text", "gpus", "expected"),
    [
        ("torchrun train.py", 4, 1),
        ("torchrun --nproc_per_node gpu train.py", 4, 4),
        ("torchrun --nproc_per_node auto train.py", 0, 32),
        ("deepspeed train.py", 4, 4),
        ("deepspeed --include localhost:0,1 train.py", 4, 2),
        ("accelerate launch --num_processes 8 --num_machines 2 train.py", 4, 4),
        ("python train.py", 4, 1),
    ],
)
def test_ranks_per_node(text, gpus, expected):
    assert ranks_per_node(words(text), gpus, 32, False) == expected


def test_ranks_of_a_script_that_spawns_its_own_are_unknown():
    assert isinstance(ranks_per_node(words("python train.py"), 4, 32, True), Unknown)


def test_nodes_by_launcher():
    assert nodes(words("torchrun --nnodes 1:4 train.py")) == 4
    assert isinstance(nodes(words("deepspeed --hostfile hosts train.py")), Unknown)
    assert isinstance(nodes(words("accelerate launch train.py")), Unknown)


def test_option_values_from_the_scripts_arguments():
    assert option_value(["--workers", "8", "-j=2"], ("-j", "--workers")) == "2"
    assert option_value(["--epochs", "3"], ("--workers",)) is None


def test_read_command_takes_a_file_or_words(tmp_path):
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node 2 train.py\n")
    assert read_command(["bash", "run.sh"], str(tmp_path)).origin == "run.sh:1"
    assert read_command(["train.py", "--lr", "1"], str(tmp_path)).launcher == PYTHON
    with pytest.raises(CommandError, match="no such file"):
        read_command(["missing.sh"], str(tmp_path))
    with pytest.raises(CommandError, match="not a launch command"):
        read_command(["make", "train"], str(tmp_path))
