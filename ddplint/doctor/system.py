"""The machine as the doctor reads it: every path and reader in one place, so that a test can
give it a small `/dev/shm`, a stand-in `nvidia-smi` on PATH or a container's marker files
without root. Nothing here writes anything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

# A program the doctor runs (nvidia-smi) gets this long before it counts as not answering.
PROGRAM_SECONDS = 15.0


@dataclass(frozen=True)
class ProgramResult:
    returncode: int
    output: str  # stdout, or stderr where stdout is empty


def _open_file_limits() -> tuple[int, int] | None:
    try:
        import resource  # not on Windows
    except ImportError:
        return None
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass
class System:
    """`environ`: the environment the launch would start in; `root`: where `/` is for the
    files read under it (`/.dockerenv`, `/proc/1/cgroup`, `/dev/nvidia0`, `/sys/class/net`);
    `shm`: the shared-memory folder; `site`: where installed packages are looked up (None:
    this Python's `sys.path`)."""

    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    root: str = "/"
    shm: str = "/dev/shm"
    statvfs: Callable[[str], os.statvfs_result] = os.statvfs
    open_file_limits: Callable[[], tuple[int, int] | None] = _open_file_limits
    cpus: Callable[[], int] = _cpus
    cpu_total: Callable[[], int] = lambda: os.cpu_count() or 1
    site: list[str] | None = None
    python: str = sys.executable
    cwd: str = field(default_factory=os.getcwd)

    def path(self, absolute: str) -> str:
        """`absolute` (`/proc/1/cgroup`) under `root`."""
        return os.path.join(self.root, absolute.lstrip("/"))

    def read(self, absolute: str) -> str | None:
        try:
            with open(self.path(absolute), encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError:
            return None

    def exists(self, absolute: str) -> bool:
        return os.path.lexists(self.path(absolute))

    def listdir(self, absolute: str) -> list[str] | None:
        try:
            return sorted(os.listdir(self.path(absolute)))
        except OSError:
            return None

    def which(self, program: str) -> str | None:
        """`program` on the PATH of `environ` (not of this process)."""
        return shutil.which(program, path=self.environ.get("PATH", os.defpath))

    def run_program(self, argv: list[str]) -> ProgramResult | None:
        """Run `argv[0]` found on `environ`'s PATH; None where it is not there. A program that
        does not answer in PROGRAM_SECONDS, or cannot be started, gives returncode -1."""
        found = self.which(argv[0])
        if found is None:
            return None
        try:
            done = subprocess.run(
                [found, *argv[1:]], capture_output=True, text=True, errors="replace",
                timeout=PROGRAM_SECONDS, env=dict(self.environ), stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return ProgramResult(-1, f"did not answer within {PROGRAM_SECONDS:g} s")
        except OSError as error:
            return ProgramResult(-1, error.strerror or str(error))
        return ProgramResult(done.returncode, done.stdout if done.stdout.strip() else done.stderr)
