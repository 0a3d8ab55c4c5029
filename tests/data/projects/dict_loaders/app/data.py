from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler


def build_loaders(train_set, val_set, test_set, batch_size):
    train_sampler = DistributedSampler(train_set)
    loaders = {
        "train": DataLoader(train_set, batch_size=batch_size, sampler=train_sampler),
        "val": DataLoader(val_set, batch_size=batch_size, sampler=DistributedSampler(val_set, shuffle=False)),
        "test": DataLoader(test_set, batch_size=batch_size, sampler=DistributedSampler(test_set, shuffle=False, drop_last=True)),
        "calib": DataLoader(val_set, batch_size=batch_size, sampler=SequentialSampler(val_set)),
    }
    return loaders, train_sampler
