from torch.utils.data import DataLoader


class PrefetchLoader(DataLoader):
    def __iter__(self):
        yield from super().__iter__()


class BucketLoader(PrefetchLoader):
    pass
