def cycle(dl):
    while True:
        for data in dl:
            yield data


def infinite_loader(loader, log=None):
    passes = 0
    while 1:
        for batch in loader:
            yield batch
        passes += 1
        if log is not None:
            log(passes)
