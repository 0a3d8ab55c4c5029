import torch


class ChainerLoader(object):
    def __init__(self, **kwargs):
        self.loader = torch.utils.data.dataloader.DataLoader(**kwargs)
        self.epoch = 0


class SerialLoader:
    def __init__(self, dataset, **kwargs):
        kwargs["num_workers"] = 0  # it sets the workers itself
        self.loader = torch.utils.data.DataLoader(dataset, **kwargs)
