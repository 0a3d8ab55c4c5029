import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from imnet import utils
from imnet.engine import fit
from imnet.utils import is_main_process, save_checkpoint


def main_worker(gpu, args):
    dist.init_process_group("nccl", rank=gpu, world_size=args.world_size)
    torch.cuda.set_device(gpu)
    model = DDP(torch.nn.Linear(4, 4).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    best = 0.0
    for epoch in range(args.epochs):
        acc = 0.5
        is_best = acc > best
        best = max(acc, best)
        state = {"epoch": epoch + 1, "state_dict": model.state_dict(), "best_acc1": best}
        save_checkpoint(state, is_best, args.out)
        if is_main_process():
            save_checkpoint(state, is_best, args.out)
        save_checkpoint(state, False, f"{args.out}/rank{dist.get_rank()}")  # one file per rank
        utils.save_on_master(state, "last.pth")
    fit(model, [], optimizer, 10, args.out)
    if dist.get_rank() == 0:
        fit(model, [], optimizer, 10, args.out)
