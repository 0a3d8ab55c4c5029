import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")
    net = torch.nn.Linear(4, 4)
    net.load_state_dict(torch.load("pretrained.pt"))
    model = DDP(net)
    torch.save(model.module.state_dict(), "tuned.pt")


if __name__ == "__main__":
    main()
