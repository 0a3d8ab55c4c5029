import os

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class ImageFolderSet(Dataset):
    def __init__(self, root, size=512):
        self.paths = sorted(os.path.join(root, name) for name in os.listdir(root))
        self.size = size

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        image = Image.open(self.paths[index]).convert("RGB").resize((self.size, self.size))
        return torch.tensor(list(image.getdata()), dtype=torch.float32).view(self.size, self.size, 3)


def image_loader(root, batch_size, workers, **options):
    dataset = ImageFolderSet(root, **options)
    return DataLoader(dataset, batch_size=batch_size, num_workers=workers, shuffle=True)


def mask_loader(root, batch_size):
    return DataLoader(ImageFolderSet(root), batch_size=batch_size, shuffle=True)
