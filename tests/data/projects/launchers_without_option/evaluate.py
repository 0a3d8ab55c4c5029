import torch
import torch.distributed as dist

from utils.eval_options import get_eval_args


def main():
    args = get_eval_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(args.local_rank)
    state = torch.load(args.checkpoint, map_location="cpu")
    return state


if __name__ == "__main__":
    main()
