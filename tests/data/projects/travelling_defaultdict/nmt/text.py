from collections import Counter, defaultdict

UNK = 1


def build_token_index(sentences, min_freq=2):
    counts = Counter(tok for s in sentences for tok in s.split())
    index = defaultdict(lambda: UNK)
    for tok, c in counts.items():
        if c >= min_freq:
            index[tok] = len(index) + 2
    return index


def length_histogram(sentences):
    hist = defaultdict(lambda: 0)
    for s in sentences:
        hist[len(s.split())] += 1
    return hist


class CharMap:
    def __init__(self, chars):
        self.to_id = defaultdict(lambda: 0)
        for i, c in enumerate(chars, start=1):
            self.to_id[c] = i


class Meters:
    def __init__(self):
        self.sums = defaultdict(lambda: 0.0)

    def update(self, name, value):
        self.sums[name] += value


class ClassAccuracy:
    def __init__(self):
        self.hits = defaultdict(lambda: 0)
