import pytorch_lightning as pl

from model import LitClassifier


def main(data):
    trainer = pl.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=10)
    trainer.fit(LitClassifier(), data)


if __name__ == "__main__":
    main(None)
