import torch


class Classifier(torch.nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.embed = torch.nn.EmbeddingBag(256, 64)
        self.head = torch.nn.Linear(64, max(classes, 2))

    def forward(self, tokens):
        return self.head(self.embed(tokens))
