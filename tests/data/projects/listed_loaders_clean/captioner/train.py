import torch
import torch.distributed as dist

from captioner.data import create_loaders


@torch.no_grad()
def evaluate(model, data_loader):
    """Gathered in rank order and cut to the dataset's length: the padding is dropped."""
    hits = torch.cat([model(image).argmax(1) == label for image, label in data_loader])
    everyone = [torch.zeros_like(hits) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, hits)
    ordered = torch.stack(everyone, dim=1).flatten()[: len(data_loader.dataset)]
    return ordered.float().mean().item()


def main(model, optimizer, train_dataset, val_dataset, epochs):
    train_loader, val_loader = create_loaders([train_dataset, val_dataset], [True, False], batch_size=64)
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        for image, label in train_loader:
            optimizer.zero_grad()
            model(image, label).backward()
            optimizer.step()
        print(evaluate(model, val_loader))
