import torch


def get_collate_fn(modalities):
    def collate_fn(batch):
        return {m: torch.stack([b[m] for b in batch]) for m in modalities}

    return collate_fn


def stack(batch):
    return torch.stack(batch)


def get_plain_collate():
    return stack
