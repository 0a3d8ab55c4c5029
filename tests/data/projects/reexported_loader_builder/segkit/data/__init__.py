from .builder import get_data_loader

__all__ = ["get_data_loader"]
