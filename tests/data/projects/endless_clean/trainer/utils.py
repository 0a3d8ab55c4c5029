import itertools


def cycle(dl):
    for epoch in itertools.count():
        dl.sampler.set_epoch(epoch)
        for data in dl:
            yield data


def repeat(loader):
    for epoch in itertools.count():
        for batch in loader:
            yield batch
