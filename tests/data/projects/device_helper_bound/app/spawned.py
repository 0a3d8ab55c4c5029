import os

from torch.nn.parallel import DistributedDataParallel as DDP

from app.launch import bind
from app.groups import init_group


def worker(net, loader):
    init_group()
    bind(int(os.environ["LOCAL_RANK"]))
    model = DDP(net.cuda())
    for x in loader:
        model(x.cuda()).sum().backward()
