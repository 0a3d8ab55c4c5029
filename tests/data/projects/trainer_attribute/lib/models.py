from torch.nn.parallel import DistributedDataParallel


def build_model(net, rank):
    model = DistributedDataParallel(net.to(rank), device_ids=[rank])
    return model
