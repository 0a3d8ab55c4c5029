from torch import nn


def make_act(name):
    if name == "relu":
        act = nn.ReLU()
    elif name == "gelu":
        act = nn.GELU()
    else:
        act = nn.SiLU()
    return act
