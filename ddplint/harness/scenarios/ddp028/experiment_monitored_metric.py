"""DDP028: what each rank's ModelCheckpoint records when the metric it monitors is logged with
and without `sync_dist=True`, under Lightning's DDP strategy on two CPU ranks (gloo).

A linear regression trains three epochs; each rank validates on its own shard (Lightning's
DistributedSampler) of data whose targets differ by shard, so the ranks' own losses differ.
Recorded per rank: the best score and best checkpoint path of `ModelCheckpoint(monitor=...)`,
and the mean of the ranks' own last validation losses. Without lightning installed the result
says "needs lightning" and nothing is measured.
"""

import os
import shutil
import tempfile

from ddplint.harness import probes

EPOCHS = 3


def measure(sync: bool, root: str) -> dict:
    import lightning as L
    import torch
    from lightning.pytorch.callbacks import ModelCheckpoint
    from torch.utils.data import DataLoader, TensorDataset

    class Regression(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)
            self.own_losses = []

        def training_step(self, batch, batch_idx):
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def validation_step(self, batch, batch_idx):
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.layer(x), y)
            self.own_losses.append(loss.item())
            self.log("val_loss", loss, sync_dist=sync)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    torch.manual_seed(0)
    x = torch.randn(64, 4)
    y = x.sum(1, keepdim=True) + torch.arange(64).float()[:, None] % 2 * 4  # odd samples: far targets
    data = TensorDataset(x, y)
    checkpoint = ModelCheckpoint(dirpath=os.path.join(root, f"sync_{sync}"), monitor="val_loss", save_top_k=1)
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=EPOCHS, callbacks=[checkpoint], logger=False,
        enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
    )
    model = Regression()
    # shuffle=False: Lightning's DistributedSampler then gives rank 0 the even samples, rank 1 the odd
    trainer.fit(model, DataLoader(data, batch_size=8), DataLoader(data, batch_size=64, shuffle=False))
    return {"best_score": round(float(checkpoint.best_model_score), 4),
            "best_path": os.path.basename(checkpoint.best_model_path),
            "own_last_loss": round(model.own_losses[-1], 4)}


def main():
    try:
        import lightning  # noqa: F401
    except ImportError:
        probes.emit("DDP028", {"needs": "lightning"})
        return
    import torch.distributed as dist

    result = {}
    root = tempfile.mkdtemp(prefix="ddplint-ddp028-")
    try:
        for sync in (False, True):
            own = measure(sync, root)
            result[f"sync_dist_{sync}"] = probes.gather(own)
        result["world"] = dist.get_world_size()
        probes.emit("DDP028", result)
        dist.barrier()
    finally:
        shutil.rmtree(root, ignore_errors=True)  # also when a rank fails: nothing is left in /tmp
    probes.finish()


if __name__ == "__main__":
    main()
