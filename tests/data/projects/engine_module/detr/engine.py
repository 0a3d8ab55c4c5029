def train_one_epoch(model, criterion, loader, optimizer, accum_iter):
    model.train()
    for step, (samples, targets) in enumerate(loader):
        loss = criterion(model(samples), targets) / accum_iter
        loss.backward()
        if (step + 1) % accum_iter == 0:
            optimizer.step()
            optimizer.zero_grad()


def distill_step(student, batch, optimizer):
    logits = student.module(batch)
    logits.mean().backward()
    optimizer.step()
