from torch import nn


def build_model(args):
    model = nn.Linear(args.dim, args.dim)
    model.cuda()
    return model


def build_on(args, device):
    model = nn.Linear(args.dim, args.dim).cuda()
    return model.to(device)


def build_ranked(args):
    return nn.Linear(args.dim, args.dim).cuda(args.gpu)
