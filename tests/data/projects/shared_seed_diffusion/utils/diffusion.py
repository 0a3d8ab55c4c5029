import torch

STEPS = 1000


def add_noise(images, noise, timesteps):
    alpha = 1.0 - timesteps.float()[:, None, None, None] / STEPS
    return alpha.sqrt() * images + (1.0 - alpha).sqrt() * noise


def diffusion_loss(model, images):
    timesteps = torch.randint(0, STEPS, (images.shape[0],), device=images.device)
    noise = torch.randn_like(images)
    predicted = model(add_noise(images, noise, timesteps), timesteps)
    return (predicted - noise).pow(2).mean()
