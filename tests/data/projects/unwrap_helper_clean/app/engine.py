from app.utils import unwrap_model


class Engine:
    def step(self, x, y):
        loss = self.criterion(self.net(x), y)
        loss.backward()
        self.optimizer.step()

    def __init__(self, model, optimizer, criterion):
        self.net = unwrap_model(model)
        self.optimizer = optimizer
        self.criterion = criterion
