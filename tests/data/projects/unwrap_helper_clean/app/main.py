import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from app.engine import Engine
from app.utils import unwrap_model


def main(net, head, loader, criterion, rank):
    model = DDP(net.to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()
    probe = Engine(head, torch.optim.SGD(head.parameters(), lr=0.1), criterion)
    for x, y in loader:
        probe.step(unwrap_model(model).features(x).detach(), y)
    if rank == 0:
        torch.save(unwrap_model(model).state_dict(), "ckpt.pt")
    with torch.no_grad():
        print(unwrap_model(model)(x), unwrap_model(model).config)
