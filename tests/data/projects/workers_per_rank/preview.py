"""Look at a few batches on one device: python preview.py"""
import os

from lightning.fabric import Fabric
from torch.utils.data import DataLoader

from data.loaders import ToyDataset

if __name__ == "__main__":
    fabric = Fabric(accelerator="auto", devices=1)
    loader = fabric.setup_dataloaders(DataLoader(ToyDataset(64), batch_size=8, num_workers=os.cpu_count()))
    for x, y in loader:
        print(x.shape, y.shape)
        break
