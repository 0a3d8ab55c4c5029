import argparse


def get_eval_args():
    parser = argparse.ArgumentParser(description="evaluation")
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--local_rank", type=int, default=-1)
    return parser.parse_args()
