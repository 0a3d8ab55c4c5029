"""The machine: its NVIDIA GPUs (through `nvidia-smi`), `CUDA_VISIBLE_DEVICES`, `/dev/shm`, the
open-file limit, its CPUs and network interfaces, and whether it is a container."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ddplint.doctor.checks import CouldNotCheck, Found, Severity, Unknown, check, known
from ddplint.doctor.system import System

MiB = 1024**2
GiB = 1024**3
# Docker gives a container this much /dev/shm unless told otherwise (`--shm-size`, `--ipc=host`).
DOCKER_DEFAULT_SHM = 64 * MiB
# What one DataLoader worker is assumed to hold in /dev/shm when `--shm-per-worker` is not
# given: two prefetched batches (prefetch_factor's default) of 64 MiB, a batch of 128 RGB
# images of 224 x 224 pixels in float32 being 73.5 MiB.
DEFAULT_SHM_PER_WORKER = 128 * MiB
# The soft open-file limit below which DataLoader workers under the file_descriptor strategy
# are reported: every tensor a worker hands its rank is a descriptor in flight, besides the
# files the dataset opens; 1024, a common default, is the limit in the "Too many open files"
# and "received 0 items of ancdata" reports.
MIN_OPEN_FILES = 4096
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_CONTAINER_CGROUP = re.compile(r"docker|kubepods|containerd|libpod|lxc|podman|crio", re.IGNORECASE)
_GPU_DEVICE = re.compile(r"nvidia\d+$")


def format_size(count: float) -> str:
    for unit, scale in (("GiB", GiB), ("MiB", MiB)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count / 1024:.1f} KiB"


def parse_size(text: str) -> int:
    """`256M`, `1G`, `1.5GiB`, `512MB` (powers of 1024); ValueError otherwise."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (say 256M or 1G)")
    scale = 1024 ** " kmgt".index(match.group(2).lower() or " ")
    return int(float(match.group(1)) * scale)


# -- GPUs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gpu:
    index: int
    uuid: str
    name: str


@dataclass(frozen=True)
class Gpus:
    """What nvidia-smi says. `listed` are all the GPUs of the machine (nvidia-smi ignores
    CUDA_VISIBLE_DEVICES); `failure` is its message where it is installed but fails."""

    listed: tuple[Gpu, ...]
    driver: str | None = None
    cuda: str | None = None  # the newest CUDA the driver supports ("CUDA Version" in its header)
    failure: str | None = None
    source: str = "nvidia-smi"


def read_gpus(system: System) -> Gpus | Unknown:
    listing = system.run_program(["nvidia-smi", "--query-gpu=index,uuid,name", "--format=csv,noheader"])
    devices = [name for name in system.listdir("/dev") or [] if _GPU_DEVICE.match(name)]
    if listing is None:
        if devices:
            return Unknown(f"/dev/{devices[0]} exists but nvidia-smi is not on PATH, so the GPUs cannot be listed")
        return Gpus((), source="no nvidia-smi on PATH and no /dev/nvidia* device")
    if listing.returncode != 0:
        first = next((line.strip() for line in listing.output.splitlines() if line.strip()), "no output")
        return Gpus((), failure=f"exit {listing.returncode}: {first}")
    gpus = []
    for line in listing.output.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) >= 3 and fields[0].isdigit():
            gpus.append(Gpu(int(fields[0]), fields[1], ", ".join(fields[2:])))
    header = system.run_program(["nvidia-smi"])
    text = header.output if header is not None and header.returncode == 0 else ""
    driver = re.search(r"Driver Version:\s*([\d.]+)", text)
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", text)
    return Gpus(tuple(gpus), driver.group(1) if driver else None, cuda.group(1) if cuda else None)


@dataclass(frozen=True)
class Visible:
    """The GPUs CUDA shows a process under CUDA_VISIBLE_DEVICES, in its order, and the
    entries that make CUDA stop reading the list (everything from there on is ignored)."""

    gpus: tuple[Gpu, ...]
    stopped_at: str | None = None
    repeated: tuple[str, ...] = ()


def visible_gpus(gpus: Gpus, variable: str | None) -> Visible:
    """CUDA reads CUDA_VISIBLE_DEVICES as a comma-separated list of indices or UUIDs (or
    unique UUID prefixes, `GPU-8932f937`) and stops at the first entry that names no device:
    `0,2,-1,1` shows GPUs 0 and 2 (CUDA C Programming Guide, "CUDA Environment Variables")."""
    if variable is None:
        return Visible(gpus.listed)
    shown: list[Gpu] = []
    repeated: list[str] = []
    for entry in (part.strip() for part in variable.split(",")):
        found = _named(gpus.listed, entry)
        if found is None:
            return Visible(tuple(shown), entry or "(empty)", tuple(repeated))
        if found in shown:
            repeated.append(entry)
        else:
            shown.append(found)
    return Visible(tuple(shown), None, tuple(repeated))


def _named(gpus: tuple[Gpu, ...], entry: str) -> Gpu | None:
    if entry.isdigit():
        return next((gpu for gpu in gpus if gpu.index == int(entry)), None)
    if entry.startswith(("GPU-", "MIG-")):
        matching = [gpu for gpu in gpus if gpu.uuid.startswith(entry)]
        return matching[0] if len(matching) == 1 else None
    return None


@check("DDPE101", "gpu-driver", "machine")
def gpu_driver(facts) -> list[Found]:
    """nvidia-smi is installed but fails: the NVIDIA driver is not loaded, does not match the
    user-space library, or the container was started without the GPUs.

    CUDA then sees no device either, so every rank that asks for one fails (`RuntimeError: No
    CUDA GPUs are available`, or NCCL cannot start). Where nvidia-smi is not installed and no
    `/dev/nvidia*` device exists, the machine simply has no NVIDIA GPU and this check is silent;
    where such a device exists without nvidia-smi, it cannot check.
    """
    gpus = known(facts.gpus)
    if gpus.failure is None:
        return []
    return [Found(
        Severity.ERROR,
        f"nvidia-smi is installed but fails ({gpus.failure}): no GPU can be used",
        "load the NVIDIA driver that matches the installed CUDA user-space libraries (the message above "
        "says which side is missing); in a container, start it with the GPUs (docker run --gpus all)",
    )]


@check("DDPE102", "visible-devices", "machine")
def visible_devices(facts) -> list[Found]:
    """`CUDA_VISIBLE_DEVICES` names a GPU this machine does not have, lists one twice, or is
    empty.

    CUDA reads the list up to the first entry that names no device and ignores the rest, so
    `0,1,4,5` on a 4-GPU node shows two GPUs and ranks 2 and 3 find none; an empty value (or
    `-1`) hides every GPU. A GPU listed twice gives two ranks the same device, which NCCL
    refuses ("Duplicate GPU detected"). The variable may come from this shell, the launch
    command (`CUDA_VISIBLE_DEVICES=0,1 torchrun ...`) or the script that holds it.
    """
    variable = facts.environment.get("CUDA_VISIBLE_DEVICES")
    if variable is None:
        return []
    gpus = known(facts.gpus)
    if not gpus.listed:
        return []  # no GPU to hide or to name: the ranks check says what that means for the launch
    visible = known(facts.visible)
    here = ", ".join(str(gpu.index) for gpu in gpus.listed)
    found = []
    if visible.stopped_at is not None:
        hidden = "every GPU" if not visible.gpus else f"all but {len(visible.gpus)} of the {len(gpus.listed)} GPUs"
        found.append(Found(
            Severity.ERROR,
            f"CUDA_VISIBLE_DEVICES={variable!r} hides {hidden}: CUDA stops reading it at {visible.stopped_at!r}, "
            f"which names no GPU of this machine (GPUs {here})",
            f"list only GPUs this machine has (CUDA_VISIBLE_DEVICES={','.join(str(g.index) for g in gpus.listed)}), "
            "or unset it",
        ))
    if visible.repeated:
        found.append(Found(
            Severity.ERROR,
            f"CUDA_VISIBLE_DEVICES={variable!r} lists {', '.join(visible.repeated)} more than once: two ranks "
            "would share a GPU, which NCCL refuses",
            "list each GPU once",
        ))
    return found


# -- shared memory ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SharedMemory:
    path: str
    total: int
    free: int


def read_shm(system: System) -> SharedMemory | None | Unknown:
    """/dev/shm's size and free space; None where it does not exist."""
    try:
        stats = system.statvfs(system.shm)
    except FileNotFoundError:
        return None
    except OSError as error:
        return Unknown(f"{system.shm}: cannot read its size: {error.strerror or error}")
    return SharedMemory(system.shm, stats.f_blocks * stats.f_frsize, stats.f_bavail * stats.f_frsize)


@check("DDPE103", "shared-memory", "machine")
def shared_memory(facts) -> list[Found]:
    """`/dev/shm` is smaller than the ranks' DataLoader workers need, or missing.

    A DataLoader worker hands each batch to its rank through shared memory, and holds
    `prefetch_factor` (2) batches ahead; every rank on the node has its own workers. When
    `/dev/shm` fills, a worker dies with "Bus error" or "No space left on device" and the
    rank with "DataLoader worker (pid N) is killed by signal: Bus error". Docker gives a
    container 64 MiB unless started with `--shm-size` or `--ipc=host`. The need is ranks per
    node x workers per rank x the shared memory of one worker: its two batches, assumed to be
    128 MiB unless `--shm-per-worker` says (a warning, since the batches are not known).
    Workers are read from the script's DataLoaders (literal, a constant, or an argparse
    default that the launch command may override), else from `--workers`. NCCL also keeps
    its transport between the ranks of a node in `/dev/shm`; with Docker's default 64 MiB and
    several NCCL ranks that is reported too. With `--probe`, the need (up to 1 GiB) is
    allocated there for a moment: a failure is an error, whatever statvfs said.
    """
    shm = known(facts.shm)
    if shm is None:
        return [Found(
            Severity.ERROR, f"{facts.system.shm} does not exist: DataLoader workers and torch.multiprocessing "
            "share tensors there", "mount a tmpfs there (docker run --shm-size=8g, or --ipc=host)",
        )]
    ranks = known(facts.ranks_per_node)
    found = []
    probe = facts.probes.get("shm")
    if probe is not None and probe.failed:
        found.append(Found(Severity.ERROR, f"the live probe could not allocate {probe.detail}", _shm_fix(facts, shm)))
    if ranks > 1 and "nccl" in facts.backends and shm.total <= DOCKER_DEFAULT_SHM:
        found.append(Found(
            Severity.WARNING,
            f"{shm.path} is {format_size(shm.total)} and {ranks} NCCL ranks share this node: NCCL keeps its "
            "transport between them there and fails with 'Error while creating shared memory segment'",
            _shm_fix(facts, shm),
        ))
    workers = facts.workers
    if isinstance(workers, Unknown):
        if found:
            return found  # what is certain without the workers
        raise CouldNotCheck(workers.reason)
    need = ranks * workers * facts.shm_per_worker
    if workers and need > shm.free and not (probe is not None and probe.failed):
        assumed = "" if facts.shm_per_worker_given else ", assumed (--shm-per-worker sets yours)"
        found.append(Found(
            Severity.WARNING,
            f"{shm.path} has {format_size(shm.free)} free; {ranks} rank(s) x {workers} DataLoader worker(s) x "
            f"{format_size(facts.shm_per_worker)}{assumed} need {format_size(need)}: workers die with 'Bus error'",
            _shm_fix(facts, shm, need),
        ))
    return found


def _shm_fix(facts, shm: SharedMemory, need: int = 0) -> str:
    size = max(need, 8 * GiB)
    where = f"docker run --shm-size={-(-size // GiB)}g (or --ipc=host)" if facts.container else "a larger tmpfs on /dev/shm"
    return f"give {shm.path} more room: {where}; in Kubernetes, an emptyDir with medium: Memory mounted there; or fewer workers"


# -- open files ------------------------------------------------------------------------------


@check("DDPE104", "open-file-limit", "machine")
def open_file_limit(facts) -> list[Found]:
    """The soft open-file limit is low for DataLoader workers under the `file_descriptor`
    sharing strategy.

    By default (`file_descriptor`) each tensor a worker hands to its rank travels as an open
    file descriptor; with many workers, tensors per batch or batches kept alive the rank
    runs out ("Too many open files", "received 0 items of ancdata"). 1024, a common default,
    is the limit in those reports; the check asks for 4096. The usual workaround,
    `set_sharing_strategy("file_system")`, leaks `/dev/shm` files when a worker dies (the
    linter's file-system-sharing-strategy rule); raising the soft limit up to the hard limit
    needs no privilege. Silent where the script sets `file_system` itself or no worker runs.
    """
    limits = facts.open_files
    if limits is None:
        raise CouldNotCheck("this system has no open-file limit to read (no resource module)")
    soft, hard = limits
    strategy = known(facts.sharing_strategy)
    workers = known(facts.workers)
    if strategy != "file_descriptor" or not workers or soft == -1 or soft >= MIN_OPEN_FILES:
        return []
    if hard == -1 or hard >= MIN_OPEN_FILES:
        fix = f"raise the soft limit in the launch script (ulimit -n {'unlimited' if hard == -1 else hard}), no privilege needed"
    else:
        fix = "ask for a higher hard limit (docker run --ulimit nofile=65536:65536, or limits.conf)"
    return [Found(
        Severity.WARNING,
        f"the open-file limit is {soft} and {workers} DataLoader worker(s) per rank hand tensors over as file "
        "descriptors (the file_descriptor strategy): ranks can fail with 'Too many open files'",
        fix,
    )]


# -- what the machine is ---------------------------------------------------------------------


def read_container(system: System) -> list[str]:
    """The evidence that this is a container, in words; empty where none is found."""
    evidence = [marker for marker in ("/.dockerenv", "/run/.containerenv") if system.exists(marker)]
    cgroup = system.read("/proc/1/cgroup") or ""
    match = _CONTAINER_CGROUP.search(cgroup)
    if match:
        evidence.append(f"/proc/1/cgroup names {match.group(0).lower()}")
    if "KUBERNETES_SERVICE_HOST" in system.environ:
        evidence.append("KUBERNETES_SERVICE_HOST is set")
    return evidence


def read_interfaces(system: System) -> list[str] | Unknown:
    names = system.listdir("/sys/class/net")
    return names if names is not None else Unknown("/sys/class/net cannot be read, so the network interfaces are unknown")
