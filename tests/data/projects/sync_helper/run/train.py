import torch.distributed as dist

from run.dist_utils import maybe_no_sync, set_grad_sync, wrap


def train_one_epoch(model, loader, optimizer, accum_steps):
    for i, (x, y) in enumerate(loader):
        should_step = (i + 1) % accum_steps == 0
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if should_step:
            optimizer.step()
            optimizer.zero_grad()


def train_with_context(model, loader, optimizer, accum_steps):
    # no_sync through a project helper: clean
    for i, (x, y) in enumerate(loader):
        sync = (i + 1) % accum_steps == 0
        with maybe_no_sync(model, sync):
            loss = criterion(model(x), y) / accum_steps
            loss.backward()
        if sync:
            optimizer.step()
            optimizer.zero_grad()


def train_with_flag(model, get_batch, optimizer, iters, accum_steps):
    # the sync flag toggled by a project helper: clean
    for it in range(iters):
        for micro_step in range(accum_steps):
            set_grad_sync(model, micro_step == accum_steps - 1)
            x, y = get_batch()
            (criterion(model(x), y) / accum_steps).backward()
        optimizer.step()
        optimizer.zero_grad()


def main(net, loader, optimizer, get_batch, rank, accum_steps):
    dist.init_process_group("nccl")
    model = wrap(net, rank)
    train_one_epoch(model, loader, optimizer, accum_steps)
    train_with_context(model, loader, optimizer, accum_steps)
    train_with_flag(model, get_batch, optimizer, 100, accum_steps)
