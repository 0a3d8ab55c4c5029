"""The GPU-only symptoms of DDP011 and DDP017, measured by their folders' experiments on a
real GPU. Without one they are skipped as "needs GPU": a CPU cannot show them, and nothing here
passes in their place."""

import json
import subprocess
import sys

import pytest

from ddplint.harness import launcher, probes
from ddplint.harness.runner import child_env
from ddplint.harness.scenarios import all_evidence

pytest.importorskip("torch")


def _experiment(code: str, name: str) -> dict:
    if launcher.count_gpus() == 0:
        pytest.skip("needs GPU")
    (script,) = [p for p in all_evidence()[code].experiments if p.name == name]
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=600, env=child_env())
    lines = [line for line in run.stdout.splitlines() if line.startswith(probes.RESULT_MARK)]
    assert run.returncode == 0 and lines, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(lines[-1][len(probes.RESULT_MARK):])


def test_ddp017_visible_devices_ignored_after_the_calls_the_rule_names():
    result = _experiment("DDP017", "experiment_visible_devices.py")
    print(json.dumps(result, indent=1))
    # Set before any CUDA call, the empty value hides the GPU: the fixed order works.
    assert not result["nothing"]["allocated_after_hiding"]
    # After a call that initialises CUDA, it is ignored: the GPU is still used.
    for first in ("is_available", "set_device", "tensor.cuda"):
        assert result[first]["allocated_after_hiding"], first
    # device_count() asks NVML and leaves the variable honoured, so the rule spares it.
    assert not result["device_count"]["allocated_after_hiding"]


def test_ddp011_launch_blocking_makes_every_launch_wait_for_its_kernel():
    result = _experiment("DDP011", "experiment_launch_blocking.py")
    print(json.dumps(result, indent=1))
    assert result["unset"]["kernel_done_when_launch_returned"] is False
    assert result["blocking"]["kernel_done_when_launch_returned"] is True
