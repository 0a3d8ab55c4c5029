def train_one_epoch(model, data_loader, optimizer, loss_scaler, update_freq):
    for step, batch in enumerate(data_loader):
        loss = model(batch) / update_freq
        loss_scaler(loss, optimizer)
