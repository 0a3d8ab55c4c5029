"""Did a program stop because it needs CUDA or NCCL and this machine has neither?

One place that knows every form this failure takes, so that ``verify`` never reports such a
run as completed or FAILED: an exception line (``'SomeError: message'``, the last line of a
traceback) or a line the program printed before exiting on its own ("Unable to locate
sufficient 2 gpus"). That includes what fails only because the run is on a CPU, even with
GPU placement mapped there (:mod:`.cpu_mapping`): SyncBatchNorm, fused or capturable optimizer
state, CUDA graphs, a tool of the NVIDIA driver. Nothing here imports torch.
"""

from __future__ import annotations

import re

# (pattern of the exception line, what it means); the first that matches wins.
_EXCEPTIONS: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(p, re.I), why) for p, why in (
    (r"Torch not compiled with CUDA", "a CUDA call on a torch built without CUDA"),
    # torch.cuda.set_device and other thin wrappers reach torch._C directly on a CPU build.
    (r"torch\._C' has no attribute '_cuda", "a CUDA call on a torch built without CUDA"),
    (r"requires CUDA support", "a CUDA call on a torch built without CUDA"),
    (r"no NVIDIA driver|NVIDIA driver on your system|CUDA driver version is insufficient",
     "no NVIDIA driver"),
    (r"no CUDA GPUs are available|CUDA-capable device", "no GPU is visible"),
    (r"invalid device ordinal", "fewer GPUs than ranks"),
    (r"device_ids and output_device arguments only work with",
     "DistributedDataParallel was given GPU device_ids for a model on the CPU"),
    (r"doesn't have NCCL built in|NCCL is only supported with GPUs|ProcessGroupNCCL",
     "the NCCL backend needs GPUs"),
    (r"deserialize object on a CUDA device", "a checkpoint saved on a GPU loaded without a GPU"),
    (r"SyncBatchNorm layers only work with GPU|SyncBatchNorm expected input tensor to be on GPU",
     "SyncBatchNorm works only on GPUs"),
    (r"`fused=True` requires all the params to be floating point Tensors of supported devices"
     r".* and cpu$", "a fused optimizer on a device that has no fused kernels"),
    (r"capturable=True, params and state_steps must be on supported devices",
     "optimizer state made for CUDA graphs (capturable=True)"),
    (r"No backend type associated with device type cuda", "a CUDA tensor in a collective"),
    (r"Cannot access accelerator device when none is available|CUDA graphs? .*(?:not|un)available",
     "an accelerator call with no accelerator present"),
    (r"No such file or directory: '(?:nvidia-smi|nvcc)'", "a tool of the NVIDIA driver or CUDA toolkit"),
    (r"CUDA_HOME environment variable is not set", "a CUDA extension built at run time"),
))

# A line a program prints when it gives up for want of GPUs: a refusal word next to a GPU
# word. A line that mentions the CPU is a fallback announcement ("no GPU, using the CPU").
_GPU_WORD = r"(?:gpus?|cuda|nvidia)"
_PRINTED = re.compile(
    rf"(?:\bno\b.{{0,15}}\b{_GPU_WORD}\b)"
    rf"|(?:\b(?:unable to \w+|cannot \w+|can't \w+|could not \w+|insufficient|not enough|"
    rf"requires?|needs?|at least)\b.{{0,40}}\b{_GPU_WORD}\b)"
    rf"|(?:\b{_GPU_WORD}\b.{{0,40}}\b(?:not available|unavailable|not found|required|is needed)\b)",
    re.I)
_FALLBACK = re.compile(r"\bcpu\b", re.I)


def exception_reason(line: str) -> str | None:
    """Why an exception line means "needs a GPU", or None if it does not."""
    for pattern, why in _EXCEPTIONS:
        if pattern.search(line):
            return why
    return None


def printed_reason(line: str) -> str | None:
    """Why a printed line means "needs a GPU" (the program said so), or None."""
    text = line.strip()
    # A warning (torch warns "Found no NVIDIA driver" and goes on) and its indented source
    # line are not the program giving up.
    if line[:1].isspace() or "Warning" in text or len(text) > 200:
        return None
    if not _PRINTED.search(text) or _FALLBACK.search(text):
        return None
    return f"the script says: {text}"


def needs_gpu(errors: list[str], last_lines: list[str] = ()) -> str | None:
    """The reason a run needs a GPU, from its exception lines, else from the last lines it
    printed (give only the last few of each rank: earlier lines are followed by work done);
    None if nothing says so."""
    for line in errors:
        why = exception_reason(line)
        if why:
            return f"{why} ({line.strip()})"
    for line in last_lines:
        why = printed_reason(line)
        if why:
            return why
    return None
