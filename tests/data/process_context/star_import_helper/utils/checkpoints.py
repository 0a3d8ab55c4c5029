import torch
import torch.distributed as dist


def is_main_process():
    return dist.get_rank() == 0


def load_checkpoint(path, model, map_location=None):
    if map_location is not None:
        state = torch.load(path, map_location=f"cuda:{map_location}")
    else:
        state = torch.load(path)
    model.load_state_dict(state["model_state"])
    return model
