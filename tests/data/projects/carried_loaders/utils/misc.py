def shuffle_dataset(loader, epoch):
    """Give the loader's sampler the epoch, so that each epoch shuffles anew."""
    if hasattr(loader.sampler, "set_epoch"):
        loader.sampler.set_epoch(epoch)
