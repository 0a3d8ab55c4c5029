from .builder import eval_loader, train_loader

__all__ = ["eval_loader", "train_loader"]
