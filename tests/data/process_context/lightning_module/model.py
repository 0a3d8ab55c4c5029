import pytorch_lightning as pl
import torch
from pytorch_lightning.utilities import rank_zero_only


class LitClassifier(pl.LightningModule):
    def __init__(self, resume="checkpoints/last.ckpt"):
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Linear(32, 10)

    def setup(self, stage):
        self.net.load_state_dict(torch.load(self.hparams.resume))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def on_validation_epoch_end(self):
        if self.trainer.is_global_zero:
            torch.save(self.net.state_dict(), "best.pt")

    @rank_zero_only
    def export(self):
        torch.save(self.net.state_dict(), "export.pt")

    def on_train_end(self):
        self.export()
        torch.save(self.net.state_dict(), "last.pt")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
