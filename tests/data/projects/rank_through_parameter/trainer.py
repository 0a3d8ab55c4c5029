import torch


class Trainer:
    """Handed the process's rank under another name: `device` (the callers pass the rank)."""

    def __init__(self, model, optimizer, device, **settings):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.epochs = settings.get("epochs", 1)

    def train(self, loader):
        for epoch in range(self.epochs):
            for batch in loader:
                self.optimizer.zero_grad()
                self.model(batch.to(self.device)).sum().backward()
                self.optimizer.step()
            if self.device == 0:
                torch.save(self.model.module.state_dict(), f"epoch{epoch}.pt")
        torch.save(self.model.module.state_dict(), "final.pt")
