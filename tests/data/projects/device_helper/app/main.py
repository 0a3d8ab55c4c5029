from torch.nn.parallel import DistributedDataParallel as DDP

from app import utils


def main(args, net, loader, optimizer):
    utils.init_distributed_mode(args)
    model = DDP(net.cuda())
    for x, y in loader:
        loss = (model(x.cuda()) - y.cuda()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
