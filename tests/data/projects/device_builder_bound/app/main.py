from torch.nn.parallel import DistributedDataParallel as DDP

from app import utils
from app.models import build_model


def main(args):
    utils.init_distributed_mode(args)
    model = build_model(args)
    return DDP(model)
