import torch
import torch.distributed as dist

from diffusion.train_util import TrainLoop

if __name__ == "__main__":
    dist.init_process_group("nccl")
    TrainLoop(torch.nn.Linear(2, 2), "model.pt", "ema.pt")
