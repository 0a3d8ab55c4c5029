import torch
import torch.distributed as dist

LOADERS = {}


def register(function):
    LOADERS[function.__name__] = function
    return function


def resume(model, path):
    model.load_state_dict(torch.load(path))


def old_resume(model, path):
    model.load_state_dict(torch.load(path))


@register
def load_by_name(model, path):
    model.load_state_dict(torch.load(path))


class Unused:
    def load(self, path):
        return torch.load(path)["model"]


def rank():
    return dist.get_rank()
