from torch.utils.data import DataLoader, DistributedSampler


def build_train_loader(dataset, batch_size, distributed):
    sampler = DistributedSampler(dataset) if distributed else None
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, shuffle=sampler is None)


def build_val_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset))


def setup_loaders(args, train_set, val_set):
    args.train_loader = build_train_loader(train_set, args.batch_size, args.distributed)
    args.val_loader = build_val_loader(val_set, args.batch_size)
