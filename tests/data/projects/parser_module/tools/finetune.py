import argparse

import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.parse_args()
    dist.init_process_group("nccl")


if __name__ == "__main__":
    main()
