"""The symptoms behind DDP019-DDP028, measured on CPU with gloo (2 ranks under torchrun).

Each rule's evidence lives in its folder, ddplint/harness/scenarios/ddpNNN/: these tests run
the bundled scenarios of DDP019 and DDP021 before and after (as `ddplint verify` does) and the
experiments (experiment_*.py) of DDP020 and DDP024, each printing one result line, and assert
the figures the rules' explanations quote. DDP022 is shown by DistributedSampler alone (no
process group), through the symptom `verify --script` looks for; DDP023 needs GPUs and is not
shown here.
"""

import json
import subprocess
import sys
import tempfile
from types import SimpleNamespace

import pytest

from ddplint.harness import probes
from ddplint.harness.runner import child_env
from ddplint.harness.scenarios import all_evidence

pytestmark = [pytest.mark.harness, pytest.mark.xdist_group("harness")]
torch = pytest.importorskip("torch")

EVIDENCE = all_evidence()


def _launch(code: str, name: str) -> tuple[dict, str]:
    """Run the experiment ``name`` of a rule's folder; its result line and the ranks' stderr."""
    (script,) = [p for p in EVIDENCE[code].experiments if p.name == name]
    # torchrun's agent makes a torchelastic_* folder in the temporary directory and leaves
    # it there: give the job one of its own, removed afterwards.
    with tempfile.TemporaryDirectory(prefix="ddplint-symptom-") as job_tmp:
        env = dict(child_env(), OMP_NUM_THREADS="1", TMPDIR=job_tmp)
        env[probes.BACKEND_VAR] = "gloo"  # these measure what DDP does on CPU ranks
        run = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
             str(script)],
            capture_output=True, text=True, timeout=120, env=env, cwd=job_tmp,
        )
    lines = [line for line in run.stdout.splitlines() if line.startswith(probes.RESULT_MARK)]
    assert run.returncode == 0 and lines, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(lines[-1][len(probes.RESULT_MARK):]), run.stderr


@pytest.fixture(scope="module")
def bundled():
    """The bundled runs of DDP019 and DDP021 (one launch before, one after), by rule."""
    from ddplint.harness import launcher, runner

    topology = launcher.choose_topology(launcher.count_gpus())
    return {o.rule: o for o in runner.verify(["DDP019", "DDP021"], runner.Options(topology, timeout=180))}


def test_ddp019_module_call_never_all_reduces_and_ranks_diverge(bundled):
    before, after = bundled["DDP019"].before.data, bundled["DDP019"].after.data
    world = before["world"]
    assert before["allreduces"] == [0] * world
    assert before["max_param_diff"] > 1e-3
    # ddplint's fix calls the wrapper instead.
    assert after["allreduces"] == [after["steps"]] * world
    assert after["max_param_diff"] == 0.0


def test_ddp021_all_reduces_per_optimizer_step(bundled):
    # The program's loops before; the placements the rule recommends after.
    result = bundled["DDP021"].before.data | bundled["DDP021"].after.data
    k = result["accumulate"]

    def per_step(loop):
        return {n for steps in result[loop]["allreduces_per_step"] for n in steps}

    assert per_step("none") == {k}
    assert per_step("forward_and_backward") == {1}
    assert per_step("backward") == {k}
    assert per_step("forward") == {1}
    assert all(result[v]["max_param_diff"] == 0.0 for v in ("none", "forward_and_backward", "backward", "forward"))


def test_ddp020_device_ids_on_cpu_model_refused_and_late_sync_bn_keeps_parameters():
    result, _ = _launch("DDP020", "experiment_wrapper_order.py")
    assert "device_ids and output_device arguments only work with" in result["device_ids_on_cpu_model"]
    # convert_sync_batchnorm after the wrap reuses the very Parameter and buffer objects
    # DDP registered: gradient sync and buffer broadcast are unaffected.
    assert result["same_wrapper_returned"] and result["sync_bn_layers"] == 1
    assert result["params_still_registered"] and result["buffers_still_registered"]
    assert "expected input tensor to be on GPU" in result["late_converted_forward"]
    assert "SyncBatchNorm layers only work with GPU modules" in result["convert_then_wrap_on_cpu"]


def test_ddp020_compile_inside_ddp_still_split_at_buckets():
    # DDPOptimizer applies to DDP(torch.compile(model)) too: one graph per 1 MiB bucket.
    result, _ = _launch("DDP020", "experiment_compile_order.py")
    assert result["DDP(compile(model))"] == 6


def test_ddp024_reducer_warns_when_nothing_is_unused():
    _, stderr = _launch("DDP024", "experiment_find_unused.py")
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

    # What `verify --script` looks for in a run of such a loader: the padding, on the ranks
    # that read samples 0 and 1 a second time.
    def loader(shard):
        return {"distributed": True, "shuffle": False, "dataset": len(dataset), "passes": [shard]}

    ctx = {"gpus": 0, "finding": SimpleNamespace(path="eval.py", line=3, span=(3, 3))}
    run = SimpleNamespace(ranks=[{"loaders": [loader(s)]} for s in shards], completed=True,
                          silent_ranks=lambda: [])
    padded = EVIDENCE["DDP022"].script_symptom(run, ctx)
    assert padded.symptom is True and "2 read by more than one rank" in padded.text
    run.ranks = [{"loaders": [loader(s)]} for s in dropped]
    assert EVIDENCE["DDP022"].script_symptom(run, ctx).symptom is False
    # A shuffling evaluation sampler (the common case) pads the same way (issue 40, 10).
    shuffled = [list(DistributedSampler(dataset, num_replicas=4, rank=r, shuffle=True)) for r in range(4)]
    run.ranks = [{"loaders": [loader(s) | {"shuffle": True}]} for s in shuffled]
    assert EVIDENCE["DDP022"].script_symptom(run, ctx).symptom is True


def test_ddp026_clip_grad_norm_takes_each_shards_norm_on_fsdp1():
    result, _ = _launch("DDP026", "experiment_clip_shards.py")
    for sharded in ("full_shard", "shard_grad_op", "use_orig_params"):
        ranks = result[sharded]
        functions, methods = [r["function"] for r in ranks], [r["method"] for r in ranks]
        assert len(set(methods)) == 1 and functions[0] != functions[1]  # each rank its own shard's norm
        # FSDP's method: the global norm, the root of the sum of the shards' squares.
        assert abs(methods[0] - sum(f * f for f in functions) ** 0.5) < 1e-3
    global_norm = result["full_shard"][0]["method"]
    assert all(r["function"] == r["method"] == global_norm for r in result["no_shard"])
    assert all(r["function"] == global_norm for r in result["fully_shard"])  # FSDP2's DTensors: right


def test_ddp025_optimizer_built_before_the_fsdp_wrap_steps_nothing():
    result, _ = _launch("DDP025", "experiment_stale_optimizer.py")
    for how in ("fsdp1", "fully_shard"):
        for rank in result[f"{how}_optimizer_before"]:
            assert len(set(rank["losses"])) == 1 and not rank["optimizer_parameters_changed"]
    # After the wrap, or with FSDP1's use_orig_params=True, the loss falls from the first step.
    for trains in ("fsdp1_optimizer_after", "fully_shard_optimizer_after", "fsdp1_orig_params_optimizer_before"):
        for rank in result[trains]:
            losses = rank["losses"]
            assert all(b < a for a, b in zip(losses, losses[1:])) and rank["optimizer_parameters_changed"]


def test_ddp027_one_seed_on_every_rank_draws_the_same_noise_each_step():
    result, _ = _launch("DDP027", "experiment_shared_seed.py")
    shared, per_rank = result["shared_seed"], result["seed_plus_rank"]
    assert shared["identical_steps"] == shared["steps"] == 5  # every step: the same timesteps and noise
    assert per_rank["identical_steps"] == 0
    assert shared["weights_equal"] and per_rank["weights_equal"]  # DDP keeps the replicas equal either way


def test_ddp028_unsynced_monitored_metric_gives_each_rank_its_own_best():
    pytest.importorskip("lightning")
    result, _ = _launch("DDP028", "experiment_monitored_metric.py")
    unsynced, synced = result["sync_dist_False"], result["sync_dist_True"]
    # Each rank's ModelCheckpoint keeps its own shard's loss as the best score.
    assert [r["best_score"] for r in unsynced] == [r["own_last_loss"] for r in unsynced]
    assert unsynced[0]["best_score"] != unsynced[1]["best_score"]
    mean = sum(r["own_last_loss"] for r in synced) / len(synced)
    assert all(abs(r["best_score"] - mean) < 1e-3 for r in synced)
