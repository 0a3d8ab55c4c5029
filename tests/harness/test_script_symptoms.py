"""How `verify --script` reads the probes' facts and judges a finding (no launch)."""

import json

import pytest

from ddplint.harness import script
from ddplint.harness.launcher import LaunchResult
from ddplint.harness.script import Finding, Run

CTX = {"gpus": 0, "finding": Finding("DDP000", "name", "train.py", 3, 1, "message", 3)}


def _rank(rank, **facts):
    base = {"rank": rank, "loaders": [], "loads": [], "saves": [], "collectives": [], "splits": [],
            "exceptions": [], "stopped": None, "finished": True, "cpus": 2, "local_world_size": 2,
            "modules": ["train.py"], "raised_at": [], "parse_errors": []}
    return base | facts


def _run(*ranks, returncode=0, stderr=None, output=None, timed_out=False, max_seconds=None):
    stderr = stderr or {}
    lines = output or {rank: list(lines) for rank, lines in stderr.items()}
    launch = LaunchResult(returncode, 1.0, timed_out=timed_out, rank_stderr=stderr, rank_lines=lines)
    return Run(launch, list(ranks), max_seconds)


def _loader(*passes, distributed=True, shuffle=True, sharded=True, workers=0):
    return {"dataset": 8, "num_workers": workers, "passes": [list(p) for p in passes],
            "sampler": "DistributedSampler", "distributed": distributed, "shuffle": shuffle,
            "sharded_dataset": sharded}


def test_epoch_order_compares_the_first_two_epochs_of_a_shuffling_sampler():
    same = _run(_rank(0, loaders=[_loader([1, 5], [1, 5])]), _rank(1, loaders=[_loader([2, 6], [2, 6])]))
    moved = _run(_rank(0, loaders=[_loader([1, 5], [5, 1])]), _rank(1, loaders=[_loader([2, 6], [6, 2])]))
    one_epoch = _run(_rank(0, loaders=[_loader([1, 5])]), _rank(1, loaders=[_loader([2, 6])]))
    # A sampler that does not shuffle repeats its order by design: not a symptom.
    ordered = _run(_rank(0, loaders=[_loader([1], [1], shuffle=False)]),
                   _rank(1, loaders=[_loader([2], [2], shuffle=False)]))
    assert script.symptom("DDP003")(same, CTX).symptom is True
    assert script.symptom("DDP003")(moved, CTX).symptom is False
    assert script.symptom("DDP003")(one_epoch, CTX).symptom is None
    assert script.symptom("DDP003")(ordered, CTX).symptom is None


def test_rank_overlap_allows_the_padding_of_one_sample():
    everything = _run(_rank(0, loaders=[_loader(range(8))]), _rank(1, loaders=[_loader(range(8))]))
    padded = _run(_rank(0, loaders=[_loader([0, 2, 4, 6, 8])]), _rank(1, loaders=[_loader([1, 3, 5, 7, 0])]))
    assert script.symptom("DDP006")(everything, CTX).symptom is True
    assert script.symptom("DDP006")(padded, CTX).symptom is False


def test_saves_workers_and_local_rank():
    shared = _run(_rank(0, saves=["/x/ckpt.pt"]), _rank(1, saves=["/x/ckpt.pt"]))
    own = _run(_rank(0, saves=["/x/ckpt.pt"]), _rank(1, saves=[]))
    assert script.symptom("DDP014")(shared, CTX).symptom is True
    assert script.symptom("DDP014")(own, CTX).symptom is False
    many = _run(_rank(0, loaders=[_loader(workers=2)]), _rank(1, loaders=[_loader(workers=2)]))
    assert script.symptom("DDP018")(many, CTX).symptom is True


def _local_rank(parsed, reads, launch_option=None):
    return _run(*(_rank(r, local_rank={"parsed": parsed, "env": str(r), "reads": reads(r),
                                       "launch_option": launch_option}) for r in (0, 1)))


def test_local_rank_is_judged_where_it_is_used():
    default = _local_rank(0, lambda r: [[0, "train.py:40"]])
    symptom = script.symptom("DDP012")(default, CTX)
    assert symptom.symptom is True and "rank 1 used args.local_rank = 0 at train.py:40" in symptom.text
    # Issue 27, 1: the script sets args.local_rank from LOCAL_RANK right after parsing and trains
    # correctly under torchrun: the value parsed is not the value used, and no symptom.
    overwritten = _local_rank(0, lambda r: [[r, "train.py:40"]],
                              "unrecognized arguments: --local-rank=1")
    fine = script.symptom("DDP012")(overwritten, CTX)
    assert fine.symptom is False and "equals LOCAL_RANK" in fine.text
    assert "torch.distributed.launch" in fine.text and "--local-rank=1" in fine.text
    assert _judged("DDP012", overwritten, overwritten)[0] != "CONFIRMED"
    never_read = script.symptom("DDP012")(_local_rank(0, lambda r: []), CTX)
    assert never_read.symptom is None and "never read" in never_read.text
    refused = _run(_rank(0, finished=False, parse_errors=["the following arguments are required: --local_rank"]),
                   _rank(1, finished=False), returncode=2)
    assert script.symptom("DDP012")(refused, CTX).symptom is True


def test_cpu_checkpoints_need_a_gpu_and_cuda_errors_are_the_symptom():
    cpu = _run(_rank(0, loads=[{"path": "c", "devices": ["cpu"]}]), _rank(1, loads=[{"path": "c", "devices": ["cpu"]}]))
    assert script.symptom("DDP004")(cpu, CTX).needs_gpu
    err = "RuntimeError: Attempting to deserialize object on a CUDA device"
    failing = _run(_rank(0, loads=[{"path": "c", "error": err}]), _rank(1))
    assert script.symptom("DDP004")(failing, CTX).symptom is True


def _judged(code, before_run, after_run, fixed=True, path="train.py", others=(), changed=None):
    """The verdict on one finding of ``code`` at ``path``:3 (with the findings ``others``,
    judged together with it, as verify_script does); ``changed``: the lines the fix wrote."""
    findings = [Finding(code, "name", path, 3, 1, "message", 3, fixed), *others]
    script.judge_findings(findings, before_run, after_run, changed or {})
    return findings[0].verdict, findings[0].reason


def _crashed(line):
    tb = ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>', line]
    return _run(_rank(0, finished=False), _rank(1, finished=False), returncode=1, stderr={0: tb, 1: tb})


def test_a_script_that_needs_a_gpu_or_missing_data_is_never_a_pass():
    fine = _run(_rank(0), _rank(1))
    verdict, reason = _judged("DDP014", _crashed("AssertionError: Torch not compiled with CUDA enabled"), fine)
    assert verdict == "NEEDS GPU" and "Torch not compiled with CUDA enabled" in reason
    verdict, _ = _judged("DDP014", _crashed("FileNotFoundError: [Errno 2] No such file: 'data/train.csv'"), fine)
    assert verdict == "NOT OBSERVED"
    before = script.symptom("DDP014")(_crashed("FileNotFoundError: [Errno 2] No such file"), CTX)
    assert "did not complete: rank 0: FileNotFoundError" in before.text


def test_verdicts():
    pickling = _crashed("AttributeError: Can't pickle local object 'f.<locals>.<lambda>'")
    fine, broken = _run(_rank(0), _rank(1)), _crashed("RuntimeError: something else")
    assert _judged("DDP002", pickling, fine)[0] == "CONFIRMED"
    assert _judged("DDP002", pickling, pickling)[0] == "FAILED"
    # The fixed script failed otherwise, before it could show the error or its absence.
    assert _judged("DDP002", pickling, broken)[0] == "SYMPTOM SHOWN, FIX UNTESTED"
    assert _judged("DDP002", pickling, fine, fixed=False)[0] == "SYMPTOM SHOWN, NO FIX"
    assert _judged("DDP002", fine, fine)[0] == "NO SYMPTOM"


def test_the_shim_runs_the_sitecustomize_it_shadows(tmp_path):
    import os
    import subprocess
    import sys

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import sys; sys.stdout.write('their sitecustomize ran\\n')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(script.SHIM), str(theirs)]))
    env.pop("DDPLINT_OBSERVE", None)
    out = subprocess.run([sys.executable, "-c", "import sitecustomize; print(sitecustomize.__file__)"],
                         env=env, capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["their sitecustomize ran", str(theirs / "sitecustomize.py")]


PROBED_PARSER = """
import argparse, copy, json, os, pickle, sys
from ddplint.harness import observe
observe.install()
parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args([])
args.local_rank = int(os.environ["LOCAL_RANK"])
device = args.local_rank
plain = pickle.loads(pickle.dumps(args))
assert type(plain) is argparse.Namespace and vars(plain) == {"local_rank": 1}, plain
assert vars(copy.deepcopy(args)) == {"local_rank": 1}
strict = argparse.ArgumentParser()
strict.add_argument("--local_rank", type=int, required=True)
strict.parse_args([])
"""


def _run_probed(tmp_path, source: str, rank: int, watch: dict | None = None):
    """Run `source` as train.py in a process of its own, as rank `rank` of an observed job
    (counting the runs of the statements `watch` names): its process and the facts its probes
    saved (None if they saved none)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("torch")
    # TMPDIR: building a DDP model makes torch's torchinductor_<user> cache folder there.
    (tmp_path / "tmp").mkdir()
    env = dict(os.environ, DDPLINT_OBSERVE=str(tmp_path), DDPLINT_PROJECT=str(tmp_path), RANK=str(rank),
               LOCAL_RANK=str(rank), TMPDIR=str(tmp_path / "tmp"),
               # The shim starts the probes before the program runs, as in a launched rank.
               PYTHONPATH=os.pathsep.join([str(script.SHIM), str(script.SHIM.parents[2])]))
    env.pop("DDPLINT_OBSERVE_OWNER", None)
    if watch:
        env["DDPLINT_WATCH"] = json.dumps(watch)
    (tmp_path / "train.py").write_text(source)
    proc = subprocess.run([sys.executable, str(tmp_path / "train.py")], env=env, capture_output=True,
                          text=True, timeout=120)
    saved = tmp_path / f"rank{rank}.json"
    return proc, json.loads(saved.read_text()) if saved.exists() else None


def test_the_probes_see_local_rank_where_it_is_read_and_argparse_exiting(tmp_path):
    """In a process of its own: the probes patch argparse."""
    proc, facts = _run_probed(tmp_path, PROBED_PARSER, 1)
    assert proc.returncode == 2, proc.stderr  # the strict parser exits, as argparse does
    # The first parser's: the value set from LOCAL_RANK is the one read, on line 9.
    assert facts["local_rank"] == {"parsed": 0, "env": "1", "reads": [[1, "train.py:9", False]],
                                   "launch_option": "unrecognized arguments: --local-rank=1",
                                   "defined_at": "train.py:6"}
    assert facts["parse_errors"] == ["the following arguments are required: --local_rank"]
    assert facts["modules"] == ["train.py"]


PROBED_COLLECTIVES = """
import torch, torch.distributed as dist
from ddplint.harness import observe
observe.install()
dist.init_process_group("gloo", init_method="file://{store}", rank=0, world_size=1)
dist.barrier()
dist.monitored_barrier()
dist.all_reduce(torch.zeros(1))
dist.destroy_process_group()
"""


def test_the_probes_record_the_collectives_the_catalog_knows(tmp_path):
    """`monitored_barrier` among them: ddplint.core.torch_api.COLLECTIVE_NAMES is the one list."""
    proc, facts = _run_probed(tmp_path, PROBED_COLLECTIVES.format(store=tmp_path / "store"), 0)
    assert proc.returncode == 0, proc.stderr
    assert facts["collectives"] == ["barrier", "monitored_barrier", "all_reduce"]


PROBED_DDP = """
import contextlib, torch, torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from ddplint.harness import observe
observe.install()
dist.init_process_group("gloo", init_method="file://{store}", rank=0, world_size=1)
model = DDP(nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(4):  # accumulate 2 micro-batches; the first with no_sync() around the forward
    with model.no_sync() if i % 2 == 0 else contextlib.nullcontext():
        loss = model(torch.randn(2, 4)).sum()
    loss.backward()
    if i % 2:
        opt.step()
model.module(torch.randn(2, 4)).sum().backward()  # bypasses DDP's forward
opt.step()
with torch.no_grad():
    model.module(torch.randn(2, 4))  # evaluation: not a bypass
dist.destroy_process_group()
"""


def test_the_probes_count_ddp_forwards_per_step_and_calls_that_bypass_ddp(tmp_path):
    proc, facts = _run_probed(tmp_path, PROBED_DDP.format(store=tmp_path / "store"), 0)
    assert proc.returncode == 0, proc.stderr
    assert facts["ddp"] == {"models": 1, "forwards": 4, "syncing_per_step": [1, 1, 0], "bypasses": 1,
                            "bypass_at": "train.py:16"}


def _ddp(syncing=(1, 1), bypasses=0, models=1):
    return {"models": models, "forwards": 2, "syncing_per_step": list(syncing), "bypasses": bypasses,
            "bypass_at": "train.py:9" if bypasses else None}


def test_the_symptoms_of_ddp019_and_ddp021_read_the_ddp_probe():
    bypassed = _run(_rank(0, ddp=_ddp(bypasses=3)), _rank(1, ddp=_ddp(bypasses=3)))
    assert script.symptom("DDP019")(bypassed, CTX).symptom is True
    assert "first at train.py:9" in script.symptom("DDP019")(bypassed, CTX).text
    assert script.symptom("DDP019")(_run(_rank(0, ddp=_ddp()), _rank(1, ddp=_ddp())), CTX).symptom is False
    assert script.symptom("DDP019")(_run(_rank(0), _rank(1)), CTX).symptom is None  # no DDP model
    every = _run(_rank(0, ddp=_ddp((4, 4))), _rank(1, ddp=_ddp((4, 4))))
    assert script.symptom("DDP021")(every, CTX).symptom is True
    assert script.symptom("DDP021")(_run(_rank(0, ddp=_ddp()), _rank(1, ddp=_ddp())), CTX).symptom is False
    assert script.symptom("DDP021")(_run(_rank(0, ddp=_ddp(())), _rank(1, ddp=_ddp(()))), CTX).symptom is None


def test_the_symptoms_of_ddp020_and_ddp024_are_what_ddp_says():
    refused = ("ValueError: DistributedDataParallel device_ids and output_device arguments only work with "
               "single-device/multiple-device GPU modules or CPU modules, but got device_ids [0]")
    failed = _run(_rank(0, exceptions=[refused], finished=False), _rank(1), returncode=1)
    assert script.symptom("DDP020")(failed, CTX).symptom is True
    warning = ("[rank1]:[W reducer.cpp:1529] Warning: find_unused_parameters=True was specified in DDP "
               "constructor, but did not find any unused parameters in the forward pass.")
    warned = _run(_rank(0), _rank(1), output={0: [], 1: [warning]})
    assert script.symptom("DDP024")(warned, CTX).text.startswith("reducer warning (no unused parameter "
                                                                 "found), on rank(s) [1]")
    assert script.symptom("DDP024")(_run(_rank(0), _rank(1)), CTX).symptom is False


def test_the_cpu_mapping_caveat_is_the_rules_own():
    from ddplint.harness import cpu_mapping
    from ddplint.harness.scenarios import all_evidence

    hides = all_evidence()["DDP004"].cpu_mapping_hides
    assert cpu_mapping.hidden_reason(hides, False) == f"the CPU mapping cannot show this: {hides}"
    assert cpu_mapping.hidden_reason(hides, True) is None  # a checkpoint saved on a real GPU
    assert cpu_mapping.hidden_reason(all_evidence()["DDP003"].cpu_mapping_hides, False) is None


PROBED_PLACES = """
import argparse, os
from torch.utils.data import DataLoader, DistributedSampler
from ddplint.harness import observe
observe.install()
parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args = parser.parse_args([])
local_rank = args.local_rank if args.local_rank != -1 else int(os.environ["LOCAL_RANK"])
data = list(range(8))
loader = DataLoader(data, batch_size=2,
                    sampler=DistributedSampler(data, num_replicas=1, rank=0))
warm_up = sum(len(batch) for batch in loader)
for epoch in range(2):
    for batch in loader:
        pass
"""


def test_the_probes_say_where_loaders_and_passes_were_made_and_what_ran(tmp_path):
    """Issue 40, 1, 3, 6 and 10: the places that tie what a run did to a finding's code."""
    proc, facts = _run_probed(tmp_path, PROBED_PLACES, 0, watch={"train.py": [[14, 16], [11, 12]]})
    assert proc.returncode == 0, proc.stderr
    # The fallback check compares args.local_rank and never uses it.
    assert facts["local_rank"]["reads"] == [[-1, "train.py:9", True]]
    assert facts["local_rank"]["defined_at"] == "train.py:7"
    (loader,) = facts["loaders"]
    assert loader["created_at"] == ["train.py:11"] and loader["sampler_at"] == ["train.py:12"]
    # The warm-up pass (line 13's generator) and the two epochs begun at line 15.
    assert [sites[0] for sites in loader["pass_sites"]] == ["train.py:13", "train.py:15", "train.py:15"]
    # The loop ran once (however many times it went round); the loader's statement once.
    assert facts["reached"] == {"train.py:14": 1, "train.py:11": 1}
    assert facts["finished"] is True
