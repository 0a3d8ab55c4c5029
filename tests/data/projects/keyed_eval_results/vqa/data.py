from torch.utils.data import DataLoader, DistributedSampler


def get_loader(dataset, mode="train", distributed=False):
    sampler = DistributedSampler(dataset) if distributed else None
    if mode == "train":
        return DataLoader(dataset, batch_size=32, sampler=sampler, shuffle=sampler is None)
    return DataLoader(dataset, batch_size=32, sampler=sampler, drop_last=False)
