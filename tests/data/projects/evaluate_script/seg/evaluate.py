import torch

from seg.config import parse
from seg.model import SegNet


def main():
    args = parse()
    model = SegNet()
    checkpoint = torch.load(args.checkpoint, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    backbone = SegNet()
    backbone.load_state_dict(torch.load(args.pretrained, map_location="cpu"))  # another file
    return model(torch.zeros(1, 3, 8, 8)), backbone


if __name__ == "__main__":
    main()
