"""Convert a Megatron checkpoint to Hugging Face's format, on every rank: scripts/convert.sh"""
import argparse

from megatron_lite.initialize import initialize_megatron
from tools.hf_export import export


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--load")
    parser.add_argument("--save")
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--pp", type=int, default=1)
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    initialize_megatron(args)
    hf_model, state = load(args.load)
    export(hf_model, state, args.save)


def load(path):
    raise NotImplementedError


if __name__ == "__main__":
    main()
