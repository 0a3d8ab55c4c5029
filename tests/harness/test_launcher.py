"""The launcher: timeouts, hang reports, process-tree and /dev/shm cleanup."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

from ddplint.harness import launcher
from ddplint_test_support import scaled
from ddplint.harness.launcher import Topology, choose_topology, last_exception


# ------------------------------------------------------------------ no torch needed


def test_importing_the_harness_does_not_import_torch():
    code = (
        "import sys, ddplint.harness, ddplint.harness.cli, ddplint.harness.runner, "
        "ddplint.harness.launcher, ddplint.harness.probes, ddplint.harness.report, "
        "ddplint.harness.script, ddplint.harness.observe, ddplint.harness.readme; "
        "from ddplint.harness.scenarios import all_scenarios; all_scenarios(); "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


@pytest.mark.parametrize(
    "gpus, nproc, backend, n",
    [(0, None, "gloo", 2), (1, None, "gloo", 2), (2, None, "nccl", 2), (4, None, "nccl", 4),
     (4, 2, "nccl", 2), (2, 3, "gloo", 3), (0, 3, "gloo", 3)],
)
def test_backend_and_rank_count(gpus, nproc, backend, n):
    topo = choose_topology(gpus, nproc)
    assert (topo.backend, topo.nproc_per_node) == (backend, n)


def test_single_node_is_standalone_and_multi_node_passes_through():
    assert "--standalone" in Topology(2, "gloo").torchrun_args()
    args = Topology(2, "gloo", nnodes="2", node_rank=1, rdzv_endpoint="h:29500").torchrun_args()
    assert "--standalone" not in args
    assert args[args.index("--nnodes") + 1] == "2"
    assert args[args.index("--node-rank") + 1] == "1"
    assert args[args.index("--rdzv-endpoint") + 1] == "h:29500"


def test_last_exception_is_the_end_of_the_last_traceback():
    lines = [
        "starting",
        "Traceback (most recent call last):",
        '  File "x.py", line 3, in <module>',
        "    import torch",
        "ValueError: first",
        "Traceback (most recent call last):",
        '  File "x.py", line 9, in <module>',
        "AssertionError: Torch not compiled with CUDA enabled",
        "W1121 some log line",
    ]
    assert last_exception(lines) == "AssertionError: Torch not compiled with CUDA enabled"
    assert last_exception(["no traceback here"]) == ""


def test_shm_files_are_matched_by_creator_pid(tmp_path):
    (tmp_path / "torch_123_456_0").write_bytes(b"x" * 10)
    (tmp_path / "torch_999_456_0").write_bytes(b"x")
    (tmp_path / "sem.mp-abc").write_bytes(b"x")
    found = launcher.shm_files({123}, shm_dir=str(tmp_path))
    assert found == {str(tmp_path / "torch_123_456_0"): 10}


# ------------------------------------------------------------------ real torchrun launches


def _script(tmp_path, body):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_a_hang_is_killed_reported_and_leaves_no_process(tmp_path):
    pytest.importorskip("torch")
    # Each rank prints, starts a grandchild in a session of its own (as torchrun
    # does with ranks, so no process group reaches it), and hangs.
    prog = _script(tmp_path, """
        import os, subprocess, sys, time
        rank = os.environ["RANK"]
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         start_new_session=True)
        print(f"rank {rank} last words before hanging", flush=True)
        time.sleep(600)
    """)
    # Long enough for both ranks to start and print on a busy machine: the limit scales with it.
    limit = scaled(12)
    t0 = time.monotonic()
    res = launcher.run_torchrun(str(prog), Topology(2, "gloo"), timeout=limit, cwd=str(tmp_path))
    ended = _ticks_since_boot()
    assert res.timed_out
    assert time.monotonic() - t0 < limit + scaled(28)  # killed at the limit, not after the ranks' 600 s
    assert "rank 0 last words before hanging" in res.hang_report()
    assert "rank 1 last words before hanging" in res.hang_report()
    assert res.last_output(1) == "rank 1 last words before hanging"
    # Ranks, their detached grandchildren and torchrun itself are all gone.
    assert len(res.seen_pids) >= 5
    assert launcher.job_pids(res.run_id) == set()
    for pid in res.seen_pids:
        assert not os.path.exists(f"/proc/{pid}") or _is_zombie(pid) or _started_after(pid, ended)


def _ticks_since_boot() -> float:
    with open("/proc/uptime") as fh:
        return float(fh.read().split()[0]) * os.sysconf("SC_CLK_TCK")


def _started_after(pid, ticks) -> bool:
    """Whether the process now holding `pid` started after `ticks` (clock ticks since boot): on a
    busy machine the number is soon another process's, which says nothing of the job's."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[19]) > ticks
    except OSError:
        return True


def _is_zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_rank_errors_and_results_are_collected(tmp_path):
    pytest.importorskip("torch")
    prog = _script(tmp_path, """
        import os, sys, time
        from ddplint.harness import probes
        if os.environ["RANK"] == "1":
            # Rank 0 reports first: torchrun stops the other ranks once one fails.
            while not os.path.exists("rank0-done"):
                time.sleep(0.05)
            raise AssertionError("Torch not compiled with CUDA enabled")
        probes.emit("DDP000", {"hello": [1, 2]})
        open("rank0-done", "w").close()
    """)
    env = dict(os.environ, PYTHONPATH=str(launcher.__file__).rsplit("/ddplint/", 1)[0])
    res = launcher.run_torchrun(str(prog), Topology(2, "gloo"), timeout=60, cwd=str(tmp_path), env=env)
    assert not res.timed_out
    assert res.returncode != 0
    assert res.results == [{"rule": "DDP000", "hello": [1, 2]}]
    assert res.errors() == ["rank 1: AssertionError: Torch not compiled with CUDA enabled"]


def test_pause_observe_and_kill_cleans_up_shm(tmp_path):
    pytest.importorskip("torch")
    # Each rank leaves a torch-named file in /dev/shm and pauses; the job is
    # then killed. The launcher reports the files it left and removes them.
    prog = _script(tmp_path, """
        import os
        from ddplint.harness import probes
        with open(f"/dev/shm/torch_{os.getpid()}_4242_0", "wb") as fh:
            fh.write(b"x" * 4096)
        probes.pause_point("T")
        print("not reached", flush=True)
    """)
    env = dict(os.environ, PYTHONPATH=str(launcher.__file__).rsplit("/ddplint/", 1)[0])
    seen = {}

    def observe(run_id):
        pids = launcher.job_pids(run_id)
        seen["files"] = len(launcher.shm_files(pids))
        return {"pids": len(pids)}

    res = launcher.run_torchrun(str(prog), Topology(2, "gloo"), timeout=60, cwd=str(tmp_path),
                                env=env, pause_tag="T", on_pause=observe, kill_after_pause=True)
    assert seen["files"] == 2
    assert res.observed["killed"] >= 3  # torchrun and two ranks
    assert len(res.shm_leftover) == 2 and sum(res.shm_leftover.values()) == 8192
    assert not any(os.path.exists(p) for p in res.shm_leftover)
    assert "not reached" not in "\n".join(res.lines)
    assert launcher.job_pids(res.run_id) == set()


def test_pause_then_resume_runs_to_the_end(tmp_path):
    pytest.importorskip("torch")
    prog = _script(tmp_path, """
        from ddplint.harness import probes
        probes.pause_point("T")
        probes.emit("DDP000", {"done": True})
    """)
    env = dict(os.environ, PYTHONPATH=str(launcher.__file__).rsplit("/ddplint/", 1)[0])
    res = launcher.run_torchrun(str(prog), Topology(2, "gloo"), timeout=60, cwd=str(tmp_path),
                                env=env, pause_tag="T", on_pause=lambda run_id: {"seen": True})
    assert res.returncode == 0 and not res.timed_out
    assert res.observed == {"seen": True}
    assert res.results == [{"rule": "DDP000", "done": True}]


def test_last_exception_reads_tracebacks_torch_prefixes_with_the_rank():
    from ddplint.harness.launcher import last_exception

    lines = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "scenario.py", line 57, in <module>',
        "[rank0]: RuntimeError: Numpy is not available",
    ]
    assert last_exception(lines) == "RuntimeError: Numpy is not available"


def test_a_killed_job_leaves_no_temporary_folder(tmp_path):
    pytest.importorskip("torch")
    # What killed DataLoader workers and shm managers leave: multiprocessing's pymp-* folder
    # (and torch_shm_manager's torch-shm-dir-*), made in the job's TMPDIR.
    prog = _script(tmp_path, """
        import multiprocessing.util, tempfile
        from ddplint.harness import probes
        print("TEMP", multiprocessing.util.get_temp_dir(), flush=True)
        probes.pause_point("T")
    """)
    env = dict(os.environ, PYTHONPATH=str(launcher.__file__).rsplit("/ddplint/", 1)[0])
    res = launcher.run_torchrun(str(prog), Topology(2, "gloo"), timeout=60, cwd=str(tmp_path),
                                env=env, pause_tag="T", on_pause=lambda run_id: {},
                                kill_after_pause=True)
    made = [ln.split()[-1] for ln in res.lines + sum(res.rank_lines.values(), []) if ln.startswith("TEMP ")]
    assert len(made) == 2 and all("/ddplint-job-" in m and "/pymp-" in m for m in made), made
    assert not any(os.path.exists(m) or os.path.exists(os.path.dirname(m)) for m in made)


def test_a_killed_torchrun_is_reaped_even_when_popens_lock_was_left_held():
    """A stop signal raised between Popen.wait taking its lock and releasing it leaves the lock
    held: Popen.wait would then never return, and verify, stopped by SIGTERM, never exit (a CI
    run saw it hang). The stop path reaps the process without that lock."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert proc._waitpid_lock.acquire(False)  # as the interrupted wait left it
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=0.5)
        proc.kill()
        launcher._reap(proc)
        assert proc.returncode == -9
        launcher._reap(proc)  # reaped already: nothing to wait for
    finally:
        proc._waitpid_lock.release()
        proc.wait()
