from torch import nn


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x)


def build_model(args):
    model = Net(args.dim)
    model.cuda()
    return model
