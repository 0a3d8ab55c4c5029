import torch
import torch.distributed as dist

from netkit.data import make_data_loader


@torch.no_grad()
def validation(model, loader, classes):
    hist = torch.zeros(classes, classes)
    for image, target in loader:
        hist[target, model(image).argmax(1)] += 1
    dist.all_reduce(hist)
    return hist.diag() / hist.sum(1)


def main(args, model, datasets):
    val_loader, val_sampler = make_data_loader(args, datasets)
    print(validation(model, val_loader, args.classes))
