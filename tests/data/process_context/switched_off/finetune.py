import torch.distributed as dist

from nets import EmbeddingNet, restore


def main(args):
    dist.init_process_group("nccl")
    net = EmbeddingNet(build(args), 512)
    restore(net, args.out, resume=args.resume)


if __name__ == "__main__":
    main(parse())
