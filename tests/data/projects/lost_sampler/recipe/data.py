from torch.utils.data import DistributedSampler


def make_samplers(train_set, val_set, seed=0):
    train_sampler = DistributedSampler(train_set, shuffle=True, seed=seed)
    val_sampler = DistributedSampler(val_set, shuffle=False)
    return train_sampler, val_sampler
