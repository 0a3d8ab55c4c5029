"""`ddplint verify --script`: ddplint's fixes tried on realistic training scripts, observed
through the injected probes; the user's files are never touched, and nothing is left behind."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from ddplint.harness import cli, tempdirs
from ddplint_test_support import scaled

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "tests" / "data" / "scripts"


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def _verify(installed, tmp_path, script: Path, options: list[str], args: list[str]):
    """Run verify --script from the installed wheel; check the project is untouched and no
    temporary folder is left in its TMPDIR (one of its own: the other tests' folders come and
    go in the shared one); return the JSON report and the printed text."""
    original = _snapshot(script.parent)
    out = tmp_path / "report.json"
    # A short path: the job's processes make sockets under it (a 108-byte limit).
    tmp = Path(tempfile.mkdtemp(prefix="dv-"))
    try:
        proc = installed.run("verify", "--script", str(script), *options, "--json", str(out), "--", *args,
                             cwd=tmp_path, env={"TMPDIR": str(tmp)})
        left = list(tmp.iterdir())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert _snapshot(script.parent) == original
    assert left == []
    report = json.loads(out.read_text())
    verdicts: dict[str, set] = {}
    for f in report["findings"]:
        verdicts.setdefault(f["code"], set()).add(f["verdict"])
    by_code = {f["code"]: f for f in report["findings"]}
    return report, {c: " ".join(sorted(v)) for c, v in verdicts.items()}, by_code, proc


def test_imagenet_style_script(installed, tmp_path):
    report, verdicts, by_code, proc = _verify(
        installed, tmp_path, SCRIPTS / "imagenet_style" / "main.py", ["--max-steps", "3"],
        ["--dummy", "--dummy-size", "64", "--epochs", "2", "-b", "8"])
    # args.local_rank is read only on the script's CUDA branch, which the CPU mapping (on by
    # default without a GPU) takes: there rank 1 uses DDP012's wrong value.
    assert verdicts == {"DDP003": "CONFIRMED", "DDP012": "CONFIRMED", "DDP018": "CONFIRMED",
                        "DDP004": "NEEDS GPU", "DDP014": "SYMPTOM SHOWN, NO FIX"}, proc.stdout
    assert proc.returncode == 1  # not every finding was confirmed
    assert "repeats epoch 0 on 2/2 ranks" in by_code["DDP003"]["before"]["text"]
    assert "repeats epoch 0 on 0/2 ranks" in by_code["DDP003"]["after"]["text"]
    assert "+        train_sampler.set_epoch(epoch)" in by_code["DDP003"]["diff"]
    assert by_code["DDP012"]["before"]["text"].startswith(
        "args.local_rank parsed [0, 0], LOCAL_RANK ['0', '1']; rank 1 used args.local_rank = 0 at main.py:41")
    assert "CPU mapping" in by_code["DDP004"]["reason"]
    assert "by ranks [0, 1]" in by_code["DDP014"]["before"]["text"]
    # --max-steps cut every epoch to 3 batches of 8 on each rank.
    ranks = report["runs"]["after"]["ranks"]
    assert [[len(p) for p in r["loaders"][0]["passes"]] for r in ranks] == [[24, 24], [24, 24]]
    assert all(r["stopped"] == "max-steps" for r in ranks)
    assert "what was observed on this script" in proc.stdout


def test_text_classifier_with_spawned_workers(installed, tmp_path):
    report, verdicts, by_code, proc = _verify(
        installed, tmp_path, SCRIPTS / "text_classifier" / "train.py", [],
        ["--train-file", "data/train.tsv", "--num-train-epochs", "1"])
    # DDP022 (a padded validation sampler): the run before the fix dies in DDP002's pickling
    # error before validating, so it is not observed there; the fixed run shows the padding.
    assert verdicts == {"DDP002": "CONFIRMED", "DDP010": "CONFIRMED", "DDP022": "NOT OBSERVED"}, proc.stdout
    assert proc.returncode == 1  # not every finding was confirmed (DDP022)
    # The sampler was made on both ranks; the loader was never read before DDP002's error.
    reason = by_code["DDP022"]["reason"]
    assert "ran on rank 0 (1 time), rank 1 (1 time)" in reason and "ended earlier, in DDP002" in reason
    assert "samples read per rank [5, 5]; 1 read by more than one rank" in by_code["DDP022"]["after"]["text"]
    assert "Can't pickle local object 'Vocab.__init__.<locals>.<lambda>'" in by_code["DDP002"]["before"]["text"]
    assert "ranks drew 2 distinct split(s)" in by_code["DDP010"]["before"]["text"]
    assert "ranks drew 1 distinct split(s)" in by_code["DDP010"]["after"]["text"]
    assert not report["runs"]["before"]["completed"] and report["runs"]["after"]["completed"]


def test_keyword_spotting_hang_and_bucketing_sampler(installed, tmp_path):
    report, verdicts, by_code, proc = _verify(
        # The job hangs until --timeout: long enough to reach the hang on a busy machine too.
        installed, tmp_path, SCRIPTS / "keyword_spotting" / "train.py", ["--timeout", str(scaled(30))],
        ["--manifest", "data/train.csv", "--max-epoch", "2"])
    # The rank-0-only DDP forward hangs the job before the export, so the state-dict
    # mismatch cannot be seen before the fix: reported as such, not as a pass.
    assert verdicts == {"DDP006": "CONFIRMED", "DDP008": "CONFIRMED", "DDP009": "NOT REACHED"}, proc.stdout
    assert report["runs"]["before"]["timed_out"]
    assert "never ran: the run before the fix ended earlier, in DDP008" in by_code["DDP009"]["reason"]
    hang = by_code["DDP008"]["before"]["text"]
    assert hang.startswith("hang:") and "_distributed_broadcast_coalesced" in hang and "barrier" in hang
    assert "[32, 32]; 32 read by every rank" in by_code["DDP006"]["before"]["text"]
    assert "[16, 16]; 0 read by every rank" in by_code["DDP006"]["after"]["text"]
    assert "model.module(feats)" in by_code["DDP008"]["diff"]


# ------------------------------------------------------------------ limits, errors, clean-up


def _project(tmp_path: Path, body: str) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    script = project / "train.py"
    script.write_text(textwrap.dedent(body))
    return script


def _checkout_env(tmp: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp))
    return env


# A DDP004 finding (so there is something to verify), then training that never ends.
FOREVER = """
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader
    dist.init_process_group("gloo")
    model = torch.nn.Linear(2, 2).to("cuda" if torch.cuda.is_available() else "cpu")
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict()}, "checkpoint.pt")
    dist.barrier()
    state = torch.load("checkpoint.pt")
    loader = DataLoader(list(range(8)), batch_size=2)
    while True:
        for batch in loader:
            dist.all_reduce(batch.float())
"""


def test_max_seconds_stops_a_script_that_never_ends(tmp_path):
    pytest.importorskip("torch")
    script = _project(tmp_path, FOREVER)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "r.json"
    # --timeout is far above --max-seconds: a run --max-seconds failed to stop would end
    # timed out, which the report below tells apart, so no wall clock is asked here.
    stop = scaled(10)
    proc = subprocess.run([sys.executable, "-m", "ddplint", "verify", "--script", str(script),
                           "--max-seconds", str(stop), "--timeout", str(scaled(60)), "--json", str(out)],
                          cwd=ROOT, env=_checkout_env(tmp), capture_output=True, text=True, timeout=scaled(300))
    report = json.loads(out.read_text())
    before = report["runs"]["before"]
    # Stopped is not completed (issue 27, 2).
    assert not before["completed"] and before["stopped"] and not before["timed_out"], before
    assert before["state"] == f"stopped after {stop}s by --max-seconds (not completed)"
    assert f"run before the fix: stopped after {stop}s by --max-seconds" in proc.stdout
    assert [r["stopped"] for r in before["ranks"]] == ["max-seconds", "max-seconds"]
    assert all(r["loaders"][0]["passes"] for r in before["ranks"])
    assert [f["verdict"] for f in report["findings"]] == ["NEEDS GPU"]
    assert list(tmp.iterdir()) == []


def _verify_here(tmp_path, files: dict[str, str], args=()) -> tuple[dict, dict, str]:
    """verify --script on a project of ``files`` (the first is the script), from this
    checkout; checks nothing is left in TMPDIR. Returns the report, its findings by
    (code, path) and the printed text."""
    pytest.importorskip("torch")
    project = tmp_path / "proj"
    for name, body in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(textwrap.dedent(body))
    # A short path: DataLoader workers make sockets under it (a 108-byte limit).
    tmp = Path(tempfile.mkdtemp(prefix="dv-"))
    out = tmp_path / "r.json"
    try:
        proc = subprocess.run([sys.executable, "-m", "ddplint", "verify", "--script",
                               str(project / next(iter(files))), "--timeout", "90", "--json", str(out),
                               "--", *args], cwd=ROOT, env=_checkout_env(tmp), capture_output=True,
                              text=True, timeout=300)
        left = list(tmp.iterdir())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert left == []
    report = json.loads(out.read_text())
    return report, {(f["code"], f["path"]): f for f in report["findings"]}, proc.stdout


def test_ddp001s_crash_at_import_is_blamed_on_ddp001_alone(tmp_path):
    """Issue 27, 5, 7 and 8: the unfixed script dies at import in DDP001's default argument;
    the finding that code hid is not observed because of DDP001, not "needs a GPU"; a finding
    in a module the script never imports is "not run by this script"; the ranks' last lines
    are shown."""
    report, by_finding, text = _verify_here(tmp_path, {"train.py": """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler


        def scale(x, factor=torch.ones(1).cuda()):
            return x * factor


        def main():
            dist.init_process_group("gloo")
            print(f"rank {dist.get_rank()} ready", flush=True)
            data = list(range(16))
            loader = DataLoader(data, batch_size=4, sampler=DistributedSampler(data))
            for epoch in range(2):
                for batch in loader:
                    scale(batch.float(), torch.ones(1)).sum().requires_grad_().backward()
            dist.destroy_process_group()


        if __name__ == "__main__":
            main()
        """, "tools/export.py": """
        from torch.utils.data import DataLoader, DistributedSampler


        def export(data):
            loader = DataLoader(data, sampler=DistributedSampler(data, num_replicas=2, rank=0))
            for epoch in range(2):
                for batch in loader:
                    batch.float().sum().requires_grad_().backward()


        if __name__ == "__main__":
            export(list(range(8)))
        """})
    verdicts = {key: (f["verdict"], f["reason"]) for key, f in by_finding.items()}
    assert verdicts[("DDP001", "train.py")][0] == "CONFIRMED", text
    assert by_finding[("DDP001", "train.py")]["before"]["text"].startswith("importing train.py fails at line 7")
    verdict, reason = verdicts[("DDP003", "train.py")]
    assert verdict == "NOT REACHED" and "train.py:16 never ran: the run before the fix ended earlier, " \
        "in DDP001 (train.py:7)" in reason, text
    assert verdicts[("DDP003", "tools/export.py")] == (
        "NOT IMPORTED", "tools/export.py was never imported: neither run loaded it")
    assert report["runs"]["after"]["completed"]
    tail = report["runs"]["before"]["output_tail"]
    assert sorted(tail) == ["0", "1"] and all("Torch not compiled with CUDA" in t[-1] for t in tail.values())
    assert "rank 1, last lines:" in text


def test_ddp012_is_judged_where_args_local_rank_is_used(tmp_path):
    """Issue 27, 1: the script sets args.local_rank from LOCAL_RANK right after parsing and
    works under torchrun: not CONFIRMED. What torch.distributed.launch's --local-rank=N would
    do to the parser is reported. (It sets it through setattr, which the linter does not
    follow, so that DDP012 still reports the option: a plain assignment it would see.)"""
    report, by_finding, text = _verify_here(tmp_path, {"train.py": """
        import argparse
        import os

        import torch
        import torch.distributed as dist


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            parser.add_argument("--steps", type=int, default=2)
            args = parser.parse_args()
            setattr(args, "local_rank", int(os.environ["LOCAL_RANK"]))
            dist.init_process_group("gloo")
            device = torch.device("cpu", args.local_rank)
            for _ in range(args.steps):
                dist.all_reduce(torch.ones(2, device=device))
            dist.destroy_process_group()


        if __name__ == "__main__":
            main()
        """}, ["--steps", "3"])
    finding = by_finding[("DDP012", "train.py")]
    assert finding["verdict"] == "NO SYMPTOM", text
    assert "argues against the finding" in finding["reason"]
    before = finding["before"]["text"]
    assert "where the script uses args.local_rank (train.py:16) it equals LOCAL_RANK" in before
    assert "unrecognized arguments: --local-rank=0" in before
    assert [r["local_rank"]["parsed"] for r in report["runs"]["before"]["ranks"]] == [0, 0]


# Issue 40: a script written for torch.accelerator, as current examples are, with a warm-up pass
# over its loader before the epoch loop, and a second loader whose workers are not the finding's.
ACCELERATOR_SCRIPT = """
    import os

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler


    def setup():
        rank = int(os.environ["LOCAL_RANK"])
        if torch.accelerator.is_available():
            accelerator = torch.accelerator.current_accelerator()
            device = torch.device(f"{accelerator}:{rank}")
            torch.accelerator.set_device_index(rank)
        else:
            device = torch.device("cpu")
        dist.init_process_group(backend=dist.get_default_backend_for_device(device))
        return device


    def main():
        device = setup()
        data = TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
        loader = DataLoader(data, batch_size=4, sampler=DistributedSampler(data), num_workers=os.cpu_count())
        checks = DataLoader(TensorDataset(torch.randn(8, 4)), batch_size=4, num_workers=2)
        model = DDP(torch.nn.Linear(4, 2).to(device))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        mean = sum(x.mean() for x, _ in loader)  # a warm-up pass before the epochs
        for epoch in range(2):
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(model(x.to(device) - mean), y.to(device))
                opt.zero_grad()
                loss.backward()
                opt.step()
        with torch.no_grad():
            print("checks", sum(model(x.to(device)).sum().item() for (x,) in checks))
        dist.destroy_process_group()


    if __name__ == "__main__":
        main()
"""


def test_a_torch_accelerator_script_with_a_warm_up_pass_is_confirmed(tmp_path):
    report, by_finding, text = _verify_here(tmp_path, {"train.py": ACCELERATOR_SCRIPT})
    verdicts = {code: f["verdict"] for (code, _), f in by_finding.items()}
    assert verdicts == {"DDP003": "CONFIRMED", "DDP018": "CONFIRMED"}, text
    assert "1 pass(es) begun outside that loop not compared" in by_finding[("DDP003", "train.py")]["before"]["text"]
    assert "DataLoader 1 (made at train.py:26): workers per rank [1, 1]" in \
        by_finding[("DDP018", "train.py")]["after"]["text"]
    counts = report["runs"]["before"]["ranks"][0]["cpu_mapping"]["counts"]
    assert counts["torch.accelerator.current_accelerator"] == 1 and counts["torch.accelerator.set_device_index"] == 1
    assert report["runs"]["before"]["ranks"][0]["ddp"]["models"] == 1  # the accelerator branch built DDP


# Issue 40: rank 1 aborts after training (no final report); rank 0 runs a DDP forward alone, which
# hangs nothing (no buffers, no gradients); a tool in the project is never imported.
ABORTING_SCRIPT = """
    import os
    import time

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler


    def main():
        dist.init_process_group("gloo")
        rank = dist.get_rank()
        data = TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
        loader = DataLoader(data, batch_size=4, sampler=DistributedSampler(data))
        model = DDP(torch.nn.Linear(4, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            if rank == 0:
                with torch.no_grad():
                    print("probe", model(torch.randn(2, 4)).sum().item())
        dist.barrier()
        if rank == 1:
            time.sleep(5)  # a slow teardown, which rank 0 does not wait for
            os.abort()  # then a native crash, as a bad teardown gives
        dist.destroy_process_group()


    if __name__ == "__main__":
        main()
"""
UNUSED_TOOL = """
    import sys

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    state = torch.load(sys.argv[1])
    print(dist.get_rank(), sorted(state))
"""


def test_a_rank_that_aborts_after_training_gives_no_false_verdict(tmp_path):
    report, by_finding, text = _verify_here(tmp_path, {"train.py": ABORTING_SCRIPT,
                                                       "tools/inspect_checkpoint.py": UNUSED_TOOL})
    verdicts = {code: (f["verdict"], f["reason"]) for (code, _), f in by_finding.items()}
    verdict, reason = verdicts["DDP003"]
    assert verdict == "SYMPTOM GONE, RUN INCOMPLETE", text
    assert "ended as the script before the fix did" in reason and "ended without a final report" in reason
    # Rank 0's forward under no_grad of a model with no buffers runs no collective: the runs
    # once showed no symptom there, and DDP008 no longer reports it (issue 38).
    assert "DDP008" not in verdicts, text
    assert verdicts["DDP004"] == ("NOT IMPORTED",
                                  "tools/inspect_checkpoint.py was never imported: neither run loaded it")
    assert "no DataLoader was iterated" not in text and "no DistributedDataParallel" not in text


def _job_processes(marker: str, ranks_only: bool = False) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/environ", "rb") as fh:
                    environment = fh.read()
            except OSError:
                continue
            if marker.encode() in environment and (
                    not ranks_only or b"\0RANK=" in environment or environment.startswith(b"RANK=")):
                found.append(int(name))
    return found


def _launcher(marker: str) -> int:
    """The torchrun process of the job: the one carrying the marker that is not a rank."""
    (pid,) = set(_job_processes(marker)) - set(_job_processes(marker, ranks_only=True))
    return pid


def _wait_gone(marker: str, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while _job_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    return _job_processes(marker)


def _start_and_wait_for_ranks(tmp_path):
    script = _project(tmp_path, FOREVER)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # Each test ends the job itself once both ranks run: verify's own limit must not end it
    # first, however long the ranks take to start on a busy machine.
    proc = subprocess.Popen([sys.executable, "-m", "ddplint", "verify", "--script", str(script),
                             "--timeout", "3600"], cwd=ROOT, env=_checkout_env(tmp),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + scaled(90)
    # The ranks carry the probes' variable pointing into this test's temporary folder, and so
    # does torchrun, which is not a rank.
    marker = f"DDPLINT_OBSERVE={tmp}"
    while len(_job_processes(marker, ranks_only=True)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(_job_processes(marker, ranks_only=True)) == 2, "the ranks never started"
    return proc, tmp


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_stops_verify_and_leaves_nothing(tmp_path):
    pytest.importorskip("torch")
    proc, tmp = _start_and_wait_for_ranks(tmp_path)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=scaled(60))
    left = _wait_gone(str(tmp), scaled(10))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "stopped by SIGTERM" in err and "Traceback" not in err
    assert left == []
    assert list(tmp.iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_of_verify_takes_the_job_down_and_the_next_run_sweeps(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    proc, tmp = _start_and_wait_for_ranks(tmp_path)
    proc.kill()
    proc.communicate(timeout=scaled(30))
    left = _wait_gone(str(tmp), scaled(30))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []  # torchrun got SIGTERM from the kernel and stopped its ranks
    stale = sorted(p.name for p in tmp.iterdir())
    assert stale and all(n.startswith(("ddplint-script-", "ddplint-job-")) for n in stale)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    assert sorted(tempdirs.sweep()) == stale
    assert list(tmp.iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ranks_die_with_torchrun_when_verify_and_torchrun_are_killed_together(tmp_path):
    # What an OOM kill of the launchers does: torchrun gets no chance to stop its ranks, which
    # run in sessions of their own. The ranks' probes asked to die with their parent.
    pytest.importorskip("torch")
    proc, tmp = _start_and_wait_for_ranks(tmp_path)
    marker = f"DDPLINT_OBSERVE={tmp}"
    ranks = _job_processes(marker, ranks_only=True)
    os.kill(_launcher(marker), signal.SIGKILL)
    proc.kill()
    proc.communicate(timeout=scaled(30))
    left = _wait_gone(str(tmp), scaled(15))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert len(ranks) == 2 and left == []


def test_a_file_ddplint_cannot_check_is_reported_not_taken_for_nothing_found(tmp_path):
    pytest.importorskip("torch")  # verify refuses to start without it
    script = _project(tmp_path, "print('hi')\n")
    (script.parent / "weights.py").write_bytes(b"x = 1\x00\n")
    out = tmp_path / "report.json"
    assert cli.main(["--script", str(script), "--json", str(out)]) == 1
    notes = json.loads(out.read_text())["notes"]
    assert notes == ["not checked by ddplint: weights.py: cannot read: binary file (contains NUL bytes)",
                     "ddplint found nothing to verify"]


def test_a_script_for_one_gpu_per_rank_runs_mapped_on_fewer_gpus():
    args = cli._parser().parse_args(["--script", __file__])
    assert cli.cpu_mapping_reason(False, cli.launcher.choose_topology(0)) == "no GPU found"
    assert "1 GPU(s) for 2 ranks" in cli.cpu_mapping_reason(False, cli.launcher.choose_topology(1))
    assert cli.cpu_mapping_reason(False, cli.launcher.choose_topology(2)) == ""
    assert cli.cpu_mapping_reason(True, cli.launcher.choose_topology(2)) == "--cpu"
    # The options' mapping is a reason, and the logger goes where a logger goes.
    opts = cli._script_options(args, [])
    assert opts.cpu_mapping == "" and opts.log is cli.log


def test_script_usage_errors_are_one_line(error_line, tmp_path):
    script = _project(tmp_path, "print('hi')\n")
    for argv, words in [
        (["--script", str(tmp_path / "nope.py")], "no such file"),
        (["DDP003", "--script", str(script)], "rule codes and --script do not go together"),
        (["--script", str(script), "--max-steps", "0"], "--max-steps must be at least 1"),
        (["--script", str(script), "--max-seconds", "0"], "--max-seconds must be more than 0"),
        (["--script", str(script), "--project", str(tmp_path / "other")], "no such folder"),
        (["--max-steps", "3"], "go with --script"),
        (["--cpu"], "go with --script"),
        (["DDP003", "--", "--epochs", "2"], "arguments after -- go with --script"),
    ]:
        assert cli.main(argv) == 2, argv
        assert words in error_line(), argv
