import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from helpers import write_checkpoint

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    dist.init_process_group(backend="nccl")
    ddp_rank = int(os.environ["RANK"])
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    device = f"cuda:{ddp_local_rank}"
    torch.cuda.set_device(device)
    master_process = ddp_rank == 0  # this process will do logging, checkpointing etc.
else:
    ddp_rank = 0
    master_process = True
    device = "cuda"

model = torch.nn.Linear(2, 2).to(device)
if ddp:
    model = DDP(model, device_ids=[ddp_local_rank])
raw_model = model.module if ddp else model
for step in range(100):
    if master_process and step % 10 == 0:
        torch.save(raw_model.state_dict(), os.path.join("log", f"model_{step:05d}.pt"))
        write_checkpoint(raw_model, step)
