import torch
from torch.nn.parallel import DataParallel


class BaseModel:
    def __init__(self, opt):
        self.opt = opt

    def model_to_device(self, net):
        net = net.to(torch.device("cuda"))
        if self.opt["num_gpu"] > 1:
            net = DataParallel(net)
        return net
