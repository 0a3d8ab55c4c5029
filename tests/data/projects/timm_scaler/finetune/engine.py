def train_one_epoch(model, criterion, data_loader, optimizer, loss_scaler, accum_iter):
    for step, (samples, targets) in enumerate(data_loader):
        loss = criterion(model(samples), targets) / accum_iter
        loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters(),
                    need_update=(step + 1) % accum_iter == 0)
        if (step + 1) % accum_iter == 0:
            optimizer.zero_grad()
