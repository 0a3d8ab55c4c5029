from imnet.utils import save_checkpoint


def fit(model, loader, optimizer, epochs, out_dir):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        save_checkpoint({"model": model.state_dict(), "epoch": epoch}, False, out_dir)
