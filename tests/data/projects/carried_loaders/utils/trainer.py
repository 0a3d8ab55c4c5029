import torch


class Trainer:
    def __init__(self, model, optimizer, train_loader, val_loader):
        self.model = model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader

    def train_epoch(self):
        for images, labels in self.train_loader:
            loss = self.model(images, labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    @torch.no_grad()
    def evaluate(self):
        return sum(self.model(images, labels).item() for images, labels in self.val_loader)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()
            print(epoch, self.evaluate())
