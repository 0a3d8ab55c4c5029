import argparse
import os

import torch

from simclr.model import SimCLR

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_path", default="save")
    parser.add_argument("--name", default="resnet")
    parser.add_argument("--epoch_num", type=int, default=100)
    args = parser.parse_args()
    model = SimCLR()
    model_fp = os.path.join(args.model_path, f"checkpoint_{args.epoch_num}.tar")
    model.load_state_dict(torch.load(model_fp, map_location="cpu"))
    pretrained = SimCLR()  # a file the code names by its option alone: not known to be the checkpoint
    pretrained.load_state_dict(torch.load(f"{args.model_path}/{args.name}.tar", map_location="cpu"))
    linear = SimCLR()  # another file name
    linear.load_state_dict(torch.load(os.path.join(args.model_path, "linear_{}.tar".format(args.epoch_num)), map_location="cpu"))
    last = torch.load("runs/last.pth", map_location="cpu")
    resumed = SimCLR()
    resumed.load_state_dict(last["model"])
    whole = SimCLR()  # the whole checkpoint is no state dict: its prefix is not what breaks this load
    whole.load_state_dict(last)
