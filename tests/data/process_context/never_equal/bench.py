import os

import torch
import torch.distributed as dist


def benchmark(model_name, model, steps, checkpoint="last.pt", weights="init.pt"):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    if model_name == "finetune":
        model = torch.load(weights)
        model.train()
    if model_name == "resume":
        state = torch.load(checkpoint)
        model.load_state_dict(state["model"])
        steps -= state["step"]
    return model, steps
