"""The one classifier of "this run needs CUDA or NCCL and there is none" (no launch)."""

import pytest

from ddplint.harness.gpu_failure import exception_reason, needs_gpu, printed_reason

# The exception lines torch 2.x raises on a CPU-only build for CUDA and NCCL calls.
NO_CUDA_ERRORS = [
    "AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'",
    "AssertionError: Torch not compiled with CUDA enabled",
    "RuntimeError: torch.cuda.Stream requires CUDA support",
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU",
    "RuntimeError: No CUDA GPUs are available",
    "RuntimeError: CUDA error: invalid device ordinal",
    "ValueError: DistributedDataParallel device_ids and output_device arguments only work with "
    "single-device/multiple-device GPU modules or CPU modules, but got device_ids [0], "
    "output_device None, and module parameters {device(type='cpu')}.",
    "RuntimeError: Distributed package doesn't have NCCL built in",
    "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
    "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.",
    # What fails only because the run is on a CPU, GPU placement mapped or not (issue 40, 8).
    "ValueError: SyncBatchNorm layers only work with GPU modules",
    "ValueError: SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone",
    "RuntimeError: `fused=True` requires all the params to be floating point Tensors of supported devices: "
    "['cuda', 'xpu'] but torch.float32 and cpu",
    "RuntimeError: If capturable=True, params and state_steps must be on supported devices: ['cuda'].",
    "FileNotFoundError: [Errno 2] No such file or directory: 'nvidia-smi'",
]


@pytest.mark.parametrize("line", NO_CUDA_ERRORS)
def test_every_no_cuda_exception_is_recognised(line):
    assert exception_reason(line)
    assert line in needs_gpu([f"rank 1: {line}"])


@pytest.mark.parametrize("line", [
    "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv'",
    "AttributeError: Can't pickle local object 'f.<locals>.<lambda>'",
    "RuntimeError: Expected to have finished reduction in the prior iteration",
    "ValueError: too many values to unpack (expected 2)",
])
def test_other_exceptions_are_not(line):
    assert exception_reason(line) is None and needs_gpu([line]) is None


@pytest.mark.parametrize("line", ["Unable to locate sufficient 2 gpus", "No GPU found. Exiting.",
                                  "CUDA is not available", "This script requires at least 2 GPUs",
                                  "error: no CUDA devices"])
def test_a_printed_refusal_is_recognised(line):
    assert printed_reason(line) == f"the script says: {line}"
    assert needs_gpu([], ["epoch 0 done", line]) == f"the script says: {line}"


@pytest.mark.parametrize("line", ["No GPU found, training on the CPU", "CUDA not available: using cpu",
                                  "epoch 3 loss 0.12", "saved checkpoint.pt", "Training done",
                                  "no improvement for 3 epochs; lr 0.01 on gpu 0", "x " * 100 + "no GPU"])
def test_ordinary_or_fallback_lines_are_not(line):
    assert printed_reason(line) is None


def test_a_warning_is_not_a_refusal():
    warning = ["/x/torch/cuda/__init__.py:734: UserWarning: CUDA initialization: Found no NVIDIA driver",
               "  return torch._C._cuda_getDeviceCount() > 0"]
    assert needs_gpu([], warning) is None
