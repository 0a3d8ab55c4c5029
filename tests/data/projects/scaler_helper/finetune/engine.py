def train_class_batch(model, samples, targets, criterion):
    outputs = model(samples)
    return criterion(outputs, targets), outputs


def train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, update_freq):
    for step, (samples, targets) in enumerate(data_loader):
        loss, output = train_class_batch(model, samples, targets, criterion)
        loss /= update_freq
        loss_scaler(loss, optimizer, parameters=model.parameters(),
                    update_grad=(step + 1) % update_freq == 0)
        if (step + 1) % update_freq == 0:
            optimizer.zero_grad()
