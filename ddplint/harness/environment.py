"""What ``ddplint verify`` needs installed, checked before anything runs.

torch is asked in a subprocess (the verifying process never imports it): its version and
build, the GPUs it sees, and whether the packages built against it (torchvision, torchaudio)
import together with it. A torchvision built for another torch fails at import with
``operator torchvision::nms does not exist``, which a script would otherwise report as its own
failure. Each problem comes with the command that fixes it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

WHEEL_INDEX = "https://download.pytorch.org/whl"  # PyTorch's own index, one folder per build
COMPANIONS = ("torchvision", "torchaudio")  # built against one torch build each

_PROBE = r"""
import importlib, importlib.util, json, sys
try:
    import torch
except Exception as exc:
    print(json.dumps({"torch_error": f"{type(exc).__name__}: {exc}"}))
    raise SystemExit
found = {"torch": torch.__version__, "cuda": torch.version.cuda, "companions": {}}
try:
    found["gpus"] = torch.cuda.device_count() if torch.cuda.is_available() else 0
except Exception:
    found["gpus"] = 0
for name in sys.argv[1:]:
    if importlib.util.find_spec(name) is None:
        continue
    try:
        found["companions"][name] = {"version": getattr(importlib.import_module(name), "__version__", "")}
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        found["companions"][name] = {"error": f"{type(exc).__name__}: {first}"}
print(json.dumps(found))
"""


@dataclass
class Environment:
    torch: str | None = None  # its version, None when it does not import
    cuda: str | None = None  # the CUDA version it was built with; None for a CPU build
    gpus: int = 0
    companions: dict[str, dict] = field(default_factory=dict)  # name -> {"version"} or {"error"}
    torch_error: str = ""


def probe(env: dict[str, str] | None = None) -> Environment:
    """torch and its companions as a launched script would find them (same interpreter and
    environment)."""
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE, *COMPANIONS], capture_output=True,
                              text=True, timeout=180, env=env)
        found = json.loads(proc.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, OSError, ValueError, IndexError):
        return Environment(torch_error="python could not be asked which torch it has")
    if "torch_error" in found:
        return Environment(torch_error=found["torch_error"])
    return Environment(found["torch"], found["cuda"], found["gpus"], found["companions"])


def supported(torch_version: str) -> bool:
    """torch 2: the launcher passes torchrun the hyphenated options (--nproc-per-node,
    --node-rank, --rdzv-endpoint) that torch 2.0 introduced."""
    return torch_version.split(".", 1)[0] == "2"


def build(torch_version: str, cuda: str | None) -> str:
    """The build's folder on PyPI's and PyTorch's indexes: "cpu", "cu128", "rocm6.2"."""
    local = torch_version.partition("+")[2]
    if local:
        return local
    return "cu" + cuda.replace(".", "") if cuda else "cpu"


def companion_version(name: str, torch_version: str) -> str:
    """The release of ``name`` built for this torch: torchvision 0.(N+15) for torch 2.N,
    torchaudio the same number as torch; "" when the version cannot be read."""
    m = re.match(r"2\.(\d+)\.(\d+)", torch_version)
    if not m:
        return ""
    minor, patch = int(m.group(1)), m.group(2)
    return f"0.{minor + 15}.{patch}" if name == "torchvision" else f"2.{minor}.{patch}"


def install_command(package: str, version: str, folder: str) -> str:
    pin = f"=={version}" if version else ""
    return f"pip install --force-reinstall --no-deps {package}{pin} --index-url {WHEEL_INDEX}/{folder}"


def _companion_problem(name: str, state: dict, env: Environment) -> str:
    version = companion_version(name, env.torch)
    return (f"{name} does not import with torch {env.torch} ({state['error']}): it was built for "
            f"another torch. Install the {name} built for this one: "
            f"{install_command(name, version, build(env.torch, env.cuda))}")


def check(env: Environment, used: set[str]) -> tuple[list[str], list[str]]:
    """(problems that stop verify before it runs anything, notes) for a script that imports
    the companion packages ``used``."""
    if env.torch is None:
        if env.torch_error.startswith("ModuleNotFoundError"):
            return [f"needs PyTorch, which is not installed; without a GPU, install its CPU build: "
                    f"pip install torch --index-url {WHEEL_INDEX}/cpu (a plain `pip install torch` "
                    "on Linux fetches a CUDA build of several GB)"], []
        return [f"PyTorch does not import ({env.torch_error}); reinstall it, without a GPU its CPU "
                f"build: pip install --force-reinstall torch --index-url {WHEEL_INDEX}/cpu"], []
    if not supported(env.torch):
        return [f"needs torch 2 (2.0 or later, before 3); this is torch {env.torch}: "
                f"pip install 'torch>=2,<3' --index-url {WHEEL_INDEX}/{build(env.torch, env.cuda)}"], []
    stops, notes = [], []
    if env.cuda and not env.gpus:
        notes.append(f"torch {env.torch} is a CUDA {env.cuda} build and no GPU is visible: the runs "
                     f"use the CPU, which works; its CPU build is a fraction of the size: "
                     f"pip install torch=={env.torch.partition('+')[0]} --index-url {WHEEL_INDEX}/cpu")
    for name, state in env.companions.items():
        if "error" in state:
            problem = _companion_problem(name, state, env)
            if name in used:
                stops.append(problem)
            else:
                notes.append(f"{problem} (the script does not import {name})")
    return stops, notes


_SKIPPED = {".git", "__pycache__", ".venv", "venv", "node_modules", ".tox", ".mypy_cache"}


def imported_companions(project: Path) -> set[str]:
    """The companion packages some Python file of the project imports."""
    pattern = re.compile(rf"^\s*(?:import|from)\s+({'|'.join(COMPANIONS)})\b", re.M)
    found: set[str] = set()
    for folder, dirs, files in os.walk(project):
        dirs[:] = [d for d in dirs if d not in _SKIPPED and not d.endswith(".egg-info")]
        for name in files:
            if name.endswith(".py"):
                try:
                    text = Path(folder, name).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                found.update(pattern.findall(text))
    return found
