import torch
import torch.distributed as dist


class Wrapper:
    def __init__(self, model):
        self.model = model

    def fit(self):
        for _ in range(10):
            self.model(torch.randn(2, 4).cuda()).sum().backward()
        dist.barrier()
        torch.save(self.model.state_dict(), "fitted.pt")

    def restore(self, path):
        self.model.load_state_dict(torch.load(path))

    def reload_fitted(self):
        self.model.load_state_dict(torch.load("fitted.pt"))
        return self.model


def load_weights(model, path):
    model.load_state_dict(torch.load(path))
