import torch
import torch.distributed as dist


def save_checkpoint(state, path):
    torch.save(state, path)


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def load_backbone(model, path):
    state = torch.load(path)
    model.backbone.load_state_dict(state)
