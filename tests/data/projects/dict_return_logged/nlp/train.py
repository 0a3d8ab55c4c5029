import logging

import torch.multiprocessing as mp

from nlp.counting import build_vocab_counts


def worker(rank, size):
    print(rank, size)


def main(lines):
    counts = build_vocab_counts(lines)
    logging.info("%d labels, most common %s", len(counts), sorted(counts.items())[:3])
    mp.spawn(worker, args=(len(counts),), nprocs=2)
