"""A made-up machine for the doctor's tests: a folder that stands for `/`, a stand-in
`nvidia-smi` on PATH, installed packages as `.dist-info` folders, a `/dev/shm` and an
open-file limit of any size through the System's readers. No root, no GPU, nothing real
changed. (Imported by name, as ddplint_test_support is.)

The healthy machine: 4 GPUs (driver for CUDA 12.4), torch 2.5.1+cu121 with torchvision
0.20.1+cu121 and the NCCL wheel torch pins, 16 GiB of /dev/shm, 65536 open files, 32 cores,
eth0 and lo, and a training script that reads LOCAL_RANK and uses NCCL.
"""

from __future__ import annotations

import json
import stat
import sys
import textwrap
from pathlib import Path

from ddplint.doctor.checks import all_checks, run
from ddplint.doctor.command import read_command
from ddplint.doctor.facts import Options, gather
from ddplint.doctor.system import System

GiB = 1024**3
HEALTHY_SCRIPT = """\
import argparse
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=4)
args = parser.parse_args()
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
loader = DataLoader(range(100), batch_size=8, num_workers=args.workers)
"""
_NVIDIA_SMI = """\
#!{python}
import json, sys
spec = json.loads({spec!r})
if spec.get("fail"):
    print(spec["fail"])
    sys.exit(9)
if any(arg.startswith("--query-gpu") for arg in sys.argv[1:]):
    for index, name in enumerate(spec["gpus"]):
        print(f"{{index}}, GPU-{{index:08d}}-aaaa-bbbb, {{name}}")
else:
    print("| NVIDIA-SMI 550.54.15   Driver Version: " + spec["driver"] + "   CUDA Version: " + spec["cuda"] + " |")
"""


class Statvfs:
    """What os.statvfs returns, for a /dev/shm of `total` bytes with `free` left."""

    def __init__(self, total: int, free: int | None = None) -> None:
        self.f_frsize = 4096
        self.f_blocks = total // 4096
        self.f_bavail = (total if free is None else free) // 4096


class Machine:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.root = folder / "root"
        self.bin = folder / "bin"
        self.site = folder / "site"
        self.project = folder / "project"
        self.shm = folder / "shm"
        for path in (self.root / "sys/class/net/eth0", self.root / "sys/class/net/lo", self.root / "dev", self.bin,
                     self.site, self.project, self.shm):
            path.mkdir(parents=True, exist_ok=True)
        self.environ: dict[str, str] = {"PATH": str(self.bin)}
        self.shm_size = Statvfs(16 * GiB)
        self.open_files: tuple[int, int] | None = (65536, 65536)
        self.cpus = 32
        self.probes: dict = {}

    # -- building the machine -------------------------------------------------------------

    def nvidia_smi(self, gpus=("NVIDIA A100-SXM4-80GB",) * 4, driver="550.54.15", cuda="12.4", fail=None) -> None:
        spec = json.dumps({"gpus": list(gpus), "driver": driver, "cuda": cuda, "fail": fail})
        path = self.bin / "nvidia-smi"
        path.write_text(_NVIDIA_SMI.format(python=sys.executable, spec=spec))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)

    def package(self, name: str, version: str, requires=(), cuda: str | None = "absent") -> None:
        """An installed distribution; for torch, `cuda` also writes its torch/version.py."""
        info = self.site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"] + [f"Requires-Dist: {r}" for r in requires]
        (info / "METADATA").write_text("\n".join(lines) + "\n")
        if cuda != "absent":
            (self.site / "torch").mkdir(exist_ok=True)
            (self.site / "torch" / "version.py").write_text(
                f"from typing import Optional\n__version__ = {version!r}\ncuda: Optional[str] = {cuda!r}\nhip: Optional[str] = None\n"
            )

    def remove_package(self, name: str) -> None:
        for info in self.site.glob(f"{name.replace('-', '_')}-*.dist-info"):
            for item in info.iterdir():
                item.unlink()
            info.rmdir()

    def script(self, text: str, name: str = "train.py") -> Path:
        path = self.project / name
        path.write_text(textwrap.dedent(text))
        return path

    def file(self, absolute: str, text: str = "") -> None:
        """A file under the machine's `/` (`/.dockerenv`, `/proc/1/cgroup`, `/dev/nvidia0`)."""
        path = self.root / absolute.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def healthy(self) -> Machine:
        self.nvidia_smi()
        self.package("torch", "2.5.1+cu121", ["nvidia-nccl-cu12==2.21.5; platform_system == 'Linux'", "filelock"], cuda="12.1")
        self.package("nvidia-nccl-cu12", "2.21.5")
        self.package("torchvision", "0.20.1+cu121", ["numpy", "torch==2.5.1"])
        self.script(HEALTHY_SCRIPT)
        return self

    # -- reading it ---------------------------------------------------------------------------

    @property
    def system(self) -> System:
        return System(
            environ=dict(self.environ), root=str(self.root), shm=str(self.shm), statvfs=lambda path: self.shm_size,
            open_file_limits=lambda: self.open_files, cpus=lambda: self.cpus, cpu_total=lambda: self.cpus,
            site=[str(self.site)],
            python=sys.executable, cwd=str(self.project),
        )

    def facts(self, command: str | list[str] | None = "torchrun --nproc_per_node 4 train.py", **options):
        words = command.split() if isinstance(command, str) else command
        system = self.system
        launch = read_command(words, system.cwd) if words else None
        facts = gather(system, launch, Options(**options))
        facts.probes.update(self.probes)
        return facts

    def outcomes(self, command: str | list[str] | None = "torchrun --nproc_per_node 4 train.py", **options):
        return {outcome.check.code: outcome for outcome in run(all_checks(), self.facts(command, **options))}

    def outcome(self, code: str, command: str | list[str] | None = "torchrun --nproc_per_node 4 train.py", **options):
        return self.outcomes(command, **options)[code]


def messages(outcome) -> list[str]:
    return [found.message for found in outcome.found]
