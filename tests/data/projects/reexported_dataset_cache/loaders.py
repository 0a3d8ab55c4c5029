import torch.utils.data.distributed
from torch.utils.data import DataLoader, TensorDataset

from textdata import AnswerIndex


def make_loader(args):
    if args.dist:
        train_set = TensorDataset(torch.arange(1024))
        sampler = torch.utils.data.distributed.DistributedSampler(train_set)
        return DataLoader(train_set, batch_size=32, sampler=sampler), sampler
    else:
        # one process: nothing else writes the index
        train_set = AnswerIndex(args.data)
        return DataLoader(train_set, batch_size=32, shuffle=True), None
