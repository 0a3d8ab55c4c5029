import argparse
from copy import deepcopy

import torch
from accelerate import Accelerator

from data.images import image_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="images/")
    args = parser.parse_args()
    accelerator = Accelerator()
    model = torch.nn.Conv2d(3, 3, 3, padding=1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train_loader = image_loader(args.data, batch_size=1, workers=4)
    steps_per_epoch = len(train_loader)
    model, optimizer, _ = accelerator.prepare(model, optimizer, deepcopy(train_loader))
    for epoch in range(10):
        for step, images in enumerate(train_loader):
            images = images.permute(0, 3, 1, 2).to(accelerator.device)
            loss = torch.nn.functional.mse_loss(model(images), images)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        accelerator.print(f"epoch {epoch}: {steps_per_epoch} steps")


if __name__ == "__main__":
    main()
