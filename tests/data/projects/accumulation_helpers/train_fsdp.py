import torch
from accelerate import Accelerator, FullyShardedDataParallelPlugin

from engine.loop import run_epoch
from models.net import Denoiser


def main(loader):
    accelerator = Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin())
    model = Denoiser()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = accelerator.prepare(model, optimizer)
    for epoch in range(3):
        run_epoch(accelerator, model, loader, optimizer, accumulate=4)


if __name__ == "__main__":
    main([torch.randn(8, 16) for _ in range(16)])
