def train_one_epoch(model, criterion, loader, optimizer, accum_iter):
    for step, (samples, targets) in enumerate(loader):
        loss = criterion(model(samples), targets) / accum_iter
        loss.backward()
        if (step + 1) % accum_iter == 0:
            optimizer.step()


def finetune(model, batch, optimizer):
    model.module(batch).mean().backward()
    optimizer.step()
