"""Run a program under torchrun, with a timeout and full process-tree cleanup.

torchrun starts every rank in its own session, and DataLoader workers and
``torch_shm_manager`` daemons are re-parented to init when their parent dies,
so neither the launcher's process group nor its child list reaches them all.
Every process of a launch is therefore marked with a unique environment
variable (``DDPLINT_RUN_ID``), inherited by everything it starts, and found
again by scanning ``/proc/*/environ``. That is how a timed-out or killed job is
cleaned up without touching anything else on the machine.

Nothing here imports torch: the launcher only starts ``python -m
torch.distributed.run`` as a subprocess.
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..core.processes import die_with_parent
from ..core.torch_api import TORCHRUN
from . import tempdirs
from .probes import BACKEND_VAR, PAUSE_VAR, PAUSED_MARK, RESULT_MARK, RESUME_VAR

RUN_ID_VAR = "DDPLINT_RUN_ID"
SHM_DIR = "/dev/shm"

# torchrun --redirects 3 --log-dir D writes each rank's output to
# D/<run id>/attempt_<n>/<local rank>/{stdout,stderr}.log. Those files are read
# directly: the ranks write them themselves, so nothing is lost when torchrun
# stops (its --tee tailer drops the last lines of ranks that end quickly).
_RANK_LOG = re.compile(r"attempt_\d+/(\d+)/(stdout|stderr)\.log$")


@dataclass
class Topology:
    """How ranks are laid out: what torchrun is told, and which backend they use."""

    nproc_per_node: int
    backend: str
    gpus: int = 0
    nnodes: str = "1"
    node_rank: int | None = None
    rdzv_endpoint: str | None = None

    def torchrun_args(self) -> list[str]:
        args = ["--nproc-per-node", str(self.nproc_per_node)]
        multi = self.nnodes not in ("1", "1:1") or self.rdzv_endpoint
        if not multi:
            # --standalone picks a free port, so concurrent launches never collide.
            args.append("--standalone")
        else:
            args += ["--nnodes", self.nnodes]
            if self.node_rank is not None:
                args += ["--node-rank", str(self.node_rank)]
            if self.rdzv_endpoint:
                args += ["--rdzv-endpoint", self.rdzv_endpoint]
        return args


def count_gpus() -> int:
    """Number of CUDA devices visible to torch (0 on a CPU-only build)."""
    # Asked in a subprocess so that the verifying process never imports torch
    # (and never creates a CUDA context of its own).
    code = "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)"
    try:
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        return int(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError, OSError):
        return 0


def choose_topology(
    gpus: int,
    nproc_per_node: int | None = None,
    nnodes: str = "1",
    node_rank: int | None = None,
    rdzv_endpoint: str | None = None,
) -> Topology:
    """NCCL with one rank per GPU when 2+ GPUs are visible, gloo otherwise."""
    if gpus >= 2:
        backend = "nccl"
        default_n = gpus
    else:
        backend = "gloo"
        default_n = 2
    n = nproc_per_node if nproc_per_node else default_n
    if backend == "nccl" and n > gpus:
        # NCCL cannot put two ranks on one GPU; more ranks than GPUs means gloo.
        backend = "gloo"
    return Topology(n, backend, gpus, nnodes, node_rank, rdzv_endpoint)


# --------------------------------------------------------------------------- processes


def _read(path: str, binary: bool = False):
    try:
        with open(path, "rb" if binary else "r") as fh:
            return fh.read()
    except OSError:
        return None


def job_pids(run_id: str) -> set[int]:
    """Every live process whose environment carries this launch's marker."""
    needle = f"{RUN_ID_VAR}={run_id}".encode()
    me = os.getpid()
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        env = _read(f"/proc/{name}/environ", binary=True)
        if env and needle in env.split(b"\0"):
            # A zombie keeps its environ unreadable, so reaching here means alive.
            found.add(int(name))
    return found


def proc_name(pid: int) -> str:
    return (_read(f"/proc/{pid}/comm") or "").strip()


def shm_files(pids: Iterable[int], shm_dir: str = SHM_DIR) -> dict[str, int]:
    """torch's shared-memory files created by these processes: {path: bytes}.

    torch names them ``torch_<creator pid>_<random>_<counter>``, which is how
    files of this job are told apart from anybody else's.
    """
    wanted = {str(p) for p in pids}
    found = {}
    try:
        names = os.listdir(shm_dir)
    except OSError:
        return found
    for name in names:
        parts = name.split("_")
        if len(parts) >= 3 and parts[0] == "torch" and parts[1] in wanted:
            path = os.path.join(shm_dir, name)
            try:
                found[path] = os.stat(path).st_size
            except OSError:
                pass
    return found


def kill_pids(pids: Iterable[int], sig: int = signal.SIGKILL) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_job(run_id: str, grace: float = 3.0, extra: Iterable[int] = ()) -> set[int]:
    """SIGTERM, wait up to ``grace`` seconds, then SIGKILL whatever is left.

    Returns the pids that had to be SIGKILLed.
    """
    pids = job_pids(run_id) | set(extra)
    kill_pids(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not job_pids(run_id):
            return set()
        time.sleep(0.1)
    stubborn = job_pids(run_id)
    kill_pids(stubborn, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while job_pids(run_id) and time.monotonic() < deadline:
        time.sleep(0.05)
    return stubborn


# --------------------------------------------------------------------------- launching


@dataclass
class LaunchResult:
    returncode: int | None
    elapsed: float
    run_id: str = ""
    timed_out: bool = False
    lines: list[str] = field(default_factory=list)  # merged stdout+stderr, as seen
    rank_lines: dict[int, list[str]] = field(default_factory=dict)  # stdout and stderr
    rank_stderr: dict[int, list[str]] = field(default_factory=dict)
    results: list[dict] = field(default_factory=list)  # DDPLINT_RESULT payloads
    observed: dict = field(default_factory=dict)  # what on_pause measured
    leftover_pids: set[int] = field(default_factory=set)  # had to be SIGKILLed at the end
    seen_pids: set[int] = field(default_factory=set)  # every process of the job seen alive
    shm_leftover: dict[str, int] = field(default_factory=dict)  # /dev/shm files left (then removed)

    def tail(self, rank: int, n: int) -> list[str]:
        """The last ``n`` non-blank lines this rank printed (stdout and stderr, as written)."""
        return [ln for ln in self.rank_lines.get(rank, []) if ln.strip()][-n:]

    def last_output(self, rank: int) -> str:
        return "".join(self.tail(rank, 1))

    def errors(self) -> list[str]:
        """The final exception line of each rank that raised one (rank order)."""
        out = []
        for rank in sorted(self.rank_stderr):
            err = last_exception(self.rank_stderr[rank])
            if err:
                out.append(f"rank {rank}: {err}")
        return out

    def hang_report(self) -> str:
        parts = [
            f"rank {r}: {self.last_output(r)[:200] or '(no output)'}"
            for r in sorted(self.rank_lines)
        ]
        return "; ".join(parts) or "(no rank output)"


_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)?): (.+)$")


_RANK_PREFIX = re.compile(r"^\[(?:default)?rank\d+\]:\s?")


def last_exception(lines: list[str]) -> str:
    """The 'SomeError: message' line that ends the last traceback in ``lines`` (torch prefixes
    a rank's traceback lines with `[rank0]: `; that prefix is ignored)."""
    seen_tb = False
    found = ""
    for ln in (_RANK_PREFIX.sub("", line) for line in lines):
        if ln.startswith("Traceback (most recent call last)"):
            seen_tb = True
            continue
        if seen_tb and not ln.startswith(" "):
            m = _EXC_LINE.match(ln)
            if m:
                found = ln.strip()
                seen_tb = False
    return found


@dataclass
class _Pause:
    """A scenario that pauses: the tag its ranks stop at, what to measure then, and whether
    the whole job is then killed."""

    tag: str | None
    on_pause: Callable[[str], dict] | None
    kill: bool
    ranks: set[int] = field(default_factory=set)  # the local ranks that said they paused
    handled: bool = False


class _RankLogs:
    """Each rank's output, read from the files torchrun writes it to, as they grow."""

    def __init__(self, log_dir: str, result: LaunchResult, pause: _Pause) -> None:
        self.log_dir, self.result, self.pause = log_dir, result, pause
        self.offsets: dict[str, int] = {}
        self.partial: dict[str, bytes] = {}  # a line not yet ended, per file

    def poll(self, final: bool = False) -> None:
        """Read what was added since the last poll; ``final``: also the last unended line."""
        for dirpath, _, files in os.walk(self.log_dir):
            for fname in files:
                path = os.path.join(dirpath, fname)
                m = _RANK_LOG.search(path)
                if m:
                    self._read(path, int(m.group(1)), m.group(2), final)

    def _read(self, path: str, rank: int, stream: str, final: bool) -> None:
        try:
            with open(path, "rb") as fh:
                fh.seek(self.offsets.get(path, 0))
                chunk = fh.read()
        except OSError:
            return
        self.offsets[path] = self.offsets.get(path, 0) + len(chunk)
        *complete, rest = (self.partial.get(path, b"") + chunk).split(b"\n")
        if final and rest:
            complete.append(rest)
            rest = b""
        self.partial[path] = rest
        for raw in complete:
            self._handle(rank, stream, raw.decode("utf-8", "replace").rstrip("\r"))

    def _handle(self, rank: int, stream: str, text: str) -> None:
        result = self.result
        result.rank_lines.setdefault(rank, []).append(text)
        if stream == "stderr":
            result.rank_stderr.setdefault(rank, []).append(text)
        elif text.startswith(RESULT_MARK):
            try:
                result.results.append(json.loads(text[len(RESULT_MARK):]))
            except json.JSONDecodeError:
                pass
        elif text.startswith(PAUSED_MARK):
            self.pause.ranks.add(rank)


def _job_env(env: dict[str, str] | None, run_id: str, topology: Topology, pause_tag: str | None,
             job_tmp: str, resume_file: str) -> dict[str, str]:
    """The launch's environment: the caller's, marked with the run id, with the job's own
    temporary folder and the pause settings."""
    child_env = dict(os.environ if env is None else env)
    child_env[RUN_ID_VAR] = run_id
    child_env[BACKEND_VAR] = topology.backend
    child_env["PYTHONUNBUFFERED"] = "1"
    child_env.setdefault("OMP_NUM_THREADS", "1")
    child_env["TMPDIR"] = job_tmp
    child_env[RESUME_VAR] = resume_file
    if pause_tag:
        child_env[PAUSE_VAR] = pause_tag
    else:
        child_env.pop(PAUSE_VAR, None)
    return child_env


def _torchrun_command(script: str, topology: Topology, log_dir: str, script_args, module: bool) -> list[str]:
    return [sys.executable, "-m", TORCHRUN, *topology.torchrun_args(),
            "--redirects", "3", "--log-dir", log_dir, "--max-restarts", "0",
            *(["--module"] if module else []), script, *script_args]


def _start(cmd: list[str], cwd: str, env: dict[str, str], result: LaunchResult):
    """torchrun in a session of its own, and the threads that collect what it prints."""
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, errors="replace", start_new_session=True,
        # If this process is killed outright, torchrun gets SIGTERM and stops its ranks.
        preexec_fn=functools.partial(die_with_parent, signal.SIGTERM),
    )
    lock = threading.Lock()

    def consume(stream):
        for raw in iter(stream.readline, ""):
            with lock:
                result.lines.append(raw.rstrip("\n"))
        stream.close()

    readers = [threading.Thread(target=consume, args=(s,), daemon=True) for s in (proc.stdout, proc.stderr)]
    for t in readers:
        t.start()
    return proc, readers


def _on_paused(result: LaunchResult, pause: _Pause, resume_file: str) -> None:
    """Every local rank is paused: measure the live job, then kill it or let it go on."""
    pause.handled = True
    result.seen_pids |= job_pids(result.run_id)
    if pause.on_pause is not None:
        result.observed = pause.on_pause(result.run_id) or {}
    if pause.kill:
        # The whole job at once, shm managers included, with no chance to clean up: what an
        # OOM kill or `docker kill` does.
        victims = job_pids(result.run_id)
        kill_pids(victims, signal.SIGKILL)
        result.observed["killed"] = len(victims)
    else:
        open(resume_file, "w").close()


def _watch(proc, result: LaunchResult, logs: _RankLogs, pause: _Pause, nproc: int,
           deadline: float, resume_file: str) -> None:
    """Follow the job until torchrun exits or the deadline passes (then: timed out)."""
    while proc.poll() is None:
        if time.monotonic() > deadline:
            result.timed_out = True
            return
        result.seen_pids |= job_pids(result.run_id)
        logs.poll()
        if pause.tag and not pause.handled and len(pause.ranks) >= nproc:
            _on_paused(result, pause, resume_file)
        try:
            proc.wait(timeout=0.1 if pause.tag and not pause.handled else 0.25)
        except subprocess.TimeoutExpired:
            pass


def _stop_job(proc, result: LaunchResult) -> None:
    """End torchrun and every process carrying the launch's marker."""
    # SIGTERM torchrun first: it forwards the signal to its ranks. Then everything still
    # carrying the marker (ranks in their own sessions, workers, shm managers) gets SIGTERM,
    # then SIGKILL.
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    # Processes that outlive the launcher on their own account (a shm manager finishing its
    # clean-up) get a moment before being killed.
    settle = time.monotonic() + 3
    while job_pids(result.run_id) and time.monotonic() < settle:
        time.sleep(0.1)
    result.leftover_pids = kill_job(result.run_id, grace=2.0,
                                    extra=[proc.pid] if proc.poll() is None else [])
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        _reap(proc)


def _reap(proc) -> None:
    """Wait for the killed torchrun without Popen's own lock. A signal that stops verify can
    arrive just after Popen.wait took that lock and before it could release it (a `with lock`
    is not safe against an exception raised by a signal handler); Popen.wait would then block
    for ever and verify would never exit."""
    try:
        _, status = os.waitpid(proc.pid, 0)
    except ChildProcessError:  # reaped already
        return
    proc.returncode = os.waitstatus_to_exitcode(status)


def _remove_shm_files(result: LaunchResult) -> None:
    """Record, then remove, the /dev/shm files the job's processes left."""
    result.shm_leftover = shm_files(result.seen_pids)
    for path in result.shm_leftover:
        try:
            os.unlink(path)
        except OSError:
            pass


def run_torchrun(
    script: str,
    topology: Topology,
    *,
    timeout: float,
    cwd: str,
    script_args: list[str] = (),
    env: dict[str, str] | None = None,
    pause_tag: str | None = None,
    on_pause: Callable[[str], dict] | None = None,
    kill_after_pause: bool = False,
    module: bool = False,
) -> LaunchResult:
    """Run ``script`` under torchrun and collect what its ranks print.

    When ``pause_tag`` is given, the scenario's ranks stop at
    ``probes.pause_point(pause_tag)``; once every local rank is paused,
    ``on_pause(run_id)`` is called to measure the live job from outside. With
    ``kill_after_pause`` the whole job is then SIGKILLed (every process, shm
    manager included), as an OOM killer or a container runtime would.
    """
    result = LaunchResult(returncode=None, elapsed=0.0, run_id=uuid.uuid4().hex)
    pause = _Pause(pause_tag, on_pause, kill_after_pause)
    log_dir = tempfile.mkdtemp(prefix="torchrun-logs-", dir=cwd)
    # The job's own temporary folder, removed with everything in it at the end: what its
    # processes leave when killed (multiprocessing's pymp-*, torch_shm_manager's
    # torch-shm-dir-*) goes there. Short, because sockets are made in it (108-byte limit).
    job_tmp = tempdirs.make("job")
    resume_file = os.path.join(log_dir, "resume")
    child_env = _job_env(env, result.run_id, topology, pause_tag, job_tmp, resume_file)
    logs = _RankLogs(log_dir, result, pause)
    start = time.monotonic()
    proc, readers = _start(_torchrun_command(script, topology, log_dir, script_args, module),
                           cwd, child_env, result)
    try:
        _watch(proc, result, logs, pause, topology.nproc_per_node, start + timeout, resume_file)
    finally:
        _stop_job(proc, result)
        for t in readers:
            t.join(timeout=5)
        logs.poll(final=True)
        _remove_shm_files(result)
        _rmtree(log_dir)
        _rmtree(job_tmp)
    result.elapsed = time.monotonic() - start
    result.returncode = proc.returncode
    return result


def _rmtree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
