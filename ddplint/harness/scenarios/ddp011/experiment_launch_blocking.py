"""DDP011: what CUDA_LAUNCH_BLOCKING=1 does to a process's kernel launches.

Two fresh processes, the variable unset and set to 1. Each launches one long kernel (a spin
of about half a second) and asks at once whether the stream has finished: without blocking
the launch returns while the kernel runs; with it the launch returns only when the kernel
is done. Each also times a loop of small kernels (indicative: the serialised launches are
what slows a training step). Needs a GPU; run as a plain script, it prints one result line.
"""

import os
import subprocess
import sys

from ddplint.harness import probes

CHILD = """
import time, torch
torch.zeros(1, device="cuda")
torch.cuda.synchronize()
start = time.perf_counter()
torch.cuda._sleep(int(1e9))
launch_s = time.perf_counter() - start
done_at_return = torch.cuda.current_stream().query()
torch.cuda.synchronize()
x = torch.zeros(1024, device="cuda")
start = time.perf_counter()
for _ in range(2000):
    x.add_(1)
torch.cuda.synchronize()
print(done_at_return, round(launch_s * 1000, 2), round((time.perf_counter() - start) / 2000 * 1e6, 2))
"""


def run_case(blocking: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_LAUNCH_BLOCKING"}
    if blocking:
        env |= {"CUDA_LAUNCH_BLOCKING": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                         timeout=120)
    fields = (out.stdout.strip().splitlines() or [""])[-1].split()
    if len(fields) != 3:
        return {"error": out.stderr.strip()[-300:]}
    return {"kernel_done_when_launch_returned": fields[0] == "True",
            "long_launch_ms": float(fields[1]), "small_kernel_us": float(fields[2])}


def main():
    probes.emit("DDP011", {"unset": run_case(False), "blocking": run_case(True)})


if __name__ == "__main__":
    main()
