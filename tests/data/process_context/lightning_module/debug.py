import pytorch_lightning as pl
import torch


class TinyModule(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def on_fit_start(self):
        self.net.load_state_dict(torch.load("checkpoints/tiny.ckpt"))

    def on_train_end(self):
        torch.save(self.net.state_dict(), "tiny.pt")


if __name__ == "__main__":
    trainer = pl.Trainer(accelerator="cpu", devices=1, fast_dev_run=True)
    trainer.fit(TinyModule())
