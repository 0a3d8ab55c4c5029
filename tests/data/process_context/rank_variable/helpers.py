import torch
import torch.distributed as dist


def write_checkpoint(model, step):
    torch.save(model.state_dict(), f"model_{step:05d}.pt")
    if dist.is_initialized():
        dist.barrier()
