import torch
from accelerate import Accelerator

from hf.loop import train_epoch, train_epoch_accumulate


def main(args, model, dataset):
    accelerator = Accelerator(mixed_precision="fp16")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(args.epochs):
        train_epoch(accelerator, model, loader, optimizer, args.gradient_accumulation_steps)
        train_epoch_accumulate(accelerator, model, loader, optimizer)
