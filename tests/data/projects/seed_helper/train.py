import torch
from accelerate import Accelerator

from diffusion.common import add_noise, fix_seeds, fix_seeds_per_rank


def train(cfg, unet, scheduler, loader, optimizer):
    accelerator = Accelerator()
    fix_seeds(cfg.seed)
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    for epoch in range(cfg.epochs):
        for latents in loader:
            noisy, noise, steps = add_noise(latents, scheduler)
            loss = torch.nn.functional.mse_loss(unet(noisy, steps), noise)
            accelerator.backward(loss)
            optimizer.step()


def train_per_rank(cfg, unet, scheduler, loader, optimizer):
    accelerator = Accelerator()
    fix_seeds_per_rank(cfg.seed)
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    for latents in loader:
        noisy, noise, steps = add_noise(latents, scheduler)
        accelerator.backward(torch.nn.functional.mse_loss(unet(noisy, steps), noise))
        optimizer.step()


def train_process_seed(cfg, unet, scheduler, loader, optimizer):
    accelerator = Accelerator()
    fix_seeds(cfg.seed + accelerator.process_index)
    for latents in loader:
        noisy, noise, steps = add_noise(latents, scheduler)
        accelerator.backward(torch.nn.functional.mse_loss(unet(noisy, steps), noise))
        optimizer.step()


if __name__ == "__main__":
    train(load_config(), *build())
