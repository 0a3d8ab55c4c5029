from torch.utils.data import DataLoader, DistributedSampler, RandomSampler


def build_loader(dataset, distributed=True):
    sampler = DistributedSampler(dataset) if distributed else RandomSampler(dataset)
    return DataLoader(dataset, batch_size=8, sampler=sampler)
