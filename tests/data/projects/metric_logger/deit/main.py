import torch

from deit.engine import evaluate, train_one_epoch


def main(args, model, criterion, optimizer, dataset_train, dataset_val):
    torch.distributed.init_process_group("nccl")
    sampler_train = torch.utils.data.DistributedSampler(dataset_train, shuffle=True)
    sampler_val = torch.utils.data.DistributedSampler(dataset_val, shuffle=False)
    data_loader_train = torch.utils.data.DataLoader(dataset_train, sampler=sampler_train, batch_size=64)
    data_loader_val = torch.utils.data.DataLoader(dataset_val, sampler=sampler_val, batch_size=64)
    for epoch in range(args.epochs):
        sampler_train.set_epoch(epoch)
        train_one_epoch(model, criterion, data_loader_train, optimizer)
        print(evaluate(data_loader_val, model))
