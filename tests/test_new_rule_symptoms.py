"""The symptoms behind DDP019-DDP024, measured on CPU with gloo (2 ranks under torchrun).

Each experiment in tests/symptoms/ prints one JSON line; these tests assert the figures the
rules' explanations quote. DDP022 is shown by DistributedSampler alone (no process group),
DDP023 needs GPUs and is not shown here.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.harness, pytest.mark.xdist_group("harness")]
torch = pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent / "symptoms"
MARK = "SYMPTOM "


def _launch(script: str) -> tuple[dict, str]:
    # torchrun's agent makes a torchelastic_* folder in the temporary directory and leaves
    # it there: give the job one of its own, removed afterwards.
    with tempfile.TemporaryDirectory(prefix="ddplint-symptom-") as job_tmp:
        return _launch_in(script, job_tmp)


def _launch_in(script: str, job_tmp: str) -> tuple[dict, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", TMPDIR=job_tmp)
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
         str(HERE / script)],
        capture_output=True, text=True, timeout=120, env=env, cwd=HERE,
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith(MARK)]
    assert run.returncode == 0 and lines, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(lines[-1][len(MARK):]), run.stderr


def test_ddp019_module_call_never_all_reduces_and_ranks_diverge():
    result, _ = _launch("ddp019_forward_bypassed.py")
    assert result["module"]["allreduces"] == [0, 0]
    assert result["module"]["max_param_diff"] > 1e-3
    assert result["wrapper"]["allreduces"] == [result["steps"]] * 2
    assert result["wrapper"]["max_param_diff"] == 0.0


def test_ddp020_device_ids_on_cpu_model_refused_and_late_sync_bn_keeps_parameters():
    result, _ = _launch("ddp020_wrapper_order.py")
    assert "device_ids and output_device arguments only work with" in result["device_ids_on_cpu_model"]
    # convert_sync_batchnorm after the wrap reuses the very Parameter and buffer objects
    # DDP registered: gradient sync and buffer broadcast are unaffected.
    assert result["same_wrapper_returned"] and result["sync_bn_layers"] == 1
    assert result["params_still_registered"] and result["buffers_still_registered"]
    assert "expected input tensor to be on GPU" in result["late_converted_forward"]
    assert "SyncBatchNorm layers only work with GPU modules" in result["convert_then_wrap_on_cpu"]


def test_ddp020_compile_inside_ddp_still_split_at_buckets():
    # DDPOptimizer applies to DDP(torch.compile(model)) too: one graph per 1 MiB bucket.
    result, _ = _launch("ddp020_compile_order.py")
    assert result["DDP(compile(model))"] == 6


def test_ddp021_all_reduces_per_optimizer_step():
    result, _ = _launch("ddp021_accumulation.py")
    k = result["accumulate"]
    assert result["none"]["allreduces_per_step"] == [k, k]
    assert result["forward+backward"]["allreduces_per_step"] == [1, 1]
    assert result["backward only"]["allreduces_per_step"] == [k, k]
    assert result["forward only"]["allreduces_per_step"] == [1, 1]
    assert all(result[v]["max_param_diff"] == 0.0 for v in ("none", "forward+backward", "backward only", "forward only"))


def test_ddp024_reducer_warns_when_nothing_is_unused():
    _, stderr = _launch("ddp024_find_unused.py")
    assert "find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters" in stderr


def test_ddp022_eval_sampler_pads_by_repeating_samples():
    from torch.utils.data import DistributedSampler

    dataset = list(range(10))
    shards = [list(DistributedSampler(dataset, num_replicas=4, rank=r, shuffle=False)) for r in range(4)]
    seen = [i for shard in shards for i in shard]
    assert len(seen) == 12 and sorted(set(seen)) == dataset  # 2 samples counted twice
    assert seen.count(0) == 2 and seen.count(1) == 2
    dropped = [list(DistributedSampler(dataset, num_replicas=4, rank=r, shuffle=False, drop_last=True)) for r in range(4)]
    assert sum(map(len, dropped)) == 8  # drop_last=True loses 2 samples instead
