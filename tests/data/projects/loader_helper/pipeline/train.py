from .loaders import build_loader


def fit(model, dataset, epochs):
    loader = build_loader(dataset, 64)
    for epoch in range(epochs):
        for batch in loader:
            model(batch).backward()


def fit_right(model, dataset, epochs):
    loader = build_loader(dataset, 64)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            model(batch).backward()
