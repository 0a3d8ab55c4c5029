import torch

from cls import utils


def validate(loader, model, world_size):
    correct = []
    with torch.no_grad():
        for images, labels in loader:
            accuracy = (model(images).argmax(1) == labels).float().mean()
            correct.append(utils.reduce_tensor(accuracy, world_size))
    return sum(correct) / len(correct)
