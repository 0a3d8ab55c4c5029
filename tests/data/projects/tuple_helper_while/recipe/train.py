from .data import make_loaders


def fit(model, train_set, val_set, epochs):
    train_loader, val_loader, train_sampler = make_loaders(train_set, val_set)
    epoch = 0
    while epoch < epochs:
        for batch in train_loader:
            model(batch).backward()
        epoch += 1
