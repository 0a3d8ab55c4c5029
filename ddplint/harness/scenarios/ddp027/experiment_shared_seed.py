"""DDP027: what each rank draws per training step after `torch.manual_seed(seed)` on every rank,
and after `torch.manual_seed(seed + rank)`, on CPU with gloo.

Five steps of a diffusion-style loss: each step draws its timesteps (`torch.randint`) and its
noise (`torch.randn`) from the default generator, as the training loops DDP027 flags do; the
model is a DDP-wrapped linear layer whose parameters are checked equal across ranks (a shared
seed's one job, which DDP's broadcast does anyway).
"""

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from ddplint.harness import probes

SEED = 42
STEPS = 5


def train(seed: int, rank: int) -> dict:
    torch.manual_seed(seed)
    model = DDP(nn.Linear(16, 16))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    images = torch.ones(4, 16) * (rank + 1)  # each rank its own batch
    steps = []
    for _ in range(STEPS):
        timesteps = torch.randint(0, 1000, (4,))
        noise = torch.randn(4, 16)
        loss = (model(images + noise * timesteps[:, None] / 1000) - noise).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps.append({"timesteps": timesteps.tolist(), "noise_sum": round(noise.sum().item(), 5)})
    return {"steps": steps, "weight_sum": round(model.module.weight.sum().item(), 5)}


def main():
    rank, world, _ = probes.init_distributed()
    result = {"world": world}
    for name, seed in (("shared_seed", SEED), ("seed_plus_rank", SEED + rank)):
        per_rank = probes.gather(train(seed, rank))
        steps = [r["steps"] for r in per_rank]
        result[name] = {
            "identical_steps": sum(all(s[i] == steps[0][i] for s in steps) for i in range(STEPS)),
            "steps": STEPS,
            "weights_equal": len({r["weight_sum"] for r in per_rank}) == 1,
            "rank0_first_timesteps": steps[0][0]["timesteps"],
        }
    probes.emit("DDP027", result)
    probes.finish()


if __name__ == "__main__":
    main()
