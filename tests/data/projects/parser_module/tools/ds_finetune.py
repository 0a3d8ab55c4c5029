import argparse

import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--enable_deepspeed", action="store_true")
    known, _ = parser.parse_known_args()
    if known.enable_deepspeed:
        import deepspeed

        parser = deepspeed.add_config_arguments(parser)
    parser.parse_args()
    dist.init_process_group("nccl")


if __name__ == "__main__":
    main()
