import random

import numpy as np
import torch
import torch.distributed as dist


def fix_seeds(value):
    """The same value for every generator, for reproducible runs."""
    random.seed(value)
    np.random.seed(value % (2**32))
    torch.manual_seed(value)
    torch.cuda.manual_seed_all(value)


def fix_seeds_per_rank(value):
    torch.manual_seed(value + dist.get_rank())


def add_noise(latents, scheduler):
    noise = torch.randn_like(latents)
    steps = torch.randint(0, scheduler.num_steps, (latents.shape[0],), device=latents.device)
    return scheduler.add(latents, noise, steps), noise, steps
