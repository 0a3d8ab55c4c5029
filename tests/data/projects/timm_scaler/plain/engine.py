def train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler):
    for samples, targets in data_loader:
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
