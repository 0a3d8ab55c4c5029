"""DDP026: the norm `torch.nn.utils.clip_grad_norm_(model.parameters())` computes on each rank
of an FSDP model, beside FSDP1's `model.clip_grad_norm_`, on CPU with gloo.

One model, one backward over a per-rank batch, no clipping (max_norm 1e9): the returned total
norm is what each rank would clip by. FSDP1 with its default FULL_SHARD, with SHARD_GRAD_OP,
with use_orig_params=True and with NO_SHARD; FSDP2 (`fully_shard`), whose parameters are
DTensors.
"""

import torch
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import ShardingStrategy, fully_shard

from ddplint.harness import probes

NO_CLIPPING = 1e9


def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))


def backward(model, rank):
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(rank)) * (1 + rank)
    (model(x) ** 2).mean().backward()


def fsdp1(rank, **options) -> dict:
    model = FSDP(net(), device_id=torch.device("cpu"), **options)
    backward(model, rank)
    function = float(torch.nn.utils.clip_grad_norm_(model.parameters(), NO_CLIPPING))
    method = float(model.clip_grad_norm_(NO_CLIPPING))
    return {"function": round(function, 4), "method": round(method, 4)}


def fsdp2(rank) -> dict:
    model = net()
    fully_shard(model)
    backward(model, rank)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), NO_CLIPPING)
    return {"function": round(float(norm.full_tensor() if hasattr(norm, "full_tensor") else norm), 4)}


def main():
    rank, world, _ = probes.init_distributed()
    variants = {
        "full_shard": {},
        "shard_grad_op": {"sharding_strategy": ShardingStrategy.SHARD_GRAD_OP},
        "use_orig_params": {"use_orig_params": True},
        "no_shard": {"sharding_strategy": ShardingStrategy.NO_SHARD},
    }
    result = {"world": world}
    for name, options in variants.items():
        result[name] = probes.gather(fsdp1(rank, **options))
    result["fully_shard"] = probes.gather(fsdp2(rank))
    probes.emit("DDP026", result)
    probes.finish()


if __name__ == "__main__":
    main()
