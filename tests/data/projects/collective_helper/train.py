import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from data.loader import build_loader
from models.net import Classifier, Generator
from utils.dist import is_main_process, log_on_main, sync_metrics


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = DDP(Classifier(10).cuda(rank), device_ids=[rank])
    generator = DDP(Generator().cuda(rank), device_ids=[rank])
    loader, sampler = build_loader(16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        meters = {"loss": 0.0}
        for images, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            meters["loss"] += loss.item()
        if is_main_process():
            stats = sync_metrics(meters)
            log_on_main(f"epoch {epoch}: {stats}")
            with torch.no_grad():
                samples = generator(torch.randn(4, 8, 8, 8, device="cuda"))
                preview = model(samples[:, :3])
            torch.save(model.module.state_dict(), "last.pt")
        totals = sync_metrics(meters)
        log_on_main(f"every rank reduced {totals}")


if __name__ == "__main__":
    main()
