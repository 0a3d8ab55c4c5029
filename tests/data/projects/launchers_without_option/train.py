import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from utils.dist import DistEnv
from utils.options import get_args


class Trainer:
    def __init__(self, model, env):
        self.local_rank = env.local_rank
        self.model = DDP(model.cuda(self.local_rank), device_ids=[self.local_rank])

    def fit(self, batches):
        for x, y in batches:
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            loss.backward()


if __name__ == "__main__":
    args = get_args()
    env = DistEnv()
    env.setup()
    Trainer(torch.nn.Linear(8, 2), env).fit([])
