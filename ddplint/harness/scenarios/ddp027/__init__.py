"""DDP027: one seed on every rank feeding the draws of each training step. No bundled scenario
(the rule offers no fix); `experiment_shared_seed.py` measures the timesteps and noise each rank
draws per step after a shared seed and after a seed with the rank in it.

A script run records no random draws: it cannot show the symptom."""

from ...script_symptoms import unobserved

RULE = "DDP027"

script_symptom = unobserved("the values each rank draws are not recorded in a script run "
                            "(experiment_shared_seed.py measures them)")
