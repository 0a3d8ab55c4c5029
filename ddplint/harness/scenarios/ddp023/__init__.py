"""DDP023: an NCCL process group with no device bound to the rank, so ranks crowd onto GPU 0.
No bundled scenario and no script symptom on a CPU: it shows only on GPUs."""

from ...script_symptoms import gpu_only

RULE = "DDP023"
CPU_MAPPING_HIDES = "every rank gets the CPU; ranks crowding onto GPU 0 show only on real GPUs"

script_symptom = gpu_only
