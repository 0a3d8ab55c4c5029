from torch.nn.parallel import DistributedDataParallel


def unwrap_model(model):
    if isinstance(model, DistributedDataParallel):
        return model.module
    return model
