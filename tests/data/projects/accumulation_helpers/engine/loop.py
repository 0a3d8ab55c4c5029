def run_epoch(accelerator, model, loader, optimizer, accumulate):
    for step, batch in enumerate(loader):
        accelerator.backward(model(batch).mean() / accumulate)
        if (step + 1) % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
