from torch.utils.data import DataLoader

from recipe.data import make_sampler


def train(model, dataset, epochs):
    sampler = make_sampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        for batch in loader:
            model(batch).backward()
