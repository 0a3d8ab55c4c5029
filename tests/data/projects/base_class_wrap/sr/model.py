import torch

from sr.arch import SwinIR
from sr.base import BaseModel


class SRModel(BaseModel):
    def __init__(self, opt):
        super().__init__(opt)
        self.net_g = self.model_to_device(SwinIR())

    def test(self, lq):
        with torch.no_grad():
            return self.net_g(lq)

    def nondist_validation(self, loader):
        return [self.test(lq) for lq in loader]

    def dist_validation(self, loader):
        if self.opt["rank"] == 0:
            self.nondist_validation(loader)
