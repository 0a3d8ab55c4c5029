import torch.distributed as dist

from nets import EmbeddingNet, finish, restore


def main(args):
    dist.init_process_group("nccl")
    net = EmbeddingNet(build(args), 512)
    restore(net, args.out)
    finish(net, args.out)


if __name__ == "__main__":
    main(parse())
