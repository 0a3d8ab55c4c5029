import torch


def score(model):
    return sum(p.sum() for p in model.parameters())


if __name__ == "__main__":
    net = torch.nn.Linear(4, 4).cuda()
    state = torch.load("last.pth")
    net.load_state_dict(state["model"])
    print(score(net))
