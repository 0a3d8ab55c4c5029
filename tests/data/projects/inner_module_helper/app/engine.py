def train_one_epoch(model, criterion, loader, optimizer, loss_scaler):
    model.train()
    for samples, targets in loader:
        loss = criterion(model(samples), targets)
        loss_scaler(loss, optimizer)


def finetune(batch, optimizer, model):
    step(model, batch, optimizer)


def step(model, batch, optimizer):
    loss = model.forward(batch).mean()
    loss.backward()
    optimizer.step()
