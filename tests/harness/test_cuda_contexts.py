"""DDP001's measure on GPUs: the processes the driver lists as holding a CUDA context
(nvidia-smi), not the ones with a GPU device file open. Run here against a stand-in nvidia-smi;
on a GPU machine the bundled `ddplint verify` runs it for real."""

import os
import stat

from ddplint.harness import probes
from ddplint.harness.launcher import LaunchResult
from ddplint.harness.scenarios import ddp001

GPUS = "0, GPU-aaaa\n1, GPU-bbbb\n"
APPS = "101, GPU-aaaa\n102, GPU-aaaa\n102, GPU-bbbb\n999, GPU-aaaa\n"


def _nvidia_smi(tmp_path, monkeypatch, gpus=GPUS, apps=APPS, exit_code=0):
    tool = tmp_path / "nvidia-smi"

    def printed(text):
        return text.replace("\n", "\\n")

    tool.write_text("#!/bin/sh\n"
                    f"[ {exit_code} = 0 ] || exit {exit_code}\n"
                    'case "$1" in\n'
                    f"  --query-gpu=*) printf '{printed(gpus)}' ;;\n"
                    f"  --query-compute-apps=*) printf '{printed(apps)}' ;;\n"
                    "esac\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")


def test_contexts_are_the_compute_processes_of_the_job_by_gpu_index(tmp_path, monkeypatch):
    _nvidia_smi(tmp_path, monkeypatch)
    # 103 has no context (an open /dev/nvidia0 alone, say); 999 is not in the job.
    assert probes.cuda_context_pids({101, 102, 103}) == {101: [0], 102: [0, 1]}


def test_without_nvidia_smi_the_contexts_are_not_counted(tmp_path, monkeypatch):
    _nvidia_smi(tmp_path, monkeypatch, exit_code=9)
    assert probes.cuda_context_pids({101}) is None
    run = LaunchResult(0, 1.0, observed={"uncounted": "nvidia-smi could not list them"})
    measured = ddp001.measure({"main": run}, {"gpus": 1, "backend": "gloo", "nproc": 2})
    assert measured.symptom is None and "nvidia-smi" in measured.text


def test_extra_contexts_on_gpu_0_are_the_symptom():
    def measured(contexts, backend):
        run = LaunchResult(0, 1.0, observed={"contexts": contexts})
        return ddp001.measure({"main": run}, {"gpus": 2, "backend": backend, "nproc": 2})

    ranks_and_workers = [{"pid": p, "name": "python3", "gpus": [0]} for p in (1, 2, 3, 4)]
    assert measured(ranks_and_workers, "gloo").symptom is True
    assert measured([], "gloo").symptom is False
    # Under NCCL, rank 0's own context is on GPU 0; rank 1's is on GPU 1.
    own = [{"pid": 1, "name": "python3", "gpus": [0]}, {"pid": 2, "name": "python3", "gpus": [1]}]
    assert measured(own, "nccl").symptom is False
