import argparse

import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config")
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    dist.init_process_group("nccl")


if __name__ == "__main__":
    main()
