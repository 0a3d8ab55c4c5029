import torch
from torch import nn


class TinyLM(nn.Module):
    def __init__(self, vocab=32000, width=256):
        super().__init__()
        self.backbone = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(self.backbone(ids).relu())


def build_model(pretrained=None, vocab=32000):
    model = TinyLM(vocab=vocab)
    if pretrained is not None:
        weights = torch.load(pretrained)
        model.load_state_dict(weights["model"])
    return model


def load_encoder(model, path):
    # the encoder weights a user downloads: nothing in this project writes them
    model.backbone.load_state_dict(torch.load(path))
