"""Probes for ``ddplint verify --script``: what a user's training script did, rank by rank.

Started in every rank by the ``sitecustomize`` that the harness puts first on ``PYTHONPATH``
(``shim/sitecustomize.py``), before the script runs, so the user's code is never edited. It
wraps a few torch and stdlib functions and records, for this rank, into
``$DDPLINT_OBSERVE/rank<RANK>.json``:

- ``loaders``: per DataLoader (in creation order), its dataset size, ``num_workers`` and, per
  pass over it (an epoch), the sample indices of the batches it yielded;
- ``loads``: per ``torch.load``, the devices of the tensors it returned, or its error, and
  whether it was given a ``map_location``;
- ``saves``: the files ``torch.save`` wrote;
- ``collectives``: the ``torch.distributed`` collectives called, in order, and the one the
  rank is inside, if any;
- ``local_rank``: ``args.local_rank`` as argparse parsed it, each value the script read from
  it later (where it is used, with the line), ``LOCAL_RANK``, and whether the parser would
  accept the ``--local-rank=N`` that ``torch.distributed.launch`` passes;
- ``parse_errors``: the messages of argparse errors (which exit the script);
- ``splits``: the first indices of each ``random_split``'s first part;
- ``ddp``: the DistributedDataParallel models built (``models``), the forwards through them
  (``forwards``), per optimizer step the DDP forwards since the previous step that prepared a
  gradient all-reduce (``syncing_per_step``), and the calls of a wrapped module made outside
  DDP's forward in training mode with gradients on, whose backward DDP never all-reduces
  (``bypasses``, with the first place in the project that made one, ``bypass_at``);
- ``exceptions``: the exception that ended the script, if any, and ``raised_at``: its
  traceback's frames in the project's files (path relative to the project, line, function);
- ``modules``: the project's files this rank has imported (the script included);
- ``reached``: how many times the rank ran each line ``verify`` asked about (the findings'
  lines, see :mod:`.reach`), as ``{"path:line": count}``;
- where the project's code was (``"path:line"``, innermost first): where each DataLoader was
  made (``created_at``) and each pass over it began (``pass_sites``), where the ``local_rank``
  option was defined (``defined_at``), and where the rank was when it stopped or hung
  (``stopped_in``);
- ``finished``: True or False once the rank reached its end (atexit); None in the facts of a
  rank that was killed or aborted, which are then those of its last save (the facts are saved
  every second or so as the rank works);
- ``cpu_mapping``: with ``DDPLINT_CPU_MAP`` set, what :mod:`.cpu_mapping` redirected from the
  GPU to the CPU;
- ``stopped``: ``max-steps`` or ``max-seconds`` when a limit cut the run short, ``hang`` when
  the deadline passed; ``stack``: where the main thread was then.

Limits (environment): ``DDPLINT_MAX_STEPS`` ends every pass over a DataLoader after that many
batches; at ``DDPLINT_STOP_AT`` (a time.time() value, the same for every rank) each rank saves
its facts and exits 0, and an exception raised after that moment (a collective whose peer has
just stopped) counts as the stop, not as the script's; at ``DDPLINT_DEADLINE`` the facts are
saved with the main thread's stack, just before the harness kills a hung job.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import json
import os
import signal
import sys
import threading
import time
import traceback

from ..core import processes
from ..core.torch_api import COLLECTIVE_NAMES
from . import reach

OBSERVE_VAR = "DDPLINT_OBSERVE"
OWNER_VAR = "DDPLINT_OBSERVE_OWNER"
MAX_STEPS_VAR = "DDPLINT_MAX_STEPS"
STOP_AT_VAR = "DDPLINT_STOP_AT"
DEADLINE_VAR = "DDPLINT_DEADLINE"
CPU_MAP_VAR = "DDPLINT_CPU_MAP"  # set: GPU placement is mapped to the CPU (see cpu_mapping)
PROJECT_VAR = "DDPLINT_PROJECT"

MAX_BATCHES_KEPT = 10_000  # per pass: enough to compare epochs and ranks, bounded memory
MAX_READS_KEPT = 20  # of args.local_rank: where it is used, not every step's use
MAX_STEPS_KEPT = 1_000  # optimizer steps whose DDP forwards are counted
MAX_FRAMES_KEPT = 12  # of the project's code, where a loader is made or a pass begins
SAVE_EVERY = 1.0  # seconds: facts saved this often while the rank works, so that a rank that
# is killed or aborts (no atexit) still leaves what it did up to then

_facts: dict = {}
_loaders: list[dict] = []  # per DataLoader: passes with every index drawn, and batches yielded
_sharded: set[int] = set()  # ids of the datasets a DistributedSampler was built over
_lock = threading.Lock()
_max_steps = 0
_stop_at = float("inf")


def _describe(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0] if msg else ''}".strip()


_relpaths: dict[str, str | None] = {}


def _in_project(filename: str | None) -> str | None:
    """``filename`` relative to the project (posix), or None if it is not one of its files."""
    root = os.environ.get(PROJECT_VAR)
    if not filename or not root or filename.startswith("<"):  # "<frozen importlib._bootstrap>"
        return None
    if filename not in _relpaths:
        path = os.path.abspath(filename)
        inside = os.path.commonpath([root, path]) == root
        _relpaths[filename] = os.path.relpath(path, root).replace(os.sep, "/") if inside else None
    return _relpaths[filename]


def project_frames(frame=None, limit: int = MAX_FRAMES_KEPT) -> list[str]:
    """Where the project's code is in a stack, innermost first ("path:line"): the frames of
    the caller of the probe (or of ``frame``) that are in the project's files."""
    frame = frame or sys._getframe(2)
    found = []
    while frame is not None and len(found) < limit:
        rel = _in_project(frame.f_code.co_filename)
        if rel:
            found.append(f"{rel}:{frame.f_lineno}")
        frame = frame.f_back
    return found


def imported_modules() -> list[str]:
    """The project's files imported so far (a module whose import failed is not among them),
    and the script, whose ``__file__`` Python deletes once it has run."""
    files = [getattr(m, "__file__", None) for m in list(sys.modules.values())]
    # A namespace object such as torch.ops has a made-up relative ``__file__``.
    found = {_in_project(f) for f in files if isinstance(f, str) and os.path.isabs(f)}
    return sorted(f for f in found | {_facts.get("script")} if f)


def save(**extra) -> None:
    """Write this rank's facts (atomically: the harness may read them at any moment)."""
    if os.environ.get(OWNER_VAR) != str(os.getpid()):
        return  # a DataLoader worker or other child: only the rank itself reports
    with _lock:
        _last_save[0] = time.monotonic()
        _facts.update(extra, loaders=loader_facts(), modules=imported_modules(),
                      reached=reach.counts())
        if os.environ.get(CPU_MAP_VAR):
            from . import cpu_mapping

            _facts["cpu_mapping"] = cpu_mapping.facts()
        path = os.path.join(os.environ[OBSERVE_VAR], f"rank{_facts['rank']}.json")
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(_facts, fh, default=str)
            os.replace(tmp, path)
        except OSError:
            pass


_last_save = [0.0]


def save_now_and_then() -> None:
    """Save, at most every SAVE_EVERY seconds (called by the probes as the rank works)."""
    if time.monotonic() - _last_save[0] >= SAVE_EVERY:
        save()


def wrap(owner, name: str, make):
    original = getattr(owner, name)
    wrapped = make(original)
    functools.update_wrapper(wrapped, original)
    setattr(owner, name, wrapped)


# --------------------------------------------------------------------------- data loading


def _loader_record(loader) -> dict:
    from torch.utils.data import DistributedSampler

    record = getattr(loader, "_ddplint_record", None)
    if record is None:
        try:
            size = len(loader.dataset)
        except Exception:  # an IterableDataset has no length
            size = None
        sampler = getattr(loader.batch_sampler, "sampler", loader.sampler)
        record = {"dataset": size, "num_workers": loader.num_workers, "passes": [],
                  "created_at": getattr(loader, "_ddplint_created_at", []),
                  "sampler_at": getattr(sampler, "_ddplint_created_at", []),
                  "sampler": type(sampler).__name__,
                  "distributed": isinstance(sampler, DistributedSampler),
                  "shuffle": bool(getattr(sampler, "shuffle", False)),
                  "sharded_dataset": id(loader.dataset) in _sharded}
        _loaders.append(record)
        object.__setattr__(loader, "_ddplint_record", record)
    return record


def _flatten(index) -> list:
    if isinstance(index, (list, tuple)):
        return [i for part in index for i in _flatten(part)]
    try:
        return [int(index)]
    except (TypeError, ValueError):
        return []


def _install_loader_probes() -> None:
    from torch.utils.data import DataLoader, DistributedSampler
    from torch.utils.data.dataloader import _BaseDataLoaderIter

    def new_pass(it, loader) -> None:
        # Set before the iterator draws any index: a worker iterator prefetches in __init__.
        it._ddplint_pass = {"drawn": [], "batches": 0, "at": project_frames(sys._getframe(1))}
        _loader_record(loader)["passes"].append(it._ddplint_pass)
        save()  # a pass is an epoch: few, and what a rank aborting later must not lose

    def make_init(original):
        def __init__(self, loader, *args, **kwargs):
            new_pass(self, loader)
            original(self, loader, *args, **kwargs)
        return __init__

    def make_reset(original):
        def _reset(self, loader=None, first_iter=False):
            if not first_iter and loader is not None:  # persistent workers: the same iterator, a new epoch
                new_pass(self, loader)
            original(self, loader, first_iter)
        return _reset

    def make_next_index(original):
        def _next_index(self):
            index = original(self)
            this_pass = getattr(self, "_ddplint_pass", None)
            if this_pass is not None and len(this_pass["drawn"]) < MAX_BATCHES_KEPT:
                this_pass["drawn"].append(_flatten(index))
            return index
        return _next_index

    def make_next(original):
        def __next__(self):
            this_pass = getattr(self, "_ddplint_pass", None)
            if this_pass is not None and _max_steps and this_pass["batches"] >= _max_steps:
                _facts["stopped"] = "max-steps"
                raise StopIteration
            try:
                batch = original(self)
            except StopIteration:
                save()  # the pass is complete
                raise
            if this_pass is not None:
                this_pass["batches"] += 1
            save_now_and_then()
            return batch
        return __next__

    def make_loader_init(original):
        def __init__(self, *args, **kwargs):
            original(self, *args, **kwargs)
            object.__setattr__(self, "_ddplint_created_at", project_frames())
        return __init__

    def make_sampler_init(original):
        def __init__(self, dataset, *args, **kwargs):
            _sharded.add(id(dataset))
            original(self, dataset, *args, **kwargs)
            self._ddplint_created_at = project_frames()
        return __init__

    wrap(DistributedSampler, "__init__", make_sampler_init)
    wrap(DataLoader, "__init__", make_loader_init)
    wrap(_BaseDataLoaderIter, "__init__", make_init)
    wrap(_BaseDataLoaderIter, "_reset", make_reset)
    wrap(_BaseDataLoaderIter, "_next_index", make_next_index)
    wrap(_BaseDataLoaderIter, "__next__", make_next)


def loader_facts() -> list[dict]:
    """The loaders, each pass reduced to the indices of the batches it yielded (a worker
    iterator draws indices ahead of what it yields; batches come back in order)."""
    out = []
    for record in list(_loaders):
        passes = list(record["passes"])
        indices = [[i for batch in p["drawn"][: p["batches"]] for i in batch] for p in passes]
        out.append({**{k: v for k, v in record.items() if k != "passes"}, "passes": indices,
                    "pass_sites": [p["at"] for p in passes]})
    return out


# --------------------------------------------------------------------------- checkpoints


def _devices(obj, found: set, budget: list) -> None:
    if budget[0] <= 0:
        return
    budget[0] -= 1
    device = getattr(obj, "device", None)
    if device is not None and hasattr(obj, "storage"):
        found.add(str(device))
    elif isinstance(obj, dict):
        for value in obj.values():
            _devices(value, found, budget)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            _devices(value, found, budget)


def _install_checkpoint_probes() -> None:
    import torch

    def make_load(original):
        def load(f, *args, **kwargs):
            entry = {"path": os.path.abspath(f) if isinstance(f, (str, os.PathLike)) else repr(f),
                     "mapped": kwargs.get("map_location", args[0] if args else None) is not None}
            _facts["loads"].append(entry)
            try:
                result = original(f, *args, **kwargs)
            except Exception as exc:
                entry["error"] = _describe(exc)
                raise
            found: set = set()
            _devices(result, found, [10_000])
            entry["devices"] = sorted(found)
            return result
        return load

    def make_save(original):
        def save_(obj, f, *args, **kwargs):
            if isinstance(f, (str, os.PathLike)):
                _facts["saves"].append(os.path.abspath(f))
            return original(obj, f, *args, **kwargs)
        return save_

    wrap(torch, "load", make_load)
    wrap(torch, "save", make_save)


# --------------------------------------------------------------------------- collectives, splits


def _install_collective_probes() -> None:
    import torch.distributed as dist

    def make(name):
        def make_collective(original):
            def collective(*args, **kwargs):
                _facts["collectives"].append(name)
                _facts["inside"] = name
                save_now_and_then()
                try:
                    return original(*args, **kwargs)
                finally:
                    _facts["inside"] = None
            return collective
        return make_collective

    for name in COLLECTIVE_NAMES:
        if hasattr(dist, name):
            wrap(dist, name, make(name))


def _install_ddp_probes() -> None:
    import torch
    from torch.nn.parallel import DistributedDataParallel

    ddp = _facts["ddp"]
    inside = [0]  # DDP forwards running now
    syncing = [0]  # since the last optimizer step

    def bypass(module, args):
        if not inside[0] and module.training and torch.is_grad_enabled():
            ddp["bypasses"] += 1
            if ddp["bypass_at"] is None:
                ddp["bypass_at"] = next(iter(project_frames(limit=1)), None)

    def make_init(original):
        def __init__(self, module, *args, **kwargs):
            original(self, module, *args, **kwargs)
            ddp["models"] += 1
            module.register_forward_pre_hook(bypass)
            save()
        return __init__

    def make_forward(original):
        def forward(self, *args, **kwargs):
            ddp["forwards"] += 1
            # What DDP's forward reads to prepare the reducer for an all-reduce in backward.
            syncing[0] += bool(torch.is_grad_enabled() and self.require_backward_grad_sync)
            inside[0] += 1
            try:
                return original(self, *args, **kwargs)
            finally:
                inside[0] -= 1
        return forward

    def step(optimizer, args, kwargs):
        if ddp["models"] and len(ddp["syncing_per_step"]) < MAX_STEPS_KEPT:
            ddp["syncing_per_step"].append(syncing[0])
        syncing[0] = 0
        save_now_and_then()

    wrap(DistributedDataParallel, "__init__", make_init)
    wrap(DistributedDataParallel, "forward", make_forward)
    try:
        from torch.optim.optimizer import register_optimizer_step_pre_hook
    except ImportError:  # torch before 2.0: steps are not counted
        return
    register_optimizer_step_pre_hook(step)


def _install_split_probe() -> None:
    import torch.utils.data
    import torch.utils.data.dataset as dataset_module

    def make_split(original):
        def random_split(*args, **kwargs):
            parts = original(*args, **kwargs)
            first = parts[0] if parts else None
            _facts["splits"].append(list(getattr(first, "indices", []))[:32])
            return parts
        return random_split

    wrap(dataset_module, "random_split", make_split)
    torch.utils.data.random_split = dataset_module.random_split


class _WatchedNamespace(argparse.Namespace):
    """The parsed arguments, recording each read of ``local_rank``: its value where the script
    uses it (a script may overwrite it from ``LOCAL_RANK`` right after parsing)."""

    def __getattribute__(self, name):
        value = super().__getattribute__(name)
        if name == "local_rank":
            reads = _facts.get("local_rank", {}).get("reads")
            caller = sys._getframe(1)
            # argparse re-parsing into the same namespace, or these probes, are not a use.
            if reads is not None and len(reads) < MAX_READS_KEPT and \
                    caller.f_code.co_filename not in (argparse.__file__, __file__):
                where = _in_project(caller.f_code.co_filename) or caller.f_code.co_filename
                reads.append([value, f"{where}:{caller.f_lineno}", _only_compared(caller)])
        return value

    def __reduce_ex__(self, protocol):
        return argparse.Namespace, (), dict(vars(self))  # pickled as what it replaced


_compared: dict[str, tuple[set, set]] = {}


def _local_rank_reads(path: str) -> tuple[set, set]:
    """The places (line, column) of the file's ``<x>.local_rank`` reads that are an operand of
    a comparison (``args.local_rank != -1``), and the lines of its other reads."""
    if path not in _compared:
        import ast

        compared, used = set(), set()
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError, ValueError):
            tree = None
        operands = {id(o) for node in (ast.walk(tree) if tree else ()) if isinstance(node, ast.Compare)
                    for o in (node.left, *node.comparators)}
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.Attribute) and node.attr == "local_rank":
                if id(node) in operands:
                    compared.add((node.lineno, node.col_offset))
                else:
                    used.add(node.lineno)
        _compared[path] = (compared, used)
    return _compared[path]


def _only_compared(frame) -> bool:
    """Whether the read of ``local_rank`` this frame is making only compares it (a fallback
    check such as ``args.local_rank if args.local_rank != -1 else LOCAL_RANK``), not a use."""
    compared, used = _local_rank_reads(frame.f_code.co_filename)
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is None:  # Python 3.10: no columns; a line with only compared reads
        return frame.f_lineno not in used and any(line == frame.f_lineno for line, _ in compared)
    line, _, column, _ = list(positions())[frame.f_lasti // 2]
    return (line, column) in compared


_trying = threading.local()


def _rejects_launch_option(parser, parse, args) -> str | None:
    """The argparse error the parser would give for the ``--local-rank=N`` that
    ``torch.distributed.launch`` (PyTorch 2.0 and later) appends, or None if it accepts it."""
    argv = list(sys.argv[1:] if args is None else args)
    option = f"--local-rank={os.environ.get('LOCAL_RANK', '0')}"
    _trying.active, _trying.error, stderr = True, "the parser exits", sys.stderr
    sys.stderr = open(os.devnull, "w")
    try:
        _, rest = parse(parser, argv + [option], None)
        return f"unrecognized arguments: {option}" if option in rest else None
    except SystemExit:
        return _trying.error
    except Exception:
        return None  # the trial itself failed: nothing learnt
    finally:
        sys.stderr.close()
        sys.stderr, _trying.active = stderr, False


def _install_argparse_probe() -> None:
    def make_parse(original):
        def parse_known_args(self, args=None, namespace=None):
            parsed, rest = original(self, args, namespace)
            if hasattr(parsed, "local_rank") and not getattr(_trying, "active", False):
                option = next((a for a in self._actions if a.dest == "local_rank"), None)
                _facts["local_rank"] = {
                    "parsed": getattr(parsed, "local_rank"), "env": os.environ.get("LOCAL_RANK"),
                    "reads": [], "launch_option": _rejects_launch_option(self, original, args),
                    "defined_at": getattr(option, "_ddplint_at", None)}
                if type(parsed) is argparse.Namespace:
                    parsed.__class__ = _WatchedNamespace
            return parsed, rest
        return parse_known_args

    def make_error(original):
        def error(self, message):
            if getattr(_trying, "active", False):
                _trying.error = message
            else:
                _facts["parse_errors"].append(message)
                save()
            return original(self, message)
        return error

    def make_add(original):
        def add_argument(self, *args, **kwargs):
            action = original(self, *args, **kwargs)
            if getattr(action, "dest", None) == "local_rank":
                action._ddplint_at = next(iter(project_frames(limit=1)), None)
            return action
        return add_argument

    wrap(argparse._ActionsContainer, "add_argument", make_add)
    wrap(argparse.ArgumentParser, "parse_known_args", make_parse)
    wrap(argparse.ArgumentParser, "error", make_error)


# --------------------------------------------------------------------------- ending


def _main_frame():
    return sys._current_frames().get(threading.main_thread().ident)


def _main_stack() -> list[str]:
    frame = _main_frame()
    return traceback.format_stack(frame)[-8:] if frame is not None else []


def _stop() -> None:
    frame = _main_frame()
    save(stopped="max-seconds", stopped_in=project_frames(frame) if frame is not None else [])
    os._exit(0)


def _watchdog(deadline: float) -> None:
    if _stop_at <= deadline:
        time.sleep(max(0.0, _stop_at - time.time()))
        _stop()
    time.sleep(max(0.0, deadline - time.time()))
    frame = _main_frame()
    save(stopped="hang", stack=_main_stack(),
         stopped_in=project_frames(frame) if frame is not None else [])


def _excepthook(original):
    def hook(kind, value, tb):
        if time.time() >= _stop_at:
            _stop()
        _facts["exceptions"].append(_describe(value))
        frames = [[_in_project(f.filename), f.lineno, f.name] for f in traceback.extract_tb(tb)]
        save(raised_at=[f for f in frames if f[0]])
        original(kind, value, tb)
    return hook


def _at_exit() -> None:
    try:
        import torch.multiprocessing as mp
        _facts["sharing_strategy"] = mp.get_sharing_strategy()
    except Exception:
        pass
    save(finished=not _facts["exceptions"])


def _die_with_launcher() -> None:
    # torchrun stops its ranks when it is asked to stop, but not when it is killed outright or
    # is stopped between starting one rank and the next; a rank (in a session of its own) would
    # then wait for its peers forever, outliving ddplint.
    processes.die_with_parent(signal.SIGKILL)
    # A rank started by torchrun whose parent no longer carries the job's marker was handed to
    # init or a subreaper: torchrun died before the request above was made.
    started_by_torchrun = "TORCHELASTIC_RUN_ID" in os.environ
    if started_by_torchrun and not processes.parent_carries(OBSERVE_VAR, os.environ[OBSERVE_VAR]):
        os.kill(os.getpid(), signal.SIGKILL)


def install() -> None:
    """Start the probes in this process if it is a rank of an observed job (not a child)."""
    global _max_steps, _stop_at
    if not os.environ.get(OBSERVE_VAR) or "RANK" not in os.environ or os.environ.get(OWNER_VAR):
        return
    os.environ[OWNER_VAR] = str(os.getpid())  # children inherit it and stay quiet
    _die_with_launcher()
    _max_steps = int(os.environ.get(MAX_STEPS_VAR) or 0)
    _stop_at = float(os.environ.get(STOP_AT_VAR) or "inf")
    _facts.update(rank=int(os.environ["RANK"]), local_rank_env=os.environ.get("LOCAL_RANK"),
                  script=_in_project(sys.argv[0]) if sys.argv and sys.argv[0] else None,
                  world_size=int(os.environ.get("WORLD_SIZE", "1")),
                  local_world_size=int(os.environ.get("LOCAL_WORLD_SIZE", "1")),
                  pid=os.getpid(), cpus=os.cpu_count(), loads=[], saves=[],
                  collectives=[], inside=None, splits=[], exceptions=[], stopped=None,
                  parse_errors=[], raised_at=[], finished=None, stopped_in=[],
                  ddp={"models": 0, "forwards": 0, "syncing_per_step": [], "bypasses": 0,
                       "bypass_at": None})
    _install_argparse_probe()
    _install_loader_probes()
    _install_checkpoint_probes()
    _install_collective_probes()
    _install_split_probe()
    _install_ddp_probes()
    if os.environ.get(CPU_MAP_VAR):
        from . import cpu_mapping

        cpu_mapping.install()
    reach.install(os.environ.get(reach.WATCH_VAR), os.environ[PROJECT_VAR])
    sys.excepthook = _excepthook(sys.excepthook)
    atexit.register(_at_exit)
    deadline = float(os.environ.get(DEADLINE_VAR) or "inf")
    if min(_stop_at, deadline) != float("inf"):
        threading.Thread(target=_watchdog, args=(deadline,), daemon=True).start()
    save()
