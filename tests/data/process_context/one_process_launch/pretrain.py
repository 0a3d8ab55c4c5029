import torch
from accelerate import Accelerator


def pretrain(steps=100):
    accelerator = Accelerator()
    encoder = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    encoder = accelerator.prepare(encoder)
    for _ in range(steps):
        accelerator.backward(encoder(torch.randn(4, 8, device=accelerator.device)).pow(2).mean())
    torch.save(accelerator.unwrap_model(encoder).state_dict(), "pretrained.pt")


if __name__ == "__main__":
    pretrain()
