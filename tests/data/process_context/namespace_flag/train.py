import torch
import torch.distributed as dist

from trainers.base import TrainerBase


class Trainer(TrainerBase):
    def __init__(self, args, model):
        super().__init__(args)
        self.model = model

    def train(self):
        if self.verbose:
            self.save("best")
        if self.verbose:
            torch.save(self.model.state_dict(), "last.pth")


def main_worker(gpu, args, model):
    args.gpu = gpu
    if args.distributed:
        dist.init_process_group("nccl")
    trainer = Trainer(args, model)
    trainer.train()


if __name__ == "__main__":
    args = parse()
    if args.distributed:
        main_worker(args.local_rank, args, build())
