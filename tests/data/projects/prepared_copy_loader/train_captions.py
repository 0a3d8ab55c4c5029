import argparse

import torch
from accelerate import Accelerator

from data.captions import caption_loader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="captions.json")
    args = parser.parse_args()
    accelerator = Accelerator()
    model = torch.nn.Linear(16, 16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = caption_loader(args.data, batch_size=8)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(3):
        for images, captions in loader:
            loss = model(images).pow(2).mean()
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
