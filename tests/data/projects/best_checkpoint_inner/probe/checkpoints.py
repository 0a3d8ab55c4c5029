import os

import torch


def store(args, epoch, net_plain):
    os.makedirs(args.out_dir, exist_ok=True)
    target = os.path.join(args.out_dir, "weights-best.pth")
    torch.save({"net": net_plain.state_dict(), "epoch": epoch}, target)
