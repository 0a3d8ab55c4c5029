from collections import defaultdict


def label_counts(lines):
    counts = defaultdict(lambda: 0)
    for line in lines:
        counts[line.split()[0]] += 1
    return counts
