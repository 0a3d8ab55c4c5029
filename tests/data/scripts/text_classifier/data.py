"""A tab-separated file of `label<TAB>text` lines, encoded with a Vocab."""
import torch
from torch.utils.data import Dataset


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            label, _, text = line.rstrip("\n").partition("\t")
            if text:
                rows.append((int(label), text))
    return rows


class TextClassificationDataset(Dataset):
    def __init__(self, rows, vocab, max_len=16):
        self.rows, self.vocab, self.max_len = rows, vocab, max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        label, text = self.rows[i]
        return torch.tensor(self.vocab.encode(text, self.max_len)), torch.tensor(label)
