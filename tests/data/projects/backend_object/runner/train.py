from torch.utils.data import DataLoader, DistributedSampler

from runner.backend import Backend


def train(model, dataset, epochs):
    backend = Backend()
    backend.setup()
    loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset))
    train_loader = backend.prepare_loader(loader)
    for epoch in range(epochs):
        for batch in train_loader:
            model(batch).backward()


def train_through_the_backend(model, dataset, epochs):
    backend = Backend()
    backend.setup()
    loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset))
    train_loader = backend.prepare_loader(loader)
    for epoch in range(epochs):
        backend.set_epoch(train_loader, epoch)
        for batch in train_loader:
            model(batch).backward()


def train_resharded(model, dataset, epochs):
    backend = Backend()
    backend.setup()
    loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset))
    train_loader = backend.reshard(loader)
    for epoch in range(epochs):
        for batch in train_loader:
            model(batch).backward()
