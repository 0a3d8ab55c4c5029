import os

import torch
import torch.distributed as dist

from eval_config import get_eval_args


def main():
    args = get_eval_args()
    args.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")


if __name__ == "__main__":
    main()
