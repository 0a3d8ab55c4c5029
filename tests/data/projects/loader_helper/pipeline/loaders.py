from torch.utils.data import DataLoader, DistributedSampler


def build_loader(dataset, batch_size):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=4)
    return loader
