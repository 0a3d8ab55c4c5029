"""DDP020: what the wrong orders actually do, on CPU with gloo.

1. `DDP(model, device_ids=[local_rank])` while the model is still on the CPU (the program
   moves it to its device only after the wrap): does DDP refuse it at construction?
2. `SyncBatchNorm.convert_sync_batchnorm(ddp_model)` after the wrap: are the converted
   layers' parameters and buffers the objects DDP registered (its reducer hooks and buffer
   broadcast), or new ones DDP never sees? And what does DDP's own construction-time check
   for SyncBatchNorm say, which the late conversion skips?
"""

import os

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from ddplint.harness import probes


def net():
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 2))


def main():
    rank, world, _ = probes.init_distributed()
    result = {}
    # 1. device_ids on a model that is still on the CPU.
    try:
        DDP(nn.Linear(4, 4), device_ids=[int(os.environ.get("LOCAL_RANK", "0"))])
        result["device_ids_on_cpu_model"] = "accepted"
    except ValueError as error:
        result["device_ids_on_cpu_model"] = str(error)
    # 2. convert_sync_batchnorm after the wrap.
    model = net()
    ddp = DDP(model)
    registered_params = {id(p) for p in ddp._module_parameters}
    registered_buffers = {id(b) for b in ddp.modules_buffers}
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(ddp)
    sync_layers = [m for m in converted.module.modules() if isinstance(m, nn.SyncBatchNorm)]
    result["same_wrapper_returned"] = converted is ddp
    result["sync_bn_layers"] = len(sync_layers)
    result["params_still_registered"] = all(id(p) in registered_params for m in sync_layers for p in m.parameters())
    result["buffers_still_registered"] = all(
        id(b) in registered_buffers for m in sync_layers for b in m.buffers()
    )
    try:
        converted(torch.randn(2, 3, 8, 8))
        result["late_converted_forward"] = "ran"
    except ValueError as error:
        result["late_converted_forward"] = str(error)
    # The documented order, for comparison: convert, then wrap.
    try:
        DDP(nn.SyncBatchNorm.convert_sync_batchnorm(net()))
        result["convert_then_wrap_on_cpu"] = "accepted"
    except ValueError as error:
        result["convert_then_wrap_on_cpu"] = str(error)
    result["world"] = world
    probes.emit("DDP020", result)
    probes.finish()


if __name__ == "__main__":
    main()
