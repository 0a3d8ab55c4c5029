from job.common import *


def setup(args):
    dist.init_process_group("nccl", rank=args.local_rank, world_size=WORLD)
    torch.cuda.set_device(args.local_rank)
