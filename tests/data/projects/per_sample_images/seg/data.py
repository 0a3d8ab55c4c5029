from torch.utils.data import DataLoader, DistributedSampler


def build_loader(dataset):
    return DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset, shuffle=False))
