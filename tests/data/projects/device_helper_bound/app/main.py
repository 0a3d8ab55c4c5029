from torch.nn.parallel import DistributedDataParallel as DDP

from app import utils


def main(args, net, loader):
    utils.init_distributed_mode(args)
    model = DDP(net.cuda())
    for x, y in loader:
        model(x.cuda()).sum().backward()
