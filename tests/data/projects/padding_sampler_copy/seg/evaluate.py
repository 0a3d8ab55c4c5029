import torch
from torch.utils import data

from seg.utils.distributed import *
from seg.utils.exact import make_exact_sampler


class Evaluator:
    def __init__(self, args, val_dataset):
        val_sampler = make_data_sampler(val_dataset, False, args.distributed)
        val_batch_sampler = make_batch_data_sampler(val_sampler, images_per_batch=1)
        self.val_loader = data.DataLoader(dataset=val_dataset, batch_sampler=val_batch_sampler)
        exact_sampler = make_exact_sampler(val_dataset, False, args.distributed)
        self.exact_loader = data.DataLoader(val_dataset, batch_sampler=make_batch_data_sampler(exact_sampler, 1))

    @torch.no_grad()
    def validation(self, model):
        correct = torch.zeros(2)
        for image, target in self.val_loader:
            correct += torch.stack([(model(image).argmax(1) == target).sum(), torch.tensor(target.numel())])
        correct = reduce_sum(correct)
        return correct[0] / correct[1]

    @torch.no_grad()
    def exact_validation(self, model):
        hits = [(model(image).argmax(1) == target).float().mean() for image, target in self.exact_loader]
        return reduce_sum(torch.stack(hits).sum()) / len(self.exact_loader.dataset)
