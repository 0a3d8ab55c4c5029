import argparse

import lightning as L
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint

from data.digits import DigitsData
from models.classifier import Classifier


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=4)
    args = parser.parse_args()
    checkpoint = ModelCheckpoint(monitor="val_loss", mode="min", save_top_k=2)
    stopping = EarlyStopping(monitor="val_acc", mode="max", patience=5)
    trainer = L.Trainer(accelerator="gpu", devices=args.devices, strategy="ddp", callbacks=[checkpoint, stopping])
    trainer.fit(Classifier(), datamodule=DigitsData())


if __name__ == "__main__":
    main()
