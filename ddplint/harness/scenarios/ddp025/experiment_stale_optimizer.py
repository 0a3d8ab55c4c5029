"""DDP025: what an optimizer built before the FSDP wrap does, on CPU with gloo.

The same small regression model trains five SGD steps on each rank's own batch, with the
optimizer built before or after the wrap: FSDP1 (`FullyShardedDataParallel`) with its default
`use_orig_params=False` and with `use_orig_params=True`, and FSDP2 (`fully_shard`). Recorded:
the loss of every step, and whether the parameters the optimizer holds changed.
"""

import torch
from torch import nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import fully_shard

from ddplint.harness import probes

STEPS = 5


def wrap(model, how):
    if how == "fully_shard":
        fully_shard(model)
        return model
    return FSDP(model, device_id=torch.device("cpu"), use_orig_params=how == "fsdp1_orig_params")


def train(how: str, optimizer_first: bool, rank: int) -> dict:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    if optimizer_first:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        model = wrap(model, how)
    else:
        model = wrap(model, how)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    held = [p.detach().clone() for group in optimizer.param_groups for p in group["params"]]
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(rank))
    y = x.sum(1, keepdim=True)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(round(loss.item(), 4))
    after = [p.detach() for group in optimizer.param_groups for p in group["params"]]
    changed = any(a.shape != b.shape or not torch.equal(a, b) for a, b in zip(held, after))
    return {"losses": losses, "optimizer_parameters_changed": changed}


def main():
    rank, world, _ = probes.init_distributed()
    result = {"world": world}
    for how in ("fsdp1", "fsdp1_orig_params", "fully_shard"):
        for optimizer_first in (True, False):
            key = f"{how}_optimizer_{'before' if optimizer_first else 'after'}"
            result[key] = probes.gather(train(how, optimizer_first, rank))
    probes.emit("DDP025", result)
    probes.finish()


if __name__ == "__main__":
    main()
