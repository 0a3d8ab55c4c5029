import os

import torch
import torch.distributed as dist


def main(path):
    dist.init_process_group("nccl")
    model = torch.nn.Linear(2, 2).cuda(int(os.environ["LOCAL_RANK"]))
    model.load_state_dict(torch.load(path))
    model = torch.nn.parallel.DistributedDataParallel(model)


if __name__ == "__main__":
    main("ckpt.pt")
