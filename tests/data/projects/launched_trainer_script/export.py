"""Run by hand as one process (`python export.py`): nothing launches it as ranks."""
import torch


def export(model, path):
    torch.save(model.state_dict(), path)


if __name__ == "__main__":
    export(torch.nn.Linear(2, 2), "model.pt")
