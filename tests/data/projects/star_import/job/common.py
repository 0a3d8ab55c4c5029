import os

import torch
import torch.distributed as dist

WORLD = int(os.environ.get("WORLD_SIZE", 1))
