from proj.loaders import BucketLoader
from .loaders import PrefetchLoader


def main(dataset, pad):
    def collate(batch):
        return [item + pad for item in batch]

    train = PrefetchLoader(dataset, batch_size=8, num_workers=4, collate_fn=collate)
    val = BucketLoader(dataset, num_workers=2, worker_init_fn=lambda worker: None)
    test = PrefetchLoader(dataset, collate_fn=lambda batch: batch)  # no workers: nothing pickled
    return train, val, test
