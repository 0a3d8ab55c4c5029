"""DDP026: `torch.nn.utils.clip_grad_norm_(model.parameters())` on an FSDP1 model. No bundled
scenario; `experiment_clip_shards.py` measures the norm each rank clips by, with the function
and with FSDP's own `model.clip_grad_norm_`, for FSDP1's sharding strategies and for FSDP2.

A script run records no gradient norms: it cannot show the symptom."""

from ...script_symptoms import unobserved

RULE = "DDP026"

script_symptom = unobserved("the norm each rank clips by is not recorded in a script run "
                            "(experiment_clip_shards.py measures it)")
