def train_epoch(accelerator, model, loader, optimizer, gradient_accumulation_steps):
    model.train()
    for step, batch in enumerate(loader):
        loss = model(**batch).loss / gradient_accumulation_steps
        accelerator.backward(loss)
        if (step + 1) % gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def train_epoch_accumulate(accelerator, model, loader, optimizer):
    # accelerator.accumulate skips the all-reduce of the micro-batches that do not step: clean
    for step, batch in enumerate(loader):
        with accelerator.accumulate(model):
            accelerator.backward(model(**batch).loss)
            optimizer.step()
            optimizer.zero_grad()
