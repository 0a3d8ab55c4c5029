import argparse


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--local_rank", type=int, default=0)
    return parser.parse_args()
