import argparse
import os

import torch

from library import train_util
from networks import ControlNet, build_unet


def train(args):
    accelerator = train_util.prepare_accelerator(args)
    unet = build_unet(args)
    controlnet = ControlNet(unet)
    if args.controlnet_weights:
        state_dict = torch.load(args.controlnet_weights)
        controlnet.load_state_dict(state_dict)
    optimizer = torch.optim.AdamW(controlnet.parameters(), lr=args.learning_rate)
    controlnet, optimizer = accelerator.prepare(controlnet, optimizer)
    for step in range(args.max_train_steps):
        with accelerator.accumulate(controlnet):
            loss = controlnet(step)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        weights = accelerator.unwrap_model(controlnet).state_dict()
        torch.save(weights, os.path.join(args.output_dir, "controlnet.pt"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    train_util.add_training_arguments(parser)
    parser.add_argument("--controlnet_weights")
    parser.add_argument("--learning_rate", type=float, default=1e-5)
    parser.add_argument("--max_train_steps", type=int, default=1000)
    train(parser.parse_args())
