from torch.utils.data import DataLoader, DistributedSampler


def build(dataset, batch_size=32):
    sampler = DistributedSampler(dataset, shuffle=True)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler), sampler


def build_eval(dataset):
    sampler = DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, sampler=sampler)
    return loader, sampler
