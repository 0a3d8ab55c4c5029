"""DDP011: CUDA_LAUNCH_BLOCKING=1 left in a training script, which serialises every CUDA
kernel launch. No bundled scenario and no script symptom on a CPU: it shows only on GPUs,
where experiment_launch_blocking.py measures it."""

from ...script_symptoms import gpu_only

RULE = "DDP011"
CPU_MAPPING_HIDES = "CUDA_LAUNCH_BLOCKING slows only real CUDA kernels; the mapped run launches none"

script_symptom = gpu_only
