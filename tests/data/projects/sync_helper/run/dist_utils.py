import contextlib

from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(net, rank):
    return DDP(net.to(rank), device_ids=[rank])


def maybe_no_sync(model, sync):
    if sync or not hasattr(model, "no_sync"):
        return contextlib.nullcontext()
    return model.no_sync()


def set_grad_sync(model, enabled):
    if hasattr(model, "require_backward_grad_sync"):
        model.require_backward_grad_sync = enabled
