"""Shared set-up for the symptom experiments: a gloo group from torchrun's environment,
and one JSON line of results printed by rank 0."""

import json
import os
import sys
from datetime import timedelta

import torch.distributed as dist

MARK = "SYMPTOM "


def init():
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    return dist.get_rank(), dist.get_world_size()


def gather(obj):
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def emit(payload):
    if dist.get_rank() == 0:
        print(MARK + json.dumps(payload), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    # Leave without C++ static destructors: gloo's, after a DDP model with a comm hook, can
    # abort at exit ("terminate called without an active exception", seen once in CI), which
    # says nothing about the symptom measured above.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def local_rank():
    return int(os.environ.get("LOCAL_RANK", "0"))


def counting_hook(state, bucket):
    """A DDP comm hook that all-reduces (averages) like the default and counts the buckets:
    register with `model.register_comm_hook(state, counting_hook)`, state = {"allreduces": 0}."""
    state["allreduces"] += 1
    tensor = bucket.buffer().div_(dist.get_world_size())
    return dist.all_reduce(tensor, async_op=True).get_future().then(lambda f: f.value()[0])
