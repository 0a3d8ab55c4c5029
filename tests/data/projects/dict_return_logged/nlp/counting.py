import logging
from collections import defaultdict


def build_vocab_counts(lines):
    counts = defaultdict(lambda: 0)
    for line in lines:
        counts[line.split()[0]] += 1
    return counts


def report(lines):
    logging.info("labels: %s", dict(build_vocab_counts(lines)))
