import lightning as L
import torch


class TokenModel(L.LightningModule):
    def __init__(self, width=256):
        super().__init__()
        self.head = torch.nn.Linear(width, width)

    def training_step(self, batch, batch_idx):
        loss = torch.nn.functional.mse_loss(self.head(batch), batch)
        self.log("train/loss", loss, prog_bar=True, on_step=True, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val/loss", torch.nn.functional.mse_loss(self.head(batch), batch), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)
