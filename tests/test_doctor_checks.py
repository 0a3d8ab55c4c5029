"""Each of `ddplint doctor`'s checks: silent on a healthy machine and launch, and reporting the
condition it is for when a made-up machine (tests/doctor_machine.py) has it."""

from __future__ import annotations

import pytest

from ddplint.doctor.checks import Severity, all_checks
from ddplint.doctor.facts import Probe
from doctor_machine import HEALTHY_SCRIPT, GiB, Machine, Statvfs, messages

CODES = [check.code for check in all_checks()]
PROBED = {"DDPE406"}  # says "could not check" unless a live probe ran


@pytest.fixture
def machine(tmp_path) -> Machine:
    return Machine(tmp_path).healthy()


@pytest.mark.parametrize("code", CODES)
def test_each_check_is_silent_on_a_healthy_machine_and_launch(machine, code):
    outcome = machine.outcome(code)
    assert outcome.found == ()
    assert (outcome.unchecked is not None) == (code in PROBED)


def test_the_checks_have_unique_codes_names_and_explanations():
    checks = all_checks()
    assert len({c.code for c in checks}) == len({c.name for c in checks}) == len(checks)
    assert all(c.code.startswith("DDPE") and len(c.explanation) > 200 for c in checks)


# -- the machine -------------------------------------------------------------------------------


def test_gpu_driver_reports_an_nvidia_smi_that_fails(machine):
    machine.nvidia_smi(fail="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
    outcome = machine.outcome("DDPE101")
    assert [f.severity for f in outcome.found] == [Severity.ERROR]
    assert "couldn't communicate with the NVIDIA driver" in outcome.found[0].message


def test_gpu_driver_cannot_check_a_gpu_device_without_nvidia_smi(machine):
    (machine.bin / "nvidia-smi").unlink()
    machine.file("/dev/nvidia0")
    outcome = machine.outcome("DDPE101")
    assert outcome.found == () and "/dev/nvidia0 exists but nvidia-smi is not on PATH" in outcome.unchecked


def test_a_machine_without_gpus_is_no_driver_problem(machine):
    (machine.bin / "nvidia-smi").unlink()
    assert machine.outcome("DDPE101").found == ()
    assert machine.outcome("DDPE101").unchecked is None


@pytest.mark.parametrize(
    ("variable", "expected"),
    [
        ("0,1,7,2", "stops reading it at '7'"),
        ("", "hides every GPU"),
        ("-1", "hides every GPU"),
        ("0,0", "lists 0 more than once"),
        ("GPU-99", "stops reading it at 'GPU-99'"),
    ],
)
def test_visible_devices_reports_what_cuda_would_stop_at(machine, variable, expected):
    machine.environ["CUDA_VISIBLE_DEVICES"] = variable
    assert any(expected in message for message in messages(machine.outcome("DDPE102")))


@pytest.mark.parametrize("variable", ["0,1,2,3", "3,2", "GPU-00000001", "GPU-00000002-aaaa-bbbb,1"])
def test_visible_devices_accepts_indices_and_uuid_prefixes_of_this_machine(machine, variable):
    machine.environ["CUDA_VISIBLE_DEVICES"] = variable
    assert machine.outcome("DDPE102").found == ()


def test_visible_devices_reads_the_launch_commands_own_assignment(machine):
    outcome = machine.outcome("DDPE102", "CUDA_VISIBLE_DEVICES=0,5 torchrun --nproc_per_node 2 train.py")
    assert "stops reading it at '5'" in messages(outcome)[0]


def test_shared_memory_of_dockers_default_size_is_too_small_for_the_workers(machine):
    machine.shm_size = Statvfs(64 * 1024**2)
    outcome = machine.outcome("DDPE103")
    assert [f.severity for f in outcome.found] == [Severity.WARNING, Severity.WARNING]
    nccl, workers = messages(outcome)
    assert "4 NCCL ranks share this node" in nccl
    assert "4 rank(s) x 4 DataLoader worker(s) x 128.0 MiB, assumed" in workers and "need 2.0 GiB" in workers


def test_shared_memory_takes_the_workers_from_the_launch_commands_script_arguments(machine):
    machine.shm_size = Statvfs(8 * GiB)
    assert machine.outcome("DDPE103").found == ()  # 4 x 4 x 128 MiB = 2 GiB
    outcome = machine.outcome("DDPE103", "torchrun --nproc_per_node 4 train.py --workers 32")
    assert "4 rank(s) x 32 DataLoader worker(s)" in messages(outcome)[0]


def test_shared_memory_per_worker_and_workers_can_be_given(machine):
    machine.shm_size = Statvfs(8 * GiB)
    outcome = machine.outcome("DDPE103", shm_per_worker=1 * GiB, workers=4)
    assert "x 1.0 GiB need 16.0 GiB" in messages(outcome)[0] and "assumed" not in messages(outcome)[0]


def test_shared_memory_missing_is_an_error(machine):
    def missing(path):
        raise FileNotFoundError(path)

    system = machine.system
    system.statvfs = missing
    from ddplint.doctor.checks import run
    from ddplint.doctor.command import read_command
    from ddplint.doctor.facts import gather

    facts = gather(system, read_command(["torchrun", "train.py"], system.cwd))
    outcome = run([c for c in all_checks() if c.code == "DDPE103"], facts)[0]
    assert outcome.found[0].severity is Severity.ERROR and "does not exist" in outcome.found[0].message


def test_shared_memory_probe_that_failed_is_an_error(machine):
    machine.probes["shm"] = Probe("shm", True, "1.0 GiB in /dev/shm: No space left on device")
    outcome = machine.outcome("DDPE103")
    assert [f.severity for f in outcome.found] == [Severity.ERROR]
    assert "No space left on device" in outcome.found[0].message


def test_shared_memory_without_workers_or_ranks_cannot_check(machine):
    machine.script("import torch\ntorch.cuda.set_device(0)\n")
    assert "builds no DataLoader itself" in machine.outcome("DDPE103").unchecked
    assert machine.outcome("DDPE103", None).unchecked == "no launch command was given"


def test_shared_memory_cannot_read_a_worker_count_known_only_at_run_time(machine):
    machine.script("from torch.utils.data import DataLoader\nloader = DataLoader(d, num_workers=cfg.data.workers)\n")
    outcome = machine.outcome("DDPE103")
    assert "num_workers=cfg.data.workers at train.py:2:10 is known only when the script runs" in outcome.unchecked


@pytest.mark.parametrize(("limits", "fix"), [((1024, 1024), "higher hard limit"), ((1024, 65536), "ulimit -n 65536")])
def test_open_file_limit_low_for_workers_under_the_file_descriptor_strategy(machine, limits, fix):
    machine.open_files = limits
    outcome = machine.outcome("DDPE104")
    assert [f.severity for f in outcome.found] == [Severity.WARNING] and fix in outcome.found[0].fix


def test_open_file_limit_is_silent_when_the_script_shares_through_files(machine):
    machine.open_files = (1024, 1024)
    machine.script(machine.project.joinpath("train.py").read_text()
                   + "import torch.multiprocessing as mp\nmp.set_sharing_strategy('file_system')\n")
    assert machine.outcome("DDPE104").found == ()


# -- the environment ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "variables", "expected"),
    [
        ("DDPE201", {"CUDA_LAUNCH_BLOCKING": "1"}, "CUDA_LAUNCH_BLOCKING=1"),
        ("DDPE201", {"TORCH_DISTRIBUTED_DEBUG": "DETAIL"}, "TORCH_DISTRIBUTED_DEBUG=DETAIL"),
        ("DDPE201", {"NCCL_DEBUG": "TRACE"}, "NCCL_DEBUG=TRACE"),
        ("DDPE202", {"NCCL_P2P_DISABLE": "1"}, "NCCL_P2P_DISABLE=1"),
        ("DDPE202", {"NCCL_SHM_DISABLE": "1"}, "NCCL_SHM_DISABLE=1"),
        ("DDPE203", {"NCCL_SOCKET_IFNAME": "ib0"}, "matches no network interface of this machine (eth0, lo)"),
        ("DDPE203", {"GLOO_SOCKET_IFNAME": "eth"}, "GLOO_SOCKET_IFNAME=eth matches no network interface"),
        ("DDPE203", {"NCCL_SOCKET_IFNAME": "=eth"}, "NCCL_SOCKET_IFNAME==eth matches no network interface"),
        ("DDPE204", {"NCCL_ASYNC_ERROR_HANDLING": "1"}, "TORCH_NCCL_ASYNC_ERROR_HANDLING"),
        ("DDPE205", {"TORCH_NCCL_ASYNC_ERROR_HANDLING": "0"}, "no longer ends the job"),
        ("DDPE206", {"OMP_NUM_THREADS": "16"}, "64 threads on 32 CPU core(s)"),
        ("DDPE207", {"NCCL_ALGO": "Tree"}, "NCCL_ALGO=Tree"),
    ],
)
def test_environment_settings_that_hurt_are_reported(machine, code, variables, expected):
    machine.environ.update(variables)
    found = machine.outcome(code).found
    assert len(found) == 1 and expected in found[0].message


@pytest.mark.parametrize(
    ("code", "variables"),
    [
        ("DDPE201", {"CUDA_LAUNCH_BLOCKING": "0", "NCCL_DEBUG": "INFO", "TORCH_DISTRIBUTED_DEBUG": "INFO"}),
        ("DDPE203", {"NCCL_SOCKET_IFNAME": "eth", "GLOO_SOCKET_IFNAME": "eth0"}),
        ("DDPE203", {"NCCL_SOCKET_IFNAME": "^docker,lo"}),
        ("DDPE205", {"TORCH_NCCL_ASYNC_ERROR_HANDLING": "3"}),
        ("DDPE206", {"OMP_NUM_THREADS": "8"}),
    ],
)
def test_environment_settings_that_do_not_hurt_are_not_reported(machine, code, variables):
    machine.environ.update(variables)
    assert machine.outcome(code).found == ()


def test_inter_node_transports_matter_only_on_several_nodes(machine):
    machine.environ["NCCL_IB_DISABLE"] = "1"
    assert machine.outcome("DDPE202").found == ()
    several = machine.outcome("DDPE202", "torchrun --nnodes 2 --nproc_per_node 4 --rdzv-endpoint n1:29500 train.py")
    assert "NCCL_IB_DISABLE=1" in messages(several)[0]


def test_a_variable_from_the_launch_script_counts(machine):
    (machine.project / "run.sh").write_text("export NCCL_P2P_DISABLE=1\ntorchrun --nproc_per_node 4 train.py\n")
    assert "NCCL_P2P_DISABLE=1" in messages(machine.outcome("DDPE202", "run.sh"))[0]


def test_renamed_variables_are_silent_before_torch_2_2(machine):
    machine.remove_package("torch")
    machine.package("torch", "2.1.2+cu121", cuda="12.1")
    machine.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"
    assert machine.outcome("DDPE204").found == ()


def test_leftover_rank_variables_reach_a_script_started_without_a_launcher(machine):
    machine.environ.update({"RANK": "1", "WORLD_SIZE": "2"})
    assert "RANK=1 WORLD_SIZE=2" in messages(machine.outcome("DDPE208", "python train.py"))[0]
    assert machine.outcome("DDPE208").found == ()  # torchrun replaces them
    assert machine.outcome("DDPE208", "RANK=0 WORLD_SIZE=2 python train.py").found == ()  # the command's own


# -- the software ------------------------------------------------------------------------------


def test_torch_missing(machine):
    machine.remove_package("torch")
    assert "torch is not installed" in messages(machine.outcome("DDPE301"))[0]


def test_torchvision_built_for_another_torch(machine):
    machine.remove_package("torchvision")
    machine.package("torchvision", "0.19.1+cu121", ["torch==2.4.1"])
    found = machine.outcome("DDPE302").found
    assert [f.message for f in found] == ["torchvision 0.19.1+cu121 requires torch==2.4.1, and torch 2.5.1+cu121 is installed"]


def test_nccl_wheel_other_than_the_one_torch_pins(machine):
    machine.remove_package("nvidia-nccl-cu12")
    machine.package("nvidia-nccl-cu12", "2.20.5")
    assert "requires nvidia-nccl-cu12==2.21.5, and nvidia-nccl-cu12 2.20.5 is installed" in messages(machine.outcome("DDPE302"))[0]


def test_requirements_for_another_platform_or_an_extra_are_not_checked(machine):
    machine.remove_package("torch")
    machine.package("torch", "2.5.1+cu121", ["nvidia-nccl-cu12==9.9; platform_system == 'Windows'",
                                             "nvidia-nccl-cu12==9.8; extra == 'nccl'"], cuda="12.1")
    assert machine.outcome("DDPE302").found == ()


def test_torchvision_built_for_another_cuda(machine):
    machine.remove_package("torchvision")
    machine.package("torchvision", "0.20.1+cu118", ["torch==2.5.1"])
    assert "built for cu118, torch 2.5.1+cu121 for cu121" in messages(machine.outcome("DDPE303"))[0]


def test_cpu_build_of_torch_on_a_gpu_machine(machine):
    machine.remove_package("torch")
    machine.package("torch", "2.5.1+cpu", cuda=None)
    outcome = machine.outcome("DDPE304")
    assert outcome.found[0].severity is Severity.ERROR and "a CPU build and this machine has 4 NVIDIA GPU(s)" in outcome.found[0].message


def test_cuda_build_of_torch_without_a_gpu(machine):
    (machine.bin / "nvidia-smi").unlink()
    outcome = machine.outcome("DDPE304")
    assert outcome.found[0].severity is Severity.WARNING and "a CUDA 12.1 build and this machine has no NVIDIA GPU" in outcome.found[0].message


def test_driver_too_old_for_torchs_cuda(machine):
    machine.nvidia_smi(cuda="11.8", driver="520.61.05")
    assert "built for CUDA 12.1 and the driver (520.61.05) supports CUDA 11.8" in messages(machine.outcome("DDPE305"))[0]
    machine.nvidia_smi(cuda="12.0")
    assert machine.outcome("DDPE305").found == ()  # minor-version compatibility


def test_software_of_another_python_is_not_checked(machine):
    outcome = machine.outcome("DDPE301", "/opt/conda/bin/python train.py")
    assert "the launch runs /opt/conda/bin/python, not the Python running ddplint" in outcome.unchecked


# -- the launch --------------------------------------------------------------------------------


def test_more_ranks_than_gpus(machine):
    outcome = machine.outcome("DDPE401", "torchrun --nproc_per_node 8 train.py")
    assert "starts 8 ranks on this node, each on a GPU of its own, and CUDA shows 4 GPU(s)" in messages(outcome)[0]
    assert "--nproc_per_node 4" in outcome.found[0].fix


def test_more_ranks_than_visible_devices(machine):
    machine.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
    assert "CUDA shows 2 GPU(s) (CUDA_VISIBLE_DEVICES='0,1')" in messages(machine.outcome("DDPE401"))[0]


def test_ranks_on_gpus_of_a_machine_without_any(machine):
    (machine.bin / "nvidia-smi").unlink()
    assert "CUDA shows none here (no nvidia-smi on PATH" in messages(machine.outcome("DDPE401"))[0]


@pytest.mark.parametrize("command", ["torchrun --nproc_per_node gpu train.py", "deepspeed train.py",
                                     "accelerate launch --num_processes 4 --num_machines 1 train.py"])
def test_ranks_that_follow_the_gpus_fit(machine, command):
    assert machine.outcome("DDPE401", command).found == ()


def test_cpu_ranks_need_no_gpu(machine):
    (machine.bin / "nvidia-smi").unlink()
    machine.script("import torch.distributed as dist\ndist.init_process_group('gloo')\n")
    assert machine.outcome("DDPE401", "torchrun --nproc_per_node 8 train.py").found == ()


LOCAL_RANK_ONLY = """\
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
"""


def test_launcher_arguments_torchrun_and_a_parser_that_reads_local_rank(machine):
    machine.script(LOCAL_RANK_ONLY)
    outcome = machine.outcome("DDPE402")
    assert outcome.found[0].where.line == 4 and outcome.found[0].message.startswith("--local_rank only: torchrun passes")
    assert outcome.found[0].fix.startswith("ddplint --fix --select DDP")


def test_launcher_arguments_old_launcher_and_a_local_rank_only_parser(machine):
    machine.script(LOCAL_RANK_ONLY)
    outcome = machine.outcome("DDPE402", "python -m torch.distributed.launch --nproc_per_node 4 train.py")
    assert outcome.found[0].message.startswith("torch.distributed.launch passes --local-rank=N")


def test_launcher_arguments_old_launcher_and_a_parser_without_the_option(machine):
    outcome = machine.outcome("DDPE402", "python -m torch.distributed.launch --nproc_per_node 4 train.py")
    assert "unrecognized arguments: --local-rank=0" in messages(outcome)[0]
    assert outcome.found[0].where.line == 8  # the parser
    assert machine.outcome("DDPE402", "python -m torch.distributed.launch --use-env --nproc_per_node 4 train.py").found == ()


def test_launcher_arguments_deepspeed_passes_the_underscore(machine):
    machine.script(LOCAL_RANK_ONLY.replace("--local_rank", "--local-rank"))
    assert "deepspeed passes --local_rank=N" in messages(machine.outcome("DDPE402", "deepspeed train.py"))[0]
    machine.script(LOCAL_RANK_ONLY)
    assert machine.outcome("DDPE402", "deepspeed train.py").found == ()
    # With --no_local_rank it passes nothing, and the parsed local rank keeps its default.
    assert "(deepspeed passes no option either)" in messages(machine.outcome("DDPE402", "deepspeed --no_local_rank train.py"))[0]


def test_launcher_arguments_a_tolerant_or_extended_parser_is_not_judged(machine):
    machine.script(healthy_with("parser.parse_args()", "parser.parse_known_args()"))
    assert machine.outcome("DDPE402", "deepspeed train.py").found == ()
    machine.script(healthy_with("parser = argparse.ArgumentParser()", "parser = argparse.ArgumentParser(parents=[base])"))
    assert "gets options outside this file" in machine.outcome("DDPE402", "deepspeed train.py").unchecked


def healthy_with(old: str, new: str) -> str:
    """The healthy training script with `old` replaced by `new`."""
    assert old in HEALTHY_SCRIPT
    return HEALTHY_SCRIPT.replace(old, new)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("torchrun --nnodes 2 --nproc_per_node 4 train.py", "names no rendezvous address"),
        ("torchrun --nnodes 2 --nproc_per_node 4 --rdzv-endpoint localhost:29500 train.py", "loopback address"),
        ("torchrun --nnodes 2 --nproc_per_node 4 --master_addr 127.0.0.1 train.py", "loopback address"),
        ("torchrun --standalone --nnodes 2 --nproc_per_node 4 train.py", "--standalone"),
        ("torchrun --nnodes 2 --nproc_per_node 4 --rdzv-endpoint $HEAD:29500 train.py", "reads $HEAD"),
    ],
)
def test_rendezvous_address_of_several_nodes(machine, command, expected):
    found = machine.outcome("DDPE403", command).found
    assert len(found) == 1 and expected in found[0].message


def test_rendezvous_address_set_by_a_slurm_script_at_run_time(machine):
    (machine.project / "job.slurm").write_text(
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:4\n"
        'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)\n'
        "srun torchrun --nnodes $SLURM_NNODES --nproc_per_node 4 --rdzv_backend c10d \\\n"
        "    --rdzv_endpoint $MASTER_ADDR:29500 train.py\n"
    )
    facts = machine.facts("job.slurm")
    assert facts.nodes == 2 and facts.ranks_per_node == 4
    assert machine.outcome("DDPE403", "job.slurm").found == ()


def test_srun_without_a_launcher_needs_master_addr_for_env_rendezvous(machine):
    (machine.project / "job.sh").write_text("#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\nsrun python train.py\n")
    assert "MASTER_ADDR and MASTER_PORT are set neither" in messages(machine.outcome("DDPE403", "job.sh"))[0]
    (machine.project / "job.sh").write_text(
        "#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\nexport MASTER_ADDR=$(hostname)\nexport MASTER_PORT=29500\nsrun python train.py\n"
    )
    assert machine.outcome("DDPE403", "job.sh").found == ()


def test_rendezvous_of_one_node_is_not_checked(machine):
    assert machine.outcome("DDPE403", "torchrun --nproc_per_node 4 --master_addr 127.0.0.1 train.py").found == ()


def test_local_rank_as_rank_on_several_nodes(machine):
    machine.script(healthy_with('dist.init_process_group("nccl")', 'dist.init_process_group("nccl", rank=local_rank)'))
    several = machine.outcome("DDPE404", "torchrun --nnodes 2 --nproc_per_node 4 --rdzv-endpoint n1:29500 train.py")
    assert several.found[0].where.line == 13 and "spans 2 nodes" in several.found[0].message
    assert machine.outcome("DDPE404").found == ()  # one node: the local rank is the global one


RANK_ZERO_DOWNLOADS = """\
import torch.distributed as dist
import torchvision
{timeout_import}

def main():
    dist.init_process_group("nccl"{timeout})
    if dist.get_rank() == 0:
        torchvision.datasets.ImageNet("data", download=True)
    dist.barrier()

main()
"""


def test_rank_zero_work_under_the_default_nccl_timeout(machine):
    machine.script(RANK_ZERO_DOWNLOADS.format(timeout_import="", timeout=""))
    outcome = machine.outcome("DDPE405")
    found = outcome.found[0]
    assert found.severity is Severity.WARNING and found.where.line == 8
    assert "a download (download=True)" in found.message and "barrier() at train.py:9:5" in found.message
    assert "10 minutes (NCCL's default since PyTorch 2.2)" in found.message


def test_rank_zero_work_under_a_long_timeout_is_silent(machine):
    machine.script(RANK_ZERO_DOWNLOADS.format(timeout_import="from datetime import timedelta",
                                              timeout=", timeout=timedelta(hours=2)"))
    assert machine.outcome("DDPE405").found == ()
    machine.script(RANK_ZERO_DOWNLOADS.format(timeout_import="import datetime", timeout=", timeout=datetime.timedelta(minutes=5)"))
    assert "5 minutes (the script's timeout)" in messages(machine.outcome("DDPE405"))[0]


def test_rank_zero_work_with_a_timeout_known_only_at_run_time(machine):
    machine.script(RANK_ZERO_DOWNLOADS.format(timeout_import="", timeout=", timeout=args.timeout"))
    assert "timeout=args.timeout, which is known only when it runs" in machine.outcome("DDPE405").unchecked


def test_local_rendezvous_probe_failure(machine):
    machine.probes["torch"] = Probe("torch", True, "RuntimeError: Connection refused")
    assert "Connection refused" in messages(machine.outcome("DDPE406"))[0]
    machine.probes["torch"] = Probe("torch", False, "met", values={"gpus": 4})
    assert machine.outcome("DDPE406").found == () and machine.outcome("DDPE406").unchecked is None


def test_nccl_with_a_cpu_build_of_torch(machine):
    machine.remove_package("torch")
    machine.package("torch", "2.5.1+cpu", cuda=None)
    outcome = machine.outcome("DDPE407")
    assert outcome.found[0].where.line == 13 and "doesn't have NCCL built in" in outcome.found[0].message


def test_a_script_that_falls_back_to_the_cpu_needs_no_gpu_where_there_is_none(machine):
    machine.script(healthy_with("torch.cuda.set_device(local_rank)",
                                'device = torch.device("cuda", local_rank) if torch.cuda.is_available() else "cpu"'))
    assert machine.outcome("DDPE401", "torchrun --nproc_per_node 8 train.py").found != ()  # 4 GPUs: CUDA is available
    (machine.bin / "nvidia-smi").unlink()
    assert machine.outcome("DDPE401", "torchrun --nproc_per_node 8 train.py").found == ()


def test_the_backend_and_the_workers_come_from_the_parsers_defaults_and_the_launch(machine):
    machine.remove_package("torch")
    machine.package("torch", "2.5.1+cpu", cuda=None)
    machine.script(healthy_with('dist.init_process_group("nccl")', "dist.init_process_group(backend=args.backend)")
                   .replace('args = parser', 'parser.add_argument("--backend", default="nccl")\nargs = parser'))
    assert "the run uses the NCCL backend" in messages(machine.outcome("DDPE407"))[0]
    assert machine.outcome("DDPE407", "torchrun --nproc_per_node 4 train.py --backend gloo").found == ()


def test_workers_of_os_cpu_count_are_this_machines_cpus(machine):
    machine.shm_size = Statvfs(8 * GiB)
    machine.script(healthy_with("num_workers=args.workers", "num_workers=os.cpu_count()"))
    assert "4 rank(s) x 32 DataLoader worker(s)" in messages(machine.outcome("DDPE103"))[0]


def test_shared_memory_for_nccl_is_reported_even_where_the_workers_are_unknown(machine):
    machine.shm_size = Statvfs(64 * 1024**2)
    machine.script(healthy_with("num_workers=args.workers", "num_workers=args.loader_workers"))
    outcome = machine.outcome("DDPE103")
    assert outcome.unchecked is None and ["NCCL" in message for message in messages(outcome)] == [True]


def test_values_a_launch_script_sets_only_when_it_runs_are_not_judged(machine):
    (machine.project / "run.sh").write_text(
        "export CUDA_VISIBLE_DEVICES=$(free_gpus.sh)\nexport NCCL_SOCKET_IFNAME=$IFACE\nexport NCCL_P2P_DISABLE=$P2P\n"
        "torchrun --nproc_per_node 4 train.py\n"
    )
    outcomes = machine.outcomes("run.sh")
    assert outcomes["DDPE102"].unchecked == "CUDA_VISIBLE_DEVICES is $(...), set only when the job runs"
    assert outcomes["DDPE401"].unchecked == "CUDA_VISIBLE_DEVICES is $(...), set only when the job runs"
    assert outcomes["DDPE202"].found == () and outcomes["DDPE203"].found == ()


def test_rank_zero_switching_its_model_to_eval_mode_is_no_long_work(machine):
    machine.script(RANK_ZERO_DOWNLOADS.format(timeout_import="", timeout="").replace(
        'torchvision.datasets.ImageNet("data", download=True)', "model.eval()"))
    assert machine.outcome("DDPE405").found == ()
    machine.script(RANK_ZERO_DOWNLOADS.format(timeout_import="", timeout="").replace(
        'torchvision.datasets.ImageNet("data", download=True)', "for batch in val_loader: model(batch)"))
    assert "rank 0 alone runs a loop over val_loader" in messages(machine.outcome("DDPE405"))[0]
