import torch.multiprocessing as mp

from nlp.counting import label_counts


def worker(rank, counts):
    print(rank, len(counts))


def main(lines):
    counts = label_counts(lines)
    mp.spawn(worker, args=(counts,), nprocs=2)
