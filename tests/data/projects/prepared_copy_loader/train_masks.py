import argparse

import torch
from accelerate import Accelerator

from data.images import mask_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="masks/")
    args = parser.parse_args()
    accelerator = Accelerator()
    model = torch.nn.Conv2d(3, 1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = mask_loader(args.data, batch_size=8)
    model, optimizer = accelerator.prepare(model, optimizer)
    accelerator.prepare(loader)
    for masks in loader:
        masks = masks.permute(0, 3, 1, 2).to(accelerator.device)
        loss = model(masks).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
