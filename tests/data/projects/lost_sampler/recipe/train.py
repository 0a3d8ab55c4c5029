from torch.utils.data import DataLoader

from recipe.data import make_samplers


def train(model, train_set, val_set, epochs):
    train_sampler, val_sampler = make_samplers(train_set, val_set)
    loader = DataLoader(train_set, batch_size=32, shuffle=True)
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        for batch in loader:
            model(batch)


def train_right(model, train_set, val_set, epochs):
    train_sampler, val_sampler = make_samplers(train_set, val_set)
    loader = DataLoader(train_set, batch_size=32, sampler=train_sampler)
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        for batch in loader:
            model(batch)


def pretrain(model, train_set, val_set, extra_set, epochs):
    train_sampler, val_sampler = make_samplers(train_set, val_set)
    extra = DataLoader(extra_set, batch_size=32, shuffle=True)  # another dataset, read whole on purpose
    for batch in extra:
        model(batch)
    return train_sampler
