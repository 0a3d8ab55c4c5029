from torch.utils.data import DataLoader, DistributedSampler


def create_loaders(datasets, shuffles, batch_size):
    loaders = []
    for dataset, shuffle in zip(datasets, shuffles):
        sampler = DistributedSampler(dataset, shuffle=shuffle)
        loaders.append(DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=4, pin_memory=True))
    return loaders
