from torch.utils.data import DataLoader, DistributedSampler


def make_eval_loader(dataset):
    sampler = DistributedSampler(dataset, shuffle=False)
    return DataLoader(dataset, batch_size=64, sampler=sampler)


def make_indexed_loader(dataset, workers=2):
    return DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset, shuffle=False), num_workers=workers)
