import torch
from torch.nn.parallel import DataParallel, DistributedDataParallel


class BaseModel:
    def __init__(self, opt):
        self.opt = opt

    def model_to_device(self, net):
        net = net.to(torch.device("cuda"))
        if self.opt["dist"]:
            net = DistributedDataParallel(net, device_ids=[torch.cuda.current_device()])
        elif self.opt["num_gpu"] > 1:
            net = DataParallel(net)
        return net
