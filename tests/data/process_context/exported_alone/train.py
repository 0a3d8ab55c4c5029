import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from wrapper import Wrapper


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    wrapper = Wrapper(torch.nn.Linear(4, 4).cuda())
    wrapper.restore("fitted.pt")
    wrapper.model = DDP(wrapper.model, device_ids=[rank])
    wrapper.fit()


if __name__ == "__main__":
    main()
