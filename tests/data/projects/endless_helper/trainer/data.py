from torch.utils.data import DataLoader, DistributedSampler


def build_loader(dataset):
    return DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset))
