import torch
import torch.distributed as dist
from tqdm import tqdm

from segkit.data import get_data_loader


class Metrics:
    def __init__(self, n_classes):
        self.n_classes = n_classes
        self.confusion = torch.zeros((n_classes, n_classes)).cuda()

    def update(self, preds, label):
        self.confusion += torch.bincount(label * self.n_classes + preds, minlength=self.n_classes ** 2).view(
            self.n_classes, self.n_classes)

    def compute_metrics(self):
        if dist.is_initialized():
            dist.all_reduce(self.confusion, dist.ReduceOp.SUM)
        return self.confusion.diag() / self.confusion.sum(dim=1)


class MscEval:
    def __init__(self, n_classes):
        self.metric_observer = Metrics(n_classes)

    @torch.no_grad()
    def __call__(self, net, dl):
        if dist.get_rank() != 0:
            diter = enumerate(dl)
        else:
            diter = enumerate(tqdm(dl))
        for _, (imgs, label) in diter:
            preds = net(imgs.cuda()).argmax(1)
            self.metric_observer.update(preds, label.cuda())
        return self.metric_observer.compute_metrics()


@torch.no_grad()
def eval_model(cfg, net, ds):
    net.eval()
    dl = get_data_loader(cfg, ds, mode="val")
    single_scale = MscEval(cfg.n_cats)
    return single_scale(net, dl)


if __name__ == "__main__":
    import sys

    from segkit.config import load_config, load_model, load_dataset

    dist.init_process_group("nccl")
    cfg = load_config(sys.argv[1])
    print(eval_model(cfg, load_model(cfg), load_dataset(cfg)))
