import contextlib


def train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, accum_iter):
    for step, (samples, targets) in enumerate(data_loader):
        need_update = (step + 1) % accum_iter == 0
        with contextlib.nullcontext() if need_update else model.no_sync():
            loss = criterion(model(samples), targets) / accum_iter
            loss_scaler(loss, optimizer, need_update=need_update)
