import torch


class Trainer:
    def __init__(self, net, loader, optimizer, global_rank):
        self.net = net
        self.loader = loader
        self.optimizer = optimizer
        self.global_rank = global_rank

    def evaluate(self):
        self.net.eval()
        with torch.no_grad():
            return [self.net(x) for x in self.loader]

    def run(self):
        for x in self.loader:
            self.net(x).mean().backward()
            self.optimizer.step()
            if self.global_rank == 0:
                print(self.evaluate())
