"""Helpers the scenario programs import to report what they measured.

A scenario is an ordinary DDP training program. These helpers keep the
measuring out of its way: process-group setup with an explicit timeout,
gathering each rank's facts, printing them as one JSON line from rank 0, and
the pause point at which the harness inspects a live job from outside.

torch is imported inside the functions, never at module level, so
``import ddplint.harness`` works where torch is not installed.
"""

from __future__ import annotations

import io
import json
import os
import pickletools
import struct
import sys
import time
import zipfile
from datetime import timedelta
from typing import Callable

RESULT_MARK = "DDPLINT_RESULT "
PAUSED_MARK = "DDPLINT_PAUSED "
PAUSE_VAR = "DDPLINT_PAUSE"
RESUME_VAR = "DDPLINT_RESUME"
BACKEND_VAR = "DDPLINT_BACKEND"
BATCH_VAR = "DDPLINT_BATCH"


def init_distributed(timeout_s: float = 60.0):
    """Join the process group torchrun describes; return (rank, world_size, device).

    The backend is the one the harness chose (NCCL with one rank per GPU, or
    gloo). The timeout is explicit: gloo's default is 30 minutes, far too long
    for a hang to be noticed.
    """
    import torch
    import torch.distributed as dist

    backend = os.environ.get(BACKEND_VAR) or (
        "nccl" if torch.cuda.is_available() and torch.cuda.device_count() >= 2 else "gloo"
    )
    if backend == "nccl":
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    if not dist.is_initialized():
        dist.init_process_group(backend, timeout=timedelta(seconds=timeout_s))
    return dist.get_rank(), dist.get_world_size(), device


def finish() -> None:
    """Leave the process group (kept open when several scenarios share one launch). DDP models
    still awaiting the cyclic collector hold the group through their reducers: collected after
    the group is gone, they abort the process ("terminate called without an active exception"),
    so they are collected first, and every rank is done with the group before any leaves it."""
    import gc

    import torch.distributed as dist

    if dist.is_initialized() and not os.environ.get(BATCH_VAR):
        gc.collect()
        dist.barrier()
        dist.destroy_process_group()


def gather(obj) -> list:
    """Every rank's ``obj``, in rank order (all_gather_object)."""
    import torch.distributed as dist

    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def counting_hook(state: dict, bucket):
    """A DDP comm hook that all-reduces (averages) as the default does and counts the buckets:
    ``model.register_comm_hook(state, counting_hook)`` with ``state = {"allreduces": 0}``."""
    import torch.distributed as dist

    state["allreduces"] += 1
    tensor = bucket.buffer().div_(dist.get_world_size())
    return dist.all_reduce(tensor, async_op=True).get_future().then(lambda f: f.value()[0])


def is_rank_zero() -> bool:
    import torch.distributed as dist

    if dist.is_initialized():
        return dist.get_rank() == 0
    return os.environ.get("RANK", "0") == "0"


def emit(rule: str, result: dict) -> None:
    """Rank 0 prints the measurement as one JSON line; other ranks print nothing."""
    if not is_rank_zero():
        return
    payload = dict(result)
    payload["rule"] = rule
    # One write call, so that the line cannot be split by another stream.
    sys.stdout.write(RESULT_MARK + json.dumps(payload, sort_keys=True) + "\n")
    sys.stdout.flush()


def describe(exc: BaseException) -> str:
    """'ExceptionType: message', first line only, as a traceback would end."""
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0] if msg else ''}".strip()


def pause_point(tag: str, seconds: float = 120.0) -> None:
    """Stop here while the harness inspects (and possibly kills) the live job.

    Only when the harness asked for it (``DDPLINT_PAUSE=<tag>``); otherwise a
    no-op, so the scenario runs through as a normal program. The rank goes on
    when the harness creates the file named by ``DDPLINT_RESUME``, or after
    ``seconds``.
    """
    if os.environ.get(PAUSE_VAR) != tag:
        return
    sys.stdout.write(f"{PAUSED_MARK}{tag} pid={os.getpid()}\n")
    sys.stdout.flush()
    resume = os.environ.get(RESUME_VAR)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if resume and os.path.exists(resume):
            return
        time.sleep(0.05)


# --------------------------------------------------------------------------- checkpoints


def retag_checkpoint(path: str, locate: Callable[[str, str], str]) -> list[str]:
    """Rewrite the device tags of the storages in a torch.save zip checkpoint.

    In torch's zip format, ``data.pkl`` refers to each storage by a persistent
    id, the tuple ``('storage', <StorageType>, <key>, <location>, <numel>)``;
    ``<location>`` is the device string that ``torch.load`` restores the
    storage to ('cpu', 'cuda:0', ...). This turns a checkpoint saved on CPU
    into the file the same program would have written on GPUs: only the
    location strings change, the bytes of the storages stay as they are.

    ``locate(key, old_location)`` returns the new location for each storage.
    Returns the new locations, in storage order.
    """
    with zipfile.ZipFile(path) as zin:
        infos = zin.infolist()
        blobs = {i.filename: zin.read(i.filename) for i in infos}
    pkl_name = next(n for n in blobs if n.endswith("/data.pkl") or n == "data.pkl")
    new_pkl, tags = _retag_pickle(blobs[pkl_name], locate)
    blobs[pkl_name] = new_pkl
    tmp = path + ".retag"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as zout:
        for info in infos:
            zi = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            zi.compress_type = zipfile.ZIP_STORED
            zout.writestr(zi, blobs[info.filename])
    os.replace(tmp, path)
    return tags


_STRING_OPS = {"BINUNICODE", "SHORT_BINUNICODE", "UNICODE", "BINUNICODE8"}
_PUT_OPS = {"BINPUT", "LONG_BINPUT", "PUT", "MEMOIZE"}
_GET_OPS = {"BINGET", "LONG_BINGET", "GET"}


def _retag_pickle(data: bytes, locate: Callable[[str, str], str]):
    ops = list(pickletools.genops(data))
    if any(op.name == "FRAME" for op, _, _ in ops):
        raise ValueError("framed pickles (protocol 4+) are not supported")
    ends = [pos for _, _, pos in ops[1:]] + [len(data)]
    memo: dict[int, object] = {}
    # First pass: memo contents (strings only matter) and the op index holding
    # the location of each persistent id.
    values: list[object] = []  # value pushed by op i (strings / gets), else None
    next_memo = 0
    for i, (op, arg, _) in enumerate(ops):
        val = None
        if op.name in _STRING_OPS:
            val = arg
        elif op.name in _GET_OPS:
            val = memo.get(arg)
        values.append(val)
        if op.name in _PUT_OPS:
            key = next_memo if op.name == "MEMOIZE" else arg
            next_memo = max(next_memo, (key if isinstance(key, int) else 0) + 1)
            memo[key] = values[i - 1] if i else None
    replace: dict[int, str] = {}
    tags: list[str] = []
    for j, (op, _, _) in enumerate(ops):
        if op.name != "BINPERSID":
            continue
        # Walk back over the tuple: TUPLE, then its elements down to MARK,
        # skipping memo puts.
        k = j - 1
        while k >= 0 and ops[k][0].name in _PUT_OPS:
            k -= 1
        if ops[k][0].name != "TUPLE":
            continue
        elems = []
        k -= 1
        while k >= 0 and ops[k][0].name != "MARK":
            if ops[k][0].name not in _PUT_OPS:
                elems.append(k)
            k -= 1
        elems.reverse()
        if len(elems) != 5 or values[elems[0]] != "storage":
            continue
        key, loc_idx = values[elems[2]], elems[3]
        old = values[loc_idx]
        if not isinstance(old, str):
            continue
        new = locate(str(key), old)
        replace[loc_idx] = new
        tags.append(new)
    out = io.BytesIO()
    for i, (op, _, pos) in enumerate(ops):
        if i in replace:
            enc = replace[i].encode("utf-8")
            out.write(b"X" + struct.pack("<I", len(enc)) + enc)
        else:
            out.write(data[pos:ends[i]])
    return out.getvalue(), tags


# --------------------------------------------------------------------------- CUDA


def cuda_context_pids(pids) -> dict[int, list[int]] | None:
    """For each of `pids` holding a CUDA context, the indices of the GPUs it holds one on: the
    compute processes the driver lists (nvidia-smi). None where nvidia-smi cannot say.

    An open /dev/nvidiaN is not a context: NVML and cuInit open it too, and on an H200 the
    torchrun agent and ranks that never allocated held one."""
    import subprocess

    def query(what: str) -> list[list[str]] | None:
        try:
            done = subprocess.run(["nvidia-smi", f"--query-{what}", "--format=csv,noheader"],
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        return [[field.strip() for field in line.split(",")] for line in done.stdout.splitlines() if line.strip()]

    gpus, apps = query("gpu=index,uuid"), query("compute-apps=pid,gpu_uuid")
    if gpus is None or apps is None:
        return None
    index = {uuid: int(i) for i, uuid in gpus}
    wanted = set(pids)
    out: dict[int, set[int]] = {}
    for pid, uuid in apps:
        if pid.isdigit() and int(pid) in wanted and uuid in index:
            out.setdefault(int(pid), set()).add(index[uuid])
    return {pid: sorted(held) for pid, held in out.items()}
