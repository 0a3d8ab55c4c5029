"""Write a converted model in Hugging Face's format."""
import os

import torch

from megatron_lite import mpu


def export(hf_model, state, out):
    stage_file = os.path.join(out, f"model_pp{mpu.get_pipeline_model_parallel_rank()}.pt")
    torch.save(state, stage_file)
    if mpu.is_pipeline_last_stage():
        hf_model.load_state_dict(state, strict=False)
        hf_model.save_pretrained(os.path.join(out, "release"))
