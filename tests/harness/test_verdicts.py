"""Issue 27: every verdict of `verify --script` (and of the bundled run) follows from what the
runs showed. Each test is one of the verdicts that were not true; no launch here."""

from test_script_symptoms import CTX, _judged, _loader, _rank, _run

from ddplint.harness import cli, runner, script
from ddplint.harness.launcher import LaunchResult, Topology
from ddplint.harness.script import Finding, ScriptOptions, ScriptReport

NO_CUDA = "AssertionError: Torch not compiled with CUDA enabled"


def _loaders(*epochs):
    return [{"dataset": 8, "num_workers": 0, "passes": [list(e) for e in epochs], "sampler": "DistributedSampler",
             "distributed": True, "shuffle": True, "sharded_dataset": True}]


REPEATED = [_rank(0, loaders=_loaders([1, 5], [1, 5])), _rank(1, loaders=_loaders([2, 6], [2, 6]))]
SHUFFLED = [_rank(0, loaders=_loaders([1, 5], [5, 1])), _rank(1, loaders=_loaders([2, 6], [6, 2]))]


def _stopped(ranks):
    return _run(*[r | {"finished": None, "stopped": "max-seconds"} for r in ranks], max_seconds=10)


def test_a_run_stopped_by_max_seconds_is_not_completed_nor_confirmed():  # issue 27, 2
    before, after = _stopped(REPEATED), _stopped(SHUFFLED)
    assert not after.completed and after.stopped
    assert after.state() == "stopped after 10s by --max-seconds (not completed)"
    verdict, reason = _judged("DDP003", before, after)
    assert verdict == "SYMPTOM GONE, RUN INCOMPLETE" and "stopped after 10s" in reason


def _hung(ranks):
    lines = {r["rank"]: ["epoch 0", "waiting"] for r in ranks}
    return _run(*[r | {"finished": None, "stopped": "hang"} for r in ranks], returncode=-15,
                timed_out=True, output=lines)


def test_a_hang_under_timeout_is_reported_as_what_the_after_line_says():  # issue 27, 3
    f = Finding("DDP003", "name", "train.py", 3, 1, "message", 3)
    after = _hung(SHUFFLED)
    f.after = script.symptom("DDP003")(after, {"gpus": 0, "finding": f})
    assert f.after.symptom is False and "0/2 ranks" in f.after.text
    # FAILED means the symptom is still there: it is gone, and the reason says how the fixed
    # run ended (issue 40, 2).
    verdict, reason = _judged("DDP003", _run(*REPEATED), after)
    assert verdict == "SYMPTOM GONE, RUN INCOMPLETE"
    assert "absent after; the fixed script then did not complete: hung, killed at --timeout" in reason
    # The same hang before the fix: the fix did not cause it.
    verdict, reason = _judged("DDP003", _hung(REPEATED), after)
    assert verdict == "SYMPTOM GONE, RUN INCOMPLETE" and "ended as the script before the fix did" in reason


def test_ddp004_shown_by_the_load_error_and_gone_with_map_location():  # issue 27, 4
    err = ("RuntimeError: Attempting to deserialize object on a CUDA device but "
           "torch.cuda.is_available() is False.")
    failing = _run(*[_rank(r, finished=False, loads=[{"path": "c", "error": err, "mapped": False}],
                           exceptions=[err]) for r in (0, 1)], returncode=1)
    mapped = _run(*[_rank(r, loads=[{"path": "c", "devices": ["cpu"], "mapped": True}]) for r in (0, 1)])
    verdict, reason = _judged("DDP004", failing, mapped)
    assert verdict == "CONFIRMED", reason
    # A checkpoint saved on the CPU and loaded without map_location shows nothing: needs a GPU.
    cpu = _run(*[_rank(r, loads=[{"path": "c", "devices": ["cpu"], "mapped": False}]) for r in (0, 1)])
    assert _judged("DDP004", cpu, mapped)[0] == "NEEDS GPU"


def _crashed_at(path, line, error=NO_CUDA, modules=("train.py",)):
    tb = ["Traceback (most recent call last):", f'  File "{path}", line {line}, in <module>', error]
    ranks = [_rank(r, finished=False, exceptions=[error], raised_at=[["train.py", 1, "<module>"],
                                                                     [path, line, "<module>"]],
                   modules=list(modules)) for r in (0, 1)]
    return _run(*ranks, returncode=1, stderr={0: tb, 1: tb})


def test_ddp001_crash_at_import_is_ddp001s_alone():  # issue 27, 5
    before = _crashed_at("train.py", 3)
    completed = _run(_rank(0), _rank(1))
    ddp003 = Finding("DDP003", "name", "train.py", 30, 5, "message", 30)
    verdict, _ = _judged("DDP001", before, completed, others=[ddp003])
    assert verdict == "CONFIRMED"
    assert ddp003.before.symptom is None
    verdict, reason = _judged("DDP003", before, completed,
                              others=[Finding("DDP001", "name", "train.py", 3, 1, "message", 3)])
    assert verdict == "NOT REACHED"
    assert "ended earlier, in DDP001 (train.py:3)" in reason and "Torch not compiled" in reason
    # The fixed script gets past the import, then needs a GPU further on: DDP001's symptom is
    # gone (as its after line says), the reason says the rest needs a GPU, not FAILED.
    later = _crashed_at("train.py", 40)
    verdict, reason = _judged("DDP001", before, later)
    assert verdict == "SYMPTOM GONE, RUN INCOMPLETE", reason
    assert "absent after" in reason and "for want of a GPU" in reason and "rank 0 at train.py:40" in reason
    # A CUDA call elsewhere (in main) is not DDP001's symptom.
    assert script.symptom("DDP001")(later, {"gpus": 0, "finding": ddp003}).symptom is not True


def test_a_gpu_failure_without_a_finding_to_blame_needs_a_gpu():
    for error in ["AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'",
                  "ValueError: DistributedDataParallel device_ids and output_device arguments only "
                  "work with single-device/multiple-device GPU modules or CPU modules",
                  "RuntimeError: Distributed package doesn't have NCCL built in"]:
        before = _crashed_at("train.py", 20, error)
        verdict, reason = _judged("DDP003", before, before)
        assert verdict == "NEEDS GPU" and error in reason, error


def test_a_script_that_says_it_lacks_gpus_and_exits_0_is_not_completed():  # issue 27, 1st list
    said = "Unable to locate sufficient 2 gpus to run this example. Exiting."
    exited = _run(_rank(0), _rank(1), output={0: ["starting", said], 1: [said]})
    assert exited.finished and not exited.completed
    assert exited.state() == f"exited for want of a GPU: the script says: {said}"
    verdict, reason = _judged("DDP003", exited, exited)
    assert verdict == "NEEDS GPU" and said in reason


def test_findings_in_modules_the_script_never_imports():  # issue 27, 7
    many_workers = _run(*[_rank(r, loaders=[{"dataset": 8, "num_workers": 4, "passes": [[1]],
                                             "distributed": True}]) for r in (0, 1)])
    verdict, reason = _judged("DDP018", many_workers, many_workers, path="tools/unused.py")
    assert (verdict, reason) == ("NOT IMPORTED", "tools/unused.py was never imported: neither run loaded it")
    # Imported, the same run is this finding's symptom.
    assert _judged("DDP018", many_workers, many_workers) == ("FAILED", "symptom still present after the fix")
    # Issue 40, 9: a run that failed is no reason for a file it never imported.
    crashed = _crashed_at("train.py", 20, "RuntimeError: Distributed package doesn't have NCCL built in")
    verdict, reason = _judged("DDP018", crashed, None, path="tools/unused.py")
    assert (verdict, reason) == ("NOT IMPORTED", "tools/unused.py was never imported: neither run loaded it")


def test_a_syntax_error_is_one_line_and_exit_2(tmp_path, error_line):  # issue 27, 6
    broken = tmp_path / "train.py"
    broken.write_text("import torch\ndef main(:\n    pass\n")
    assert cli.main(["--script", str(broken)]) == 2
    line = error_line()
    assert f"{broken}: cannot parse: " in line and "(line 2, column" in line


def test_every_run_that_did_not_complete_shows_each_ranks_last_lines():  # issue 27, 8
    before = _crashed_at("train.py", 20, "RuntimeError: Distributed package doesn't have NCCL built in")
    before.launch.rank_lines = {0: ["loading data", "rank 0 ready"] + before.launch.rank_lines[0],
                                1: ["rank 1 ready"] + before.launch.rank_lines[1]}
    f = Finding("DDP003", "name", "train.py", 3, 1, "message", 3, verdict="NEEDS GPU", reason="r")
    f.before = script.symptom("DDP003")(before, {"gpus": 0, "finding": f})
    opts = ScriptOptions(script.Path("train.py"), [], script.Path("."), Topology(2, "gloo"))
    text = script.render(ScriptReport([f], before, None, ""), opts, 1.0)
    assert "rank 0, last lines:\n    | loading data\n    | rank 0 ready\n    | Traceback" in text
    assert "rank 1, last lines:\n    | rank 1 ready" in text and "NCCL built in" in text


def test_a_rule_without_a_fix_is_never_confirmed_in_the_bundled_run(monkeypatch):  # issue 27, 9
    def phase(name, scenarios, programs, opts, timings):
        loop = {"before": "backward", "after": "forward"}[name]
        per_step = {"before": [[4], [4]], "after": [[1], [1]]}[name]
        found = {"rule": "DDP021", "accumulate": 4, loop: {"allreduces_per_step": per_step}}
        return {s.rule: {"main": LaunchResult(0, 1.0, results=[found])} for s in scenarios}

    monkeypatch.setattr(runner, "_run_phase", phase)
    (outcome,) = runner.verify(["DDP021"], runner.Options(Topology(2, "gloo")))
    assert outcome.verdict == "SYMPTOM SHOWN, NO FIX", outcome.reason
    assert runner.passed([outcome])  # the rule promises no fix: nothing failed


# ------------------------------------------------------------------ issue 40: one test per item


def _local_rank_facts(rank, defined_at):
    return {"parsed": 0, "env": str(rank), "reads": [[0, "train.py:9", False]], "launch_option": None,
            "defined_at": defined_at}


def test_evidence_comes_only_from_the_findings_own_file():  # issue 40, 1
    # train.py parsed --local_rank (rank 1 used 0) and crashed later; sibling.py was never imported.
    ranks = [_rank(r, finished=False, exceptions=["KeyError: 'x'"], local_rank=_local_rank_facts(r, "train.py:5"),
                   modules=["lib.py", "train.py"]) for r in (0, 1)]
    crashed = _run(*ranks, returncode=1)
    assert _judged("DDP012", crashed, crashed, path="sibling.py") == (
        "NOT IMPORTED", "sibling.py was never imported: neither run loaded it")
    # lib.py was imported, but the option the run parsed is train.py's, not the finding's.
    f = Finding("DDP012", "name", "lib.py", 3, 1, "message", 3)
    seen = script.symptom("DDP012")(crashed, {"gpus": 0, "finding": f})
    assert seen.symptom is None and "defined at train.py:5, not in lib.py" in seen.text
    assert _judged("DDP012", crashed, crashed)[0] == "FAILED"  # train.py's own finding: still there


def _epochs(first, second, sites=("train.py:3", "train.py:3"), warmup=None):
    passes = ([warmup] if warmup else []) + [list(first), list(second)]
    at = ([["train.py:1"]] if warmup else []) + [[s] for s in sites]
    return [{"dataset": 8, "num_workers": 0, "passes": passes, "pass_sites": at, "created_at": ["train.py:1"],
             "sampler_at": ["train.py:1"], "sampler": "DistributedSampler", "distributed": True,
             "shuffle": True, "sharded_dataset": True}]


def test_a_fixed_run_that_fails_later_for_another_reason_is_not_failed():  # issue 40, 2
    before = _run(_rank(0, loaders=_epochs([1, 5], [1, 5])), _rank(1, loaders=_epochs([2, 6], [2, 6])))
    later = [_rank(r, finished=False, exceptions=["KeyError: 'best_acc1'"], raised_at=[["train.py", 90, "main"]],
                   loaders=_epochs([1, 5], [5, 1])) for r in (0, 1)]
    after = _run(*later, returncode=1)
    verdict, reason = _judged("DDP003", before, after)
    assert verdict == "SYMPTOM GONE, RUN INCOMPLETE"
    assert "KeyError: 'best_acc1'" in reason and "rank 0 at train.py:90" in reason
    # The same failure at a line the fix wrote is the fix's.
    verdict, reason = _judged("DDP003", before, after, changed={"train.py": {90}})
    assert verdict == "FAILED" and "a line the fix changed (rank 0 at train.py:90)" in reason


def test_code_that_ran_without_a_symptom_argues_against_the_finding():  # issue 40, 3
    # A rank-0-only DDP forward run 8 times (no buffers to broadcast), no hang, same collectives.
    ranks = [_rank(0, collectives=["all_reduce"], reached={"train.py:3": 8}),
             _rank(1, collectives=["all_reduce"], reached={})]
    run = _run(*ranks)
    verdict, reason = _judged("DDP008", run, run)
    assert verdict == "NO SYMPTOM"
    assert "train.py:3 ran on rank 0 (8 times), not on rank 1" in reason and "argues against" in reason
    # Never run on any rank: not reached, with where the run ended.
    never = _run(_rank(0, reached={}), _rank(1, reached={}))
    assert _judged("DDP008", never, never) == ("NOT REACHED", "train.py:3 never ran: the script completed")


def test_a_rank_that_aborts_is_not_taken_for_one_that_did_nothing():  # issue 40, 4
    # Rank 1 aborted (no final report) after its last save, which came before its last barrier.
    ranks = [_rank(0, collectives=["barrier", "barrier"], loaders=_epochs([1], [5])),
             _rank(1, finished=None, collectives=["barrier"], loaders=_epochs([2], [6]))]
    run = _run(*ranks, returncode=1)
    assert run.silent_ranks() == [1]
    seen = script.symptom("DDP008")(run, CTX)
    assert seen.symptom is False and "rank(s) [0] finished, so every rank joined" in seen.text
    lost = _run(_rank(0, loaders=_epochs([1], [5])), _rank(1, finished=None), returncode=1)
    text = script.symptom("DDP019")(lost, CTX).text
    assert "as far as rank(s) [1] reported" in text


def test_both_runs_failing_the_same_way_is_not_failed(tmp_path):  # issue 40, 5
    def failing(root, loaders):
        error = f"FileNotFoundError: [Errno 2] No such file or directory: '{root}/data/val.csv'"
        ranks = [_rank(r, finished=False, exceptions=[error], raised_at=[["data.py", 7, "load"]],
                       loaders=loaders(r)) for r in (0, 1)]
        return script.Run(_run(*ranks, returncode=1).launch, ranks, None, root)
    before = failing(tmp_path / "before", lambda r: _epochs([1, 5], [1, 5]))
    after = failing(tmp_path / "after", lambda r: _epochs([1, 5], [5, 1]))
    verdict, reason = _judged("DDP003", before, after)
    assert verdict == "SYMPTOM GONE, RUN INCOMPLETE"
    assert "ended as the script before the fix did: rank 0: FileNotFoundError" in reason


def test_the_loop_and_the_loader_the_finding_is_about():  # issue 40, 6
    # A warm-up pass at train.py:1, then two epochs begun at train.py:4, in the loop at train.py:3-5.
    f = Finding("DDP003", "name", "train.py", 3, 1, "message", 5)
    warm = _run(*[_rank(r, loaders=_epochs([1, 5], [5, 1], ("train.py:4",) * 2, [1, 5])) for r in (0, 1)])
    seen = script.symptom("DDP003")(warm, {"gpus": 0, "finding": f})
    assert seen.symptom is False and "1 pass(es) begun outside that loop" in seen.text
    # DDP018: the loader made at the finding's line, not another loader with more workers.
    made_here = {**_loader(workers=1), "created_at": ["train.py:3"]}
    other = {**_loader(workers=4), "created_at": ["eval.py:9"]}
    fixed = _run(*[_rank(r, loaders=[made_here, other]) for r in (0, 1)])
    seen = script.symptom("DDP018")(fixed, {"gpus": 0, "finding": f})
    assert seen.symptom is False and "DataLoader 1 (made at train.py:3): workers per rank [1, 1]" in seen.text


def test_a_failure_only_a_cpu_run_has_needs_a_gpu():  # issue 40, 8 (the mapping's half: test_cpu_mapping)
    error = "ValueError: SyncBatchNorm layers only work with GPU modules"
    before = _crashed_at("train.py", 20, error)
    verdict, reason = _judged("DDP003", before, before)
    assert verdict == "NEEDS GPU" and "SyncBatchNorm works only on GPUs" in reason


def test_a_hang_outside_any_collective_is_not_a_collective_mismatch():  # issue 40, 10
    stuck = ['  File "data.py", line 12, in download\n    time.sleep(5)\n']
    ranks = [_rank(0, finished=None, stopped="hang", stack=stuck, stopped_in=["data.py:12", "train.py:30"]),
             _rank(1, finished=None, stopped="hang", inside="barrier", stopped_in=["train.py:31"])]
    hung = _run(*ranks, returncode=-15, timed_out=True, output={0: ["retrying download"], 1: ["waiting"]})
    seen = script.symptom("DDP008")(hung, CTX)
    assert seen.symptom is None and "rank(s) [0] were not waiting in a collective" in seen.text
    both = [ranks[0] | {"inside": "broadcast"}, ranks[1]]
    assert script.symptom("DDP008")(_run(*both, timed_out=True), CTX).symptom is True


def test_a_fallback_read_of_local_rank_is_no_use_of_it():  # issue 40, 10
    facts = [_rank(r, local_rank={"parsed": -1, "env": str(r), "reads": [[-1, "train.py:9", True]],
                                  "launch_option": None, "defined_at": "train.py:3"}) for r in (0, 1)]
    seen = script.symptom("DDP012")(_run(*facts), CTX)
    assert seen.symptom is False and "only compared args.local_rank (at train.py:9)" in seen.text


def test_a_shuffling_evaluation_sampler_shows_its_padding():  # issue 40, 10
    padded = [_rank(0, loaders=[_loader([3, 0, 4], shuffle=True)]),
              _rank(1, loaders=[_loader([1, 2, 3], shuffle=True)])]
    seen = script.symptom("DDP022")(_run(*padded), CTX)
    assert seen.symptom is True and "1 read by more than one rank" in seen.text


def test_the_fixed_run_is_asked_about_the_findings_code_where_the_fix_moved_it():
    old = "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--local_rank')\nrun()\n"
    new = ("import argparse\nimport os\nparser = argparse.ArgumentParser()\nparser.add_argument(\n"
           "    '--local-rank', '--local_rank', default=os.environ.get('LOCAL_RANK'))\nrun()\n")
    moved = script.line_map(old, new)
    assert moved[1] == (1, 1) and moved[2] == (3, 3) and moved[4] == (6, 6)
    assert moved[3] == (4, 5)  # the rewritten statement: all its lines in the fixed copy
