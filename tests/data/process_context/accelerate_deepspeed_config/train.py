import torch
from accelerate import Accelerator


def main(model, optimizer, loader, accumulation_steps):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, (inputs, labels) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        accelerator.backward(loss)
        if (step + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main(*build())
