import torch.distributed as dist

from diffusion import dist_util


class TrainLoop:
    def __init__(self, model, resume_checkpoint, ema_checkpoint):
        self.model = model
        if dist.get_rank() == 0:
            self.model.load_state_dict(dist_util.load_state_dict(resume_checkpoint, map_location="cpu"))
        state_dict = dist_util.load_state_dict(ema_checkpoint, map_location="cpu")
        self.ema = state_dict
