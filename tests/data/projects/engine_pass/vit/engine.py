import torch


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, logger):
    model.train()
    steps = len(data_loader)
    for step, (images, targets) in enumerate(logger.log_every(data_loader, 10)):
        loss = criterion(model(images.to(device)), targets.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return steps


def train_and_set_epoch(model, data_loader, optimizer, epoch):
    data_loader.sampler.set_epoch(epoch)
    for images, targets in data_loader:
        model(images).sum().backward()
        optimizer.step()


def train_with_hook(model, data_loader, hook):
    hook(data_loader)
    for images, targets in data_loader:
        model(images).sum().backward()


@torch.no_grad()
def evaluate(model, data_loader):
    return [model(images) for images, _ in data_loader]
