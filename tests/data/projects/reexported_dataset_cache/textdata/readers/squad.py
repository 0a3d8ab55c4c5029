import json
import os

import torch
from torch.utils.data import Dataset


class QuestionCache(Dataset):
    """Tokenizes the questions once and keeps them in a cache file beside the data."""

    def __init__(self, root, overwrite_cache=False):
        cached = os.path.join(root, "cached_questions.pth")
        if os.path.exists(cached) and not overwrite_cache:
            self.questions = torch.load(cached)
        else:
            with open(os.path.join(root, "train.json")) as handle:
                records = json.load(handle)
            self.questions = torch.tensor([[ord(c) % 256 for c in r["question"][:64]] for r in records])
            torch.save(self.questions, cached)

    def __len__(self):
        return len(self.questions)

    def __getitem__(self, index):
        return self.questions[index]


class AnswerIndex(Dataset):
    """Indexes the answers once and keeps the index in a cache file beside the data."""

    def __init__(self, root):
        cached = os.path.join(root, "answer_index.pth")
        if os.path.exists(cached):
            self.index = torch.load(cached)
        else:
            with open(os.path.join(root, "train.json")) as handle:
                self.index = [len(r["answer"]) for r in json.load(handle)]
            torch.save(self.index, cached)

    def __len__(self):
        return len(self.index)

    def __getitem__(self, index):
        return torch.tensor(self.index[index])
