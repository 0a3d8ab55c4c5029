from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler


def build_loaders(train_set, val_set, batch_size):
    train_sampler = DistributedSampler(train_set, shuffle=True)
    val_sampler = DistributedSampler(val_set, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=batch_size, sampler=train_sampler, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=batch_size, sampler=val_sampler)
    return train_loader, val_loader


def build_exact_loaders(train_set, val_set, batch_size):
    train_sampler = DistributedSampler(train_set, shuffle=True)
    val_sampler = DistributedSampler(val_set, shuffle=False, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=batch_size, sampler=train_sampler, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=batch_size, sampler=val_sampler)
    return train_loader, val_loader


def build_rank_zero_loaders(train_set, val_set, batch_size):
    train_sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=batch_size, sampler=train_sampler, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=batch_size, sampler=SequentialSampler(val_set))
    return train_loader, val_loader


def build_test_loader(test_set, batch_size):
    sampler = DistributedSampler(test_set, shuffle=False)
    return DataLoader(test_set, batch_size=batch_size, sampler=sampler)
