import argparse


def get_args():
    parser = argparse.ArgumentParser(description="segmentation training")
    parser.add_argument("--data", default="data/")
    parser.add_argument("--epochs", type=int, default=30)
    # kept so that old launch scripts still parse
    parser.add_argument("--local_rank", type=int, default=0)
    return parser.parse_args()
