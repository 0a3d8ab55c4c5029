import torch


def load_weights(model, path):
    model.load_state_dict(torch.load(path, map_location="cpu"))


def save_checkpoint(model, optimizer, path):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
