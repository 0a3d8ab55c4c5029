import torch
from torchvision import datasets


def get_loaders(root, batch_size):
    train_data = datasets.ImageFolder(f"{root}/train")
    test_data = datasets.ImageFolder(f"{root}/val")
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_data)
    test_sampler = torch.utils.data.distributed.DistributedSampler(test_data, shuffle=False, drop_last=True)
    train_loader = torch.utils.data.DataLoader(train_data, batch_size=batch_size, sampler=train_sampler)
    test_loader = torch.utils.data.DataLoader(test_data, batch_size=batch_size, sampler=test_sampler)
    return [train_loader, test_loader], [train_sampler, test_sampler]
