def train_one_epoch(model, loader, optimizer, accum_iter):
    model.train()
    for step, (samples, targets) in enumerate(loader):
        loss = (model(samples) - targets).pow(2).mean() / accum_iter
        loss.backward()
        if (step + 1) % accum_iter == 0:
            optimizer.step()
            optimizer.zero_grad()


def evaluate(model, loader, optimizer, accum_iter):
    for step, (samples, targets) in enumerate(loader):
        model(samples).mean().backward()
        if (step + 1) % accum_iter == 0:
            optimizer.step()
