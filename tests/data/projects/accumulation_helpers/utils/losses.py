import torch


class NoiseLoss:
    def __init__(self, sigma):
        self.sigma = sigma

    def train_losses(self, model, x):
        noise = torch.randn_like(x) * self.sigma
        return (model(x + noise) - x).pow(2).mean()
