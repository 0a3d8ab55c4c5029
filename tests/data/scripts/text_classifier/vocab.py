"""Tokenizer and vocabulary, built from the training file."""
from collections import Counter, defaultdict

PAD, UNK = "<pad>", "<unk>"
PAD_ID, UNK_ID = 0, 1


def tokenize(text):
    return text.lower().replace(",", " ").replace(".", " ").split()


class Vocab:
    def __init__(self, texts, min_freq=1):
        counts = Counter(tok for text in texts for tok in tokenize(text))
        self.itos = [PAD, UNK] + sorted(t for t, c in counts.items() if c >= min_freq)
        # Words never seen in training map to <unk>.
        self.stoi = defaultdict(lambda: UNK_ID)
        self.stoi.update({tok: i for i, tok in enumerate(self.itos)})

    def __len__(self):
        return len(self.itos)

    def encode(self, text, max_len):
        ids = [self.stoi[tok] for tok in tokenize(text)][:max_len]
        return ids + [PAD_ID] * (max_len - len(ids))
