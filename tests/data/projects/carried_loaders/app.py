"""A one-process front end: it starts no process group, so its loader's sampler is never a
DistributedSampler that runs (building one would fail without a process group)."""
import sys

import torch
from tqdm import tqdm

from data.loaders import build_train_loader
from models.net import build_model


def fine_tune(dataset, epochs, distributed):
    loader = build_train_loader(dataset, 8, distributed)
    model = build_model("cpu")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        progress = tqdm(loader)
        for step, (images, labels) in enumerate(progress):
            model(images).sum().backward()
            optimizer.step()


if __name__ == "__main__":
    data = torch.utils.data.TensorDataset(torch.randn(32, 16), torch.randn(32, 1))
    fine_tune(data, int(sys.argv[1]), sys.argv[2] == "ddp")
