"""DDP025: an optimizer built before the FSDP wrap. No bundled scenario;
`experiment_stale_optimizer.py` measures the loss and the parameters over a few steps with the
optimizer built before and after `FullyShardedDataParallel(...)` (with and without
`use_orig_params=True`) and `fully_shard(...)`.

A script run records no losses or parameter updates: it cannot show the symptom."""

from ...script_symptoms import unobserved

RULE = "DDP025"

script_symptom = unobserved("the loss and the parameter updates are not recorded in a script run "
                            "(experiment_stale_optimizer.py measures them)")
