"""Shared set-up for the symptom experiments: a gloo group from torchrun's environment,
and one JSON line of results printed by rank 0."""

import json
import os
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


def local_rank():
    return int(os.environ.get("LOCAL_RANK", "0"))
