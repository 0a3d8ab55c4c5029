import argparse


def get_eval_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint")
    parser.add_argument("--local_rank", type=int, default=0)
    return parser.parse_args()
