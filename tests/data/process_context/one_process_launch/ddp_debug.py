import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")
    model = DDP(torch.nn.Linear(4, 4))
    torch.save(model.module.state_dict(), "debug.pt")


if __name__ == "__main__":
    main()
