"""DDP020: `DDP(model, device_ids=...)` wrapping a model that is moved to its device only
after the wrap. No bundled scenario; `experiment_wrapper_order.py` measures that order and a
SyncBatchNorm conversion after the wrap, `experiment_compile_order.py` that
`DDP(torch.compile(model))` is still split at the buckets (the two orders the rule, after
measuring, does not flag).

A script run shows the order that breaks a program: `DDP(model, device_ids=[rank])` on a model
still on the CPU, refused by DDP at construction (on GPUs the same way: the check reads the
model's device)."""

from ...script_symptoms import exception

RULE = "DDP020"
CPU_MAPPING_HIDES = ("the mapping drops DDP's device_ids, so the wrap of a model still on the CPU "
                     "is not refused; only a script written for CPU ranks, or real GPUs, show it")

script_symptom = exception(("device_ids and output_device arguments only work with",),
                           "DDP refuses device_ids for a model on the CPU")
