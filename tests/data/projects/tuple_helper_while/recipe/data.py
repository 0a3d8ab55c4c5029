import torch


def make_loaders(train_set, val_set):
    train_sampler = torch.utils.data.DistributedSampler(train_set)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, sampler=train_sampler)
    val_loader = torch.utils.data.DataLoader(val_set, batch_size=64)
    return (
        train_loader,  # shuffled per rank
        val_loader,
        train_sampler,
    )
