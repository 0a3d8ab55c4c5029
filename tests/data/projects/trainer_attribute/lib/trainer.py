class Trainer:
    def __init__(self, model, optimizer, accumulation_steps=1):
        self.model = model
        self.optimizer = optimizer
        self.accumulation_steps = accumulation_steps

    def fit(self, loader):
        for i, batch in enumerate(loader):
            loss = self.model(batch).mean() / self.accumulation_steps
            loss.backward()
            if (i + 1) % self.accumulation_steps == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
