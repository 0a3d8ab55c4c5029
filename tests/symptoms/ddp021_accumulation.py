"""DDP021: gradient accumulation with and without `no_sync()`, and where `no_sync()` sits.

Four micro-batches per optimizer step, two optimizer steps. A comm hook counts the buckets
DDP all-reduces; the model fits in one bucket, so the count is the number of all-reduces.
Variants: no no_sync at all; no_sync around forward and backward of the first three
micro-batches; no_sync around the backward only (forward outside); no_sync around the
forward only. Also measured: whether the parameters end equal across ranks (they must in
every variant: the last micro-batch synchronises the accumulated gradients).
"""

import copy
import contextlib
import sys

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, __import__("os").path.dirname(__file__))
from _common import counting_hook, emit, gather, init  # noqa: E402

ACCUMULATE = 4
STEPS = 2


def run(variant: str, rank: int, initial: nn.Module) -> dict:
    model = DDP(copy.deepcopy(initial))
    calls = {"allreduces": 0}
    model.register_comm_hook(calls, counting_hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(100 + rank)
    per_step = []
    for _ in range(STEPS):
        before = calls["allreduces"]
        for micro in range(ACCUMULATE):
            x = torch.randn(8, 4, generator=g)
            y = torch.randn(8, 1, generator=g)
            skip = micro < ACCUMULATE - 1
            around_forward = model.no_sync() if skip and variant in ("forward+backward", "forward only") else contextlib.nullcontext()
            around_backward = model.no_sync() if skip and variant in ("forward+backward", "backward only") else contextlib.nullcontext()
            if variant == "forward+backward":
                with around_forward:
                    loss = nn.functional.mse_loss(model(x), y) / ACCUMULATE
                    loss.backward()
            else:
                with around_forward:
                    loss = nn.functional.mse_loss(model(x), y) / ACCUMULATE
                with around_backward:
                    loss.backward()
        opt.step()
        opt.zero_grad()
        per_step.append(calls["allreduces"] - before)
    flat = torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()
    return {"per_step": per_step, "params": flat}


def main():
    rank, world = init()
    torch.manual_seed(0)
    initial = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    result = {"accumulate": ACCUMULATE, "steps": STEPS, "world": world}
    for variant in ("none", "forward+backward", "backward only", "forward only"):
        per_rank = gather(run(variant, rank, initial))
        params = [torch.tensor(r["params"]) for r in per_rank]
        result[variant] = {
            "allreduces_per_step": per_rank[0]["per_step"],
            "max_param_diff": max(float((params[0] - p).abs().max()) for p in params[1:]),
        }
    emit(result)


if __name__ == "__main__":
    main()
