"""The software: torch and the packages built against it, read without importing any of them.

Versions and requirements come from the installed packages' metadata (`importlib.metadata`),
torch's CUDA build from the literals of its generated `torch/version.py`, the driver's CUDA
from `nvidia-smi`. What is only known by importing torch (whether CUDA initialises, the NCCL
it links when no NCCL wheel is installed) is the live probe's (`--probe`).
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import os
import platform
import re
import sys
from dataclasses import dataclass, field

from ddplint.doctor.checks import CouldNotCheck, Found, Severity, Unknown, check, known
from ddplint.doctor.system import System

TORCH = "torch"
# Packages built for one torch, and the libraries torch is built against: shown with their
# versions, and their requirements checked against each other.
COMPANIONS = ("torchvision", "torchaudio", "deepspeed", "accelerate", "lightning", "pytorch-lightning")
LIBRARIES = ("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11", "nvidia-cuda-runtime-cu13",
             "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11", "triton")
_RELEASE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*\(?([^;)]*)\)?\s*(?:;(.*))?$")
_BUILD = re.compile(r"\+(cu\d+|cpu|rocm[\d.]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    requires: tuple[str, ...] = ()
    folder: str | None = None  # where its files are (for torch/version.py)

    @property
    def build(self) -> str | None:
        """The build its local version names: "cu121", "cpu", "rocm6.2"; None when it names none."""
        match = _BUILD.search(self.version)
        return match.group(1) if match else None


@dataclass(frozen=True)
class Software:
    python: str
    packages: dict[str, Package] = field(default_factory=dict)
    # torch's own build, from torch/version.py: its CUDA ("12.4"; None for a CPU or ROCm build)
    # and ROCm (HIP) versions; Unknown where the file cannot be read.
    torch_cuda: str | None | Unknown = None
    torch_hip: str | None | Unknown = None

    @property
    def torch(self) -> Package | None:
        return self.packages.get(TORCH)


def read_software(system: System, interpreter: str | None = None) -> Software | Unknown:
    """The packages of this Python, or Unknown where the launch runs another one (`interpreter`:
    the Python the launch command starts, as found on PATH)."""
    if interpreter is not None and os.path.realpath(interpreter) != os.path.realpath(system.python):
        return Unknown(
            f"the launch runs {interpreter}, not the Python running ddplint ({system.python}); "
            f"run `{interpreter} -m ddplint doctor` to check that one"
        )
    packages = {}
    for name in (TORCH, *COMPANIONS, *LIBRARIES):
        found = next(iter(metadata.distributions(name=name, path=system.site or sys.path)), None)
        if found is None:
            continue
        folder = str(found.locate_file(""))
        packages[name] = Package(name, found.version or "", tuple(found.requires or ()), folder)
    python = f"Python {platform.python_version()} ({system.python})"
    if TORCH not in packages:
        return Software(python, packages)
    build = _torch_build(packages[TORCH])
    return Software(python, packages, *build)


def _torch_build(torch: Package) -> tuple[str | None | Unknown, str | None | Unknown]:
    path = os.path.join(torch.folder or "", "torch", "version.py")
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError) as error:
        why = Unknown(f"torch's build cannot be read from {path}: {getattr(error, 'strerror', None) or error}")
        return why, why
    values: dict[str, object] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            values[target.id] = value.value
    return _text_or_none(values.get("cuda")), _text_or_none(values.get("hip"))


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


# -- versions and requirements, without `packaging` --------------------------------------------


def release(version: str) -> tuple[int, ...] | None:
    """The release numbers of a version (`2.5.1+cu121` -> (2, 5, 1)); None if it has none."""
    match = _RELEASE.match(version)
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def _padded(first: tuple[int, ...], second: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    width = max(len(first), len(second))
    return first + (0,) * (width - len(first)), second + (0,) * (width - len(second))


def satisfies(version: str, specifier: str) -> bool | None:
    """Whether `version` meets a PEP 440 `specifier` (`==2.5.1`, `>=2.0,<3`, `==2.1.*`, `~=1.10`),
    comparing release numbers: a local label (`+cu121`) is ignored, as PEP 440 says where the
    specifier has none; pre-releases count as their release. None where it cannot tell."""
    have = release(version)
    if have is None:
        return None
    for clause in filter(None, (part.strip() for part in specifier.split(","))):
        match = re.match(r"(===|==|!=|~=|>=|<=|>|<)\s*(\S+)$", clause)
        if match is None:
            return None
        operator, text = match.groups()
        if text.endswith(".*") and operator in ("==", "!="):
            wanted = release(text[:-2]) or ()
            equal = have[: len(wanted)] == wanted
            if equal != (operator == "=="):
                return False
            continue
        wanted = release(text)
        if wanted is None or "+" in text:
            return None
        mine, theirs = _padded(have, wanted)
        outcome = {
            "==": mine == theirs, "===": mine == theirs, "!=": mine != theirs, ">=": mine >= theirs,
            "<=": mine <= theirs, ">": mine > theirs, "<": mine < theirs,
            "~=": mine >= theirs and have[: max(len(wanted) - 1, 1)] == wanted[: max(len(wanted) - 1, 1)],
        }[operator]
        if not outcome:
            return False
    return True


def _marker_holds(marker: str) -> bool | None:
    """A requirement's environment marker on this machine: comparisons of `platform_system`,
    `platform_machine`, `sys_platform` and `python_version` joined by `and`/`or`; `extra`
    is never active. None for anything else."""
    values = {"platform_system": platform.system(), "platform_machine": platform.machine(),
              "sys_platform": sys.platform, "python_version": ".".join(platform.python_version_tuple()[:2])}
    result: bool | None = None
    for alternative in re.split(r"\s+or\s+", marker.strip()):
        every = True
        for term in re.split(r"\s+and\s+", alternative.strip().strip("()")):
            match = re.match(r"""\s*(\w+)\s*(==|!=|>=|<=|<|>)\s*["']([^"']*)["']\s*$""", term)
            if match is None:
                return None
            name, operator, wanted = match.groups()
            if name == "extra":
                every = False
                continue
            if name not in values:
                return None
            have = values[name]
            holds = satisfies(have, f"{operator}{wanted}") if name == "python_version" else (
                (have == wanted) if operator == "==" else (have != wanted) if operator == "!=" else None
            )
            if holds is None:
                return None
            every = every and holds
        result = every if result is None else (result or every)
    return result


def requirement(text: str) -> tuple[str, str] | None:
    """(canonical name, specifier) of a Requires-Dist line that applies here; None where it
    does not apply (an extra, another platform) or cannot be read."""
    match = _REQUIREMENT.match(text)
    if match is None:
        return None
    name, specifier, marker = match.groups()
    if marker is not None and _marker_holds(marker) is not True:
        return None
    return canonical(name), specifier.strip()


# -- checks ----------------------------------------------------------------------------------


@check("DDPE301", "torch-missing", "software")
def torch_missing(facts) -> list[Found]:
    """torch is not installed in the Python that runs the launch.

    Checked in the Python that runs ddplint; where the launch command names another
    interpreter (or its launcher's script starts another one), the software checks say they
    cannot check, and `that-python -m ddplint doctor` checks that one.
    """
    software = known(facts.software)
    if software.torch is not None:
        return []
    return [Found(Severity.ERROR, f"torch is not installed in {software.python}",
                  "install torch in this environment (a CUDA build on a GPU machine: see pytorch.org/get-started)")]


@check("DDPE302", "requirement-not-met", "software")
def requirement_not_met(facts) -> list[Found]:
    """An installed package requires another version of torch than the one installed, or torch
    requires another version of a library it is built against.

    torchvision and torchaudio pin the exact torch they were built for (`torch==2.5.1`); one
    installed on its own with `pip install -U` brings its own torch, or leaves a mismatched
    pair that fails at import or at its first operator ("operator torchvision::nms does not
    exist", "undefined symbol"). DeepSpeed, Accelerate and Lightning state the torch versions
    they support. A CUDA build of torch pins its NCCL, CUDA runtime and triton wheels
    (`nvidia-nccl-cu12==2.21.5`); one upgraded separately gives "undefined symbol: nccl..."
    or silent hangs. Requirements for another platform or an extra are not checked.
    """
    software = known(facts.software)
    found = []
    installed = {canonical(name): package for name, package in software.packages.items()}
    for package in installed.values():
        for line in package.requires:
            parsed = requirement(line)
            if parsed is None or parsed[0] not in installed or not parsed[1]:
                continue
            name, specifier = parsed
            if package.name != TORCH and name != TORCH:
                continue  # only pairs with torch: the companions' other requirements are pip's business
            other = installed[name]
            if satisfies(other.version, specifier) is False:
                found.append(Found(
                    Severity.ERROR,
                    f"{package.name} {package.version} requires {name}{specifier}, and {name} {other.version} is installed",
                    f"install the {package.name} built for this torch (pip install '{package.name}' with the torch index "
                    f"of your build), or the {name} it requires",
                ))
    return found


@check("DDPE303", "cuda-builds-differ", "software")
def cuda_builds_differ(facts) -> list[Found]:
    """torchvision or torchaudio is built for another CUDA (or for the CPU) than torch.

    Their versions name the build they are for (`0.20.1+cu118` against torch `2.5.1+cu121`);
    their compiled operators load only against the same build of torch ("Detected that
    PyTorch and torchvision were compiled with different CUDA major versions", or an
    operator that does not exist). Checked where both versions name their build: PyPI's
    default wheels name none.
    """
    software = known(facts.software)
    torch = software.torch
    if torch is None or torch.build is None:
        return []
    built = [software.packages[name] for name in ("torchvision", "torchaudio") if name in software.packages]
    return [
        Found(Severity.ERROR, f"{package.name} {package.version} is built for {package.build}, torch {torch.version} for "
              f"{torch.build}", f"install {package.name} from the same index as torch (the {torch.build} one)")
        for package in built if package.build is not None and package.build != torch.build
    ]


@check("DDPE304", "torch-build-for-other-machine", "software")
def torch_build_for_other_machine(facts) -> list[Found]:
    """torch is a CPU build on a machine with NVIDIA GPUs, or a CUDA build on one without.

    A CPU build never uses the GPUs: `torch.cuda.is_available()` is False, `.cuda()` raises
    "Torch not compiled with CUDA enabled" and NCCL does not exist. A CUDA build without a
    GPU runs (on the CPU, with gloo), but a script that asks for CUDA fails on every rank.
    torch's build is read from `torch/version.py`; the GPUs from nvidia-smi.
    """
    software = known(facts.software)
    if software.torch is None:
        return []
    cuda, hip = known(software.torch_cuda), known(software.torch_hip)
    gpus = known(facts.gpus)
    if gpus.failure is not None:
        return []  # the driver check says it
    if gpus.listed and cuda is None and hip is None:
        return [Found(
            Severity.ERROR,
            f"torch {software.torch.version} is a CPU build and this machine has {len(gpus.listed)} NVIDIA GPU(s): "
            "no rank can use them",
            "install a CUDA build of torch (pip install torch --index-url https://download.pytorch.org/whl/cu124, "
            "matching the driver's CUDA)",
        )]
    if not gpus.listed and cuda is not None:
        return [Found(
            Severity.WARNING,
            f"torch {software.torch.version} is a CUDA {cuda} build and this machine has no NVIDIA GPU "
            f"({gpus.source}): torch.cuda.is_available() is False here, and a script that asks for CUDA fails",
            "run on a GPU node, or install the CPU build (pip install torch --index-url https://download.pytorch.org/whl/cpu)",
        )]
    return []


@check("DDPE305", "driver-too-old", "software")
def driver_too_old(facts) -> list[Found]:
    """The NVIDIA driver supports an older CUDA major version than torch is built for.

    A driver runs CUDA runtimes up to the version in nvidia-smi's header ("CUDA Version"),
    and, within one major version, newer minor ones (CUDA's minor-version compatibility). A
    torch built for CUDA 12 on a driver for CUDA 11 fails at its first CUDA call: "The NVIDIA
    driver on your system is too old" or "CUDA driver version is insufficient".
    """
    software = known(facts.software)
    if software.torch is None:
        return []
    cuda = known(software.torch_cuda)
    gpus = known(facts.gpus)
    if cuda is None or not gpus.listed:
        return []
    if gpus.cuda is None:
        raise CouldNotCheck("nvidia-smi's header gives no CUDA version")
    built, supported = release(cuda), release(gpus.cuda)
    if built and supported and built[0] > supported[0]:
        return [Found(
            Severity.ERROR,
            f"torch is built for CUDA {cuda} and the driver ({gpus.driver or 'version unknown'}) supports CUDA "
            f"{gpus.cuda}: every CUDA call fails",
            f"update the NVIDIA driver to one for CUDA {built[0]}, or install torch built for CUDA {supported[0]}",
        )]
    return []
