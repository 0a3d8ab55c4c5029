"""DDP019: a training step through `model.module(x)` instead of `model(x)`.

Each rank trains on different data for a few steps, once through the wrapped module and
once through DDP, from the same initial weights. Measured: the largest difference of the
parameters across ranks, and how many all-reduces DDP issued (a comm hook counts buckets).
"""

import copy
import sys

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, __import__("os").path.dirname(__file__))
from _common import counting_hook, emit, gather, init  # noqa: E402

STEPS = 5


def run(bypass: bool, rank: int, initial: nn.Module) -> dict:
    model = DDP(copy.deepcopy(initial))
    calls = {"allreduces": 0}
    model.register_comm_hook(calls, counting_hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(100 + rank)  # each rank its own shard of data
    for _ in range(STEPS):
        x = torch.randn(8, 4, generator=g)
        y = torch.randn(8, 1, generator=g)
        out = model.module(x) if bypass else model(x)
        loss = nn.functional.mse_loss(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    flat = torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()
    return {"params": flat, "allreduces": calls["allreduces"]}


def main():
    rank, world = init()
    torch.manual_seed(0)
    initial = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    result = {}
    for label, bypass in (("module", True), ("wrapper", False)):
        per_rank = gather(run(bypass, rank, initial))
        params = [torch.tensor(r["params"]) for r in per_rank]
        result[label] = {
            "max_param_diff": max(float((params[0] - p).abs().max()) for p in params[1:]),
            "allreduces": [r["allreduces"] for r in per_rank],
        }
    result["steps"] = STEPS
    result["world"] = world
    emit(result)


if __name__ == "__main__":
    main()
