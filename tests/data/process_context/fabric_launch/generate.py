import lightning as L
import torch

from model import GPT


def main():
    fabric = L.Fabric(accelerator="cuda", devices=1)
    fabric.launch()
    model = GPT()
    model.load_state_dict(torch.load("checkpoints/base.pth"))
    model = fabric.setup(model)
    torch.save(model.generate(), "samples.pt")


if __name__ == "__main__":
    main()
