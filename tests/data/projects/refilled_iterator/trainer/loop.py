def train_one_epoch(model, optimizer, loader, batches, steps):
    """Trains `steps` steps, refilling the iterator when the loader runs out."""
    for step in range(steps):
        try:
            batch = next(batches)
        except StopIteration:
            batches = iter(loader)
            batch = next(batches)
        optimizer.zero_grad()
        model(batch).sum().backward()
        optimizer.step()
    return batches
