import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from app.engine import Engine
from app.utils import unwrap_model


def main(net, loader, criterion, rank):
    model = DDP(net.to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = Engine(model, optimizer, criterion)
    for x, y in loader:
        engine.step(x, y)
    raw = unwrap_model(model)
    for x, y in loader:
        criterion(raw(x), y).backward()
    if rank == 0:
        torch.save(unwrap_model(model).state_dict(), "ckpt.pt")
