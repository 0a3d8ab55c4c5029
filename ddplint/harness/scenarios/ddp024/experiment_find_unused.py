"""DDP024: find_unused_parameters=True on a model whose forward uses every parameter.

Measured: the warning DDP's reducer prints at run time, and the time per step with and
without the flag (CPU, gloo; only indicative: the extra cost is one traversal of the
autograd graph per iteration).
"""

import time
import warnings

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from ddplint.harness import probes

STEPS = 30


def run(flag: bool) -> dict:
    torch.manual_seed(0)
    model = DDP(nn.Sequential(*[nn.Linear(32, 32) for _ in range(24)]), find_unused_parameters=flag)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(16, 32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        for _ in range(STEPS):
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        elapsed = time.perf_counter() - start
    return {"ms_per_step": 1000 * elapsed / STEPS, "warnings": sorted({str(w.message)[:400] for w in caught})}


def main():
    rank, world, _ = probes.init_distributed()
    result = {"world": world}
    for flag in (True, False):
        per_rank = probes.gather(run(flag))
        result[f"find_unused_{flag}"] = {
            "ms_per_step": [round(r["ms_per_step"], 2) for r in per_rank],
            "warnings": per_rank[0]["warnings"],
        }
    probes.emit("DDP024", result)
    probes.finish()


if __name__ == "__main__":
    main()
