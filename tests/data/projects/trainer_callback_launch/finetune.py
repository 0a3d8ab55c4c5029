import os

import transformers


class SaveLoraCallback(transformers.TrainerCallback):
    def save_adapter(self, args, state, kwargs):
        folder = os.path.join(args.output_dir, f"checkpoint-{state.global_step}", "adapter")
        kwargs["model"].save_pretrained(folder)

    def on_save(self, args, state, control, **kwargs):
        self.save_adapter(args, state, kwargs)
        return control


class SaveFullModelCallback(transformers.TrainerCallback):
    """Written for a full fine-tune, but no script hands it to a Trainer: it never fires."""

    def on_save(self, args, state, control, **kwargs):
        kwargs["model"].save_pretrained(os.path.join(args.output_dir, "full"))
        return control


def main():
    parser = transformers.HfArgumentParser(transformers.TrainingArguments)
    (training_args,) = parser.parse_args_into_dataclasses()
    trainer = transformers.Trainer(args=training_args, callbacks=[SaveLoraCallback()])
    trainer.train()


if __name__ == "__main__":
    main()
