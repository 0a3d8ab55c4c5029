from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def get_dataloader(dataset, train, batch_size=64):
    sampler = DistributedSampler(dataset, shuffle=train)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def get_test_loader(dataset):
    return DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset, shuffle=False))


def get_predict_loader(dataset):
    return DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset, shuffle=False))
