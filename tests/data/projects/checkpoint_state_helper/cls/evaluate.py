import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", default="runs/resnet.pth")
    args = parser.parse_args()
    model = torch.nn.Linear(4, 2)
    checkpoint = torch.load(args.ckpt, map_location="cpu")
    model.load_state_dict(checkpoint["state_dict"])
    plain = torch.nn.Linear(4, 2)
    plain.load_state_dict(torch.load("runs/plain.pth", map_location="cpu")["state_dict"])  # saved from the inner model


if __name__ == "__main__":
    main()
