import torch
import torch.distributed as dist

from config import get_args


def main():
    args = get_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")


if __name__ == "__main__":
    main()
