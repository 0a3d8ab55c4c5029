"""DDP017: CUDA_VISIBLE_DEVICES set after CUDA has started, which the CUDA runtime ignores. No
bundled scenario and no script symptom on a CPU: it shows only on GPUs, where
experiment_visible_devices.py measures which first calls make the setting too late."""

from ...script_symptoms import gpu_only

RULE = "DDP017"
CPU_MAPPING_HIDES = "CUDA_VISIBLE_DEVICES set after CUDA started is ignored only by a real CUDA runtime"

script_symptom = gpu_only
