import os

import torch
import torch.distributed as dist

from megatron_lite import mpu


def checkpoint_name(folder, iteration):
    tp, pp = mpu.get_tensor_model_parallel_rank(), mpu.get_pipeline_model_parallel_rank()
    return os.path.join(folder, f"iter_{iteration:07d}", f"mp_rank_{tp:02d}_{pp:03d}", "model.pt")


def save_checkpoint(iteration, model, optimizer, args):
    name = checkpoint_name(args.save, iteration)
    if not dist.is_initialized() or mpu.get_data_parallel_rank() == 0 or args.deepspeed:
        state = {"iteration": iteration, "model": model.state_dict()}
        if not args.deepspeed:
            os.makedirs(os.path.dirname(name), exist_ok=True)
            torch.save(state, name)
    if args.deepspeed:
        model.save_checkpoint(args.save, tag=f"iter_{iteration:07d}")
    save_optimizer_state(optimizer, os.path.join(os.path.dirname(name), "optim.pt"))
    dist.barrier()


def save_optimizer_state(optimizer, filename):
    data_parallel_rank = mpu.get_data_parallel_rank()
    state = optimizer.gather_state_on_first_replica()
    if data_parallel_rank == 0:
        torch.save(state, filename)
