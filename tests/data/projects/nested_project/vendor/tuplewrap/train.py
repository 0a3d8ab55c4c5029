import torch

from dist_utils import setup, setup_single


def main(config, net, get_batch):
    model, device = setup(net)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    for it in range(config.max_iters):
        for micro_step in range(config.gradient_accumulation_steps):
            x, y = get_batch(device)
            logits, loss = model(x, y)
            (loss / config.gradient_accumulation_steps).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def single(config, net, get_batch):
    # the model this helper returns is not wrapped: clean
    model, device = setup_single(net)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    for it in range(config.max_iters):
        for micro_step in range(config.gradient_accumulation_steps):
            x, y = get_batch(device)
            logits, loss = model(x, y)
            (loss / config.gradient_accumulation_steps).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
