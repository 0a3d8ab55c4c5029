"""A killed `ddplint --fix` leaves no pool worker and no temporary folder behind, and a killed
benchmark (benchmarks/run.py) leaves no process it was timing.

The workers are forked by the pool; nothing in Python runs when the parent gets SIGKILL (or
SIGTERM, whose default action ends it at once), so they must be told by the kernel."""

import os
import signal
import subprocess
import sys
import time

import pytest

from ddplint_test_support import REPO, cli_env


def _children(pid: int) -> set[int]:
    found = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                found |= {int(c) for c in fh.read().split()}
        except OSError:
            pass
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_pool_workers_die_with_a_killed_fix_run(tmp_path, sig):
    tree = tmp_path / "tree"
    tree.mkdir()
    body = "".join(f"def f{i}(ckpt):\n    return torch.load(ckpt)  # {'x' * 60}\n" for i in range(300))
    for index in range(60):
        (tree / f"f{index:03}.py").write_text("import torch.distributed\n" + body)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = dict(cli_env(), TMPDIR=str(temp))
    process = subprocess.Popen([sys.executable, "-m", "ddplint", "--fix", "--no-cache", "-j", "2", str(tree)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while len(workers) < 2 and process.poll() is None and time.monotonic() < deadline:
        workers |= _children(process.pid)
        time.sleep(0.01)
    assert len(workers) >= 2, "the pool never started: the tree is too small to need one"
    process.send_signal(sig)
    process.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [w for w in workers if _alive(w)]
    for w in survivors:  # never leave them running, even when the test fails
        os.kill(w, signal.SIGKILL)
    assert survivors == []
    assert list(temp.iterdir()) == []


# The benchmark times a child that starts a grandchild (as a tool starts its workers), then
# waits; each writes its pid to a file.
BENCHMARKED = """\
import os, subprocess, sys
grandchild = subprocess.Popen(["sleep", "60"])
with open(sys.argv[1] + ".tmp", "w") as handle:
    handle.write(f"{os.getpid()} {grandchild.pid}")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
grandchild.wait()
"""
BENCHMARK = """\
import sys
sys.path.insert(0, sys.argv[1])
import run
run.exit_on_sigterm()  # as run.main() does
run.measure([sys.executable, "-c", sys.argv[2], sys.argv[3]], ".", {}, timeout=60)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["SIGTERM", "SIGINT", "SIGKILL"])
def test_a_killed_benchmark_leaves_no_process_it_was_timing(tmp_path, sig):
    pids = tmp_path / "pids"
    benchmark = subprocess.Popen(
        [sys.executable, "-c", BENCHMARK, str(REPO / "benchmarks"), BENCHMARKED, str(pids)], env=cli_env(),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
    )
    deadline = time.monotonic() + 30
    while not pids.exists() and benchmark.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    child, grandchild = map(int, pids.read_text().split())
    benchmark.send_signal(sig)
    benchmark.wait(timeout=30)
    # SIGKILL runs no code in the benchmark: the kernel kills its child, whose own children
    # are the child's to stop (ddplint's pool workers die with it, see above).
    watched = [child] if sig == signal.SIGKILL else [child, grandchild]
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in watched) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [pid for pid in watched if _alive(pid)]
    for pid in {child, grandchild}:  # never leave them running, even when the test fails
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert survivors == []
