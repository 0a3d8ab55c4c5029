"""Fine-tunes with the Hugging Face Trainer; run.sh starts it with torchrun on four processes."""
import torch
from transformers import Trainer, TrainingArguments


def train(model, dataset, output_dir):
    args = TrainingArguments(output_dir=output_dir, per_device_train_batch_size=8)
    trainer = Trainer(model=model, args=args, train_dataset=dataset)
    trainer.train()
    trainer.save_model(output_dir)  # the Trainer writes on process 0 only
    trainer.model.save_pretrained(output_dir)
    if args.local_rank in (-1, 0):
        torch.save(trainer.state.log_history, f"{output_dir}/history.pt")


if __name__ == "__main__":
    train(None, None, "out")
