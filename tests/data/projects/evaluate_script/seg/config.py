import argparse


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", default="runs/segnet.pth")
    parser.add_argument("--pretrained", default=None)
    return parser.parse_args()
