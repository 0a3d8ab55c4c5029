import torch


class Trainer:
    """Keeps the loader it is handed; an epoch's pass runs in a method of its own."""

    def __init__(self, model, train_data, optimizer):
        self.model = model
        self.train_data = train_data
        self.optimizer = optimizer

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(self.model(source), targets)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def _run_epoch(self, epoch):
        for step, (source, targets) in enumerate(self.train_data):
            loss = self._run_batch(source, targets)
            if step % 100 == 0:
                print(epoch, step, loss)

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
