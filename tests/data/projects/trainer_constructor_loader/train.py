import os

import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from trainer import Trainer


def main(dataset, epochs):
    init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    loader = DataLoader(dataset, batch_size=32, shuffle=False, sampler=DistributedSampler(dataset=dataset))
    model = DistributedDataParallel(torch.nn.Linear(8, 2).to(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    Trainer(model, loader, optimizer).train(epochs)
    destroy_process_group()


if __name__ == "__main__":
    main(torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,))), 3)
