import argparse


def get_finetune_args():
    parser = argparse.ArgumentParser(description="fine-tuning")
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--local_rank", type=int, default=-1)
    return parser.parse_args()
