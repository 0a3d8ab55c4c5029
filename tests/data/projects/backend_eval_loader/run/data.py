from torch.utils.data import DataLoader, DistributedSampler


def build_val_loader(dataset):
    sampler = DistributedSampler(dataset, shuffle=False)
    return DataLoader(dataset, batch_size=32, sampler=sampler)


def build_test_loader(dataset):
    sampler = DistributedSampler(dataset, shuffle=False)
    return DataLoader(dataset, batch_size=32, sampler=sampler)
