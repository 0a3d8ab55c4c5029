import lightning as L
import torch
from lightning.fabric.utilities import rank_zero_only

from model import GPT


@rank_zero_only
def export(model):
    torch.save(model.state_dict(), "out/export.pth")


def run(fabric):
    model = fabric.setup(GPT())
    export(model)
    torch.save(model.state_dict(), "out/finetuned.pth")


if __name__ == "__main__":
    fabric = L.Fabric(devices=2)
    fabric.launch(run)
