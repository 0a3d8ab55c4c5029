"""DDP020: does torch.compile before the DDP wrap lose DDP's graph splitting?

TorchDynamo's DDPOptimizer splits the compiled graph at DDP's bucket boundaries so that the
all-reduce of one bucket overlaps the backward of the next. It applies when dynamo compiles a
frame while a DDP forward is active (DistributedDataParallel._get_active_ddp_module(), set by
DDP's forward around its call of the inner module). Measured: how many graphs a counting
backend receives for `DDP(torch.compile(model))` with six 1 MiB layers and 1 MiB buckets
(one graph: no splitting; several: DDPOptimizer applied).
"""

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from ddplint.harness import probes


def net():
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Linear(512, 512) for _ in range(6)])


def count_graphs(order: str) -> int:
    import torch._dynamo

    torch._dynamo.reset()
    graphs = [0]

    def counting_backend(gm, example_inputs):
        graphs[0] += 1
        return gm.forward

    model = DDP(torch.compile(net(), backend=counting_backend), bucket_cap_mb=1)
    for _ in range(2):
        model(torch.randn(4, 512)).sum().backward()
    return graphs[0]


def main():
    rank, world, _ = probes.init_distributed()
    result = {"world": world}
    result["DDP(compile(model))"] = count_graphs("DDP(compile(model))")
    probes.emit("DDP020", result)
    probes.finish()


if __name__ == "__main__":
    main()
