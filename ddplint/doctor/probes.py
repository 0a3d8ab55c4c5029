"""The live probes (`ddplint doctor --probe`): a few cheap experiments that settle a question for
certain, each announced on stderr before it runs, and each leaving nothing behind.

- shm: a file of the size the DataLoader workers need (at most 1 GiB) is allocated in
  `/dev/shm` with `posix_fallocate`, which reserves the memory (a sparse file would not), and
  removed at once. It settles what statvfs cannot: a tmpfs whose pages a memory limit denies.
- torch: two Python processes import torch, meet through a TCP store on 127.0.0.1 and
  all-reduce one tensor over gloo, in the launch's environment; the first also reports what
  torch sees (CUDA, its GPUs, its NCCL, the process group's default timeouts). They run in a
  temporary folder of their own (their TMPDIR), removed afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

from ddplint.core.processes import die_with_parent
from ddplint.doctor.facts import Facts, Probe
from ddplint.doctor.machine import GiB, SharedMemory, format_size

SHM_CAP = 1 * GiB
RENDEZVOUS_SECONDS = 60.0
_TORCH_PROBE = r"""
import datetime, json, sys
rank, port = int(sys.argv[1]), int(sys.argv[2])
import torch
import torch.distributed as dist
seen = {}
if rank == 0:
    cuda = torch.cuda.is_available()
    seen = {"torch": torch.__version__, "cuda_available": cuda, "gpus": torch.cuda.device_count() if cuda else 0,
            "nccl_available": dist.is_nccl_available()}
    try:
        seen["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    except Exception:
        seen["nccl"] = None
    from torch.distributed import constants
    nccl = getattr(constants, "default_pg_nccl_timeout", None)
    seen["timeouts"] = {"default": constants.default_pg_timeout.total_seconds(),
                        "nccl": nccl.total_seconds() if nccl is not None else None}
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                        timeout=datetime.timedelta(seconds=30))
total = torch.ones(1) * (rank + 1)
dist.all_reduce(total)
dist.destroy_process_group()
seen["sum"] = total.item()
print(json.dumps(seen))
"""


def announce(message: str) -> None:
    print(f"ddplint doctor: live probe: {message}", file=sys.stderr, flush=True)


def shm_probe(facts: Facts) -> Probe | None:
    """Allocate what the workers need in /dev/shm (None where there is nothing to probe)."""
    shm = facts.shm
    if not isinstance(shm, SharedMemory) or not hasattr(os, "posix_fallocate"):
        return None  # nothing to allocate in, or no way to reserve memory (not Linux)
    ranks, workers = facts.ranks_per_node, facts.workers
    need = ranks * workers * facts.shm_per_worker if isinstance(ranks, int) and isinstance(workers, int) else 0
    size = min(need or facts.shm_per_worker, SHM_CAP)
    announce(f"allocating {format_size(size)} in {shm.path} for a moment")
    path = os.path.join(shm.path, f"ddplint-doctor-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    started = time.monotonic()
    try:
        handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    except OSError as error:
        return Probe("shm", True, f"a file in {shm.path}: {error.strerror or error}")
    try:
        os.posix_fallocate(handle, 0, size)
    except OSError as error:
        capped = f" (of the {format_size(need)} needed)" if need > size else ""
        return Probe("shm", True, f"{format_size(size)}{capped} in {shm.path}: {error.strerror or error}",
                     time.monotonic() - started)
    finally:
        os.close(handle)
        os.unlink(path)
    part = f" of the {format_size(need)} needed (it allocates at most {format_size(SHM_CAP)})" if need > size else ""
    return Probe("shm", False, f"allocated {format_size(size)}{part} in {shm.path}", time.monotonic() - started)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def torch_probe(facts: Facts) -> Probe | None:
    """Two processes meet over gloo on localhost (None where torch is not installed here)."""
    software = facts.software
    if getattr(software, "torch", None) is None:
        return None
    announce("two processes import torch and meet over gloo on 127.0.0.1 (a few seconds)")
    folder = tempfile.mkdtemp(prefix="ddplint-doctor-")
    environment = {**facts.environment, "TMPDIR": folder}
    port = _free_port()
    started = time.monotonic()
    ranks = [
        subprocess.Popen(
            [facts.system.python, "-c", _TORCH_PROBE, str(rank), str(port)], cwd=folder, env=environment,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=lambda: die_with_parent(signal.SIGKILL),
        )
        for rank in (0, 1)
    ]
    try:
        outputs = [_wait(process, started) for process in ranks]
    finally:
        for process in ranks:
            if process.poll() is None:
                process.kill()
                process.wait()
        shutil.rmtree(folder, ignore_errors=True)
    seconds = time.monotonic() - started
    failure = next((error for _, error in outputs if error), None)
    if failure is not None:
        return Probe("torch", True, failure, seconds)
    values = json.loads(outputs[0][0].strip().splitlines()[-1])
    if values.get("sum") != 3.0:
        return Probe("torch", True, f"the all-reduce of 1 and 2 gave {values.get('sum')}", seconds, values)
    return Probe("torch", False, f"met and all-reduced in {seconds:.1f} s", seconds, values)


def _wait(process: subprocess.Popen, started: float) -> tuple[str, str | None]:
    """(stdout, what went wrong or None)."""
    left = max(1.0, RENDEZVOUS_SECONDS - (time.monotonic() - started))
    try:
        out, err = process.communicate(timeout=left)
    except subprocess.TimeoutExpired:
        return "", f"no answer within {RENDEZVOUS_SECONDS:g} s"
    if process.returncode != 0:
        lines = [line for line in err.splitlines() if line.strip()]
        return out, lines[-1] if lines else f"exit {process.returncode}"
    try:
        json.loads(out.strip().splitlines()[-1]) if out.strip() else None
    except ValueError:
        return out, f"unreadable answer: {out.strip()[-200:]}"
    return out, None


def run_probes(facts: Facts) -> None:
    """Run every probe that has something to settle, and keep what they found in `facts`."""
    for probe in (shm_probe, torch_probe):
        found = probe(facts)
        if found is not None:
            facts.probes[found.name] = found
