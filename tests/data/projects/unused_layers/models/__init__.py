from .detector import Detector
from .legacy import LegacyNet
from .net import build_model

__all__ = ["Detector", "LegacyNet", "build_model"]
