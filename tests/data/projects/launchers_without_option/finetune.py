import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from utils.finetune_options import get_finetune_args


def main():
    args = get_finetune_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(args.local_rank)
    model = DDP(torch.nn.Linear(8, 2).cuda(args.local_rank), device_ids=[args.local_rank])
    return model


if __name__ == "__main__":
    main()
