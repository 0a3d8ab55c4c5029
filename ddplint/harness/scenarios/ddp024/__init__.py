"""DDP024: find_unused_parameters=True on a model whose forward uses every parameter. No
bundled scenario; `experiment_find_unused.py` measures the warning and the time per step.

A script run shows the warning DDP's reducer prints (to stderr, once per rank) when it found
no unused parameter; the program is correct either way."""

from ...script_symptoms import printed

RULE = "DDP024"

script_symptom = printed("find_unused_parameters=True was specified in DDP constructor, but did "
                         "not find any unused parameters", "reducer warning (no unused parameter found)")
