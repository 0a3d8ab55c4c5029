"""Pre-train a GPT with tensor and pipeline parallelism: scripts/pretrain.sh"""
import argparse

from megatron_lite.checkpointing import save_checkpoint
from megatron_lite.initialize import initialize_megatron


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save", default="checkpoints/gpt")
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--pp", type=int, default=1)
    parser.add_argument("--deepspeed", action="store_true")
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    initialize_megatron(args)
    model, optimizer = build(args)
    for iteration in range(1000):
        train_step(model, optimizer)
        if iteration % 100 == 0:
            save_checkpoint(iteration, model, optimizer, args)


def build(args):
    raise NotImplementedError


def train_step(model, optimizer):
    raise NotImplementedError


if __name__ == "__main__":
    main()
