import argparse

import torch

from seg.models import UNet


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", default="runs/unet.pth")
    parser.add_argument("--ema_ckpt", default="runs/ema.pth")
    args = parser.parse_args()
    model = UNet()
    checkpoint = torch.load(args.ckpt, map_location="cpu")
    model.load_state_dict(checkpoint["state_dict"])
    ema = UNet()
    saved = torch.load(args.ema_ckpt, map_location="cpu")
    ema.load_state_dict(saved["state_dict"])  # saved from the plain model
    optimizer = torch.optim.Adam(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])


if __name__ == "__main__":
    main()
