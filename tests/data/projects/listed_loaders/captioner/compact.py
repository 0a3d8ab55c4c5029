from torch.utils.data import DataLoader, DistributedSampler


def samplers_for(datasets, shuffles, num_tasks, global_rank):
    return [DistributedSampler(d, num_replicas=num_tasks, rank=global_rank, shuffle=s) for d, s in zip(datasets, shuffles)]


def loaders_for(datasets, samplers, batch_size):
    return [DataLoader(d, batch_size=batch_size, sampler=s, num_workers=4) for d, s in zip(datasets, samplers)]
