import json

from torch.utils.data import DataLoader, Dataset


class CaptionSet(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.rows = json.load(f)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return self.rows[index]["image"], self.rows[index]["caption"]


def caption_loader(path, batch_size):
    dataset = CaptionSet(path)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4)
