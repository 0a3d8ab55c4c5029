import torch

from exp.model import Net


def evaluate():
    model = Net()
    state = torch.load("checkpoints/best.pt", map_location="cpu")
    model.load_state_dict(state)
    other = Net()
    other.load_state_dict(torch.load("pretrained.pt", map_location="cpu"))  # another checkpoint
    return model, other
