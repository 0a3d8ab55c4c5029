import torch


class TrainerBase:
    def __init__(self, args):
        self.args = args
        self.verbose = True
        if self.args.distributed:
            if self.args.gpu != 0:
                self.verbose = False

    def save(self, name):
        torch.save(self.model.state_dict(), f"{name}.pth")
