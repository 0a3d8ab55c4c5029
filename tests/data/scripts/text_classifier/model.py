"""fastText-style classifier: mean of word embeddings, then a linear layer."""
from torch import nn


class FastText(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_classes, pad_id=0):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode="mean", padding_idx=pad_id)
        self.fc = nn.Linear(embed_dim, num_classes)

    def forward(self, ids):
        return self.fc(self.embedding(ids))
