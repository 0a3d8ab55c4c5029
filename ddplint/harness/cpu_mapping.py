"""Run a training script written for GPUs on CPU ranks, unedited (``ddplint verify --script
--cpu``, and automatically when no GPU is present).

Started by the probes of :mod:`.observe` in each rank when ``DDPLINT_CPU_MAP`` is set, before
the script runs. It redirects what places work on a GPU to the CPU:

- ``Tensor.cuda``, ``Module.cuda`` and ``Tensor.to``/``Module.to`` with a CUDA device (a
  ``"cuda..."`` string, an ``int`` index, a CUDA ``torch.device``) stay on the CPU;
- ``torch.device("cuda", i)`` makes the CPU device;
- ``torch.cuda.set_device`` and ``torch.accelerator.set_device_index`` only remember the
  index, for ``current_device`` (an argument a GPU would refuse, such as None, raises);
- ``DistributedDataParallel``'s ``device_ids`` and ``output_device``, ``init_process_group``'s
  ``device_id`` and ``barrier``'s ``device_ids`` are dropped; the NCCL backend becomes gloo;
- the ``torch.cuda`` and ``torch.accelerator`` queries that pick a branch answer as a node
  with one GPU per local rank would (``is_available``, ``device_count``, ``current_device``,
  ``current_accelerator``, ...), ``get_default_backend_for_device`` answers gloo, and the
  calls that only wait for, order or measure GPU work (``synchronize``, memory statistics,
  ``Event``, ``Stream``, ``record_stream``, the CUDA random state) do nothing or use the
  CPU's;
- ``SyncBatchNorm.convert_sync_batchnorm`` keeps the model's BatchNorm layers (DDP refuses
  SyncBatchNorm on the CPU).

The queries answer truthfully, and ``torch.device`` is not mapped, when torch itself asks (so
DataLoader pinning, autocast and GradScaler see that CUDA is absent and turn themselves off, as
they do on any CPU machine, and a checkpoint saved on a GPU, loaded without ``map_location``,
fails as it does there). ``torch.load``'s ``map_location`` naming a GPU loads onto the CPU.
Each redirect is counted, with the first places in the script that made it, into the rank's
facts as ``cpu_mapping``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import Counter
from types import SimpleNamespace

from .observe import CPU_MAP_VAR as MAP_VAR
from .observe import wrap

# The tensor factories whose device= is mapped (torch.zeros(n, device="cuda")).
FACTORIES = ("zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
             "linspace", "eye", "tensor", "as_tensor", "zeros_like", "ones_like", "empty_like",
             "full_like", "rand_like", "randn_like")

MAX_SITES = 64  # places recorded per run: enough to point at each redirect in the script

_counts: Counter = Counter()
_sites: dict[tuple[str, str, int], str] = {}  # (what, file, line) -> function it ran in
_current = [0]  # the index torch.cuda.set_device was given
_defaults_by_file: dict[str, frozenset[int]] = {}
_real_device = type(None)  # torch.device, kept when install() replaces it
_skip_dirs: tuple[str, ...] = ()


def facts() -> dict:
    """What was redirected: counts per call, and the places in the script that made them."""
    return {"counts": dict(_counts),
            "sites": [{"what": what, "file": path, "line": line, "function": function}
                      for (what, path, line), function in list(_sites.items())]}


def _caller():
    """The innermost frame outside torch and ddplint: the script's own code."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_skip_dirs):
        frame = frame.f_back
    return frame


def _default_lines(path: str) -> frozenset[int]:
    """The lines of a file's parameter defaults (evaluated when the ``def`` runs)."""
    import ast

    if path not in _defaults_by_file:
        lines: set[int] = set()
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError, ValueError):
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for default in [*node.args.defaults, *node.args.kw_defaults]:
                    if default is not None:
                        last = default.end_lineno or default.lineno
                        lines.update(range(default.lineno, last + 1))
        _defaults_by_file[path] = frozenset(lines)
    return _defaults_by_file[path]


def _in_default_argument(frame) -> bool:
    """Whether this frame is evaluating a parameter default: CUDA there is DDP001's
    import-time crash, which the mapping leaves to happen as it would on any CPU machine."""
    return frame is not None and frame.f_lineno in _default_lines(frame.f_code.co_filename)


def _count(what: str, frame=None) -> None:
    _counts[what] += 1
    frame = frame or _caller()
    if frame is None or len(_sites) >= MAX_SITES:
        return
    path = frame.f_code.co_filename
    rel = os.path.relpath(path) if path.startswith(os.getcwd() + os.sep) else path
    _sites.setdefault((what, rel, frame.f_lineno), frame.f_code.co_name)


def _from_torch() -> bool:
    """Whether the function asking (two frames up: past the wrapper) is torch's own code."""
    return sys._getframe(2).f_code.co_filename.startswith(_skip_dirs)


def _is_index(device) -> bool:
    """A bare device index, which torch reads as its accelerator: the GPU."""
    return isinstance(device, int) and not isinstance(device, bool)


def _is_cuda(device) -> bool:
    """Whether a device argument names a GPU. A malformed one ("cuda:None") raises here as it
    would in torch, so the mapping does not hide it."""
    if _is_index(device):
        return True
    if isinstance(device, str):
        device = _real_device(device)
    return isinstance(device, _real_device) and device.type == "cuda"


def _index(device) -> int:
    """The GPU index a set_device argument names, checked as torch checks it on a GPU node:
    None, a string that is no device, or ``torch.device("cuda")`` without an index raise there
    and here."""
    if device is None:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        device = _real_device(device)
    if not isinstance(device, _real_device) or (device.type == "cuda" and device.index is None):
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    # A CPU device here is one the mapping made of torch.device("cuda", i), its index lost.
    return _current[0] if device.index is None else device.index


# --------------------------------------------------------------------------- placement


def _map_to_args(what: str, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``.to(...)`` arguments with a CUDA device replaced by the CPU (a dtype or a tensor
    argument is left alone)."""
    import torch

    if args and not isinstance(args[0], (torch.dtype, torch.Tensor)) and _is_cuda(args[0]):
        frame = _caller()
        if not _in_default_argument(frame):
            _count(what, frame)
            args = ("cpu", *args[1:])
    return args, _map_device_kwarg(what, kwargs)


def _map_device_kwarg(what: str, kwargs: dict) -> dict:
    """Keyword arguments with a CUDA ``device=`` replaced by the CPU."""
    if kwargs.get("device") is None or not _is_cuda(kwargs["device"]):
        return kwargs
    frame = _caller()
    if _in_default_argument(frame):
        return kwargs
    _count(what, frame)
    return {**kwargs, "device": "cpu"}


def _map_location(location):
    """A torch.load ``map_location`` with CUDA targets replaced by the CPU. None stays None: a
    checkpoint saved on a GPU then fails to load here as it would on any CPU machine (DDP004's
    symptom); a function stays as it is (its ``storage.cuda()`` is mapped)."""
    if isinstance(location, dict):
        mapped = {key: "cpu" if _is_cuda(value) else value for key, value in location.items()}
        if mapped != location:
            _count("torch.load(map_location=cuda)")
        return mapped
    if location is None or callable(location) or not _is_cuda(location):
        return location
    _count("torch.load(map_location=cuda)")
    return "cpu"


def _install_placement() -> None:
    import torch

    def make_to(what):
        def make(original):
            def to(self, *args, **kwargs):
                args, kwargs = _map_to_args(what, args, kwargs)
                return original(self, *args, **kwargs)
            return to
        return make

    def make_cuda(what):
        def make(original):
            def cuda(self, *args, **kwargs):
                frame = _caller()
                if _in_default_argument(frame):
                    return original(self, *args, **kwargs)
                _count(what, frame)
                return self
            return cuda
        return make

    def make_factory(what):
        def make(original):
            def factory(*args, **kwargs):
                return original(*args, **_map_device_kwarg(what, kwargs))
            return factory
        return make

    def make_load(original):
        def load(f, *args, **kwargs):
            if args:
                args = (_map_location(args[0]), *args[1:])
            if "map_location" in kwargs:
                kwargs["map_location"] = _map_location(kwargs["map_location"])
            return original(f, *args, **kwargs)
        return load

    wrap(torch, "load", make_load)
    for storage in (torch.UntypedStorage, torch.TypedStorage):
        wrap(storage, "cuda", make_cuda("Storage.cuda()"))
    for name in FACTORIES:
        wrap(torch, name, make_factory(f"torch.{name}(device=cuda)"))
    wrap(torch.Tensor, "to", make_to("Tensor.to(cuda)"))
    wrap(torch.nn.Module, "to", make_to("Module.to(cuda)"))
    wrap(torch.Tensor, "cuda", make_cuda("Tensor.cuda()"))
    wrap(torch.nn.Module, "cuda", make_cuda("Module.cuda()"))
    wrap(torch.Tensor, "pin_memory", make_cuda("Tensor.pin_memory()"))
    wrap(torch.Tensor, "record_stream", make_cuda("Tensor.record_stream()"))
    torch.device = _device_type(_real_device)


def _device_type(real):
    """A stand-in for ``torch.device`` whose CUDA devices are the CPU; its instances, and
    ``isinstance`` against it, are the real type's."""

    class DeviceType(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, real)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, real)

    class device(metaclass=DeviceType):
        def __new__(cls, *args, **kwargs):
            # torch.device(0) asks torch's accelerator, which fails without a GPU: an index is
            # mapped without building it.
            if not (len(args) == 1 and not kwargs and _is_index(args[0])):
                made = real(*args, **kwargs)
                if made.type != "cuda" or _from_torch():  # torch's own code gets the truth
                    return made
            _count("torch.device(cuda)")
            return real("cpu")

    device.__doc__, device.__module__ = real.__doc__, real.__module__
    return device


# --------------------------------------------------------------------------- torch.cuda


def _ram() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


_CPU_NAME = "CPU (ddplint --cpu)"


class _Event:
    """A ``torch.cuda.Event`` that measures wall time."""

    def __init__(self, *args, **kwargs):
        self.at = None

    def record(self, stream=None):
        import time

        self.at = time.perf_counter()

    def elapsed_time(self, end) -> float:
        return (end.at - self.at) * 1000.0

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass

    def query(self) -> bool:
        return True


class _Stream:
    """A ``torch.cuda.Stream``: work on the CPU is already in order."""

    def __init__(self, *args, **kwargs):
        pass

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event or _Event()
        event.record()
        return event

    def synchronize(self):
        pass

    def query(self) -> bool:
        return True


class _DeviceContext:
    """``with torch.cuda.device(i):`` makes ``i`` the current device while it lasts."""

    def __init__(self, device):
        # None: torch.cuda.device(None) changes nothing.
        self.index = None if device is None else _index(device)
        self.previous = _current[0]

    def __enter__(self):
        self.previous = _current[0]
        if self.index is not None:
            _current[0] = self.index

    def __exit__(self, *exc):
        _current[0] = self.previous
        return False


def _counted(cls, what: str):
    """``cls``, counting each instance the script makes (ddplint's own are not counted)."""

    class Counted(cls):
        def __init__(self, *args, **kwargs):
            _count(what)
            super().__init__(*args, **kwargs)

    Counted.__name__ = Counted.__qualname__ = cls.__name__
    return Counted


def _install_cuda_queries() -> None:
    import torch

    cuda = torch.cuda
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    ram = _ram()
    properties = SimpleNamespace(name=_CPU_NAME, major=8, minor=0, total_memory=ram,
                                 multi_processor_count=os.cpu_count() or 1)

    def set_device(device) -> None:
        _current[0] = _index(device)
        _count("torch.cuda.set_device")

    answers = {
        "is_available": lambda: True,
        "device_count": lambda: local_world,
        "current_device": lambda: _current[0],
        "is_initialized": lambda: True,
        "get_device_name": lambda device=None: _CPU_NAME,
        "get_device_capability": lambda device=None: (8, 0),
        "is_bf16_supported": lambda *a, **k: True,
        "synchronize": lambda device=None: None,
        "empty_cache": lambda: None,
        "memory_allocated": lambda device=None: 0,
        "max_memory_allocated": lambda device=None: 0,
        "memory_reserved": lambda device=None: 0,
        "max_memory_reserved": lambda device=None: 0,
        "reset_peak_memory_stats": lambda device=None: None,
        "mem_get_info": lambda device=None: (ram, ram),
        "get_device_properties": lambda device=None: properties,
        "ipc_collect": lambda: None,
        "get_rng_state": lambda device="cuda": torch.get_rng_state(),
        "set_rng_state": lambda state, device="cuda": None,
        "current_stream": lambda device=None: _Stream(),
        "default_stream": lambda device=None: _Stream(),
        "stream": lambda stream=None: contextlib.nullcontext(),
    }

    def make_query(owner, name, answer):
        def make(original):
            def query(*args, **kwargs):
                if _from_torch():
                    return original(*args, **kwargs)
                _count(f"{owner.__name__}.{name}")
                return answer(*args, **kwargs)
            return query
        return make

    for name, answer in answers.items():
        if hasattr(cuda, name):
            wrap(cuda, name, make_query(cuda, name, answer))
    wrap(cuda.nccl, "version", make_query(cuda.nccl, "version", lambda: (0, 0, 0)))
    cuda.set_device = set_device
    _install_accelerator(answers, make_query)
    cuda.Event = _counted(_Event, "torch.cuda.Event")
    cuda.Stream = _counted(_Stream, "torch.cuda.Stream")
    cuda.device = _counted(_DeviceContext, "torch.cuda.device")


def _install_accelerator(cuda_answers: dict, make_query) -> None:
    """``torch.accelerator`` (torch 2.6 and later), which current examples ask instead of
    ``torch.cuda``: the same answers as a node with one GPU per local rank gives."""
    import torch

    accelerator = getattr(torch, "accelerator", None)
    if accelerator is None:
        return
    answers = {
        "is_available": cuda_answers["is_available"],
        "device_count": cuda_answers["device_count"],
        "current_accelerator": lambda check_available=False: _real_device("cuda"),
        "current_device_index": cuda_answers["current_device"],
        "current_device_idx": cuda_answers["current_device"],
        "synchronize": cuda_answers["synchronize"],
        "current_stream": cuda_answers["current_stream"],
        "set_stream": lambda stream: None,
        "get_device_capability": lambda device=None: {"major": 8, "minor": 0},
    }
    for name in ("empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved", "reset_peak_memory_stats"):
        answers[name] = cuda_answers[name]
    answers["get_memory_info"] = cuda_answers["mem_get_info"]
    answers["memory_stats"] = lambda device=None: {}
    answers["reset_accumulated_memory_stats"] = lambda device=None: None
    for name, answer in answers.items():
        if hasattr(accelerator, name):
            wrap(accelerator, name, make_query(accelerator, name, answer))

    def set_device_index(device) -> None:
        _current[0] = _index(device)
        _count("torch.accelerator.set_device_index")

    for name in ("set_device_index", "set_device_idx"):
        if hasattr(accelerator, name):
            setattr(accelerator, name, set_device_index)
    if hasattr(accelerator, "device_index"):
        accelerator.device_index = _counted(_DeviceContext, "torch.accelerator.device_index")


# --------------------------------------------------------------------------- distributed


def _gloo(backend):
    if isinstance(backend, str) and "nccl" in backend.lower():
        _count("backend nccl->gloo")
        return "gloo"
    return backend


def _install_distributed() -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    def make_init_group(original):
        def init_process_group(backend=None, *args, **kwargs):
            if kwargs.pop("device_id", None) is not None:
                _count("init_process_group device_id")
            return original(_gloo(backend), *args, **kwargs)
        return init_process_group

    def make_new_group(original):
        def new_group(*args, **kwargs):
            if "backend" in kwargs:
                kwargs["backend"] = _gloo(kwargs["backend"])
            return original(*args, **kwargs)
        return new_group

    def make_barrier(original):
        def barrier(*args, **kwargs):
            if kwargs.pop("device_ids", None) is not None:
                _count("barrier device_ids")
            return original(*args, **kwargs)
        return barrier

    def make_ddp_init(original):
        def __init__(self, module, device_ids=None, output_device=None, *args, **kwargs):
            if device_ids is not None:
                _count("DDP device_ids")
            if output_device is not None:
                _count("DDP output_device")
            original(self, module, None, None, *args, **kwargs)
        return __init__

    def make_default_backend(original):
        def get_default_backend_for_device(device):
            backend = original(device)
            return backend if _from_torch() else _gloo(backend)
        return get_default_backend_for_device

    def make_convert(original):
        def convert_sync_batchnorm(module, process_group=None):
            _count("SyncBatchNorm.convert_sync_batchnorm (kept as BatchNorm)")
            return module
        return convert_sync_batchnorm

    if hasattr(dist, "get_default_backend_for_device"):
        wrap(dist, "get_default_backend_for_device", make_default_backend)
    wrap(torch.nn.SyncBatchNorm, "convert_sync_batchnorm", make_convert)
    wrap(dist, "init_process_group", make_init_group)
    wrap(dist, "new_group", make_new_group)
    wrap(dist, "barrier", make_barrier)
    wrap(DistributedDataParallel, "__init__", make_ddp_init)


def install() -> None:
    """Redirect this rank's GPU placement to the CPU (see the module's docstring)."""
    global _skip_dirs, _real_device
    import torch

    _real_device = torch.device
    _skip_dirs = (os.path.dirname(torch.__file__) + os.sep,
                  os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)
    _install_cuda_queries()
    _install_placement()
    _install_distributed()


# --------------------------------------------------------------------------- report


def redirected(ranks: list[dict]) -> str:
    """What a run's mapping redirected, summed over its ranks, each with the first place in
    the script that made it."""
    total: Counter = Counter()
    first: dict[str, str] = {}
    for rank in ranks:
        mapped = rank.get("cpu_mapping") or {}
        total.update(mapped.get("counts", {}))
        for site in mapped.get("sites", []):
            first.setdefault(site["what"], f"{os.path.basename(site['file'])}:{site['line']}")
    if not total:
        return "nothing"
    return ", ".join(f"{what} x{n}" + (f" ({first[what]})" if what in first else "")
                     for what, n in total.most_common())


def hidden_reason(hides: str, symptom_seen: bool) -> str | None:
    """Why a finding cannot be judged on mapped CPU ranks, unless its symptom showed anyway (a
    checkpoint saved on a real GPU still fails to load here). ``hides`` is what the rule's
    scenario folder says the mapping hides (its ``CPU_MAPPING_HIDES``), "" when nothing."""
    if hides and not symptom_seen:
        return f"the CPU mapping cannot show this: {hides}"
    return None
