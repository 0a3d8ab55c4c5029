import torch


def create_optimizer(args, model):
    decay = [p for n, p in model.named_parameters() if not n.endswith("bias")]
    return torch.optim.AdamW(decay, lr=args.lr)
