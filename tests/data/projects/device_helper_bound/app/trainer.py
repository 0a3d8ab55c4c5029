from torch.nn.parallel import DistributedDataParallel as DDP

from app.setup import setup


def run(args, net, loader):
    setup(args)
    model = DDP(net.cuda())
    for x in loader:
        model(x.cuda()).sum().backward()
