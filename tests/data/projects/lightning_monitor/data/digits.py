import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset


class DigitsData(L.LightningDataModule):
    def setup(self, stage=None):
        images = torch.load("data/digits.pt", map_location="cpu")
        self.train_set = TensorDataset(images["x_train"], images["y_train"])
        self.val_set = TensorDataset(images["x_val"], images["y_val"])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=64, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=256)
