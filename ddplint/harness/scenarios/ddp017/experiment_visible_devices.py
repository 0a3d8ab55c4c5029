"""DDP017: which first CUDA calls make a later CUDA_VISIBLE_DEVICES ignored.

One fresh process per case: the case's first call (or none), then the variable set to the
empty string, which hides every GPU, then an allocation on "cuda". An allocation that
succeeds means the process still sees its GPU: the setting came too late. Needs a GPU; run
as a plain script (one process per case, no process group), it prints one result line.
"""

import os
import subprocess
import sys

from ddplint.harness import probes

# The calls DDP017 names, by what its explanation claims: the first ones initialise CUDA
# (the variable is then ignored); device_count asks NVML and leaves it honoured.
FIRST_CALLS = {
    "nothing": "pass",
    "device_count": "torch.cuda.device_count()",
    "is_available": "torch.cuda.is_available()",
    "set_device": "torch.cuda.set_device(0)",
    "tensor.cuda": "torch.zeros(1).cuda()",
}

CHILD = """
import os, torch
{first}
os.environ["CUDA_VISIBLE_DEVICES"] = ""
try:
    torch.zeros(1, device="cuda")
    print("ALLOCATED")
except (RuntimeError, AssertionError) as exc:
    print("REFUSED", str(exc).splitlines()[0][:200])
"""


def run_case(first: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    out = subprocess.run([sys.executable, "-c", CHILD.format(first=first)], env=env,
                         capture_output=True, text=True, timeout=120)
    last = (out.stdout.strip().splitlines() or [out.stderr.strip()[-300:]])[-1]
    return {"allocated_after_hiding": last == "ALLOCATED", "said": last}


def main():
    probes.emit("DDP017", {name: run_case(code) for name, code in FIRST_CALLS.items()})


if __name__ == "__main__":
    main()
