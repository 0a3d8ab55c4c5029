import os

import torch
from transformers import Trainer, TrainingArguments

TRAINING_ARGS_NAME = "training_args.bin"


class LoraTrainer(Trainer):
    """Overrides save_model, which the Trainer calls on every process when it checkpoints;
    the base class writes only where `args.should_save`, this one everywhere."""

    def save_model(self, output_dir=None, _internal_call=False):
        os.makedirs(output_dir, exist_ok=True)
        torch.save(self.args, os.path.join(output_dir, TRAINING_ARGS_NAME))
        self.model.save_pretrained(output_dir)


class GuardedTrainer(Trainer):
    def save_model(self, output_dir=None, _internal_call=False):
        if self.args.should_save:
            self.model.save_pretrained(output_dir)


def main():
    trainer = LoraTrainer(model=build(), args=TrainingArguments("out"))
    trainer.train()
    if trainer.is_world_process_zero():
        trainer.save_model("out/final")
    GuardedTrainer(model=build(), args=TrainingArguments("out2")).train()


if __name__ == "__main__":
    main()
