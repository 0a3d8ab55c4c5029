from proj.loaders import ChainerLoader, SerialLoader


def main(dataset, workers):
    train = ChainerLoader(dataset=dataset, batch_size=1, num_workers=workers, collate_fn=lambda x: x[0])
    valid = ChainerLoader(dataset=dataset, collate_fn=lambda x: x[0])  # no workers: nothing pickled
    test = SerialLoader(dataset, num_workers=workers, collate_fn=lambda x: x[0])
    return train, valid, test
