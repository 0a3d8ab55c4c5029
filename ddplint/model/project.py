"""The project index: what each module of the training program exports, for rules that need
the other half of a pitfall that lives in another module.

Real training code is spread over modules (the model in `models/`, the loaders in `data/`,
helpers in `utils.py`, the loop in `train.py`). One cheap pass over every Python file under
the project root records, per module, the facts other modules' rules ask about:

- `dist`: the module names a DDP entry point (the text test of
  `ddplint.core.torch_api.DISTRIBUTED_MARKERS`); one such module makes the project distributed;
- `imports`: top-level imports, local name -> origin (relative origins keep their dots and are
  resolved against the module's own name), and the modules it star-imports;
- `functions`: top-level functions whose text places tensors or modules on CUDA (`cuda`: the
  call is in their own text; with the line), and those that call a name another module may
  make such a function (`calls`), which `ProjectView.may_use_cuda` follows across modules: the
  prefilter's cheap superset of what the program model (ddplint.model.placement) answers;
- `classes`: top-level classes with their bases (as origins), to know DataLoader and Sampler
  subclasses;
- flags that say where the program model (ddplint.model) starts reading, which answers what
  builders, loader classes and generators do: `samplers` (builds a DistributedSampler, or has
  timm's `create_loader(..., distributed=...)` build one),
  `forwarders` (a class may hand its `**kwargs` to a DataLoader), `endless` (a generator may
  re-iterate its argument forever), `saves` (a function may call torch.save), `calls_saver` (it
  names a save but does not call torch.save: it may call a helper that does), `ddp`, `loads`; and `main`, `starts`, `launched` (for
  `ProjectView.single_process`).

It is cheap because it parses nothing: CPython's `ast` of every file would cost a twentieth
of the libcst parse floor, more than the whole lint budget leaves. The text of a module is cut
at its top-level statements (lines that start in column 0); imports are read from the import
statements' text, functions and classes from theirs, and only in modules whose text can hold a
fact (`cuda`, `DataLoader`/`Sampler`, `DistributedSampler(`, `yield` with `while True`,
`while 1` or `count(`, `DistributedDataParallel`). The facts are therefore approximations on
text (a call in a string counts; an import inside an `if` at the top level does not), which
errs toward fewer cross-module findings. Results are cached per file by size, mtime and
content hash, next to the results cache.

Rules never read files: they ask `self.model.project` (a `ProjectView`, or None when the
project index is off), which answers about names as the semantic model qualifies them. The
index knows no rule: what it tells a module's prefilters are facts of the program
(ddplint.prefilter.project_facts.ProjectFact), and each rule says which of them open it.
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import os
import posixpath
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from copy import deepcopy as copy_tree
from dataclasses import dataclass, field

from ddplint.core.fixpoint import fixed_point, reachable
from ddplint.core.lines import split_lines
from ddplint.model import configs, inner, loaders, placement, prepared, store
from ddplint.model.ranked import ranked_attributes
from ddplint.model.parsers import (
    NOT_SHOWN, DeclaredOptions, attribute_path, conditional_tests, declared_options, expression_value, test_value,
)
from ddplint.model.program import Program
from ddplint.model.reach import Reach, bases_hold, names_said
from ddplint.model.settings import Settings, yacs_value as _yacs_value
from ddplint.model.records import UNKNOWN_FOLDER, Guard, Inner, LaunchCommand, Place, Prepared, Wrapped
from ddplint.model.shell import HERE, Shell
from ddplint.prefilter.needles import TextScan, call_needle
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.screens import dotted, walk
from ddplint.core.torch_api import (
    ACCELERATE_CONFIG_KEY, ACCELERATE_DDP_FLAGS, ACCELERATE_DDP_TYPES, ACCELERATE_SHARDED_FLAGS, ACCELERATE_SHARDED_TYPES,
    ACCELERATOR, COLLECTIVES, DATALOADER, DISTRIBUTED_EVIDENCE, DISTRIBUTED_MARKERS, DISTRIBUTED_SAMPLER,
    DTENSOR_FULL_TENSOR, FRAMEWORK_MAKER_TEXT, FRAMEWORK_METHODS, LAUNCH_POINT_TEXT, LAUNCHERS, LIBRARY_LOADERS, MANUAL_SEED,
    DATASET, LIGHTNING_DDP_TEXT, LIGHTNING_MODULE, MPI_COLLECTIVES, NN_MODULE, OLD_LAUNCHER_MODULE, SAMPLER, SAVE_EVIDENCE,
    SPAWN, START_PROCESSES, TENSOR_CROSSINGS, TORCH_LOAD, TORCH_PACKAGES, TORCH_SAVE, distributed_flag, lightning_hook,
)

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
_MAX_TEXT_SCAN = 3000  # modules read for a name before an answer that needs all users is given up
# Folders never indexed (the CLI's default exclusions, and hidden folders).
_SKIP_DIRS = frozenset(
    ("__pycache__", "__pypackages__", "_build", "buck-out", "build", "node_modules", "venv", "site-packages")
)
MAX_INDEX_BYTES = 2_000_000  # as the engine's parse limit: larger files export nothing
# Shell scripts and documents searched for launch commands (Project.launch_commands), at most so many.
# a command and the lines its backslashes continue it onto: VoiceCraft passes 50 options, one a line
_MOST_CONTINUED_LINES = 80
_MAX_RUN_DEPTH = 3  # callers followed up from a function for the runs that reach a line of it
_MAX_COMBINATIONS = 64  # ways a test's loaded config settings are read together, at most
_WORD = re.compile(r"[\w.-]*[\w-]")  # a word of a document or a command, no trailing dot
_LAUNCH_DOCUMENTS = (".sh", ".bash", ".slurm", ".sbatch", ".md", ".rst", ".yaml", ".yml", ".ipynb")
MAX_LAUNCH_DOCUMENTS = 500
# The Python a project names for its runs: `conda create -n x python=3.9`, `- python=3.8.10`,
# `FROM python:3.10`, `python3.9 -m venv`, "tested with Python 3.10"; not a lower bound
# (`Python 3.8+`, `python>=3.8`, "3.8 or later").
_PYTHON_VERSION = re.compile(
    r"(?<![\w.-])python(?:\s*==?\s*|:|\s+|-)?3\.(\d+)(?![\d+])(?!\.?[x*])(?!\s*(?:\+|or (?:later|newer|above|higher)))", re.I,
)
# Packaging metadata's upper bound: `python_requires=">=3.7, <3.10"`, `requires-python = "<=3.11"`.
_PYTHON_BOUND = re.compile(r"(?:python_requires|requires-python)\s*=\s*[\"']([^\"']+)[\"']")
_UPPER_BOUND = re.compile(r"(<=?|==)\s*3\.(\d+)")
# A pinned torch (`torch==1.7.1+cu110`, conda's `pytorch=1.12`): releases before 2.9 ship no wheel
# for Python 3.14 (PyTorch's release compatibility matrix), so such a run is on 3.13 at most.
_TORCH_PIN = re.compile(r"(?<![\w.-])(?:py)?torch\s*==?\s*(\d+)\.(\d+)(?![\d])", re.I)
_TORCH_FIRST_ON_PY314 = (2, 9)
_VERSION_FILES = ("Dockerfile", ".python-version", "setup.py", "setup.cfg", "pyproject.toml", "requirements")
_ACCELERATE_TYPE = re.compile(rf"^\s*{ACCELERATE_CONFIG_KEY}:\s*['\"]?(\w+)", re.MULTILINE)


_DEFINITION = re.compile(r"(?:(?:async[ \t]+)?def[ \t]+(\w+)|class[ \t]+(\w+))")
# A top-level import statement, with its parenthesised or backslash-continued lines.
_IMPORT = re.compile(r"(?:from|import)[ \t][^\n(\\]*(?:(?:\\\r?\n|\([^)]*\))[^\n(\\]*)*")  # `\` ends a CRLF line too
# An import of torch or a library built on it, at any depth (`import torch` inside a function too).
_TORCH_IMPORT = re.compile(r"(?:^|\n)[ \t]*(?:from|import)[ \t]+(?:%s)\b" % "|".join(sorted(TORCH_PACKAGES)))
_STATEMENT_START = re.compile(r"\n(?=[A-Za-z_@])")
_TORCH_SAVE_CALL = call_needle(TORCH_SAVE)  # the text of a call of torch.save through any import (DDP014's needle)
_TORCH_LOAD_CALL = call_needle(TORCH_LOAD)  # the text of a call of torch.load through any import
_SAVE_CALL = re.compile(r"save\w*\s*\(")  # `torch.save(`, `save_checkpoint(`, `save_on_master(`
# A call that seeds a generator (`torch.manual_seed(`, `np.random.seed(`, `set_seed(`, `seed_everything(`).
_SEED_CALL = re.compile(r"(?:manual_seed|\.seed|\bset_seed|\bseed_everything)\s*\(")
_COMMON_METHODS = frozenset(("state_dict", "save_model"))  # every checkpointing module calls one
# Text of a call of a collective that every rank must reach, by the names no other library's
# common calls share (`all_reduce(`, `barrier(`, an Accelerator's `save_state(`; not `gather(` or
# `state_dict(`): a module with one may hold a helper that runs one (ProjectFact.CALLS_COLLECTIVE_HELPER).
_COLLECTIVE_CALL = tuple(sorted(
    {f"{name.rpartition('.')[2]}(" for name in COLLECTIVES if "_" in name.rpartition(".")[2] or name.endswith(("barrier", "broadcast"))}
    | {f"COMM_WORLD.{name.rpartition('.')[2]}(" for name in MPI_COLLECTIVES}
    | {f"{name}(" for name in FRAMEWORK_METHODS if "_" in name and name not in _COMMON_METHODS} | {f"{DTENSOR_FULL_TENSOR}("}
))


# -- root discovery -----------------------------------------------------------------------


def find_root(path: str, fallback: str | None = None) -> str:
    """The folder at or above `path` with a pyproject.toml, setup.cfg, setup.py or .git; when
    there is none, `fallback` if `path` is inside it, else the folder of `path` itself."""
    start = os.path.abspath(path)
    folder = start if os.path.isdir(start) else os.path.dirname(start)
    here = folder
    while True:
        if _has_marker(here):
            return here
        up = os.path.dirname(here)
        if up == here:
            break
        here = up
    if fallback is not None:
        fallback = os.path.abspath(fallback)
        if _within(folder, fallback):
            return fallback
    return folder


def root_seen_from(path: str, top: str | None) -> str:
    """The project root of `path` for an editor or flake8 run in folder `top` (the working
    folder, a workspace folder). Where `top` lies in a marked project (a marker at or above it),
    the root `ddplint check .` run there uses, `find_root(top)`, unless a nested project (a
    pyproject.toml or .git between `top` and the file) holds the file, as the walk of that root
    leaves it out: a folder with a `setup.py` below the root (a research repository's extension
    build, `models/ops/`) is linted in the root's project by every entry point. Where nothing
    marks `top` (flake8 run from a home folder), the file's own `find_root` with `top` as the
    fallback; outside `top`, the same."""
    if top is None:
        return find_root(path)
    top = os.path.abspath(top)
    start = os.path.abspath(path)
    here = start if os.path.isdir(start) else os.path.dirname(start)
    marked = find_root(top)
    if not _within(here, top) or not _has_marker(marked):
        return find_root(path, fallback=top)
    while here != top:
        if _has_marker(here, _NESTED_PROJECT_MARKERS):
            return here
        here = os.path.dirname(here)
    return marked


def _has_marker(folder: str, markers: tuple[str, ...] = ROOT_MARKERS) -> bool:
    return any(os.path.exists(os.path.join(folder, marker)) for marker in markers)


def common_root(paths: Iterable[str]) -> str | None:
    """The project root of the paths given: the root of their common folder."""
    absolute = [os.path.abspath(p) for p in paths]
    if not absolute:
        return None
    try:
        common = os.path.commonpath(absolute)
    except ValueError:  # different drives
        return None
    return find_root(common)


def paths_by_project(paths: Iterable[str]) -> list[list[str]]:
    """`paths` grouped by the project they lie in, in the order of their first path: the root
    `find_root` gives each, with the working folder as the fallback, and a root inside another
    one's folder joins that group (its files are in that walk already). Two folders given side by
    side that nothing marks as one project (two unpacked repositories outside the working
    folder) are two projects, not one index of the folder above them and all else it holds."""
    paths = list(paths)
    if not paths:
        return [paths]
    working = os.getcwd()
    roots = [find_root(path, fallback=working) for path in paths]
    kept: list[str] = []
    for root in sorted(set(roots), key=len):
        if not any(_within(root, top) for top in kept):
            kept.append(root)
    groups: dict[str, list[str]] = {}
    for path, root in zip(paths, roots):
        top = next(top for top in kept if _within(root, top))
        groups.setdefault(top, []).append(path)
    return list(groups.values())


def _within(folder: str, top: str) -> bool:
    return folder == top or folder.startswith(top.rstrip(os.sep) + os.sep)


# A folder under the root that holds one of these is a project of its own (a vendored
# repository, a git submodule, a corpus of downloaded packages): its modules, scripts and
# configs are not this project's. setup.py/setup.cfg are left out: research repositories
# build their CUDA extensions with one in a subfolder (models/ops/setup.py) that they import.
_NESTED_PROJECT_MARKERS = ("pyproject.toml", ".git")
# Hidden folders that hold a tool's state, not a package's data (project_folders)
_TOOL_FOLDERS = frozenset((
    ".git", ".hg", ".svn", ".github", ".gitlab", ".circleci", ".vscode", ".idea", ".ipynb_checkpoints", ".hydra",
    ".venv", ".tox", ".nox", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ddplint_cache", ".cache",
))


def project_folders(root: str) -> Iterator[tuple[str, list[str]]]:
    """Each folder of the project at `root` with its file names, both sorted: hidden, build
    and environment folders are left out, and so is a nested project (_NESTED_PROJECT_MARKERS).
    A hidden folder inside a package is the package's own data, shipped and installed with it
    (the tools and launch scripts OpenMMLab's packages keep in `mmdet/.mim/`), and is read,
    unless it holds a tool's state (_TOOL_FOLDERS: version control, CI, editors, caches)."""
    for folder, dirs, names in os.walk(root):
        package = "__init__.py" in names
        dirs[:] = sorted(
            d for d in dirs
            if (not d.startswith(".") or package and d not in _TOOL_FOLDERS)
            and d not in _SKIP_DIRS and not d.endswith(".egg-info")
            and not any(os.path.exists(os.path.join(folder, d, marker)) for marker in _NESTED_PROJECT_MARKERS)
        )
        yield folder, sorted(names)


def python_files(root: str) -> list[str]:
    return [os.path.join(folder, name) for folder, names in project_folders(root) for name in names if name.endswith(".py")]


def module_name(relative: str, packages: set[str] | None = None) -> str:
    """The name a module is imported by: `pkg/sub/mod.py` -> `pkg.sub.mod` and
    `pkg/__init__.py` -> `pkg` where those folders are packages (`packages`: the relative
    folders with an `__init__.py`; all of them when None); a folder that is not a package is
    where imports start, as for a script run from it (`scripts/train.py` -> `train`)."""
    parts = relative[:-3].replace(os.sep, "/").split("/")
    if parts[-1] == "__init__":
        parts.pop()
        folders = len(parts)
    else:
        folders = len(parts) - 1
    if packages is not None:
        start = folders
        while start > 0 and "/".join(parts[:start]) in packages:
            start -= 1
        parts = parts[start:]
    return ".".join(parts)


# -- facts of one module --------------------------------------------------------------------


def module_facts(text: str, scan: TextScan | None = None, relative: str | None = None) -> dict:
    """The facts one module exports (JSON-able), from its text. Its substring tests are the
    rules' needles, searched through `scan`, so that linting the module later need not search
    for them again (ddplint.model.project.Project.known_needles). `relative`, the module's path, lets
    it skip "starts" where ProjectView.single_process never asks for it."""
    scan = scan or TextScan(text)
    dist = scan.has(DISTRIBUTED_MARKERS)
    facts: dict = {"dist": dist, "imports": {}, "stars": []}
    functions: dict[str, dict] = {}
    classes: dict[str, dict] = {}
    facts["functions"], facts["classes"] = functions, classes
    if dist or any(package in text for package in TORCH_PACKAGES) and _TORCH_IMPORT.search(text):
        facts["torch"] = True  # part of a torch program itself (Project.torch_program)
    if len(text) > MAX_INDEX_BYTES:
        return facts
    for statement in _imports(text):
        _read_import(statement, facts)
    # Functions are read only in modules that say "cuda", in a comment too (a helper that only
    # calls another module's helper, or moves to a device by index alone, is followed from one
    # that does).
    cuda_text = "cuda" in text
    class_text = scan.has("DataLoader") or "Sampler" in text
    library_loader = "distributed=" in text and any(f"{name}(" in text for name in LIBRARY_LOADERS.last_names)
    if (scan.has("DistributedSampler") and "DistributedSampler(" in text) or library_loader:
        facts["samplers"] = True  # where the program model starts reading, as for "ddp"
    if class_text and "DataLoader(" in text:
        facts["loaders"] = True  # may return a DataLoader it builds (ProjectView.trained_unprepared)
    if class_text and "**" in text and "DataLoader(" in text:
        facts["forwarders"] = True  # may hold a class whose __init__ hands its **kwargs to a DataLoader
    if "save" in text:
        # "saves": may call torch.save itself; "calls_saver": names a save and may call another
        # module's function that does (Project.may_save follows those through the imports).
        facts["saves" if scan.has(_TORCH_SAVE_CALL) else "calls_saver"] = True
    if "download=True" in text:
        facts["downloads"] = True  # may build a dataset that downloads itself (DDP014's other writer)
    if "seed" in text and _SEED_CALL.search(text):
        facts["seeds"] = True  # may define a helper that seeds a generator with its parameter
    if "yield" in text and any(loop in text for loop in _ENDLESS_LOOPS):
        facts["endless"] = True  # may hold a generator that re-iterates its argument forever: the model reads it
    pending: list[tuple[str, int, str]] = []  # functions that may call a CUDA helper
    if cuda_text or class_text:
        line, counted = 1, 0
        for begin, function, cls in sorted(_definitions(text, cuda_text, class_text)):
            chunk = text[begin : _next_start(text, begin)]
            line, counted = line + text.count("\n", counted, begin), begin
            if function is not None:
                cuda = cuda_text and ("cuda" in chunk or ".to" in chunk) and _CUDA_CALL.search(_COMMENT.sub("", chunk)) is not None
                if cuda:
                    functions[function] = {"line": line, "cuda": cuda, "calls": []}
                if cuda_text and not cuda:
                    pending.append((function, line, chunk))
            else:
                # Every class of a module that names a DataLoader or a Sampler: a subclass
                # of a subclass need not name it again.
                classes[cls] = _class_record(chunk, line)
    # Which of the other functions call an imported name or a CUDA function of this module
    # (then one of another module may make them a CUDA helper), by text: `name(`, `name.x(`.
    candidates = {
        name for name, origin in facts["imports"].items() if origin.partition(".")[0] not in _NEVER_PROJECT
    } | {name for name, record in functions.items() if record["cuda"]}
    called = {function: _called_names(chunk) for function, _, chunk in pending} if pending and candidates else {}
    while pending and candidates:
        found: set[str] = set()
        for function, line, chunk in pending:
            calls = [name for name in called[function] if name.partition(".")[0] in candidates and name != function]
            if calls:
                record = functions.setdefault(function, {"line": line, "cuda": False, "calls": []})
                record["calls"] = sorted(set(record["calls"]) | set(calls))
                found.add(function)
        pending = [item for item in pending if item[0] not in found]
        candidates = found  # a function calling one that now has calls
    if "__main__" in text and _MAIN_GUARD.search(text):  # the substring first: a re.M `^` tries every line
        facts["main"] = True
        if not dist and any(point in text for point in (*LAUNCH_POINT_TEXT, *LIGHTNING_DDP_TEXT)):
            # Lightning, Fabric or Accelerate may run the script as ranks: a Trainer given the
            # DDP strategy runs it again on every device, whatever module its LightningModule is in
            facts["launched"] = True
    # Asked only of test modules and of entry scripts that name nothing distributed: eleven
    # searches of every text cost more than the rest of these facts.
    asked = relative is None or _TEST_PATH.search(relative.replace(os.sep, "/")) or (facts.get("main") and not dist)
    if asked and any(start in text for start in _PROCESS_STARTS):
        facts["starts"] = True  # may start processes: a test module saying so is not single-process
    if scan.has("load_state_dict"):
        facts["loads"] = True
    if "load" in text and scan.has(_TORCH_LOAD_CALL):
        facts["torch_loads"] = True
    if any(call in text for call in _COLLECTIVE_CALL):
        facts["collectives"] = True  # may run a collective, itself or in a helper others call
    if scan.has("DistributedDataParallel") or any(maker in text for maker in FRAMEWORK_MAKER_TEXT):
        # where the program model (ddplint.model.program) starts reading: DDP models, and the
        # objects of frameworks that communicate (an Accelerator, whose prepared models are
        # DDP-wrapped under `accelerate launch`; a DeepSpeed engine; an FSDP model)
        facts["ddp"] = True
    # Same-module helpers: a function calling a CUDA function of this module touches CUDA.
    def and_callers(cuda: set[str]) -> set[str]:
        return cuda | {name for name, record in functions.items() if not cuda.isdisjoint(record["calls"])}

    for name in fixed_point(and_callers, {name for name, record in functions.items() if record["cuda"]}):
        functions[name]["cuda"] = True
    return facts


def _class_record(chunk: str, line: int) -> dict:
    """The index's record of a class whose text is `chunk`: its line, its dotted bases, "pads"
    where its `__iter__` pads its indices as DistributedSampler does, and "iter" where it has
    one: "epoch" where that draws its order from `self.epoch` (or torch's), else "own"."""
    header = _CLASS_HEADER.match(chunk)
    bases = [b.strip() for b in header.group(1).split(",")] if header and header.group(1) else []
    record: dict = {"line": line, "bases": [b for b in bases if _DOTTED.fullmatch(b)]}
    if "__iter__" in chunk and _PADS_INDICES.search(chunk):
        record["pads"] = True  # a sampler that pads its indices as DistributedSampler does
    order = _OWN_ITER.search(chunk) if "__iter__" in chunk else None
    if order is not None:
        record["iter"] = "epoch" if any(word in order.group(0) for word in _EPOCH_ORDER) else "own"
    stored = _STORES_EPOCH.search(chunk) if order is not None and "set_epoch" in chunk else None
    if stored is not None and re.search(_SEEDED_FROM.format(re.escape(stored.group(2))), order.group(0)):  # type: ignore[union-attr]
        record["epoch_seeded"] = True  # its order is DistributedSampler's: drawn from the epoch set_epoch stores
    return record


_COMMENT = re.compile(r"#[^\n]*")
# Text that starts processes (ranks, workers of a test) or launches a script as ranks.
_PROCESS_STARTS = (
    "spawn(", "Process(", "start_processes(", "init_process_group", "torchrun", "distributed.launch",
    "elastic_launch", "ProcessPoolExecutor", "Pool(", "DistributedTestBase", "MultiProcessTestCase",
)
# The same as whole names, or a DDP model (not `DistributedDataParallelKwargs`, `init_process_group_kwargs`).
_OWN_START = re.compile("|".join(re.escape(start) + (r"(?!\w)" if start[-1] != "(" else "") for start in (*_PROCESS_STARTS, "DistributedDataParallel")))
# The launch points whose framework starts the processes itself, under plain `python` too
# (Lightning's Trainer, Fabric's launch); an Accelerator runs as many as `accelerate launch` starts.
_ACCELERATOR_START = "Accelerator("
_SELF_LAUNCHING = tuple(point for point in LAUNCH_POINT_TEXT if point != _ACCELERATOR_START)
# Text of code that starts processes, a process group or a framework's launcher (a Trainer, an
# Accelerator): a script whose imports hold none runs as the one process `python x.py` starts.
_TRAINER_START = "Trainer("
_RUN_STARTS = (*_PROCESS_STARTS, *LAUNCH_POINT_TEXT[:2], _TRAINER_START, "Fabric(", "deepspeed.init", "init_distributed", "model_parallel")
# Text of code that starts more processes than the one `python x.py` starts (a process group
# joined under `python x.py` has one member): spawners, launchers, frameworks that re-run the
# script per device (Lightning's Trainer, Fabric), and shelling out (to a launcher, maybe).
_SPAWN_STARTS = (
    "spawn(", "Process(", "start_processes(", "torchrun", "distributed.launch", "elastic_launch",
    "ProcessPoolExecutor", "Pool(", "launch(", "launcher(", "notebook_launcher(", _TRAINER_START, "Fabric(", "LightningCLI",
    "Popen(", "subprocess.run(", "subprocess.call(", "check_call(", "os.system(", "DistributedTestBase",
    "MultiProcessTestCase",
)
# Either: what a script's own run may start, more processes or a group (a shell-out of Python too).
_ANY_START = tuple(dict.fromkeys((*_RUN_STARTS, *_SPAWN_STARTS)))
# Starts of a pool of worker processes, which run the function handed to them, not the script.
_WORKER_POOLS = ("ProcessPoolExecutor", "Pool(")
_DOCUMENTED_IMPORT = re.compile(r"^[ \t>]*(?:from|import)[ \t]+([\w.]+)", re.MULTILINE)  # `from trainer import Trainer`
# A command that runs a script with the interpreter itself: `python test.py`, `python3 -u tools/eval.py`.
_PLAIN_RUN = re.compile(r"(?<![\w/.-])python(?:\d(?:\.\d+)?)?(?:[ \t]+-[uOBE]+)*[ \t]+[\w.$/{}-]+\.py(?![\w.-])")
# A launcher command that names its script (or module) in the text: one that does not
# (`torchrun --nproc_per_node 8 $SCRIPT`) may run any script of the project.
_NAMES_SCRIPT = re.compile(r"[\w}-]\.py(?![\w-])|(?<![\w-])(?:-m|--module)[ \t]+(?!(?:torch\.distributed\.|deepspeed|accelerate))\w")
# (`-m torch.distributed.launch $PY_FILE` names the launcher, not the script it runs)
# A script name with a placeholder in it (`train_xxx.py`, `scripts/train_*.py`)
_TEMPLATE_SCRIPT = re.compile(r"[\w./*-]*(?:x{3,}|X{3,}|\*)[\w*-]*\.py(?![\w-])")
_NOTEBOOK_SUFFIX = ".ipynb"  # a Jupyter notebook: its code cells, linted as one module
_MAIN_GUARD = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]", re.M)
# Where tests live: a tests/test folder, test_*.py, *_test.py, conftest.py.
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")
_TEST_FOLDER = re.compile(r"(?:^|/)tests?/")  # a test suite's folder, not a `test_*.py` evaluation script
_CONFTEST = "conftest.py"  # pytest's per-folder plugin: test infrastructure wherever it lies
# A call that places a tensor or module on CUDA, on text: `.cuda(`, `.to(0)`, `.to("cuda...")`,
# `.to(torch.device("cuda"))`, `device="cuda..."`, `torch.cuda.FloatTensor(`.
_CUDA_CALL = re.compile(
    r"\.cuda\s*\(|\.to\s*\(\s*(?:\d|['\"]cuda|(?:torch\.)?device\s*\(\s*['\"]cuda|device\s*=\s*(?:['\"]cuda|\d))"
    r"|\bdevice\s*=\s*['\"]cuda|\bcuda\.\w*Tensor\s*\("
)


_CLASS_HEADER = re.compile(r"class\s+\w+\s*\(([^)]*)\)")
_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*")
# A list extended by a slice (or a repetition) of itself: `indices += indices[: total_size - len(indices)]`,
# `indices = indices + indices[:padding]`, `indices += (indices * k)[:padding]`: the padding of a
# DistributedSampler that gives every rank as many samples.
_PADS_INDICES = re.compile(r"\b(\w+)\s*(?:\+=|=\s*\1\s*\+)\s*\(?\s*\1\s*(?:\[|\*)")
# A class's `__iter__`, up to the next `def` (its own nested ones too: then less is read).
_EPOCH_ORDER = ("self.epoch", "super().__iter__(", "super(")  # an `__iter__` drawing from the epoch, or torch's
_OWN_ITER = re.compile(r"def __iter__\(.*?(?=\n[ \t]*(?:async[ \t]+)?def[ \t]|\Z)", re.S)
# A `set_epoch(self, epoch)` that stores its argument on self (`self.epoch = epoch`): group 2
# names the attribute. Its body is read up to the next `def` at most.
_STORES_EPOCH = re.compile(
    r"def set_epoch\(\s*self\s*,\s*(\w+)[^)]*\)[^:]*:(?:(?!\n[ \t]*def[ \t]).)*?\bself\.(\w+)[ \t]*=[ \t]*\1\b", re.S
)
# A generator seeded from that attribute (`g.manual_seed(self.epoch)`, `np.random.seed(self.seed +
# self.epoch)`, `random.Random(self.epoch)`, `np.random.default_rng(self.epoch)`): `{}` is the attribute.
_SEEDED_FROM = r"(?:manual_seed|seed|Random|RandomState|default_rng)\s*\([^)]*\bself\.{}\b"


_CALL = re.compile(r"(?<![\w.])(\w+)(?:\.(\w+))?\s*\(")
# An attribute assigned (`self.x = `, `self.x: bool = `, `self.x += `): ProjectView.base_attributes.
_ASSIGNED_ATTRIBUTE = re.compile(r"\.[ \t]*(\w+)[ \t]*(?::[^=\n]*)?(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)")
# What a body that tests the rank names somewhere (ProjectView.may_test_rank): the words of
# ddplint.analyses.ranks (RANK_NAMES, MAIN_PROCESS_NAMES, RANK_FUNCTIONS, WORLD_SIZE_NAMES, the
# replica words, DISTRIBUTED_FLAGS and _PREDICATES, `dist.is_available`, the launcher's RANK).
_RANK_TEXT = re.compile(r"rank|main|master|zero|primary|chief|ordinal|process_index|processes|world|replica|distributed|ddp|initiali[sz]ed|dist\b|is_available", re.I)
_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)((?:\.\w+)*)\s*\(")
_BUILTIN_BASES = frozenset(("object", "Exception", "BaseException", "dict", "list", "tuple", "set", "str", "int", "float"))


def _called_names(chunk: str) -> set[str]:
    """What a function's text calls by a plain or one-dotted name: `f`, `utils.f`."""
    return {f"{head}.{attribute}" if attribute else head for head, attribute in _CALL.findall(chunk)}


def _next_start(text: str, begin: int) -> int:
    """Where the top-level statement at `begin` ends: the next line that starts in column 0
    with a name or a decorator (not an `else`/`elif`/`except`/`finally` clause of it)."""
    at = begin
    while True:
        found = _STATEMENT_START.search(text, at + 1)
        if found is None:
            return len(text)
        at = found.end()
        if not text.startswith(("else", "elif", "except", "finally"), at):
            return at


def _definitions(text: str, functions: bool, classes: bool):
    """(offset, function name, class name) of top-level defs and/or classes, in no order."""
    keywords = (("def ", "async def ") if functions else ()) + (("class ",) if classes else ())
    for keyword in keywords:
        at = 0 if text.startswith(keyword) else text.find("\n" + keyword)
        while at != -1:
            start = at + 1 if text[at] == "\n" else at
            match = _DEFINITION.match(text, start)
            if match is not None:
                yield start, match.group(1), match.group(2)
            at = text.find("\n" + keyword, start + 1)


_ANY_IMPORT_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)


def _defines(text: str, keyword: str, name: str) -> bool:
    """Whether `text` has a `def` or `class` (`keyword`) of `name` at any depth."""
    return name in text and re.search(rf"\b{keyword}[ \t]+{re.escape(name)}\b", text) is not None


def _imports_anywhere(text: str, name: str) -> tuple[list[str], list[str]]:
    """The origins that `from ... import` statements at any depth of `text` bind `name` to
    (`.peft.PeftAdapterMixin`), and the modules of its star imports (`.peft`)."""
    origins: list[str] = []
    stars: list[str] = []
    if name not in text:
        return origins, stars
    for match in _ANY_IMPORT_FROM.finditer(text):
        module, names = match.group(1), _COMMENT.sub("", match.group(2)).strip("()\\ \t\n")
        for item in names.replace("\\\n", " ").split(","):
            words = item.split()
            if words == ["*"]:
                stars.append(module)
            elif words and (words[-1] == name if len(words) in (1, 3) else False):
                origin = words[0]
                origins.append(module + origin if module.endswith(".") else f"{module}.{origin}")
    return origins, stars


def _read_import(statement: str, facts: dict) -> None:
    """Record one import statement's bindings (the text of a top-level `import`/`from`)."""
    statement = _COMMENT.sub("", statement).replace("\\\r\n", " ").replace("\\\n", " ")  # CRLF lines too
    statement = statement.replace("(", " ").replace(")", " ")
    statement = statement.split(";")[0]
    if statement.startswith("import"):
        for item in statement[len("import") :].split(","):
            words = item.split()
            if len(words) == 3 and words[1] == "as":
                facts["imports"][words[2]] = words[0]
            elif len(words) == 1:
                head = words[0].partition(".")[0]
                facts["imports"][head] = head
        return
    module, found, names = statement[len("from") :].partition(" import ")
    module = module.strip()
    if not found or not module or " " in module:
        return
    for item in names.split(","):
        words = item.split()
        if words == ["*"]:
            facts["stars"].append(module)
            continue
        if len(words) == 3 and words[1] == "as":
            name, bound = words[0], words[2]
        elif len(words) == 1:
            name = bound = words[0]
        else:
            continue
        facts["imports"][bound] = module + name if module.endswith(".") else f"{module}.{name}"


# `while True:`, `while 1:`, `for ... in (itertools.)count(...):`, by text
_ENDLESS_LOOPS = ("while True", "while 1", "in count(", "itertools.count(")


def _imports(text: str) -> list[str]:
    """The text of every top-level import statement, in the order of the text: a later import
    of a name rebinds it (`from torchvision import datasets` then `import datasets`: the
    project's module)."""
    found = []
    for keyword in ("import ", "from "):
        at = 0 if text.startswith(keyword) else text.find("\n" + keyword)
        while at != -1:
            start = at + 1 if text[at] == "\n" else at
            match = _IMPORT.match(text, start)
            if match is not None:
                found.append((start, match.group(0)))
            at = text.find("\n" + keyword, start + 1)
    return [statement for _, statement in sorted(found)]


# -- the project ----------------------------------------------------------------------------


_EXTERNAL = frozenset(("torch",))
# Imports that never lead to a project helper: the standard library, torch, and the usual
# third-party names (a function calling only these is no one's CUDA helper through them).
_NEVER_PROJECT = frozenset(sys.stdlib_module_names) | _EXTERNAL | frozenset(
    ("numpy", "np", "typing_extensions", "packaging", "tqdm", "yaml", "PIL", "cv2", "scipy", "pandas")
)


# The needles a project fact stands for, where it does not stand for all of a rule's: the
# project is distributed, whatever the module names; the module imports a function that saves
# with torch.save (a rule it opens still needs the module's own evidence of ranks).
_STANDS_FOR: dict[ProjectFact, tuple] = {
    ProjectFact.DISTRIBUTED: (DISTRIBUTED_MARKERS,),
    ProjectFact.SAVE_HELPER: ("save", _TORCH_SAVE_CALL),
    ProjectFact.RUN_BY_RANKS: (SAVE_EVIDENCE,),
    ProjectFact.LOAD_RUN_BY_RANKS: (DISTRIBUTED_EVIDENCE,),
}


@dataclass(frozen=True)
class Hints:
    """What the project changes in one module's prefilters, so that they stay sound when the
    other half of a finding is in another module:

    - `facts`: what the index knows of the module that its text does not show
      (ddplint.prefilter.project_facts.ProjectFact); a rule says which of them open it
      (`Rule.opened_by`, `Rule.unscreened_by`);
    - `imports`: the bindings the module's star imports bring, which the needles see as import
      statements and the screens as the file's own imports;
    - `origins`: more bindings the screens see (a DataLoader subclass of the project, or a
      class that forwards to one, as a DataLoader), and `helpers`, names the screens see as
      functions of the file (CUDA helpers of other modules).
    """

    facts: frozenset[ProjectFact] = frozenset()
    imports: tuple[tuple[str, str], ...] = ()
    origins: tuple[tuple[str, str], ...] = ()
    helpers: frozenset[str] = frozenset()
    # Shared analyses (by class name) the project feeds with facts from other functions: a
    # rule that reads one is parsed for and run though the module's text never shows why.
    fed: frozenset[str] = frozenset()
    # The project's top-level packages: the screens take an import from one as the project's.
    packages: frozenset[str] = frozenset()

    def feeds(self, code: str) -> bool:
        """Whether the project feeds an analysis rule `code` reads."""
        if not self.fed:
            return False
        from ddplint.prefilter.index import ANALYSES

        return any(name in self.fed for name in ANALYSES.get(code, ()))

    @property
    def text(self) -> str:
        lines = []
        for name, origin in self.imports:
            module, _, attribute = origin.rpartition(".")
            lines.append(f"from {module} import {attribute} as {name}" if module else f"import {origin} as {name}")
        return "\n" + "\n".join(lines) if lines else ""

    def scan(self, source: str, known=None):
        """The needle scan (ddplint.prefilter.needles.TextScan) of a module's text, with the
        import statements its star imports stand for (`known`: needles already searched for
        in `source` alone)."""
        if self.imports:
            return TextScan(source + self.text)
        return TextScan(source, known)

    def passes_needles(self, opened_by: frozenset[ProjectFact], needles, scan) -> bool:
        """Whether a rule with these needles, opened by these facts (`Rule.opened_by`), passes
        on a module's `scan` (see `scan`). A fact of `_STANDS_FOR` stands only for its needles:
        the rule's others must still be in the module's text."""
        opened = self.facts & opened_by
        if any(fact not in _STANDS_FOR for fact in opened):
            return True
        return scan.matches(needles, met=[needle for fact in opened for needle in _STANDS_FOR[fact]])

    def unscreened(self, unscreened_by: frozenset[ProjectFact]) -> bool:
        """Whether a rule's screen is not applied to the module (`Rule.unscreened_by`), or
        gives way to its project screen (`Rule.screened_by`)."""
        return not self.facts.isdisjoint(unscreened_by)

    def patch(self, facts):
        """The module's screen facts (ddplint.prefilter.screens.Facts) with the project's
        bindings added."""
        for name, origin in (*self.imports, *self.origins):
            facts._bind(name, origin)
        facts.function_names.update(self.helpers)
        facts.project_packages = self.packages
        return facts


@dataclass
class Project:
    root: str
    modules: dict[str, dict]  # module name -> facts
    relpaths: dict[str, str]  # module name -> path relative to the root
    distributed: bool = False
    names: dict[str, str] = field(default_factory=dict)  # relative path -> module name
    # Relative path -> (size, mtime, the rules' needles the index searched for in that
    # file's text and whether each occurs): linting the file starts from them (`known_needles`).
    searched: dict[str, dict] = field(default_factory=dict, repr=False)
    # A module name several files share -> the names they are kept under (see `build`).
    shared: dict[str, list[str]] = field(default_factory=dict, repr=False)
    # Module name -> its text, for modules that are not files (`alone`): the program reads these.
    texts: dict[str, str] = field(default_factory=dict, repr=False)
    # The index's cache file, if any: the program keeps its summaries beside it.
    cache_path: str | None = field(default=None, repr=False)
    _views: dict[str, ProjectView] = field(default_factory=dict, repr=False)
    _memo: dict = field(default_factory=dict, repr=False)
    # The projects nested under the root (a folder with a pyproject.toml or .git: a vendored
    # repository), by their roots, each built when a file of it is first linted (`view`).
    _inner: dict[str, Project] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.distributed = any(facts["dist"] for facts in self.modules.values())

    @functools.cached_property
    def packages(self) -> frozenset[str]:
        """The top-level names of the project's modules."""
        return frozenset(name.partition(".")[0] for name in self.modules)

    @functools.cached_property
    def program(self) -> Program:
        """The program model (ddplint.model.program.Program) over this index, built on first use."""
        return Program(self)

    @functools.cached_property
    def digest(self) -> str:
        """A hash of every module's facts and of what the program model derived from them:
        cached results are reused only with the same."""
        from ddplint.core.hashing import content_hash

        from ddplint.model.solution import derived

        facts = json.dumps(self.modules, sort_keys=True)
        return content_hash(json.dumps([facts, derived(self, facts)]).encode())

    def consulted(self) -> tuple[str, ...]:
        """The paths of the modules the program's questions have read so far in this process
        (`Program.consulted`): a result computed now may depend on what they say."""
        program = self.__dict__.get("program")
        if program is None or not program.consulted:
            return ()
        known = self._memo.get("consulted")
        if known is None or known[0] != len(program.consulted):
            paths = tuple(
                os.path.join(self.root, self.relpaths[module])
                for module in sorted(program.consulted)
                if module not in self.texts
            )
            known = self._memo["consulted"] = (len(program.consulted), paths)
        return known[1]

    def view(self, path: str) -> ProjectView | None:
        """The project as the module at `path` sees it; None for a file outside the root."""
        relative = _relative(path, self.root)
        name = self.names.get(relative)
        if name is None:
            inner = self.inner_project(path)
            return inner.view(path) if inner is not None else None
        view = self._views.get(name)
        if view is None:
            view = self.module_view(name)
        return view

    def inner_project(self, path: str) -> Project | None:
        """The index of the project nested under the root that holds the file at `path` (which
        this index leaves out: project_folders), as flake8 and the editor see the file
        (root_seen_from); None where no nested project holds it."""
        if _relative(path, self.root) in self.names:
            return None
        inner_root = root_seen_from(path, self.root)
        if inner_root == self.root or not _within(inner_root, self.root):
            return None
        inner = self._inner.get(inner_root)
        if inner is None:
            cache_folder = os.path.dirname(self.cache_path) if self.cache_path else None
            inner = self._inner[inner_root] = build(inner_root, cache_folder)
        return inner

    def known_needles(self, path: str, info: os.stat_result) -> dict | None:
        """The needles the index already searched the file at `path` for, if it has not
        changed since (`info`: its stat now). Given out once: a file is triaged once a run."""
        size, mtime, found = self.searched.pop(_relative(path, self.root), (None, None, None))
        return found if (size, mtime) == (info.st_size, info.st_mtime_ns) else None

    def module_view(self, name: str) -> ProjectView:
        """The project as the module `name` sees it."""
        view = self._views.get(name)
        if view is None:
            view = self._views[name] = ProjectView(self, name, self.relpaths[name].endswith("__init__.py"))
        return view

    def module(self, name: str) -> str | None:
        """The module of the project that `name` imports; never torch's own modules (where the
        project holds torch's source, rules still know its API by name)."""
        if name in self.modules and name.partition(".")[0] not in _EXTERNAL:
            return name
        return None

    def declared_in(self, module: str, text: str | None) -> DeclaredOptions | None:
        """The options the parsers in `module`, whose text is `text`, declare
        (ddplint.model.parsers.declared_options); None where it does not parse. Walked once per
        text: each importer of a module asks again (kohya-ss/sd-scripts walked 12 modules' trees
        206 times, 19 % of its run). Callers only read the result."""
        key = ("declared", module, hash(text))
        if key not in self._memo:
            tree = self.program.tree(module, text) if text is not None else None
            self._memo[key] = declared_options(tree) if tree is not None else None
        return self._memo[key]

    def place(self, module: str, line: int) -> Place:
        return Place(self.relpaths[module], line)

    def top_level_defs(self, module: str) -> tuple[str, ...]:
        """The names of every top-level function of `module` (the index keeps only some), read
        when a star import of it asks what it binds."""
        key = ("defs", module)
        if key not in self._memo:
            text = self.program.read(module) or ""
            self._memo[key] = tuple(sorted({name for _, name, _ in _definitions(text, True, False) if name}))
        return self._memo[key]

    def saving_functions(self, module: str) -> frozenset[str]:
        """The top-level functions of `module` whose text calls something named save
        (`torch.save(`, `save_checkpoint(`); read when a prefilter hint asks (after `may_save`)."""
        key = ("saving", module)
        if key not in self._memo:
            text = self.program.read(module) or ""
            self._memo[key] = frozenset(
                function for begin, function, _ in _definitions(text, True, False)
                if function and _SAVE_CALL.search(text, begin, _next_start(text, begin))
            )
        return self._memo[key]

    def class_attributes(self, module: str, cls: str, depth: int = 0) -> frozenset[str] | None:
        """The attributes that the top-level class `cls` of `module` (or the class a name of
        that module re-exports) and its project base classes assign, by text
        (ProjectView.base_attributes); None where a class or project base is not found.
        Library bases (`nn.Module`) assign none that the rules read."""
        if depth > 8:
            return None
        key = ("class attributes", module, cls)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = frozenset()  # a cycle of bases adds nothing
        self._memo[key] = found = self._class_attributes(module, cls, depth)
        return found

    def _class_attributes(self, module: str, cls: str, depth: int) -> frozenset[str] | None:
        view = self.module_view(module)
        facts = self.modules[module]
        text = self.program.read(module)
        if text is None:
            return None
        header = re.compile(rf"class[ \t]+{re.escape(cls)}\b")
        begin = next((start for start, _, name in _definitions(text, False, True) if name == cls), None)
        if begin is None or header.match(text, begin) is None:
            if _defines(text, "class", cls):
                return None  # defined under an `if` or `try`: not read here
            # a re-export: `from .modeling import Model`, also under `if TYPE_CHECKING:` (a
            # package that imports lazily), or through a star import
            origin = facts["imports"].get(cls)
            origins, stars = ([origin], []) if origin is not None else _imports_anywhere(text, cls)
            found: set[str] = set()
            for origin in origins:
                inner = view.base_attributes(origin)
                if inner is None:
                    return None
                found |= inner
            for star in stars:
                other = self.program.split(view.absolute(star), module)
                if other is None or other[1] or other[0] == module:
                    return None
                inner = self.class_attributes(other[0], cls, depth + 1)
                if inner is None:
                    return None
                found |= inner
            return frozenset(found) if origins or stars else None  # else: made at run time, or not at the top
        chunk = text[begin : _next_start(text, begin)]
        found = set(_ASSIGNED_ATTRIBUTE.findall(chunk))
        bases = _CLASS_HEADER.match(chunk)
        for base in (b.strip() for b in bases.group(1).split(",")) if bases and bases.group(1) else ():
            if "=" in base or not _DOTTED.fullmatch(base):
                continue  # `metaclass=...`, or an expression: no project class the model follows
            first, _, rest = base.partition(".")
            if not rest and any(name == first for _, _, name in _definitions(text, False, True)):
                inner = self.class_attributes(module, first, depth + 1)
            else:
                origin = facts["imports"].get(first)
                if origin is None:
                    if first in _BUILTIN_BASES:
                        continue
                    return None
                inner = view.base_attributes(f"{origin}.{rest}" if rest else origin)  # (a library's: none)
            if inner is None:
                return None
            found |= inner
        return frozenset(found)

    def function_may_test_rank(self, module: str, function: str, depth: int = 0) -> bool:
        """ProjectView.may_test_rank of the top-level function `function` of `module` (or the
        function a name of that module re-exports)."""
        if depth > 4:
            return True
        key = ("may test rank", module, function)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = False  # a recursion through it adds nothing
        self._memo[key] = found = self._may_test_rank(module, function, depth)
        return found

    def _may_test_rank(self, module: str, function: str, depth: int) -> bool:
        view = self.module_view(module)
        facts = self.modules[module]
        text = self.program.read(module)
        if text is None:
            return True
        defined = {name: begin for begin, name, _ in _definitions(text, True, False)}
        if function not in defined:
            if _defines(text, "def", function) or _defines(text, "class", function):
                return True  # defined under an `if` or `try`, or a class: not judged here
            origin = facts["imports"].get(function)
            origins, stars = ([origin], []) if origin is not None else _imports_anywhere(text, function)
            if not origins and not stars:
                return True  # a class, a name bound at run time: not judged here
            return any(view.may_test_rank(origin) for origin in origins) or any(
                view.may_test_rank(f"{star}.{function}" if not star.endswith(".") else star + function) for star in stars
            )
        chunk = text[defined[function] : _next_start(text, defined[function])]
        if _RANK_TEXT.search(chunk) is not None:
            return True
        for head, rest in _CALLED.findall(chunk):
            if head in defined and not rest:
                if self.function_may_test_rank(module, head, depth + 1):
                    return True
                continue
            origin = facts["imports"].get(head)
            if origin is None and (_defines(text, "def", head) or _defines(text, "class", head)):
                return True  # a function of the module not at its top, or a class
            if origin is None:
                origins, stars = _imports_anywhere(chunk, head)  # imported in the body
                if stars or not origins:
                    if stars:
                        return True
                    continue  # a builtin, a parameter or local name: the program resolves none
                origin = origins[0] if len(origins) == 1 else None
                if origin is None:
                    return True
            if view.may_test_rank(origin + rest):  # (a library's function: no)
                return True
        return False

    def seeding_functions(self, module: str) -> frozenset[str]:
        """The top-level functions of `module` whose text calls something that seeds a
        generator (`torch.manual_seed(`, `np.random.seed(`); read when a prefilter hint asks."""
        key = ("seeding", module)
        if key not in self._memo:
            text = self.program.read(module) or ""
            self._memo[key] = frozenset(
                function for begin, function, _ in _definitions(text, True, False)
                if function and _SEED_CALL.search(text, begin, _next_start(text, begin))
            )
        return self._memo[key]

    def may_collect(self, module: str, depth: int = 0) -> bool:
        """Whether a function of `module` may run a collective every rank must reach, itself or
        through the project modules it imports (at most three imports deep): by the index's text
        facts, so that the prefilter can tell without reading."""
        facts = self.modules[module]
        if facts.get("collectives"):
            return True
        key = ("may_collect", module, depth)
        if depth >= 3 or key in self._memo:
            return bool(self._memo.get(key))
        self._memo[key] = False  # an import cycle adds nothing
        self._memo[key] = any(imported != module and self.may_collect(imported, depth + 1) for imported in self._project_imports(module))
        return self._memo[key]

    def _project_imports(self, module: str) -> list[str]:
        """The project modules `module` imports (a module, or the module of a name it imports)."""
        view = self.module_view(module)
        found = []
        for origin in self.modules[module]["imports"].values():
            imported = self.module(view.absolute(origin)) or self.module(view.absolute(origin).rpartition(".")[0])
            if imported is not None:
                found.append(imported)
        return found

    def builds_samplers(self, module: str) -> bool:
        """Whether `module` may make a sampler the program model follows (where it starts
        reading): it calls DistributedSampler (the index's "samplers"), or it defines or
        imports a project sampler class whose `__iter__` seeds its order from the epoch its
        `set_epoch` stores (the index's "epoch_seeded", whatever the class is named)."""
        facts = self.modules[module]
        if facts.get("samplers"):
            return True
        shaped = self._memo.get("epoch_seeded")
        if shaped is None:
            shaped = self._memo["epoch_seeded"] = frozenset(
                f"{name}.{cls}" for name, found in self.modules.items()
                for cls, record in found.get("classes", {}).items() if record.get("epoch_seeded")
            )
        if not shaped:
            return False
        view = self.module_view(module)
        named = {view.absolute(origin) for origin in facts["imports"].values()}
        named |= {f"{module}.{cls}" for cls in facts.get("classes", {})}
        homes = {cls.rpartition(".")[0] for cls in shaped}
        return any(name in shaped or name in homes for name in named)

    def may_save(self, module: str, depth: int = 0) -> bool:
        """Whether a function of `module` may call torch.save, itself or through the project
        modules it imports that may (at most three imports deep, as the program follows save
        helpers): by the index's text facts, so that the prefilter can tell without reading."""
        facts = self.modules[module]
        if facts.get("saves"):
            return True
        if depth >= 3 or not facts.get("calls_saver"):
            return False
        key = ("may_save", module, depth)
        if key not in self._memo:
            self._memo[key] = False  # an import cycle adds nothing
            self._memo[key] = any(imported != module and self.may_save(imported, depth + 1) for imported in self._project_imports(module))
        return self._memo[key]

    @staticmethod
    def is_test_path(relative: str) -> bool:
        """Whether the file at `relative` (with "/") is a test module: under tests/, test_*.py,
        *_test.py, conftest.py."""
        return _TEST_PATH.search(relative) is not None

    def is_test(self, module: str) -> bool:
        """Whether `module` is a test module (`is_test_path`) that a test runner imports, not a
        script the project runs: a `test_*.py` outside a test suite's folder that a launch
        command of the project runs (`python -m torch.distributed.launch --nproc_per_node=8
        test_zeroshot.py`, `torchrun ... test.py`: ProjectView.launches) is an evaluation script,
        run by as many processes as that command starts. A module in a tests/ folder stays a
        test, and so does a conftest.py: pytest imports it into each of its own processes."""
        relative = self.relpaths[module].replace(os.sep, "/")
        if _TEST_PATH.search(relative) is None:
            return False
        if _TEST_FOLDER.search(relative) is not None or os.path.basename(relative) == _CONFTEST:
            return True
        return not self.module_view(module).launches(own=True)

    def script_runs_alone(self, module: str) -> bool:
        """Whether `module`, run as the script (`python module.py`: only then does its `if
        __name__ == "__main__":` block run, never where another module imports it), runs as one
        process: other modules import it (a script that nothing imports, vi_latent_action's
        finetune_libero.py, exists for that run, which its DDP model says is a launcher's), no
        launch command of the project may run it (`_unlaunched`), it holds no launch
        point of Lightning, Fabric or Accelerate, and neither the code of its own that may run
        nor that of the project modules it imports may start processes (a shell-out of Python
        too), a process group or a framework's launcher (`_starts_nothing`, `_ANY_START`: a utils module whose `init_distributed_mode()`
        only the training scripts call, with a self-test of its metric in its `__main__` block).
        Whether other modules import it, or it names torch.distributed, does not matter: the
        question is how many processes the block's own run has (for every rule that asks who
        runs a `__main__` block: ProjectView.runs_reaching, DDP004's loads)."""
        key = ("script runs alone", module)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = (
                bool(self.program.importers_of(module))  # a library's self-test; a script nothing imports exists for its run
                and not self.modules[module].get("launched") and self._unlaunched(module)
                and self._starts_nothing(list(reachable([module], self.imports_of)), _ANY_START)
            )
        return found

    @functools.cached_property
    def reach(self) -> Reach:
        """Which code the project's entry points reach (ddplint.model.reach)."""
        return Reach(self)

    @functools.cached_property
    def launch_commands(self) -> list[LaunchCommand]:
        """The commands of the project's shell scripts and documents that run a launcher of
        `torch_api.LAUNCHERS`, at most MAX_LAUNCH_DOCUMENTS documents read."""
        found: list[LaunchCommand] = []
        for relative in self._launch_documents:
            text = self.document(relative)
            if text is not None and any(needle in text for launcher in LAUNCHERS.values() for needle in launcher.needles):
                found += _launch_commands(relative, text, self._settled)
        return found + self._wrapper_runs(found)

    def _wrapper_runs(self, launches: list[LaunchCommand]) -> list[LaunchCommand]:
        """The runs of the project's shell scripts whose launch command takes its script from
        the script's own arguments (`tools/dist_run.sh`: `SCRIPT=$1`, then `python -m
        torch.distributed.launch ... $SCRIPT ${@:3}`): each command of a document that runs such
        a wrapper (`bash tools/dist_run.sh tools/extract.py 8 --out x.pkl`) is that launch, at
        the caller's line, with the arguments put in."""
        wrappers: dict[str, LaunchCommand] = {}
        for command in launches:
            path = command.place.path.replace(os.sep, "/")
            if path.endswith((".sh", ".bash")) and path not in wrappers:
                lines = split_lines(self.document(command.place.path) or "")
                wrapper_lines = Shell(lines, document=False)
                wrapper_lines.at(command.place.line - 1)
                expanded = wrapper_lines.expand(command.command)
                if _POSITIONAL.search(expanded):
                    wrappers[path] = LaunchCommand(command.place, expanded, command.launcher)
        found: list[LaunchCommand] = []
        for relative in self._launch_documents if wrappers else ():
            text = self.document(relative) or ""
            for path, wrapper in wrappers.items():
                if os.path.basename(path) in text:
                    found += _wrapper_calls(relative, text, path, wrapper)
        return found

    def _settled(self, command: LaunchCommand, script_lines: Shell, folders: tuple[str, ...]) -> LaunchCommand:
        """`command` with the folder the `cd`s before it (`folders`) move to, and the number of
        processes the Accelerate configuration file it names starts (`_configured_processes`)."""
        document_folder = posixpath.dirname(command.place.path.replace(os.sep, "/"))
        runs_in = None
        for target in folders:
            runs_in = self._changed_to(document_folder if runs_in is None else runs_in, target, document_folder)
        processes = self._configured_processes(command, script_lines, runs_in, document_folder) if command.launcher == "accelerate" else None
        return LaunchCommand(command.place, command.command, command.launcher, runs_in, processes)

    @functools.cached_property
    def _project_folders(self) -> frozenset[str]:
        """The folders that hold the project's modules, shell scripts and documents, and those
        above them ("" the root), with `/` between folders."""
        found = {""}
        for relative in (*self.files, *(path.replace(os.sep, "/") for path in self._launch_documents)):
            folder = posixpath.dirname(relative)
            while folder and folder not in found:
                found.add(folder)
                folder = posixpath.dirname(folder)
        return frozenset(found)

    def _changed_to(self, current: str, target: str, document_folder: str) -> str:
        """The project folder `cd target` moves to from `current` (UNKNOWN_FOLDER where not
        known), for a shell script in `document_folder`: a relative path from the current
        folder, the script's own folder (`$(dirname "$0")/..`), or a path from elsewhere
        (`/home/me/ImbalancedSSL/BMB_IMG`, `$ROOT/SAW`) whose last folders name one folder of
        the project (`_folder_named`)."""
        if target.startswith(HERE):
            base, rest = document_folder, target[len(HERE):].lstrip("/")
        elif target.startswith(("/", "~")) or "$" in target:
            return self._folder_named(target)
        elif current == UNKNOWN_FOLDER:
            return UNKNOWN_FOLDER
        else:
            base, rest = current, target
        path = posixpath.normpath(posixpath.join(base, rest)) if rest else base
        path = "" if path == "." else path
        return path if path in self._project_folders else UNKNOWN_FOLDER

    def _folder_named(self, target: str) -> str:
        """The project folder a path from outside the project names by its last folders (what
        follows its last variable: `$ROOT/SAW` is SAW, `/share/me/ImbalancedSSL/BMB_IMG` is
        BMB_IMG, or `a/BMB_IMG` where that is the one folder of the project so named): the
        longest such tail that names one folder; the root where the path ends in its name;
        UNKNOWN_FOLDER where no tail names a folder, or one names several."""
        key = ("folder named", target)
        if key not in self._memo:
            self._memo[key] = self._folder_named_once(target)
        return self._memo[key]

    def _folder_named_once(self, target: str) -> str:
        parts = target.split("/")
        cut = max((index + 1 for index, part in enumerate(parts) if "$" in part or part.startswith("~")), default=0)
        parts = [part for part in parts[cut:] if part not in ("", ".")]
        if not parts or ".." in parts:
            return UNKNOWN_FOLDER
        if parts[-1] == os.path.basename(os.path.normpath(self.root)):
            return ""
        for size in range(len(parts), 0, -1):
            tail = "/".join(parts[-size:])
            named = [folder for folder in self._project_folders if folder == tail or folder.endswith("/" + tail)]
            if named:
                return named[0] if len(named) == 1 else UNKNOWN_FOLDER
        return UNKNOWN_FOLDER

    def _configured_processes(self, command: LaunchCommand, script_lines: Shell, runs_in: str | None, document_folder: str) -> int | None:
        """How many processes `accelerate launch --config_file F` starts by what F says, where
        no flag of the command decides it (`--num_processes`, `--multi_gpu`, `--use_deepspeed`,
        `--num_machines`): one under `distributed_type: NO` (Accelerate's simple launcher,
        whatever `num_processes` says), else `num_processes` times `num_machines`. F is the
        project file the path names (a variable of the script expanded: `--config_file
        $ACCELERATE_CONFIG_FILE`) from the folder the command runs in, or, where no `cd` says
        which, from the root or the script's folder or one above it. None where not known."""
        text = re.sub(r"\\?\n", " ", command.command)
        if any(flag in text for flag in (*ACCELERATE_SHARDED_FLAGS, *ACCELERATE_DDP_FLAGS, *_ACCELERATE_COUNT_FLAGS)):
            return None
        found = _CONFIG_FILE.search(text)
        path = script_lines.expand(found.group(1).strip("'\"")) if found is not None else "$"
        if path.startswith(HERE):
            path, starts = path[len(HERE):].lstrip("/"), [document_folder]
        elif runs_in is not None:
            starts = [runs_in] if runs_in != UNKNOWN_FOLDER else []
        else:
            starts = ["", document_folder] + [folder for folder in _folders_above(document_folder)]
        if "$" in path or path.startswith(("/", "~")):
            return None
        config = next((relative for start in starts if self.document(relative := posixpath.normpath(posixpath.join(start, path))) is not None), None)
        if config is None:
            return None
        kind = self.config_value(config, (ACCELERATE_CONFIG_KEY,))
        if kind == "NO":
            return 1
        processes, machines = (self.config_value(config, (key,)) for key in ("num_processes", "num_machines"))
        if kind not in ACCELERATE_SHARDED_TYPES | ACCELERATE_DDP_TYPES or not isinstance(processes, int):
            return None
        return processes * (machines if isinstance(machines, int) else 1)

    def describes_option(self, option: str, default: str, folder: str) -> bool:
        """Whether a shell script or document of the project in `folder`, above it or below it
        (not another example's folder beside it) names the command-line option `option`
        (`--update-freq`) elsewhere than in a command that runs a script (`launch_commands`,
        `plain_runs`), and not with its `default` value after it: prose or a table that tells
        the user to set it ("set `--update-freq` above 1")."""
        key = ("describes option", option, default, folder)
        if key not in self._memo:
            named = re.compile(rf"(?<![\w-]){re.escape(option)}(?![\w-])(?!(?:=|\s+){re.escape(default)}(?![\w.]))")
            self._memo[key] = any(
                named.search(line) for where, line in self._option_mentions
                if _nested(where, folder) and not self._declared_nearer(option, where, folder)
            )
        return self._memo[key]

    def _declared_nearer(self, option: str, where: str, folder: str) -> bool:
        """Whether a document in `where`, a folder below `folder`, speaks of a script of its own:
        a module in `where` or below it declares `option` too (a vendored MAE's PRETRAIN.md
        telling its own main_pretrain.py's users to raise `--accum_iter`)."""
        if where == folder or not where or folder.startswith(where + "/"):
            return False
        key = ("declared nearer", option, where)
        if key not in self._memo:
            quoted = (f'"{option}"', f"'{option}'")
            self._memo[key] = any(
                (relative.replace(os.sep, "/") + "/").startswith(where + "/")
                and any(text in (self.program.read(module) or "") for text in quoted)
                for module, relative in self.relpaths.items()
            )
        return self._memo[key]

    @functools.cached_property
    def _option_mentions(self) -> list[tuple[str, str]]:
        """(folder, line) of each line of the shell scripts and documents that names a long
        option (`--`) outside a command that runs a script: read once per project."""
        commands: dict[str, list[str]] = {}
        # A plain run of a script the project does not hold (one since renamed) runs nothing:
        # what its lines set is still word to the user.
        scripts = {os.path.basename(path) for path in self.relpaths.values()}
        runs = [command for command in self.plain_runs if _run_script(command.command) in scripts]
        for command in (*self.launch_commands, *runs):
            commands.setdefault(command.place.path, []).append(command.command)
        return [
            (os.path.dirname(relative), line)
            for relative in self._launch_documents
            for line in split_lines(self.document(relative) or "")
            if "--" in line and not any(line.strip().rstrip("\\").strip() in text for text in commands.get(relative, ()))
        ]

    @functools.cached_property
    def _document_words(self) -> frozenset[str]:
        """The words (lower case) of the project's shell scripts and documents: read once."""
        return self._words_of(self._launch_documents)

    @functools.cached_property
    def _told_words(self) -> frozenset[str]:
        """The words (lower case) of the project's shell scripts and documents that are no config
        file of it: what tells the user to set a key the config files hold."""
        shipped = set(self.config_files)
        return self._words_of([relative for relative in self._launch_documents if relative.replace(os.sep, "/") not in shipped])

    def _words_of(self, relatives: list[str]) -> frozenset[str]:
        return frozenset(word for relative in relatives for word in _WORD.findall((self.document(relative) or "").lower()))

    @functools.cached_property
    def files(self) -> frozenset[str]:
        """The project's module files, relative to its root, with `/` between folders."""
        return frozenset(relative.replace(os.sep, "/") for relative in self.relpaths.values())

    @functools.cached_property
    def plain_runs(self) -> list[LaunchCommand]:
        """The commands of the project's shell scripts and documents that run a script with the
        interpreter itself (`python test.py --gpu_id 2,3`), on a line that names no launcher:
        each starts one process (launcher "python")."""
        found: list[LaunchCommand] = []
        for relative in self._launch_documents:
            text = self.document(relative)
            lines = split_lines(text) if text is not None and "python" in text else []
            script_lines = Shell(lines, relative.endswith((".md", ".rst")))
            for index, line in enumerate(lines):
                if (run := _PLAIN_RUN.search(line)) and not any(launcher.names(line) for launcher in LAUNCHERS.values()):
                    command = LaunchCommand(Place(relative, index + 1), _continued(lines, index), "python")
                    found.append(self._settled(command, script_lines, script_lines.at(index, line[: run.start()])))
        return found

    @functools.cached_property
    def documented_imports(self) -> set[str]:
        """The dotted modules a document or shell script of the project shows an import of
        (`from trainer import Trainer` in a README that tells the user to edit `train.py` so):
        a run the documents describe may reach them, though no code imports them."""
        names: set[str] = set()
        for relative in self._launch_documents:
            text = self.document(relative) or ""
            if "import" in text:
                names.update(_DOCUMENTED_IMPORT.findall(text))
        return names

    @functools.cached_property
    def _launch_documents(self) -> list[str]:
        """The shell scripts and documents searched for commands (relative paths), at most
        MAX_LAUNCH_DOCUMENTS of them; none for a text linted alone (it has no folder). Where
        the project holds more, the shallowest are kept (in the order of its folders): a
        script's own launch script sits beside it or above, while a sweep of generated scripts
        (hundreds under `scripts/cifar100/<setting>/`) must not crowd out those of the other
        folders (ImbalancedSSL's SAW/*.sh behind BMB's 800)."""
        found = [
            _relative(os.path.join(folder, name), self.root)
            for folder, names in self.folders() for name in names if name.endswith(_LAUNCH_DOCUMENTS) or name == "Makefile"
        ] + self._github_pages()
        if len(found) <= MAX_LAUNCH_DOCUMENTS:
            return found
        depth = sorted(range(len(found)), key=lambda index: found[index].replace(os.sep, "/").count("/"))
        kept = set(depth[:MAX_LAUNCH_DOCUMENTS])
        return [relative for index, relative in enumerate(found) if index in kept]

    def _github_pages(self) -> list[str]:
        """The Markdown and reStructuredText documents directly in the root's hidden `.github/`
        folder, which the walk of the project's folders leaves out (a tool's folder): GitHub
        shows them as pages of the repository, and a README may keep its instructions there
        (`See [the instructions](.github/eval.md)`). Its subfolders (workflows, issue
        templates) hold CI runs and forms, no run of the user's."""
        folder = os.path.join(self.root, ".github")
        if self.texts or not os.path.isdir(folder):
            return []
        return [f".github/{name}" for name in sorted(os.listdir(folder))
                if name.endswith((".md", ".rst")) and os.path.isfile(os.path.join(folder, name))]

    @functools.cached_property
    def python_minors(self) -> frozenset[int]:
        """The Python 3 minor versions the project names for its runs, in its documents, shell
        scripts, requirements and environment files (`python=3.9`), as the upper bound of its
        packaging metadata (`python_requires="<3.10"`: 9), or as the newest a pinned torch release
        has wheels for (`torch==1.7.1`: 13); none where it names none."""
        found: set[int] = set()
        files = list(self._launch_documents)
        for folder, names in self.folders():
            files += [_relative(os.path.join(folder, name), self.root) for name in names if name.startswith(_VERSION_FILES)]
            if len(files) > 2 * MAX_LAUNCH_DOCUMENTS:
                break
        for relative in files:
            text = self.document(relative) or ""
            if os.path.basename(relative) == ".python-version":
                text = f"python{text.strip()}"
            found.update(int(minor) for minor in _PYTHON_VERSION.findall(text))
            for bound in _PYTHON_BOUND.findall(text):
                found.update(int(minor) - (operator == "<") for operator, minor in _UPPER_BOUND.findall(bound))
            if any((int(major), int(minor)) < _TORCH_FIRST_ON_PY314 for major, minor in _TORCH_PIN.findall(text)):
                found.add(13)
        return frozenset(found)

    def one_process_run(self, module: str, pools: bool = True, accelerator: bool = False) -> bool:
        """Whether `module` is a script that runs as one process in every documented run: an
        entry script (Reach.entries) that no launch command of the project may run
        (`_unlaunched`), that only such scripts import (a FLOPs tool importing the evaluation
        script's classes), that neither it nor a project module it imports may start more
        processes (`_SPAWN_STARTS`, as `_starts_nothing` reads them) nor holds a launch point of
        Lightning or Fabric (a LightningModule that a Trainer built from a config runs on every
        device; an Accelerator does not start processes: under plain `python` it is one), and
        that the project runs
        with `python script.py` (`plain_runs`) or that starts its own process group of one
        (`_own_group_of_one`). A process group such a script joins has one member: CLTR's
        `python test.py --gpu_id 2,3`, which joins one through utils.py when RANK is set.
        Not `pools`: a pool of workers it or its imports start (`Pool(`, `ProcessPoolExecutor`)
        does not count, as its workers run the function handed to them, not the script's own
        code (for what the script's code does: DDP014's save). `accelerator`: the script joins
        the ranks only by building an Accelerator, which has one process unless a launcher
        starts it: a script that no launch command runs also counts where the project's launch
        commands (it has some) run other scripts, as `_joins_only_under_a_launcher` reads a
        group started only under a launcher's test (mesh-gpt's main.py in CrazyCode)."""
        key = ("one process run", module, pools, accelerator)
        found = self._memo.get(key)
        if found is None:
            self._memo[key] = False  # an import cycle among its importers adds nothing
            found = (
                self.reach.is_entry(module) and self._unlaunched(module)
                and all(self.one_process_run(importer, pools, accelerator) for importer in self.program.importers_of(module))
                and (
                    bool(self.module_view(module).launches(self.plain_runs, own=True)) or self._own_group_of_one(module)
                    or self._joins_only_under_a_launcher(module) or accelerator and bool(self.launch_commands)
                )
                and self.starts_no_processes(module, pools) and not self.distributed_modes(module)
            )
            self._memo[key] = found
        return found

    def accelerate_run_by_hand(self, module: str) -> bool:
        """Whether script `module` joins the ranks only by building an Accelerator, and nothing
        documents a launch of it: an entry script that no launch command of the project runs,
        in a project whose launch commands (it has some) run other scripts, and that neither it
        nor a project module it imports may start processes, a process group or a DDP model of
        its own (`_OWN_START`, a framework that starts its own processes: `one_process_run` with
        `accelerator`). An Accelerator has as many processes as `accelerate launch` starts; run
        as `python train.py`, which is all the project shows of it, it is one (ZTomorTrain's
        BraTS_train_seg.py, beside the scripts its sh/ folder launches with torchrun)."""
        key = ("accelerate run by hand", module)
        found = self._memo.get(key)
        if found is None:
            modules = list(reachable([module], self.imports_of)) if self.reach.is_entry(module) else []
            texts = [self.program.read(reached) for reached in modules]
            found = self._memo[key] = (
                bool(modules) and None not in texts
                and any(_ACCELERATOR_START in text for text in texts)  # type: ignore[operator]
                and not any(_OWN_START.search(text) for text in texts)  # type: ignore[arg-type]
                and self.one_process_run(module, pools=False, accelerator=True)
            )
        return found

    def distributed_modes(self, module: str) -> frozenset[str]:
        """The command-line options of script `module` that turn on a distributed mode of its
        own: options off unless passed (their default False, None or 0) under whose test
        (`if args.ddp:`, `elif args.distributed:`, `if args.distributed and ...:`) its code starts
        a process group of more than one member, by `init_process_group` or a function of the
        module that calls it (`if args.use_ddp: ddp_setup()`). An option is there to be passed:
        a run with it is several processes (torchrun's RANK and WORLD_SIZE, a local rank),
        whatever the documented runs pass (OpenLTM's run.py --ddp, VL-T5's multitask.py). So is
        a switch no parser declares that a config file the project ships sets true
        (`if cfg.DISTRIBUTED:` with `DISTRIBUTED: true`, `_turned_on_by_a_config`)."""
        key = ("distributed modes", module)
        found = self._memo.get(key)
        if found is None:
            tree = self.program.tree(module)
            found = self._memo[key] = _modes_in(tree, self.module_view(module)) if tree is not None else frozenset()
        return found

    def starts_no_processes(self, module: str, pools: bool = True) -> bool:
        """Whether neither script `module` nor a project module it imports may start more
        processes than the one `python` starts (`_SPAWN_STARTS`, a Lightning or Fabric launch
        point, as `_starts_nothing` reads them); not `pools`: a pool of workers does not count."""
        starts = tuple(start for start in (*_SPAWN_STARTS, *_SELF_LAUNCHING) if pools or start not in _WORKER_POOLS)
        return self._starts_nothing(list(reachable([module], self.imports_of)), starts)

    def shares_no_tensors(self, module: str) -> bool:
        """Whether no process that tensors cross (`TENSOR_CROSSINGS`: DataLoader workers,
        torch.multiprocessing's processes, pools and queues) may be started in any program
        `module` runs in: by it, the modules importing it (at any depth, a notebook too), or
        any module one of those imports (in a function too), as `_starts_nothing` reads them.
        The `if __name__ == "__main__":` block of a module these programs only import (one that
        does not reach `module` by its own imports) runs only where that module is the script, a
        program without `module`: a data module's self-test that iterates a loader with workers."""
        runs_in = list(reachable([module], self.program.importers_of))
        program = list(reachable(runs_in, lambda each: [*self.imports_of(each), *self.nested_imports(each)]))
        # a module nothing imports that is no script is called from outside: its functions run
        called = frozenset(each for each in runs_in if not self.reach.is_entry(each) and not self.program.importers_of(each))
        imported = frozenset(
            each for each in program if each not in runs_in
            and module not in reachable([each], lambda other: [*self.imports_of(other), *self.nested_imports(other)])
        )
        return self._starts_nothing(program, TENSOR_CROSSINGS, live=called, imported=imported)

    def crosses_no_tensors(self, module: str) -> bool:
        """Whether neither `module` nor a project module it imports may start a process that
        tensors cross (`TENSOR_CROSSINGS`, as `_starts_nothing` reads them): a call of one of
        its functions starts none."""
        return self._starts_nothing(list(reachable([module], self.imports_of)), TENSOR_CROSSINGS)

    def _unlaunched(self, module: str) -> bool:
        """Whether no launch command of the project may run `module`: none runs it by its module
        name (`srun python -u -m main`, ProjectView.launches) nor a file of this one's name, by
        any path (`$(dirname $0)/test.py`), unless the path names another file of that name
        (ProjectView.launches: yolov9's README launches the root `train.py`, not
        `segment/train.py`); and where one runs a script it does not name
        (`torch.distributed.launch ... $PY_FILE`), no shell script or document of the project
        names this file other than in a plain `python` run of it (ERNIE's `run_dist_pretrain.sh
        8 ... code/run_pretrain_dist_util.py` hands its name to such a launcher)."""
        base = os.path.basename(self.relpaths[module])
        name = re.compile(rf"(?<![\w.-]){re.escape(base)}(?![\w.-])")
        if self.module_view(module).launches(own=True):
            return False
        others = [
            command for other in self._by_file_name.get(base, ()) if other != module
            for command in self.module_view(other).launches(own=True)
        ]
        if any(
            name.search(command.command) and command not in others or _placeholder_for(command.command, base)
            for command in self.launch_commands
        ):
            return False
        if not self.unnamed_launches:
            return True
        return not name.search(self._scripts_named)

    @functools.cached_property
    def starts_mpi_world(self) -> bool:
        """Whether a launch command of the project starts its processes as one MPI world
        (`mpiexec -n 4 python train.py`, `srun --mpi=pmix ...`: Launcher.starts_mpi_world): only
        then is mpi4py's COMM_WORLD the ranks. Under torchrun or torch.distributed.launch each
        process is an MPI world of one, and where the project documents no launch its world is
        not known."""
        return any(LAUNCHERS[command.launcher].starts_mpi_world(command.command) for command in self.launch_commands)

    @functools.cached_property
    def unnamed_launches(self) -> tuple[LaunchCommand, ...]:
        """The launch commands that name no script (`torchrun --nproc_per_node 8 $PY_FILE`,
        DPR's `python -m torch.distributed.launch --nproc_per_node={WORLD_SIZE} {non distributed
        script name & parameters}`): each may run any script of the project."""
        return tuple(command for command in self.launch_commands if not _NAMES_SCRIPT.search(command.command))

    @functools.cached_property
    def _by_file_name(self) -> dict[str, list[str]]:
        """The project's modules by the name of their file (`train.py`)."""
        found: dict[str, list[str]] = {}
        for module, relative in self.relpaths.items():
            found.setdefault(os.path.basename(relative), []).append(module)
        return found

    @functools.cached_property
    def _scripts_named(self) -> str:
        """The lines of the project's shell scripts and documents that name a `.py` file, except
        plain `python` runs of one (`python3 code/run_typing.py ...` runs one process)."""
        return "\n".join(
            line for relative in self._launch_documents for line in (self.document(relative) or "").splitlines()
            if ".py" in line and not _PLAIN_RUN.search(line)
        )

    def _joins_only_under_a_launcher(self, module: str) -> bool:
        """Whether `module` joins a process group only where a launcher started it: it calls
        `init_process_group` and every call sits under a test only a launcher makes true
        (`if args.local_rank != -1:`, its option declared here with the default -1;
        `if "WORLD_SIZE" in os.environ:`), in a project whose launch commands (it has some) run
        other scripts. Run without a launcher (ERNIE's fine-tuning variants, which no command
        runs, beside their one-process twins in the README), it is one process."""
        if not self.launch_commands:
            return False  # a project that shows no launch at all: how this one is run is not known
        text = self.program.read(module)
        tree = self.program.tree(module, text)
        if tree is None or self.modules[module].get("launched"):
            return False
        unset = self.declared_in(module, text).shown("local_rank")
        calls = [(node, guards) for node, guards in _guarded_calls(tree) if _last_name(node) == _GROUP_START]
        return bool(calls) and all(
            any(_launcher_test(test, in_body, unset is not None and unset[1] == -1) for test, in_body in guards) for _, guards in calls
        )

    def _own_group_of_one(self, module: str) -> bool:
        """Whether `module` starts a process group of one member itself,
        `init_process_group(..., world_size=1)`, and may start no other: it has no launch point
        of a framework, calls no project function that starts a process group, and neither it
        nor a module it imports may start one (`_RUN_STARTS`, where a group of one starts
        nothing: `_may_start`). HyCTAS's test.py, `init_process_group(world_size=1, rank=0)`."""
        tree = self.program.tree(module)
        if tree is None or not any(_group_of_one(node) for node in walk(tree)):
            return False
        if self.modules[module].get("launched") or _rank_start_by_helper(self.program, module) is not None:
            return False
        return self._starts_nothing(list(reachable([module], self.imports_of)), _RUN_STARTS)

    @functools.cached_property
    def accelerate_kinds(self) -> frozenset[str]:
        """What the project's Accelerate configuration files that start several processes run:
        "sharded" (`distributed_type: DEEPSPEED`, FSDP, MEGATRON_LM) and "ddp" (MULTI_GPU, ...)."""
        kinds: set[str] = set()
        seen = 0
        for folder, names in self.folders():
            for name in (n for n in names if n.endswith((".yaml", ".yml"))):
                seen += 1
                if seen > MAX_LAUNCH_DOCUMENTS:
                    return frozenset({"unknown"})
                text = self.document(_relative(os.path.join(folder, name), self.root)) or ""
                for match in _ACCELERATE_TYPE.finditer(text):
                    kind = match.group(1)
                    kinds |= {"sharded"} if kind in ACCELERATE_SHARDED_TYPES else {"ddp"} if kind in ACCELERATE_DDP_TYPES else set()
        return frozenset(kinds)

    @functools.cached_property
    def config_files(self) -> tuple[str, ...]:
        """The project's JSON and YAML files (relative paths, `/` between folders), at most
        configs.MAX_CONFIG_FILES of them: the configuration files it ships."""
        suffixes = tuple(suffix for kind in configs.CONFIG_SUFFIXES.values() for suffix in kind)
        found: list[str] = []
        for folder, names in self.folders():
            for name in (n for n in names if n.endswith(suffixes)):
                if len(found) == configs.MAX_CONFIG_FILES:
                    return tuple(found)
                found.append(_relative(os.path.join(folder, name), self.root).replace(os.sep, "/"))
        return tuple(found)

    def config_value(self, relative: str, keys: tuple[str, ...]):
        """The value the config file `relative` gives for the key path `keys`
        (`("train", "accum_grad")`); configs.MISSING where it holds none or cannot be read."""
        key = ("config", relative)
        if key not in self._memo:
            kind = next((k for k, suffixes in configs.CONFIG_SUFFIXES.items() if relative.endswith(suffixes)), "yaml")
            text = self.document(relative)
            self._memo[key] = configs.parse(text, kind) if text is not None else None
        return configs.lookup(self._memo[key], keys)

    def folders(self) -> Iterator[tuple[str, list[str]]]:
        """The project's folders with their file names (project_folders); none for a text
        linted alone (it has no folder)."""
        return project_folders(self.root) if not self.texts else iter(())

    def document(self, relative: str) -> str | None:
        """The text of a file of the project that is not a module (a shell script, a document,
        a config), by its path relative to the root; None when it cannot be read or is larger
        than MAX_INDEX_BYTES, and for a text linted alone (it has no folder to look in). Of a
        notebook, its shell commands (`_notebook_commands`)."""
        if self.texts:
            return None
        path = os.path.join(self.root, relative)
        try:
            if os.path.getsize(path) > MAX_INDEX_BYTES:
                return None
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return None
        return _notebook_commands(text) if relative.endswith(".ipynb") else text

    def demo(self, module: str) -> bool:
        """Whether no module imports `module` and none of the project modules it reaches through
        its imports names anything distributed (for ProjectView.single_process)."""
        if self.program.importers_of(module):
            return False
        return not any(self.modules[reached]["dist"] for reached in reachable([module], self.imports_of) if reached != module)

    def torch_program(self, module: str) -> bool:
        """Whether `module` is part of a torch program: it imports torch (or a library built on
        it, or names torch.distributed), or so does a project module it runs code of (what it
        imports, at any depth), or a module that imports it (at any depth) and what that one
        imports. A script of another framework (a TensorFlow evaluator) that no torch module
        imports and that imports none is not: nothing it sets reaches a torch process."""
        key = ("torch program", module)
        found = self._memo.get(key)
        if found is None:
            users = reachable([module], self.program.importers_of)
            found = self._memo[key] = any(
                self.modules[reached].get("torch") for reached in reachable(users, self.imports_of)
            )
        return found

    def one_process_script(self, module: str) -> bool:
        """Whether `module` is an entry script that runs as one process: it starts no
        processes, names nothing distributed, has no launch point of Lightning, Fabric or
        Accelerate, and is a `demo` (run as the script whatever imports it: `script_runs_alone`)."""
        facts = self.modules[module]
        return bool(facts.get("main")) and not facts["dist"] and not facts.get("starts") and not facts.get("launched") and self.demo(module)

    def runs_alone(self, module: str) -> bool:
        """Whether `module` is an entry that runs as one process, whatever it calls: a test
        module or a script (Reach.entries) that no module imports, that names nothing
        distributed, that no launch command of the project runs (`ProjectView.launches`), and
        of which no module it reaches through its imports, itself included, has the text of a
        start of processes, of a process group or of a framework's launcher (`_RUN_STARTS`); or
        a script that runs as one process in every documented run (`one_process_run`; a pool
        of workers it starts, `Pool(`, runs the function handed to it, no rank of the script:
        yolov9's segment/train.py, run only as `python segment/train.py --device 0`, caches its
        labels in a `Pool`). Unlike `one_process_script` it may import modules that name
        distribution: a converter script that loads the training wrapper's checkpoint and
        exports the model."""
        key = ("runs alone", module)
        found = self._memo.get(key)
        if found is None:
            facts, program = self.modules[module], self.program
            found = (
                self.reach.is_entry(module) and not facts["dist"] and not facts.get("launched")
                and not program.importers_of(module) and not self.module_view(module).launches()
                and self._starts_nothing(list(reachable([module], self.imports_of)))
            ) or self.one_process_run(module, pools=False)
            self._memo[key] = found
        return found

    def launched_alone(self, module: str, written: bool = True, quiet: bool = False) -> bool:
        """Whether `module` is an entry script that the project launches, and only as one
        process: no module imports it, a launch command runs it (ProjectView.launches) and every
        one of them starts one process (`--num_processes=1`, torchrun with no count: `_one_process`;
        `written`: `--nproc_per_node 1` on one node too, as ProjectView.launch_line reads it;
        `quiet`: and none appends an option to the script's arguments, as torch.distributed.launch
        without `--use_env` appends `--local-rank=N`, which a parser may reject in one process too),
        every launch command names its script (none runs one held in a variable, `$PY_FILE`),
        and neither it nor a project module it imports may start more processes
        (`_SPAWN_STARTS`). Its process group, if any, has one member: no second rank to
        all-reduce with, deadlock or race (a single-card copy of a DDP trainer, launched with
        `torch.distributed.launch --nproc_per_node 1`)."""
        key = ("launched alone", module, written, quiet)
        found = self._memo.get(key)
        if found is None:
            launches = self.module_view(module).launches(own=True)
            found = self._memo[key] = (
                self.reach.is_entry(module) and not self.program.importers_of(module) and bool(launches)
                and all(_one_process(command) or written and _one_per_node(command.command) for command in launches)
                and not (quiet and any(LAUNCHERS[command.launcher].passes(command.command) for command in launches))
                and not self.unnamed_launches
                and self._starts_nothing(list(reachable([module], self.imports_of)), _SPAWN_STARTS)
            )
        return found

    def spawns_on_one_gpu(self, module: str) -> bool:
        """Whether script `module` runs as one process on its machine because it sees one GPU:
        it or a project module it imports sets CUDA_VISIBLE_DEVICES to one GPU index, a literal,
        in code that runs at import (`os.environ["CUDA_VISIBLE_DEVICES"] = "0"` at the top level,
        `_pins_one_gpu`; none of them names that variable otherwise), the only processes they
        may start are torch.multiprocessing spawns of `torch.cuda.device_count()` processes
        (`_spawns_per_gpu`), which is then one, and no launch command runs it on several nodes.
        A launcher of several processes on one node would put them all on that GPU, which NCCL
        refuses; and the one process's device is cuda:0, where its checkpoints were saved."""
        key = ("spawns on one gpu", module)
        found = self._memo.get(key)
        if found is None:
            modules = list(reachable([module], self.imports_of)) if self.reach.is_entry(module) else []
            texts = [self.program.read(reached) for reached in modules]
            # Only a module whose text names the variable, or a spawn, has a tree worth reading
            # (transformers' and deepspeed's scripts reach hundreds of modules).
            pins = [None if text is None else _VISIBLE_GPUS in text and self._tree_answer(reached, text, _pins_one_gpu) for reached, text in zip(modules, texts)]
            found = self._memo[key] = (
                True in pins and None not in pins
                and all(
                    not any(start in text for start in _PER_GPU_SPAWNS) or self._tree_answer(reached, text, _spawns_per_gpu) is not False
                    for reached, text in zip(modules, texts) if text is not None
                )
                and self._starts_nothing(modules, tuple(start for start in _SPAWN_STARTS if start not in _PER_GPU_SPAWNS))
                and not any(_several_nodes(command.command) for command in self.module_view(module).launches(own=True))
            )
        return found

    def spawns_one(self, module: str) -> bool:
        """Whether entry script `module` runs its code in one process: it or a project module it
        imports spawns with torch.multiprocessing (a script that spawns nothing is started by
        something else), the only processes they may start are such spawns of one process
        each (`nprocs=1` or the default, `_spawns_only`; or a count made of the script's options
        that every documented run of it makes one: `args.world_size = args.nodes * args.gpus`
        with `--gpus 1` and `--nodes` left at 1, ProjectView.run_values), and no launch command
        of the project runs it (`_unlaunched`): `python eval.py` spawns one worker, a world of one."""
        key = ("spawns one", module)
        found = self._memo.get(key)
        if found is None:
            modules = list(reachable([module], self.imports_of)) if self.reach.is_entry(module) else []
            texts = [self.program.read(reached) for reached in modules]
            view = self.module_view(module)
            sizes = functools.cache(lambda: self._group_sizes(modules, texts))

            def one_world(count: ast.expr) -> bool:  # a count made of options, and so every group's size
                return bool(view.runs()) and _one_in_every(view.run_values(count)) and sizes() is not None and all(
                    _one_in_every(view.run_values(size)) for size in sizes()
                )

            def spawns_one(tree: ast.Module) -> bool:
                return _spawns_only(tree, _ONE, one_world)

            found = self._memo[key] = (
                bool(modules) and None not in texts and self._unlaunched(module)
                and any(  # a spawn call, not its text in a comment (none: something else starts it)
                    any(start in text for start in _PER_GPU_SPAWNS) and self._tree_answer(reached, text, _spawns_at_all)
                    for reached, text in zip(modules, texts)
                )
                and all(
                    not any(start in text for start in _PER_GPU_SPAWNS) or self._tree_answer(reached, text, spawns_one) is True
                    for reached, text in zip(modules, texts)
                )
                and self._starts_nothing(modules, tuple(start for start in _SPAWN_STARTS if start not in _PER_GPU_SPAWNS))
            )
        return found

    def _group_sizes(self, modules: list[str], texts: list[str | None]) -> list[ast.expr] | None:
        """What the process groups `modules` start are told their size may be (`_group_sizes`
        of each); None where one is not shown."""
        found: list[ast.expr] = []
        for reached, text in zip(modules, texts):
            sizes = self._tree_answer(reached, text, _group_sizes) if text is not None and _GROUP_START in text else []
            if sizes is None:
                return None
            found += sizes
        return found

    def _tree_answer(self, module: str, text: str, question):
        """`question` of `module`'s `ast` (its text is `text`); None where it does not parse."""
        tree = self.program.tree(module, text)
        return question(tree) if tree is not None else None

    def _starts_nothing(
        self, modules: list[str], starts: tuple[str, ...] = _RUN_STARTS, live: frozenset[str] | None = None,
        imported: frozenset[str] = frozenset(),
    ) -> bool:
        """Whether none of `modules` (a script and what it imports) may start processes, a
        process group or a framework's launcher: none has the text of one (`starts`) where its
        code may run it (`_may_start`: a call written in a comment, a shell-out of another
        program than Python or a launcher, `os.system("mkdir %s" % path)`, a process group
        of one member, `init_process_group(..., world_size=1)`, and a DataLoader with no
        workers start nothing),
        except inside top-level functions or classes that no module of them names (a utils
        module's `init_distributed()` that the evaluation script never calls; as `names_said`
        reads names: a function's own local of that name, `run = wandb.init()`, or a string
        default, `exp_name="run"`, names no `def run`); with `live` (the
        modules among them that code outside the project calls, all of whose functions run):
        that no code of them that may run names (`_live_names`: an import alone, or a name
        written only in a function that never runs, does not run a function); nor the
        `if __name__ == "__main__":` block of a module of `imported` (modules that are never
        the script there). Each module's own facts (`_names_said`, `_starting_statements`) are
        kept per module: the scripts of a project reach the same modules, parsed once."""
        program, texts = self.program, {}
        for module in modules:
            texts[module] = program.read(module)
            if texts[module] is None:
                return False
        module_starts = {module: _starts_in(texts[module], starts) for module in modules}
        starting = [module for module in modules if module_starts[module]]
        if not starting:
            return True
        if live is None:
            said = [self._names_said(module, texts[module]) for module in modules]
            if None in said:
                return False  # a module that does not parse
        else:
            trees = [program.tree(module, texts[module]) for module in modules]
            if None in trees:
                return False
        defined: set[str] = set()  # the functions and classes whose code may start one
        for module in starting:
            for in_main, name in self._starting_statements(module, texts[module], module_starts[module]):
                if in_main and module in imported:
                    continue  # an imported module's `__main__` block: it runs only as the script
                if name is None:
                    return False
                defined.add(name)
        if not defined:
            return True
        if live is None:
            return not any(defined & names for names in said)  # type: ignore[operator]
        return not defined & _live_names(trees, [tree for module, tree in zip(modules, trees) if module in live])  # type: ignore[arg-type]

    def _names_said(self, module: str, text: str) -> frozenset[str] | None:
        """`names_said` of `module`'s tree (its text is `text`), kept per module and text; None
        where it does not parse."""
        key = ("names said", module)
        found = self._memo.get(key)
        if found is None or found[0] != hash(text):
            tree = self.program.tree(module, text)
            found = self._memo[key] = (hash(text), frozenset(names_said(tree)) if tree is not None else None)
        return found[1]

    def _starting_statements(self, module: str, text: str, starts: tuple[str, ...]) -> tuple[tuple[bool, str | None], ...]:
        """The top-level statements of `module` (its text is `text`, which parses) whose code
        may run one of `starts` (`_may_start`), each as (whether it is the `if __name__ ==
        "__main__":` block, the name of the function or class it defines, or None for other
        code), kept per module, text and starts."""
        key = ("starting statements", module, starts)
        found = self._memo.get(key)
        if found is None or found[0] != hash(text):
            lines, statements = text.splitlines(), []
            for statement in self.program.tree(module, text).body:  # type: ignore[union-attr]
                code = "\n".join(lines[statement.lineno - 1 : statement.end_lineno])
                if not any(start in code and _may_start(statement, start) for start in starts):
                    continue
                in_main = isinstance(statement, ast.If) and _tests_main(statement.test)
                named = isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                statements.append((in_main, statement.name if named else None))  # type: ignore[attr-defined]
            found = self._memo[key] = (hash(text), tuple(statements))
        return found[1]

    def imports_of(self, module: str) -> list[str]:
        """The project modules `module` imports, also everything from (`from core.args import *`)
        (once per project: `run_by_ranks` asks it of every script that runs each file; the
        caller must not change the list)."""
        key = ("imports of", module)
        found = self._memo.get(key)
        if found is None:
            view, facts = self.module_view(module), self.modules[module]
            origins = (*facts["imports"].values(), *facts["stars"])
            splits = (self.program.split(view.absolute(origin), module) for origin in origins)
            found = self._memo[key] = [split[0] for split in splits if split is not None]
        return found

    def nested_imports(self, module: str) -> list[str]:
        """The project modules `module` imports inside a function or an `if` (`from
        configs.cifar100 import get_args_parser` in the branch that picks a config's parser),
        which `imports_of` (top-level imports) does not hold."""
        key = ("nested imports", module)
        found = self._memo.get(key)
        if found is None:
            text = self.program.read(module) or ""
            tree = self.program.tree(module, text) if "\n " in text and "import " in text else None
            top = set(tree.body) if tree is not None else set()
            origins = [
                f"{'.' * node.level}{node.module or ''}.{alias.name}" if isinstance(node, ast.ImportFrom) else alias.name
                for node in (walk(tree) if tree is not None else ())
                if isinstance(node, (ast.Import, ast.ImportFrom)) and node not in top
                for alias in node.names if alias.name != "*"
            ]
            view = self.module_view(module)
            splits = (self.program.split(view.absolute(origin), module) for origin in origins)
            found = self._memo[key] = sorted({split[0] for split in splits if split is not None} - {module})
        return found

    def run_by_demos_alone(self, module: str) -> bool:
        """Whether only single-process scripts run `module`: it is imported, the modules that
        import it (at any depth) name nothing distributed, those of them no module imports are
        entry scripts that run as one process (`one_process_script`), through which all the
        others are reached, and neither it nor they hold a launch point of Lightning, Fabric or
        Accelerate (a LightningModule runs on every rank its Trainer starts). For
        ProjectView.single_process: a week's `data.py` that only that week's plain `train.py`
        imports, in a repository whose other weeks run DDP."""
        program = self.program
        importers = set(reachable(program.importers_of(module), program.importers_of)) - {module}
        roots = [importer for importer in importers if not program.importers_of(importer)]
        if not roots or any(self.modules[importer]["dist"] for importer in importers):
            return False
        if not all(self.one_process_script(root) for root in roots):
            return False
        if not importers <= set(reachable(roots, self.imports_of)):
            return False  # some only in an import cycle of their own
        texts = (program.read(found) for found in sorted({module, *importers}))  # read last: rarely asked
        return not any(text is None or any(point in text for point in LAUNCH_POINT_TEXT) for text in texts)


# The last names of the calls that run a shell command (`subprocess.run`, `os.system`, `Popen`).
_SHELL_OUTS = frozenset(("Popen", "run", "call", "check_call", "check_output", "system"))
# The programs whose run may start ranks: Python, a shell, a launcher, a variable's value
# (`$CMD`), or an environment setting before the program (`CUDA_VISIBLE_DEVICES=0 python ...`).
_RANK_PROGRAM = re.compile(r"python[\d.]*|(?:ba|z)?sh|env|nohup|exec|torchrun|deepspeed|accelerate|mpirun|mpiexec|srun|sbatch|horovodrun|composer|.*[=$].*")
_GROUP_START = "init_process_group"


def _starts_in(text: str, starts: tuple[str, ...]) -> tuple[str, ...]:
    """The starts whose text `text` holds. A `Trainer(` only in a module that names Lightning:
    Hugging Face's Trainer (and TRL's) runs in the one process `python x.py` starts, and starts
    no process group there; Lightning's is imported from a module named for it."""
    return tuple(start for start in starts if start in text and (start != _TRAINER_START or "lightning" in text))


def _run_script(command: str) -> str | None:
    """The file name of the script a plain run runs (`python tools/train.py --x 1`: train.py)."""
    found = _PLAIN_RUN.search(command)
    return os.path.basename(found.group().split()[-1]) if found else None


def _continued(lines: list[str], index: int, most: int = _MOST_CONTINUED_LINES) -> str:
    """The command that starts on `lines[index]`, with the lines a trailing `\\` continues it
    onto (`python train.py --dim 256 \\` / `--accu 4`)."""
    command = [lines[index]]
    while command[-1].rstrip().endswith("\\") and index + len(command) < len(lines) and len(command) < most:
        command.append(lines[index + len(command)])
    return "\n".join(command)


def _may_start(statement: ast.stmt, start: str) -> bool:
    """Whether the code of a top-level statement whose text holds `start` may run it: a start
    written as a call (`spawn(`, `os.system(`) only where the statement calls that name (not in
    a comment or a string: `#launch(main, 2)`), a shell-out only where the command is not written
    out as another program's (`os.system("mkdir %s" % path)` starts no Python); a process group
    only where a call of it may have more members than one (`_group_of_one`), or its text is
    not a call the statement makes; any other start (`torchrun`) by its text in the code, not
    in a comment (`# launched with torch.distributed.launch` starts nothing)."""
    if start in _LOADER_WORDS:
        return _loader_words_left(statement, start)
    if start == _GROUP_START:
        groups = [call for call in walk(statement) if isinstance(call, ast.Call) and _last_name(call) == start]
        return not groups or not all(_group_of_one(call) for call in groups)
    if not start.endswith("("):
        return start in ast.unparse(statement)
    name = start[:-1]
    for call in walk(statement):
        if not isinstance(call, ast.Call):
            continue
        called = dotted(call.func) or (call.func.attr if isinstance(call.func, ast.Attribute) else "")
        if not called.endswith(name) or called.rpartition(".")[2] != name.rpartition(".")[2]:
            continue  # (the text `Pool(` is in `ROIPool(` and `ThreadPool(`, which start no process)
        command = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "args"), None)
        if name.rpartition(".")[2] not in _SHELL_OUTS:
            return True
        commands = [command]
        if isinstance(command, (ast.Name, ast.Attribute)):  # `cmd = "mkdir -p %s" % out` before `os.system(cmd)`, also `self.cmd`
            spelled = ast.unparse(command)
            bound = [node.value for node in walk(statement) if isinstance(node, ast.Assign)
                     and any(ast.unparse(target) == spelled for target in node.targets)
                     and not any(isinstance(n, (ast.Name, ast.Attribute)) and ast.unparse(n) == spelled for n in walk(node.value))]  # (`cmd = cmd.format(...)`)
            commands = bound or commands
        # `cmd = "nvidia-smi -L" if linux else "nvidia-smi -L | find"`: either command may run
        commands = [branch for each in commands for branch in ((each.body, each.orelse) if isinstance(each, ast.IfExp) else (each,))]
        if any(_RANK_PROGRAM.fullmatch(_program(each)) for each in commands):
            return True
    return False


def _live_names(trees: list[ast.Module], called: list[ast.Module]) -> set[str]:
    """The names that code of the modules `trees` that may run says (as `names_said`): their
    top-level statements other than imports and definitions (whose decorators and bases run),
    the names of the functions and classes that modules `called` define (code outside calls
    them), then the bodies of the top-level functions and classes of a name said so, until no
    more are said. A function only imported, or named only in a function that never runs, is not."""
    defined: dict[str, list[ast.stmt]] = {}
    said: set[str] = {
        statement.name for tree in called for statement in tree.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    for tree in trees:
        for statement in tree.body:
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.setdefault(statement.name, []).append(statement)
                for runs in (*statement.decorator_list, *getattr(statement, "bases", ()), *getattr(statement, "keywords", ())):
                    said |= names_said(runs)
            else:
                said |= names_said(statement)
    pending = [name for name in said if name in defined]
    while pending:
        for statement in defined.pop(pending.pop(), ()):
            found = names_said(statement)
            pending.extend(name for name in found - said if name in defined)
            said |= found
    return said


# Text of DataLoader workers (`TENSOR_CROSSINGS`) that a DataLoader with no workers accounts for.
_LOADER_WORDS = ("DataLoader", "dataloader", "workers")


def _loader_words_left(statement: ast.stmt, word: str) -> bool:
    """Whether the code of `statement` says `word` (`_LOADER_WORDS`) other than in a DataLoader
    call that starts no worker (`_without_workers`), a comment, a docstring or the strings of an
    option's declaration (`parser.add_argument("--num_workers", help="DataLoader workers")`
    starts none: a loader given the parsed count says it again); an import says it only where
    it renames what it imports (`import DataLoader as Loader`: its calls do not)."""
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return any(alias.asname and word in alias.name for alias in statement.names)
    copy = copy_tree(statement)  # changed below; the program's tree is shared
    for node in walk(copy):
        if isinstance(node, ast.Call) and _without_workers(node):
            node.func = ast.Name("Loader", ast.Load())
            node.keywords = [keyword for keyword in node.keywords if keyword.arg != "num_workers"]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            node.args = [arg for arg in node.args if not _string(arg)]
            node.keywords = [keyword for keyword in node.keywords if not _string(keyword.value)]
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body[0] = ast.Pass()  # a docstring
    return word in ast.unparse(copy)


def _string(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and isinstance(expr.value, str)


def _without_workers(call: ast.Call) -> bool:
    """A DataLoader call that starts no worker: `num_workers` left out (its default 0) or a
    literal 0, given at most five positional arguments (the sixth is `num_workers`), none unpacked
    (`*args`, `**kw`)."""
    if _last_name(call) != "DataLoader" or len(call.args) > 5 or any(isinstance(arg, ast.Starred) for arg in call.args):
        return False
    if any(keyword.arg is None for keyword in call.keywords):
        return False
    counts = [keyword.value for keyword in call.keywords if keyword.arg == "num_workers"]
    return all(isinstance(count, ast.Constant) and count.value == 0 and type(count.value) is int for count in counts)


def _last_name(call: ast.Call) -> str:
    return (dotted(call.func) or "").rpartition(".")[2]


def _guarded_calls(tree: ast.Module) -> Iterator[tuple[ast.Call, list[tuple[ast.expr, bool]]]]:
    """Every call of the module with the tests of the `if`s around it (and whether it is in
    the body of each, not its `else`), outermost first."""
    pending: list[tuple[ast.AST, list[tuple[ast.expr, bool]]]] = [(tree, [])]
    while pending:
        node, guards = pending.pop()
        if isinstance(node, ast.Call):
            yield node, guards
        if isinstance(node, ast.If):
            pending += [(child, [*guards, (node.test, True)]) for child in node.body]
            pending += [(child, [*guards, (node.test, False)]) for child in node.orelse]
            pending.append((node.test, guards))
        else:
            pending += [(child, guards) for child in ast.iter_child_nodes(node)]


_LAUNCHER_ENVIRONMENT = frozenset({"WORLD_SIZE", "RANK", "LOCAL_RANK"})


def _modes_in(tree: ast.Module, view: ProjectView) -> frozenset[str]:
    """The options off unless passed, declared by `view`'s parsers, whose truth guards a start of
    a process group in `tree` (Project.distributed_modes)."""
    if not any(_starts_group(node) for node in ast.walk(tree)):
        return frozenset()
    starters = {_GROUP_START} | {
        node.name for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(_starts_group(call) for call in ast.walk(node))
    }
    switches = {
        switch for call, guards in _guarded_calls(tree) if _last_name(call) in starters and not _group_of_one(call)
        for test, in_body in guards for switch in _switches_on(test, in_body)
    }
    if not switches:
        return frozenset()
    options = DeclaredOptions()
    options.add(view.own_options())
    options.add(view.imported_options())
    shown = {switch: options.shown(switch.attr) for switch in switches}
    return frozenset(
        switch.attr for switch in switches
        if shown[switch] is not None and shown[switch][1] in (False, None, 0)
        or shown[switch] is None and _turned_on_by_a_config(switch, view)
    )


def _turned_on_by_a_config(switch: ast.Attribute, view: ProjectView) -> bool:
    """Whether a config file the project ships nearest the script (ProjectView.nearest_configs)
    sets the key path of `switch` true (`cfg.DISTRIBUTED`, `cfg.TRAIN.DDP`: the attributes
    after the root name): a run with that file takes the distributed mode (HRNet-Hand's FreiHand
    configs, `DISTRIBUTED: true`)."""
    keys = tuple((dotted(switch) or "").split(".")[1:])
    files = [path for kind in configs.CONFIG_SUFFIXES for path in view.nearest_configs(kind)] if keys else []
    return any(view.config_value(path, keys) == (True,) for path in files)


def _starts_group(node: ast.AST) -> bool:
    """A call of `init_process_group` for more than one member."""
    return isinstance(node, ast.Call) and _last_name(node) == _GROUP_START and not _group_of_one(node)


def _switches_on(test: ast.expr, in_body: bool) -> Iterator[ast.Attribute]:
    """The attributes whose truth the `in_body` side of `if test:` needs: `args.ddp` (body),
    `args.ddp and x` (body), `not args.ddp` (its `else`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _switches_on(test.operand, not in_body)
    elif in_body and isinstance(test, ast.Attribute):
        yield test
    elif in_body and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for value in test.values:
            yield from _switches_on(value, True)


def _launcher_test(test: ast.expr, in_body: bool, local_rank_unset: bool) -> bool:
    """Whether code on the `in_body` side of `if test:` runs only where a launcher started the
    process: `args.local_rank != -1` (or `>= 0`, `> -1`; `== -1` on its `else` side) with the
    option's default -1 (`local_rank_unset`), or `"WORLD_SIZE" in os.environ`; also as a part
    of `and` (its body) or of `or` (its `else`: `if args.local_rank == -1 or args.no_cuda:`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if in_body else ast.Or):
        return any(_launcher_test(value, in_body, local_rank_unset) for value in test.values)
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    left, operator, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(left, ast.Constant) and left.value in _LAUNCHER_ENVIRONMENT and dotted(right) == "os.environ":
        return isinstance(operator, ast.In) == in_body
    if not (local_rank_unset and isinstance(left, ast.Attribute) and left.attr == "local_rank" and isinstance(right, (ast.Constant, ast.UnaryOp))):
        return False
    try:
        value = ast.literal_eval(right)
    except ValueError:  # `-x`: not a literal
        return False
    launched = {
        (ast.NotEq, -1): True, (ast.Eq, -1): False, (ast.GtE, 0): True, (ast.Gt, -1): True, (ast.Lt, 0): False,
    }.get((type(operator), value))
    return launched is not None and launched == in_body


_VISIBLE_GPUS = "CUDA_VISIBLE_DEVICES"
_PER_GPU_SPAWNS = ("spawn(", "start_processes(")
_DEVICE_COUNT_CALL = re.compile(r"(?:[\w.]+\.)?device_count\(\)")


def _pins_one_gpu(tree: ast.Module) -> bool | None:
    """Whether the module's top-level code (also inside a top-level `if` or `try`) sets
    CUDA_VISIBLE_DEVICES to one literal GPU index (`os.environ["CUDA_VISIBLE_DEVICES"] = "3"`);
    None where it names the variable anywhere else (`= args.gpus`, a read, a second pin
    inside a function), so that what the process sees is not known."""
    statements, pinned = list(tree.body), 0
    while statements:
        statement = statements.pop()
        if isinstance(statement, (ast.If, ast.Try)):
            statements += [*statement.body, *statement.orelse, *getattr(statement, "finalbody", ())]
            statements += [line for handler in getattr(statement, "handlers", ()) for line in handler.body]
        elif (
            isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(target := statement.targets[0], ast.Subscript) and dotted(target.value) == "os.environ"
            and isinstance(target.slice, ast.Constant) and target.slice.value == _VISIBLE_GPUS
            and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)
            and statement.value.value.strip().isdigit()
        ):
            pinned += 1
    named = sum(isinstance(node, ast.Constant) and node.value == _VISIBLE_GPUS for node in ast.walk(tree))
    return None if named != pinned else pinned > 0


def _spawns_per_gpu(tree: ast.Module) -> bool:
    """Whether every torch.multiprocessing spawn of the module (`spawn`, `start_processes`)
    starts its default one process or `torch.cuda.device_count()` of them: the call as its
    `nprocs`, or a name or attribute every binding of which in the module is that call
    (`args.ngpus_per_node = torch.cuda.device_count()`; `+=` binds something else)."""
    return _spawns_only(tree, _DEVICE_COUNT_CALL)


def _group_sizes(tree: ast.Module) -> list[ast.expr] | None:
    """What each `init_process_group` call of the module is told its group's size is: its
    `world_size=`, a literal or every binding in the module of a name or attribute of that name
    (`world_size=cfg.world_size` with `args.world_size = args.nodes * args.gpus`, the namespace
    copied into the config); None where a call passes none (WORLD_SIZE from the environment) or
    the module binds it nowhere, or only adds to it."""
    bound = _bindings(tree, _own_name)
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _last_name(node) != _GROUP_START:
            continue
        size = next((keyword.value for keyword in node.keywords if keyword.arg == "world_size"), None)
        name = _own_name(size)
        values = [size] if isinstance(size, ast.Constant) else bound.get(name, []) if name is not None else []
        if not values or None in values:
            return None
        found += values  # type: ignore[arg-type]
    return found


def _bindings(tree: ast.Module, key: Callable[[ast.expr], str | None]) -> dict[str, list[ast.expr | None]]:
    """The values the module's assignments bind, by `key` of their target (targets it gives None
    are left out); None for an augmented assignment (`+=` binds something else) or a bare
    annotation."""
    bound: dict[str, list[ast.expr | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                name = key(target)
                if name is not None:
                    bound.setdefault(name, []).append(None if isinstance(node, ast.AugAssign) else node.value)
    return bound


def _own_name(expr: ast.expr | None) -> str | None:
    """The name an expression ends in: `args.world_size` and `world_size` are `world_size`."""
    return expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else None


def _tests_main(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(side, ast.Name) and side.id == "__name__" for side in sides) and any(
        isinstance(side, ast.Constant) and side.value == "__main__" for side in sides
    )


def _scope_key(scope: tuple[tuple[str, bool, bool], ...]) -> str | None:
    """The key of the function the definitions `scope` (outermost first, as (name, is a class,
    is decorated)) name: "" for a module's own code, `name` for a top-level function,
    `Class.name` for a method of a top-level class; None for any other scope."""
    if not scope:
        return ""
    if len(scope) == 1 and not scope[0][1] or len(scope) == 2 and scope[0][1] and not scope[1][1]:
        return ".".join(name for name, _, _ in scope)
    return None


def _one_in_every(values: list[object] | None) -> bool:
    """Whether the values a count has in the documented runs are all the whole number 1."""
    return bool(values) and all(type(value) is int and value == 1 for value in values)


_ONE = re.compile(r"1")


def _spawns_at_all(tree: ast.Module) -> bool:
    """Whether the module calls a torch.multiprocessing spawn (by its last name)."""
    return any(isinstance(node, ast.Call) and _last_name(node) + "(" in _PER_GPU_SPAWNS for node in ast.walk(tree))


def _spawns_only(tree: ast.Module, count: re.Pattern, runs_one: Callable[[ast.expr], bool] | None = None) -> bool:
    """Whether every torch.multiprocessing spawn of the module starts its default one process
    or `count` of them (the text of its `nprocs`, or of every binding in the module of the name
    or attribute given as its `nprocs`), or one where `runs_one` says that expression is one in
    every documented run (`args.nodes * args.gpus`, ProjectView.run_values)."""
    bound = _bindings(tree, ast.unparse)

    def counted(value: ast.expr | None) -> bool:
        return value is not None and (count.fullmatch(ast.unparse(value)) is not None or runs_one is not None and runs_one(value))

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _last_name(node) + "(" not in _PER_GPU_SPAWNS:
            continue
        counts = [keyword.value for keyword in node.keywords if keyword.arg == "nprocs"] + node.args[2:3]
        if not counts:
            continue  # its default, one process
        values = [counts[0]] if count.fullmatch(ast.unparse(counts[0])) else bound.get(ast.unparse(counts[0])) or [counts[0]]
        if not all(counted(value) for value in values):
            return False
    return True


def _several_nodes(command: str) -> bool:
    """Whether a launch command names a count of nodes other than one (`--nnodes 2`)."""
    nodes = _NODES.search(command)
    return nodes is not None and nodes.group(1).strip("'\"") not in ("1", "1:1")


def _group_of_one(node: ast.AST) -> bool:
    """`init_process_group(..., world_size=1)`: a process group of one member, whoever runs it."""
    return isinstance(node, ast.Call) and _last_name(node) == _GROUP_START and any(
        k.arg == "world_size" and isinstance(k.value, ast.Constant) and k.value.value == 1 for k in node.keywords
    )


def _program(command: ast.expr | None) -> str:
    """The program a shell-out's command runs, where it is written out: the first word of a
    string, also formatted (`"mkdir %s" % path`, `"rm {}".format(p)`, an f-string), or the first
    item of an argument list; "$" where it is not written out."""
    if isinstance(command, ast.BinOp) and isinstance(command.op, ast.Mod):
        command = command.left
    elif isinstance(command, ast.Call) and isinstance(command.func, ast.Attribute) and command.func.attr == "format":
        command = command.func.value
    elif isinstance(command, ast.JoinedStr):
        command = command.values[0] if command.values else None
    elif isinstance(command, (ast.List, ast.Tuple)):
        command = command.elts[0] if command.elts else None
    if not isinstance(command, ast.Constant) or not isinstance(command.value, str) or not command.value.split():
        return "$"
    return posixpath.basename(command.value.split()[0])


def _placeholder_for(command: str, name: str) -> bool:
    """Whether `command` runs a script whose name is a template that `name` fills: `torchrun
    --nproc_per_node N train_xxx.py` in a README stands for each of `train_pretrain.py`,
    `train_sft.py` (`xxx`, `XXX` or `*` in the name: any word)."""
    for script in _TEMPLATE_SCRIPT.findall(command):
        parts = re.split(r"x{3,}|X{3,}|\*", os.path.basename(script))
        if len(parts) > 1 and re.fullmatch(r"\w+".join(re.escape(part) for part in parts), name):
            return True
    return False


# `accelerate launch --config_file x.yaml` (also `--config-file`), and the flags that decide
# how many processes it starts whatever the file says.
_CONFIG_FILE = re.compile(r"--config[_-]file(?:=|[ \t]+)(\S+)")
_ACCELERATE_COUNT_FLAGS = ("--num_processes", "--num-processes", "--num_machines", "--num-machines", "--tpu")


def _folders_above(folder: str) -> Iterator[str]:
    """The folders above `folder` (a path relative to the root), nearest first, the root excluded."""
    while folder:
        folder = posixpath.dirname(folder)
        if folder:
            yield folder


def _launch_commands(relative: str, text: str, settle: Callable | None = None) -> list[LaunchCommand]:
    """The commands of the document `relative` that run a launcher, each with the lines it
    continues onto: those after a backslash, and in a document whose line breaks a command
    over without one (`python -m torch.distributed.launch --nproc_per_node=8` above
    `train.py \\`), the next line when it starts with the script the command has not named.
    `settle`: what the project makes of each command, given the document's shell (`cd`s and
    variables before it: Project._settled)."""
    found = []
    lines = split_lines(text)
    script_lines = Shell(lines, relative.endswith((".md", ".rst")))
    for index, line in enumerate(lines):
        if not any(needle in line for launcher in LAUNCHERS.values() for needle in launcher.needles):
            continue
        end = index
        while end + 1 < len(lines) and end - index < _MOST_CONTINUED_LINES - 1 and (
            lines[end].rstrip().endswith("\\") or end == index and _SCRIPT_FIRST.match(lines[end + 1]) and ".py" not in line
        ):
            end += 1
        command = "\n".join(lines[index : end + 1])
        for part in _inline_commands(command) if end == index else (command,):
            joined = re.sub(r"\\?\n", " ", part)
            launcher = next((launcher for launcher in LAUNCHERS.values() if launcher.pattern.search(joined)), None)
            if launcher is not None:
                command = LaunchCommand(Place(relative, index + 1), part, launcher.name)
                before = joined[: launcher.pattern.search(joined).start()]  # type: ignore[union-attr]
                found.append(settle(command, script_lines, script_lines.at(index, before)) if settle is not None else command)
    return found


def _one_process(command: LaunchCommand) -> bool:
    """Whether `command` starts one process: its launcher's flags say so with numbers, or,
    without them, the configuration file it names (`accelerate launch --config_file x.yaml`),
    or torch's launcher is left to its default (`_torch_default`)."""
    count = LAUNCHERS[command.launcher].processes(command.command)
    return (count if count is not None else command.processes) == 1 or _torch_default(command)


# torch/distributed/run.py's parser, which torch.distributed.launch's extends, declares
# `--nproc-per-node` (also `--nproc_per_node`) with default "1" and `--nnodes` with "1:1": a
# command that passes neither starts one process. Its options may also come from PET_*
# variables, and argparse takes an abbreviation (`--nproc 4`).
_COUNT_OPTIONS = re.compile(r"(?<![\w-])--n(?:proc|nodes?)\w*|PET_")
_ONE_NODE = re.compile(r"(?<![\w-])--nnodes(?:=|[ \t]+)['\"]?1(?::1)?['\"]?(?!\S)")
# What ends a torch launcher's own options: the script (`train.py`, `$DIR/train.py`) or module.
_LAUNCHED = re.compile(r"(?<!\S)(?:[\w.$/{}+-]*\.py(?!\S)|(?:-m|--module)[ \t]+\w)")


def _torch_default(command: LaunchCommand) -> bool:
    """Whether `command` runs torchrun or torch.distributed.launch with neither a count of
    processes nor of nodes other than one among the launcher's own options (those before the
    script), no shell variable there that may hold one (`$DIST_ARGS`, `"$@"`), and no other
    launcher around it (`srun torchrun`): the one process torch's defaults start."""
    if command.launcher not in (OLD_LAUNCHER_MODULE, "torchrun"):
        return False
    joined = re.sub(r"\\?\n", " ", command.command)
    launcher = LAUNCHERS[command.launcher].pattern.search(joined)
    script = _LAUNCHED.search(joined, launcher.end()) if launcher is not None else None
    if launcher is None or script is None:
        return False
    options, before = _ONE_NODE.sub("", joined[launcher.end() : script.start()]), joined[: launcher.start()]
    return "$" not in options and not _COUNT_OPTIONS.search(options + before) and not any(
        other.pattern.search(before) for other in LAUNCHERS.values()
    )


_PER_NODE = re.compile(r"--nproc[_-]per[_-]node[= \t]+['\"]?1['\"]?(?![\w.])")
_NODES = re.compile(r"--nnodes[= \t]+(\S+)")


def _one_per_node(command: str) -> bool:
    """A torchrun-style command for one process: `--nproc_per_node 1` on one node."""
    nodes = _NODES.search(command)
    return _PER_NODE.search(command) is not None and (nodes is None or nodes.group(1).strip("'\"") == "1")


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


# `$1`, `${2}`, `${@:3}`, `$@`, `$*`: what a shell script was given
_POSITIONAL = re.compile(r"\$\{?([1-9])\}?|\$\{@:([1-9])\}|\$[@*]|\$\{[@*]\}")


def _wrapper_calls(relative: str, text: str, wrapper_path: str, wrapper: LaunchCommand) -> list[LaunchCommand]:
    """The commands of document `relative` that run the shell script `wrapper_path` (by a path
    that ends its own), as its launch `wrapper` with their arguments in place of its own."""
    found = []
    named = re.compile(rf"(?<![\w.+-])(?:[\w.$/{{}}+-]*/)?{re.escape(os.path.basename(wrapper_path))}(?![\w.-])")
    for index, line in enumerate(split_lines(text)):
        match = named.search(line)
        written = match.group(0).lstrip("./") if match is not None else ""
        if match is None or not (wrapper_path.endswith("/" + written) or wrapper_path == written or "/" not in written):
            continue
        arguments = line[match.end() :].split("#", 1)[0].split()

        def given(reference: re.Match) -> str:
            if reference.group(1):
                number = int(reference.group(1))
                return arguments[number - 1] if number <= len(arguments) else ""
            return " ".join(arguments[int(reference.group(2)) - 1 :] if reference.group(2) else arguments)

        found.append(LaunchCommand(Place(relative, index + 1), _POSITIONAL.sub(given, wrapper.command), wrapper.launcher))
    return found


def _notebook_commands(text: str) -> str:
    """The shell commands of a notebook (`!bash tools/dist_run.sh ...` in a code cell), each at
    the line of the notebook's file that holds it as a string of a cell's source; every other
    line is left empty."""
    lines = []
    for line in split_lines(text):
        written = line.strip().rstrip(",")
        try:
            value = json.loads(written) if written.startswith('"!') else None
        except ValueError:
            value = None
        lines.append(value[1:].rstrip("\n") if isinstance(value, str) else "")
    return "\n".join(lines)


def _inline_commands(line: str) -> list[str]:
    """The commands of one line of a document: where an inline code span runs a script with a
    launcher, each span that names a launcher is a command of its own (in "[torchrun](...)
    (supersedes `torch.distributed.launch`): `torchrun train.py`" only the last runs one);
    otherwise the whole line, as in a shell script. A line whose launcher is named only in code
    spans that run no script is prose ("the training script, `main.py`, runs under `torchrun`"):
    no command."""
    spans = [span for span in _CODE_SPAN.findall(line) if any(launcher.names(span) for launcher in LAUNCHERS.values())]
    if any(".py" in span for span in spans):
        return spans
    outside = _CODE_SPAN.sub("", line)
    return [line] if not spans or any(launcher.names(outside) for launcher in LAUNCHERS.values()) else []


# A line that starts with a script's path (`train.py \`, `tools/train.py --cfg x`).
_SCRIPT_FIRST = re.compile(r"[ \t]*[\w./${}-]+\.py\b")


def _beside(files: frozenset[str], document_folder: str, path: str) -> str | None:
    """The project file (of `files`) a command's script `path` names from the folder of its
    document (`utils/train.py`, `../tools/train.py`, a bare name); None for a path from
    elsewhere (`$ROOT/train.py`, `/abs/train.py`) or where no such file is."""
    if "$" in path or "{" in path or path.startswith("/"):
        return None
    found = posixpath.normpath(posixpath.join(document_folder, path))
    return found if found in files else None


def _names_script(directory: str, relative: str, folder: str, document_folder: str) -> bool:
    """Whether a launch command's script path (its `directory` part, then the file name) names
    the project file `relative`, for a command written in a document in `document_folder`."""
    directory = re.sub(r"^(?:\$\{?\w+\}?/|\.\.?/)+", "", directory).lstrip("/")  # `$ROOT/`, `./`, `../../`
    if directory and "$" not in directory:
        return relative == directory + os.path.basename(relative) or relative.endswith("/" + directory + os.path.basename(relative))
    if directory:
        return False
    return (
        not document_folder
        or not folder
        or folder == document_folder
        or folder.startswith(document_folder + "/")
        or document_folder.startswith(folder + "/")
    )


# Calls that start or join the ranks, by the last part of their name (the summary reads no imports).
_RANK_STARTS = frozenset(("init_process_group", "spawn", "start_processes", "DistributedDataParallel", "Accelerator"))
# Such a name followed by its call's "(": only blanks, line continuations, comments and the
# ")" of a parenthesised callee can come between.
_RANK_START_CALL = re.compile(rf"\b(?:{'|'.join(sorted(_RANK_STARTS))})(?:[\s)\\]|#[^\n]*)*\(")


_PROCESS_SPAWNS = SPAWN | START_PROCESSES  # calls that start their first argument as each process's function


def _rank_start(program: Program, module: str) -> tuple[int, str] | None:
    """(line, "calls X") of the first call in `module` that starts or joins the ranks. A text
    where no such name is followed by a "(" is not parsed (a name is spelt as written, except
    in a non-ASCII text, where an identifier may normalise to one)."""
    text = program.read(module)
    if text is None or text.isascii() and _RANK_START_CALL.search(text) is None:
        return None
    found = None
    tree = program.tree(module, text)
    for node in walk(tree) if tree is not None else ():
        if type(node) is ast.Call:
            name = dotted(node.func) or ""  # type: ignore[attr-defined]
            if name.rpartition(".")[2] in _RANK_STARTS and (found is None or node.lineno < found[0]):  # type: ignore[attr-defined]
                found = (node.lineno, f"calls {name}")  # type: ignore[attr-defined]
    return found


def _nested(one: str, other: str) -> bool:
    """Whether one of two folders (relative, `/` between parts; "" for the root) holds the other."""
    return not one or not other or one == other or other.startswith(one + "/") or one.startswith(other + "/")


def _rank_start_by_helper(program: Program, module: str) -> tuple[int, str] | None:
    """(line, "calls X, which calls Y") of the first call in `module` of a project function of
    another module that starts the process group itself (`utils.init_distributed_mode(args)`,
    whose body calls `init_process_group`)."""
    summary = program.summary(module)
    if summary is None:
        return None
    found = None
    for function in (program.module_code(module), *summary.functions.values()):
        for call in function.invocations if function is not None else ():
            target = program.resolve(module, call.callee, function.cls)
            helper = program.function(*target.function) if target is not None and target.module != module else None
            if helper is not None and helper.process_groups and (found is None or call.line < found[0]):
                found = (call.line, f"calls {call.callee}, which calls {helper.process_groups[0].callee}")
    return found


class ProjectView:
    """The project seen from one module: resolves the names its semantic model qualifies."""

    def __init__(self, project: Project, module: str, is_package: bool) -> None:
        self.project = project
        self.module = module
        self.is_package = is_package
        self._hints: Hints | None = None
        self._launches_memo: dict[bool, tuple[LaunchCommand, ...]] = {}  # `launches` of the project's own commands

    @property
    def distributed(self) -> bool:
        return self.project.distributed

    @property
    def path(self) -> str:
        """This module's file, relative to the project root."""
        return self.project.relpaths[self.module]

    @property
    def torch_program(self) -> bool:
        """Whether this module is part of a torch program (Project.torch_program)."""
        return self.project.torch_program(self.module)

    @functools.cached_property
    def users(self) -> list[str]:
        """This module and the modules importing it, up to three imports away: the scripts a
        parser or helper defined here runs in (sorted)."""
        program = self.project.program
        scripts, pending = {self.module}, [self.module]
        for _ in range(3):
            pending = [importer for module in pending for importer in program.importers_of(module) if importer not in scripts]
            scripts.update(pending)
        return sorted(scripts)

    def launch_line(self, launcher: str | None = None, own: bool = False, written: bool = False) -> Place | None:
        """Where a shell script or document of the project runs this module's file, or a script
        that imports it, with `launcher` (a key of `torch_api.LAUNCHERS`; None: any of them) and
        more than one process; `own`: this module's file itself (its `__main__` code runs);
        `written`: where `--nproc_per_node 1` on one node also counts as one process (for a
        script written for DDP such a line is often a template; for one that names no DDP it
        is the only word on how many processes run it)."""
        return next(
            (
                command.place for command in self.launches(own=own)
                if launcher in (None, command.launcher) and not _one_process(command)
                and not (written and _one_per_node(command.command))
            ),
            None,
        )

    def launches(self, commands: list[LaunchCommand] | None = None, own: bool = False) -> list[LaunchCommand]:
        """The commands of the project's shell scripts and documents that run this module's
        file, or a script that imports it (a parser in `config.py`), with a launcher of
        `torch_api.LAUNCHERS` (or, given, among `commands`: Project.plain_runs), in the order of
        `users` (`own`: this module alone) and then of the documents. A command
        that runs the module by its name (`deepspeed --module start_training`) counts; one
        that names the script by a path (`basicsr/train.py`, `$DIR/tools/train.py`) counts from
        anywhere in the project when the path ends the script's own; a bare name counts from a
        document in the script's folder, above it, or in a folder inside it (`docs/`,
        `scripts/stage1/`: run from the folder that holds the script), where no folder between
        holds a file of that name. Either runs first the file the path names from the document's
        own folder: where that is another project file (`utils/train.py` in `recipe_a/run.sh` is
        `recipe_a/utils/train.py`), the command does not run this one. After a `cd` to a folder
        of the project, a path that names a file from there names that one (`_run_from`).
        The project's own commands are searched once per view (the language server asks on
        every keystroke; what it reads, the project's documents and users, lives with the view)."""
        if commands is None:
            if own not in self._launches_memo:
                self._launches_memo[own] = tuple(self._launches(self.project.launch_commands, own))
            return list(self._launches_memo[own])
        return self._launches(commands, own)

    def _launches(self, commands: list[LaunchCommand], own: bool) -> list[LaunchCommand]:
        found: list[LaunchCommand] = []
        for module in ([self.module] if own else self.users) if commands else ():
            relative = self.project.relpaths[module].replace(os.sep, "/")
            folder, name = os.path.dirname(relative), os.path.basename(relative)
            # a folder of the path may hold `+` (DENO4pytorch's `Demo/Turbulence_3d+t/`)
            named = re.compile(rf"(?<![\w.+-])((?:[\w.$/{{}}+-]*/)?){re.escape(name)}(?![\w.-])")
            as_module = re.compile(rf"(?<![\w-])(?:-m|--module)\s+{re.escape(module)}(?![\w.])")  # `deepspeed --module train`
            for command in commands:
                above = os.path.dirname(command.place.path.replace(os.sep, "/"))
                beside = f"{above}/{name}" if above else name
                below = folder.startswith(above + "/") if above else bool(folder)  # the script is inside the document's folder
                # a bare name is the file beside the document, or the closest one above it, or one below it where none is beside
                bare = relative == self._nearest(above, name) or below and beside not in self.project.files
                if command not in found and (as_module.search(command.command) or any(
                    ran == relative if (ran := self._run_from(command.runs_in, match.group(1) + name)) is not None else
                    _names_script(match.group(1), relative, folder, above) and (match.group(1) or bare)
                    and _beside(self.project.files, above, match.group(1) + name) in (relative, None)
                    for match in named.finditer(command.command)
                )):
                    found.append(command)
        return found

    def _run_from(self, runs_in: str | None, path: str) -> str | None:
        """The project file a command that a `cd` moved to the folder `runs_in` runs by the
        script path `path`: the file the path names from there; None where the folder is not
        known (a `cd` to a former name of the repository, `cd '/share/me/improvedABC'`, is as
        often the project's root as not), no such file is there, or the path goes through a
        variable: then the path is read as without a `cd`."""
        if runs_in is None or runs_in == UNKNOWN_FOLDER or "$" in path or "{" in path or path.startswith("/"):
            return None
        named = posixpath.normpath(posixpath.join(runs_in, path))
        return named if named in self.project.files else None

    def unnamed_launches(self) -> tuple[LaunchCommand, ...]:
        """The project's launch commands that name no script: each may run this one too
        (Project.unnamed_launches)."""
        return self.project.unnamed_launches

    def runs(self, own: bool = False) -> list[LaunchCommand]:
        """The commands of the project that run this module's file, or a script that imports it
        (not `own`: only those that name this file): with a launcher (`launches`) and with the
        interpreter itself (`python train.py --accu 4`, Project.plain_runs): every documented run."""
        return [*self.launches(own=own), *self.launches(self.project.plain_runs, own=own)]

    def runs_as_one_process(self, pools: bool = True, accelerator: bool = False) -> bool:
        """Whether this module is a script that runs as one process in every documented run
        (Project.one_process_run, with its `pools` and `accelerator`)."""
        return self.project.one_process_run(self.module, pools, accelerator)

    def starts_no_processes(self, pools: bool = True, tensors: bool = False, calling: str | None = None) -> bool:
        """Whether neither this module nor a project module it imports may start processes
        (Project.starts_no_processes); with `tensors`, whether no program this module runs in
        may start a process that tensors cross, DataLoader workers included
        (Project.shares_no_tensors); with `calling` (a qualified name this module calls), whether
        it names a function (or class) of a project module that, with what it imports, may start
        no process that tensors cross (Project.crosses_no_tensors): a call of it starts none."""
        if calling is not None:
            found = self.resolve(calling)
            module = found[0] if found is not None else self.project_module(self.absolute(calling).rpartition(".")[0])
            return module is not None and self.project.crosses_no_tensors(module)
        if tensors:
            return self.project.shares_no_tensors(self.module)
        return self.project.starts_no_processes(self.module, pools)

    def _nearest(self, folder: str, name: str) -> str | None:
        """The project file called `name` in `folder` or the closest folder above it, or None."""
        while True:
            path = f"{folder}/{name}" if folder else name
            if path in self.project.files:
                return path
            if not folder:
                return None
            folder = os.path.dirname(folder)

    def document(self, relative: str) -> str | None:
        """The text of a file of the project that is not a module (a config, a document), by
        its path relative to the project root (Project.document)."""
        return self.project.document(relative)

    def shipped_config(self, written: str, kind: str) -> str | None:
        """The project's config file of `kind` ("json", "yaml") that a path written in this
        module (`"configs/base.yaml"`, `"./config.json"`) names, read from the project root or
        from this module's folder or a folder above it (the folders a run may start in); None
        where it names none of them."""
        written = posixpath.normpath(written.replace(os.sep, "/"))
        if not written.endswith(configs.CONFIG_SUFFIXES[kind]) or written.startswith("../") or posixpath.isabs(written):
            return None
        shipped = set(self.project.config_files)
        folder = os.path.dirname(self.path.replace(os.sep, "/"))
        while True:
            path = posixpath.normpath(f"{folder}/{written}") if folder else written
            if path in shipped:
                return path
            if not folder:
                return None
            folder = os.path.dirname(folder)

    def nearest_configs(self, kind: str) -> tuple[str, ...]:
        """The project's config files of `kind` nearest this module: those in its folder or
        below it, or else in the closest folder above that holds any (the files a run of a
        script that is told its config file on the command line is given)."""
        files = [path for path in self.project.config_files if path.endswith(configs.CONFIG_SUFFIXES[kind])]
        folder = os.path.dirname(self.path.replace(os.sep, "/"))
        while True:
            found = tuple(path for path in files if not folder or path.startswith(folder + "/"))
            if found or not folder:
                return found
            folder = os.path.dirname(folder)

    def config_value(self, relative: str, keys: tuple[str, ...]) -> tuple:
        """`(value,)`, the value config file `relative` gives for `keys`, or `()` where it
        gives none (Project.config_value)."""
        value = self.project.config_value(relative, keys)
        return () if value is configs.MISSING else (value,)

    def describes_option(self, option: str, default: str) -> bool:
        """Whether the project's documents around this module tell the user to set `option`
        (Project.describes_option)."""
        return self.project.describes_option(option, default, os.path.dirname(self.path.replace(os.sep, "/")))

    def seen_from(self, module: str) -> ProjectView:
        """The project as another of its modules sees it (where a call there hands this module a value)."""
        return self.project.module_view(module)

    def own_options(self) -> DeclaredOptions:
        """The command-line options this module's own parser declares, with what it rebinds
        (read for another module's rule: a call here hands a function there `args.accum`)."""
        return self._options_of("own options", [self.module])

    def imported_options(self) -> DeclaredOptions:
        """The command-line options declared by the project modules this module imports (a
        script whose parser another module builds: `from utils.opts import parse_args`), with
        what those modules rebind (ddplint.model.parsers)."""
        return self._options_of("imported options", self.project.imports_of(self.module))

    def importer_options(self) -> DeclaredOptions:
        """The command-line options declared by the project modules that import this one, up
        to three imports away (`users`): a helper module that reads `args.accum_iter` from the
        namespace a script's parser built and handed it (`train_one_epoch(..., args=args)`);
        an option two of them declare differently is not shown (DeclaredOptions.add)."""
        return self._options_of("importer options", [user for user in self.users if user != self.module])

    def importer_parser_options(self) -> DeclaredOptions:
        """The command-line options declared by the project modules that the modules importing
        this one import (`users`, then `imports_of`): a helper module handed the namespace of a
        script whose parser a third module builds (`from colxlip.params import parse_args` in
        main.py, which imports `colxlip.train`), also inside a function or an `if` (the branch
        that picks one of several config modules' parsers)."""
        users = set(self.users)
        imported = {
            module for user in users - {self.module}
            for module in (*self.project.imports_of(user), *self.project.nested_imports(user))
        }
        return self._options_of("importer parser options", sorted(imported - users))

    def _options_of(self, kind: str, modules: Iterable[str]) -> DeclaredOptions:
        """The options the parsers of `modules` declare, together; remembered per module by `kind`."""
        key = (kind, self.module)
        found = self.project._memo.get(key)
        if found is None:
            found = self.project._memo[key] = DeclaredOptions()
            program = self.project.program
            for module in modules:
                text = program.read(module)
                declares = text is not None and ("add_argument(" in text or "Fire(" in text)  # argparse's, fire's
                declared = self.project.declared_in(module, text) if declares else None
                if declared is not None:
                    found.add(declared)
        return found

    def ranks_started(self) -> tuple[Place, str] | None:
        """Where a script that runs this module (it, or one importing it up to three imports
        away: `users`) starts or joins the ranks, and how ("calls init_process_group"): the
        first such call of the nearest such script; else its first call of a project function
        of another module that starts the process group itself (`utils.init_distributed_mode(args)`);
        None when none does."""
        for through_helper in (False, True):
            for module in sorted(self.users, key=lambda name: (name != self.module, name)):
                found = self._rank_start(module, through_helper)
                if found is not None:
                    line, how = found
                    return self.project.place(module, line), how
        return None

    @functools.cached_property
    def run_by_ranks(self) -> bool:
        """Whether code that starts or joins the ranks may run this module's functions: a
        script that runs it (`users`) starts them by its own code, or imports a module that
        does (`initialize_megatron()` of `megatron/initialize.py`, called by `tools/convert.py`)."""
        project = self.project
        for user in self.users:
            if any(self._starts_ranks(module) for module in (user, *project.imports_of(user))):
                return True
        return False

    def _starts_ranks(self, module: str) -> bool:
        return self._rank_start(module) is not None

    def _rank_start(self, module: str, through_helper: bool = False) -> tuple[int, str] | None:
        """`_rank_start` of a module whose text names distributed code, once per project; with
        `through_helper`, `_rank_start_by_helper` instead."""
        if not self.project.modules[module]["dist"]:
            return None
        memo, key = self.project._memo, ("ranks started", through_helper, module)
        if key not in memo:
            find = _rank_start_by_helper if through_helper else _rank_start
            memo[key] = find(self.project.program, module)
        return memo[key]

    def started_argument(self, callee: str, cls: str | None = None) -> int | None:
        """The position of the argument that a call of the project function `callee` (as this
        module writes it, inside class `cls`) starts as the processes' function: the helper
        hands that parameter, untouched, first to `mp.spawn` or `start_processes`
        (`start_dist_train(train, world_size)` in `utils.py`); None otherwise."""
        memo, key = self.project._memo, ("started argument", self.module, callee, cls)
        if key not in memo:
            memo[key] = self._started_argument(callee, cls)
        return memo[key]

    def _started_argument(self, callee: str, cls: str | None) -> int | None:
        program = self.project.program
        target = program.resolve(self.module, callee, cls)
        function = program.function(*target.function) if target is not None else None
        if function is None:
            return None
        params = function.arguments(target.bound)
        for handed in function.handed:
            if program.qualify(target.module, handed.callee) in _PROCESS_SPAWNS and handed.param in params:
                return params.index(handed.param)
        return None

    def builds_launcher(self) -> tuple[Place, str] | None:
        """Where a project function that this module calls builds the Accelerator it returns
        (`accelerator = train_util.prepare_accelerator(args)`: `accelerate launch` runs the
        module on every rank), and the call's name; None when none does."""
        program = self.project.program
        summary, code = program.summary(self.module), program.module_code(self.module)
        for function in (code, *summary.functions.values()) if summary is not None and code is not None else ():
            for call in function.invocations:
                qualified = program.qualify(self.module, call.callee)
                made = program.made_by(self.module, qualified, ACCELERATOR) if qualified else None
                if made is not None:
                    return made, call.callee
        return None

    def runs_python_before(self, minor: int) -> bool:
        """Whether every Python the project names for its runs is older than 3.`minor`
        (Project.python_minors); False where it names none."""
        minors = self.project.python_minors
        return bool(minors) and max(minors) < minor

    def never_runs(self, scope: tuple[tuple[str, bool, bool], ...]) -> bool:
        """Whether code of this module inside `scope` (the definitions around it, outermost first,
        as (name, is a class, is decorated)) never runs: in a training project, no entry point
        reaches it (ddplint.model.reach)."""
        return self.project.reach.never_runs(self.module, scope)

    def replaced(self, scope: tuple[tuple[str, bool, bool], ...], line: int) -> bool:
        """Whether `line` of this module, inside `scope` (as for `never_runs`), lies in a
        top-level function that the module defines again later, before anything can call it
        (Reach.replaced): every call through its name reaches the later definition."""
        return bool(scope) and not scope[0][1] and self.project.reach.replaced(self.module, line)

    def runs_alone(self, scope: tuple[tuple[str, bool, bool], ...]) -> bool:
        """Whether code of this module inside `scope` (as for `never_runs`) runs in one process
        only, in a training project: the function around it is named, in the code that runs
        (Reach.users), only by modules that run as one process (Project.runs_alone), and by one
        at least. The function is a top-level one or a method of a top-level class whose bases
        leave no framework to call it by its name (`_plain_class`); neither is decorated (a
        decorator may register it) nor a dunder (Python calls those)."""
        reach = self.project.reach
        if not reach.training or not scope:
            return False
        if scope[0][1]:
            if len(scope) < 2 or scope[1][1] or not self._plain_class(self.module, scope[0][0], scope[1][0]):
                return False
            name, _, decorated = scope[1]
        else:
            name, _, decorated = scope[0]
        if decorated or name.startswith("__") or reach.public(self.module, scope):
            return False  # a public name of an installed package: its users may call it on every rank
        users = reach.users(name)
        return bool(users) and all(self.project.runs_alone(user) for user in users)

    @functools.cached_property
    def _only_one_process_runs(self) -> bool:
        """Whether every script that runs this module (the `users` no module imports, and those
        that are scripts of their own, `if __name__ == "__main__":`) runs as one process
        (Project.runs_alone): a model file that imports torch.distributed, run only by a
        `python main.py` that wraps the model in DataParallel. False where a user's importers
        lie beyond `users`' three imports (not all scripts are known)."""
        return self._only_run_by(self.project.runs_alone)

    @functools.cached_property
    def unrun_test_script(self) -> bool:
        """Whether this module sits in a test suite's folder (`tests/`, `test/`, at any depth: a
        vendored `apex/tests/L0/`; not `tools/test_net.py`, an evaluation script) and no command
        of the project runs it, or a script that imports it, or may run it (Project._unlaunched:
        a launch of a script it does not name, where no document names this file): a test
        runner imports it, one process, and its `if __name__ == "__main__":` block runs where
        nothing the project shows starts it."""
        relative = self.path.replace(os.sep, "/")
        return _TEST_FOLDER.search(relative) is not None and not self.runs() and self.project._unlaunched(self.module)

    @functools.cached_property
    def one_rank(self) -> bool:
        """Whether this module runs in a world of one rank in every documented run: it runs as
        one process (`single_process`), or every script that runs it (as `_only_one_process_runs`
        finds them) does so or is launched only as one process (Project.launched_alone: the
        single-card copy of a DDP trainer, `torch.distributed.launch --nproc_per_node 1
        main.py`). A launcher may still start it (its options, its environment): only a harm
        that needs a second rank is ruled out."""
        project = self.project
        return self.single_process or self._only_run_by(lambda root: project.runs_alone(root) or project.launched_alone(root))

    @functools.cached_property
    def accelerate_by_hand(self) -> bool:
        """Whether every script that runs this module (as `_only_one_process_runs` finds them)
        joins the ranks only by building an Accelerator and no document launches it, while
        the project's launch commands run other scripts (Project.accelerate_run_by_hand): the
        project shows no run of several processes reaching this module, only the one process
        `python train.py` starts. An Accelerate script or trainer class that the project's
        documents never `accelerate launch`."""
        return self._only_run_by(self.project.accelerate_run_by_hand)

    def _only_run_by(self, alone: Callable[[str], bool]) -> bool:
        """Whether every script that runs this module (`_only_one_process_runs`) is `alone`."""
        program, users = self.project.program, self.users
        if self.project.reach.public(self.module, ()):
            return False  # users of the installed package may import it from their own ranks
        known = set(users)
        if any(not set(program.importers_of(user)) <= known for user in users):
            return False
        roots = [user for user in users if not program.importers_of(user) or self.project.modules[user].get("main")]
        if not roots or not all(alone(root) for root in roots):
            return False
        # An import the index did not resolve (in a `try:` block, inside a function, from a
        # folder on a script's path) may name it: any other module whose text names it is a
        # user not known. (Read only here, where the answer would otherwise be yes.)
        name = self.module.rpartition(".")[2]
        named = re.compile(rf"^\s*(?:from|import)\s+[\w.]*\b{re.escape(name)}\b", re.M)
        # a module whose import of that name resolved to another module of the same name
        # (`from model import Net` in a sibling folder's script) is not one of them
        namesakes = {importer for other in self.project.modules if other != self.module and other.rpartition(".")[2] == name
                     for importer in program.importers_of(other)}
        others = [module for module in self.project.modules if module not in known and module not in namesakes]
        texts = (program.read(module) for module in others)  # an empty `__init__.py` names nothing; an unread text may
        return len(others) <= _MAX_TEXT_SCAN and not any(named.search("import " + name if text is None else text) for text in texts)

    def _plain_class(self, module: str, cls: str, method: str) -> bool:
        """Whether no framework calls `method` of class `cls` of `module` by its name: each base is
        a project class for which that holds, `object`, a torch Module or Dataset, or a
        LightningModule for a method its Trainer does not call (a hook)."""
        program = self.project.program

        def no_caller(where: str, base: str) -> bool:
            qualified = program.qualify(where, base) or base
            if qualified in LIGHTNING_MODULE:
                return not lightning_hook(method)
            return qualified == "object" or qualified in NN_MODULE or qualified in DATASET

        return bases_hold(program, module, cls, no_caller)

    @functools.cached_property
    def accelerate_shards(self) -> bool:
        """Whether `accelerate launch` runs this module with DeepSpeed, FSDP or Megatron-LM only,
        never plain DDP: what an Accelerator prepares is then no DDP model. The launch flags of
        the project's commands that run it (`--use_deepspeed`, `--multi_gpu`) and the
        configuration files the project ships (Project.accelerate_kinds) all pick a sharding
        backend, and one at least does."""
        kinds = set(self.project.accelerate_kinds)
        for command in self.launches():
            if command.launcher == "accelerate":
                kinds |= {"sharded" for flag in ACCELERATE_SHARDED_FLAGS if flag in command.command}
                kinds |= {"ddp" for flag in ACCELERATE_DDP_FLAGS if flag in command.command}
        return kinds == {"sharded"}

    def never_named(self, name: str) -> bool:
        """Whether no code that runs in this training project names `name` (not a call, an
        import, an argument nor a string): a class that only a framework calls back (a Trainer
        callback) is never handed to it. False where that is not known (ddplint.model.reach)."""
        reach = self.project.reach
        return reach.training and not reach.may_use(name)

    def calls_on_every_rank(self, method: str) -> bool:
        """Whether code of the project that runs (Reach.users) calls a method named `method` on
        an object (`trainer._save(output_dir, state_dict=...)`) where every rank gets: no rank
        test around the call (ProcessContext.every_rank_at), in a function that not only rank 0
        runs. False where no such call is known."""
        program, context = self.project.program, self.context
        for module in self.project.reach.users(method) or ():
            summary = program.summary(module)
            for key, record in summary.context.items() if summary is not None else ():
                for call in record.calls:
                    head, _, name = call.callee.rpartition(".")
                    if name == method and head and context.every_rank_at(module, key or None, call.line) and not (
                        key and context.only_rank_zero(module, key)
                    ):
                        return True
        return False

    def switched_off(self, scope: tuple[tuple[str, bool, bool], ...], line: int) -> str | None:
        """The parameter under whose `if <parameter>:` `line` of this module, inside `scope` (as
        for `never_runs`), never runs: it defaults to a falsy literal and no call in the
        project passes it (ProcessContext.switched_off_at); None where that is not known. Only
        a top-level function or a method of a top-level class is asked about."""
        key = _scope_key(scope)
        if key is None:
            return None
        return (self.context.switched_off_at(self.module, key, line) if key else None) or self._option_off(key, line)

    def _assigned_on_the_way(self, name: str, allowed: int = 0) -> bool:
        """Whether a module of the runs of this one (a script that runs it, or a module such a
        script imports) assigns an attribute `name` (`args.distributed = True` in an
        `init_distributed_mode(args)` of `utils.py`, which has no parser of its own), more than
        `allowed` times in all (the one conversion of the parsed value a parser's module makes).
        The project's tests and what only they import are not on the way."""
        program, assigned = self.project.program, re.compile(rf"\.{re.escape(name)}\s*=(?!=)")
        # a test module sets options for its own runs (`args.fsdp = False`), never for a documented one
        users = [user for user in self.users if not self.project.is_test(user)]
        modules = {module for user in users for module in (user, *self.project.imports_of(user))}
        return sum(len(assigned.findall(program.read(module) or "")) for module in sorted(modules)) > allowed

    def _option_off(self, key: str, line: int) -> str | None:
        """The test of an `if` around `line` of function `key` ("": the module's own code) made
        of the switches of distributed training among the command-line options (`if
        args.use_ddp:`, `if self.args.distributed and rank == 0:`) that is false there in every
        documented run (ddplint.model.parsers.test_value): no documented run reaches that code, also
        where the project documents no run of the module's scripts. Other options are read on each
        documented run (`runs_reaching`), and only where there is one. None where no such test is known."""
        for guard in self.context.guards_at(self.module, key, line):
            if "." not in guard.test:
                continue
            try:
                test = ast.parse(guard.test, mode="eval").body
            except SyntaxError:
                continue
            if test_value(test, self._documented_option) is (not guard.sense):
                return guard.test
        return None

    def _documented_option(self, name: str) -> object:
        """The value every documented run gives the distributed switch stored under `name`
        (`distributed`, `use_ddp`: torch_api.distributed_flag), declared by this
        module's parser or one it imports: its default, where no command of the project that runs
        this module passes it, no document tells the user to set it, and no code rebinds it.
        NOT_SHOWN otherwise, for every other option, and where the switch turns on a distributed
        mode of a script that runs this module (Project.distributed_modes): it is there to be passed."""
        if not distributed_flag(name) or any(name in self.project.distributed_modes(user) for user in self.users):
            return NOT_SHOWN
        return self.documented_value(name)

    def documented_value(self, name: str) -> object:
        """The value every documented run gives the command-line option stored under `name`
        (`args.epochs`), declared by this module's parser or one it imports: its default, where
        no command of the project that runs this module passes it, no document tells the user
        to set it, and no code rebinds it; NOT_SHOWN otherwise."""
        key = ("documented option", self.module, name)
        if key not in self.project._memo:
            self.project._memo[key] = self._option_default(name)
        return self.project._memo[key]

    def _declared_here(self) -> DeclaredOptions:
        """The options this module's parser and those of the project modules it imports declare
        (read once per module: the program's texts do not change while it lives)."""
        key = ("declared here", self.module)
        if key not in self.project._memo:
            self.project._memo[key] = self._declare_here()
        return self.project._memo[key]

    def _declare_here(self) -> DeclaredOptions:
        options = DeclaredOptions()
        own = self.project.declared_in(self.module, self.project.program.read(self.module))
        if own is not None:
            options.add(own)
        options.add(self.imported_options())
        return options

    def _option_default(self, name: str) -> object:
        options = self._declared_here()
        # `args.resume = True if args.resume == 'True' else False`: the value the run passed, converted
        conversion = options.converted.get(name)
        rebound = name in options.rebound and conversion is None
        shown = None if options.dynamic or rebound else options.shown(name)
        if shown is None or self._assigned_on_the_way(name, allowed=int(conversion is not None)):
            return NOT_SHOWN
        value = self.unless_passed(*shown)
        if conversion is None or value is NOT_SHOWN:
            return value
        return expression_value(conversion, lambda read: value if read == name else NOT_SHOWN)

    def run_values(self, expr: ast.expr) -> list[object] | None:
        """The value `expr`, made of this module's options and literals (parsers.expression_value:
        `args.nodes * args.gpus`), has in each documented run of this module (`runs`; where none
        is shown, the one run that passes nothing), each option read as that run gives it
        (`_run_option`); None where one of them is not known."""
        runs = [command.command for command in self.runs()] or [""]
        options = self._declared_here()
        values = [expression_value(expr, functools.partial(self._run_option, command, options=options)) for command in runs]
        return None if NOT_SHOWN in values else values

    def _run_option(self, command: str, name: str, options: DeclaredOptions | None = None) -> object:
        """The value run `command` gives the option stored under `name`, declared by this module's
        parser or one it imports and set no other way (not rebound, not set by name, no document
        telling the user to set it): the last word the command writes after one of its option
        strings, a whole number where its default is one, a literal word where it is a string
        (not a shell variable or a placeholder: `$NGPU`, `<gpus>`); a flag by its presence; its
        value unless passed where the command does not pass it; NOT_SHOWN otherwise. `options`:
        `_declared_here()`, where the caller has it (a run's options are read many times)."""
        options = options or self._declared_here()
        shown = None if options.dynamic or name in options.rebound else options.shown(name)
        if shown is None or self._assigned_on_the_way(name):
            return NOT_SHOWN
        strings, value = shown
        if any(self.describes_option(option, str(value)) for option in strings if option.startswith("--")):
            return NOT_SHOWN
        written = [
            found.group(1) for string in strings
            for found in re.finditer(rf"(?<![\w-]){re.escape(string)}(?![\w-])(?:(?:=|[ \t]+)([^\s\\]+))?", command)
        ]
        if not written:
            return value
        if isinstance(value, bool):
            return options.flags.get(name, not value)
        last = (written[-1] or "").strip("'\"")
        if type(value) is int:
            return int(last) if re.fullmatch(r"-?\d+", last) else NOT_SHOWN
        text = isinstance(value, str) or value is None and name in options.texts  # `--dali gpu`, default None
        literal = text and last and not last.startswith("-") and not any(mark in last for mark in "$`{<")
        return last if literal else NOT_SHOWN

    def runs_reaching(self, scope: tuple[tuple[str, bool, bool], ...], line: int, column: int) -> list[LaunchCommand] | None:
        """The documented runs that may reach `line` (at `column`, 0-based characters) of this
        module, inside `scope` (as for `never_runs`), as far as the tests of options decide: the
        `if`s and conditional expressions around it (`if args.dali is None:`, `cpu_state if
        args.fsdp else model.state_dict()`), read on each run of each script that runs this
        module (`_script_runs`, each option as `_run_written` reads it, each setting of a yacs
        config or of a loaded config file as `_goes_other_way` reads it), and, in a function,
        the calls of it in the project (ProcessContext.call_sites), each read alike in its own
        module: a run reaches the line where it takes the way to it and to a call. None where
        that is not known: no documented run, or a script that runs the module is run by none
        (a run nobody documents). Only a top-level function or a method of a top-level class
        is asked about past its own tests."""
        key = _scope_key(scope)
        if key is None:
            return None
        text = split_lines(self.program.read(self.module) or "")
        offset = len(text[line - 1][:column].encode()) if 0 < line <= len(text) else column
        return self._reaching(key, line, offset, 0)

    def _reaching(self, key: str, line: int, offset: int | None, depth: int) -> list[LaunchCommand] | None:
        """`runs_reaching` for `line` of function `key` ("": the module's code), at the UTF-8
        `offset` where known (a call site's is not: its conditional expressions are not read)."""
        # The module's `if __name__ == "__main__":` block runs only when it is the script: the
        # runs of the scripts that import it never reach it, its own runs alone do.
        main = not key and self._in_main_block(line)
        known = self._script_runs(own=main)
        if known is None:
            if main and self._runs_documented_elsewhere():
                return []
            return [] if key and depth < _MAX_RUN_DEPTH and self._called_only_where_no_run_reaches(key, depth) else None
        runs, passed, declared = known
        tests = [
            (test, sense, self._resumes(key, guard)) for test, sense, guard in self._option_tests(key, line, offset)
            if not self._told_of(test, passed)
        ]
        taken = [
            command for view, command, written in runs
            if not any(
                view._goes_other_way(
                    command.command, test, sense, (view.module, self.module),
                    functools.partial(view._run_written, command.command, written, options=declared[view.module], resume=resume),
                )
                for test, sense, resume in tests
            )
        ]
        sites = self.context.call_sites(self.module, key) if key and taken and depth < _MAX_RUN_DEPTH else None
        if not sites or not self.context.only_called(self.module, key):
            return taken  # also a function handed on (a spawn's target, a callback): it runs where it is handed
        reached: list[LaunchCommand] = []
        for site in sites:
            found = self.project.module_view(site.caller)._reaching(site.caller_key or "", site.line, None, depth + 1)
            if found is None:
                return taken
            reached += found
        return [command for command in taken if command in reached]

    def _goes_other_way(self, command: str, test: ast.expr, sense: bool, modules: tuple[str, ...], option: Callable[[str], object]) -> bool:
        """Whether run `command` of this script goes the other way at `test` than `sense` (the
        way to the line), its options read by `option`, its yacs settings by `_run_setting`, and
        the settings of a loaded config file (`_loaded_setting`, the loads looked for in
        `modules`) under each value the files the run may load give them: a branch no file
        the run may load turns on (`elif config.solver.loss_type == 'CE':` where every config
        shipped for the script sets NCE). Not where one of them leaves it undecided."""
        loaded: dict[tuple[str, ...], list] = {}
        for node in ast.walk(test):
            path = attribute_path(node) if isinstance(node, ast.Attribute) else None
            if path is None or len(path) < 3 or path[0] in ("self", "cls") or path in loaded:
                continue
            if option(path[-1]) is NOT_SHOWN and self._run_setting(command, path) is NOT_SHOWN:
                values = self._loaded_setting(command, path, modules)
                if values:
                    loaded[path] = sorted(values, key=repr)
        if len(list(itertools.islice(itertools.product(*loaded.values()), _MAX_COMBINATIONS + 1))) > _MAX_COMBINATIONS:
            loaded = {}  # too many ways to read: as if none were known
        for combination in itertools.product(*loaded.values()):
            given = dict(zip(loaded, combination))
            setting = functools.partial(_given_or, given, functools.partial(self._run_setting, command))
            if test_value(test, option, setting) is not (not sense):
                return False
        return True

    def _loaded_setting(self, command: str, path: tuple[str, ...], modules: Iterable[str] = ()) -> frozenset | None:
        """The values run `command` of this script may give the setting an attribute path reads
        from a config file the code loads (`config.solver.loss_type`, where `modules`, or this
        one, bind `config` only to a loader's result, `yaml.load(f)` of a `with
        open(args.config) as f:`, or a wrapper of it, `config = DotMap(config)`): what each
        config file of the project the run may load gives the key path, the files that do not
        hold it aside. The file the run names after the option (or the literal path), where it
        is one of the project's; where the run names it in a way not shown (`--config
        ${config}`), each of those nearest the script (nearest_configs). None where not shown:
        no such load, a path no project file is, no file holds the key path, a value that is no
        scalar, code that assigns the setting, a document naming the key that no run passes."""
        keys, files = path[1:], set()
        for module in dict.fromkeys((*modules, self.module)):
            for kind, source in self.project.module_view(module)._config_loads(path[0]):
                found = self._loaded_files(command, kind, source)
                if found is None:
                    return None
                files.update(found)
        said = {".".join(keys).lower(), keys[-1].lower()} & (self.project._told_words - self._words_runs_pass())
        if not files or said or self._assigned_on_the_way(keys[-1]):
            return None
        values = [self.project.config_value(file, keys) for file in sorted(files)]
        held = [value for value in values if value is not configs.MISSING]
        if not held or any(isinstance(value, (dict, list)) for value in held):
            return None
        return frozenset(held)

    def _loaded_files(self, command: str, kind: str, source: ast.expr) -> tuple[str, ...] | None:
        """The project's config files of `kind` that run `command` loads from path `source` (a
        literal, or an option: the file the run names, else those nearest the script where the
        run names it in a way not shown); None where the path names no file of the project."""
        if isinstance(source, ast.Constant) and isinstance(source.value, str):
            written: object = source.value
        elif isinstance(source, ast.Attribute) and not (isinstance(source.value, ast.Name) and source.value.id in ("self", "cls")):
            written = self._run_option(command, source.attr)
        else:
            return None
        if written is NOT_SHOWN:
            return self.nearest_configs(kind) or None
        shipped = self.shipped_config(written, kind) if isinstance(written, str) else None
        return (shipped,) if shipped is not None else None

    def _config_loads(self, name: str) -> list[tuple[str, ast.expr]]:
        """(the format, the path expression) of each config file load this module binds `name`
        to (`config = yaml.load(f)` in `with open(args.config) as f:`, `cfg = json.load(open(p))`),
        where every other assignment of `name` wraps it (`config = DotMap(config)`); none otherwise."""
        key = ("config loads", self.module, name)
        if key not in self.project._memo:
            self.project._memo[key] = self._find_config_loads(name)
        return self.project._memo[key]

    def _find_config_loads(self, name: str) -> list[tuple[str, ast.expr]]:
        from ddplint.analyses.configs import CONFIG_LOADERS

        tree, loads, opened = self.program.tree(self.module), [], {}
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.With):
                for item in node.items:
                    if _opens(item.context_expr) and isinstance(item.optional_vars, ast.Name):
                        opened[item.optional_vars.id] = item.context_expr.args[0]  # type: ignore[attr-defined]
        for node in ast.walk(tree) if tree is not None else ():
            if not (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)):
                continue
            value = node.value
            kind = CONFIG_LOADERS.get(self.program.qualify(self.module, dotted(value.func) or "") or "") if isinstance(value, ast.Call) else None
            first = value.args[0] if isinstance(value, ast.Call) and value.args else None
            if kind is not None and first is not None:
                source = first.args[0] if _opens(first) else opened.get(first.id) if isinstance(first, ast.Name) else first
                if source is None:
                    return []
                loads.append((kind, source))
            elif not (isinstance(value, ast.Call) and len(value.args) == 1 and isinstance(value.args[0], ast.Name) and value.args[0].id == name):
                return []  # bound to something else too
        return loads

    def _called_only_where_no_run_reaches(self, key: str, depth: int) -> bool:
        """Whether function `key` of this module runs only where the project calls it, it is
        called, and no documented run reaches any of those calls (a helper that only a one-process
        tool's `__main__` block calls)."""
        sites = self.context.call_sites(self.module, key)
        if not sites or not self.context.only_called(self.module, key):
            return False
        return all(self.project.module_view(site.caller)._reaching(site.caller_key or "", site.line, None, depth + 1) == [] for site in sites)

    def _in_main_block(self, line: int) -> bool:
        """Whether `line` lies in the body of an `if __name__ == "__main__":` at this module's top
        level (either way round)."""
        key = ("main block", self.module)
        if key not in self.project._memo:
            tree = self.program.tree(self.module)
            self.project._memo[key] = [
                (node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno)
                for node in (tree.body if tree is not None else ()) if isinstance(node, ast.If) and _tests_main(node.test)
            ]
        return any(start <= line <= end for start, end in self.project._memo[key])

    def _runs_documented_elsewhere(self) -> bool:
        """Whether the project documents runs (its shell scripts and documents launch or run a
        script), none of this module's own, and this module, run by hand, runs as one process
        (`single_process`, or Project.script_runs_alone: no launcher of the project runs it and
        nothing its run executes starts processes or a process group; whether other modules import
        it, or it names torch.distributed in functions only they call, does not matter here,
        since an import never runs the block: a dataset module's self-test, a utils module's
        metric check): no documented run, and no run of several processes, reaches the code only
        its `__main__` block runs."""
        project = self.project
        if not (project.launch_commands or project.plain_runs) or self.runs(own=True):
            return False
        # the modules that import it never run the block: as the script, is it one process?
        return self.single_process or project.script_runs_alone(self.module)

    def _script_runs(self, own: bool = False) -> tuple[list[tuple[ProjectView, LaunchCommand, tuple[str, ...]]], frozenset[str], dict[str, DeclaredOptions]] | None:
        """Each documented run of a script that runs this module (an entry among `users`, tests
        aside: `Reach.entries`; `own`: this module alone, as the script), with that script's
        view and the text of all of its runs; the words those runs pass; and each script's
        declared options. None where there is no run, or a script that runs the module has no
        documented run. Read once per module: the language server asks for every finding on
        every keystroke, and none of it changes before a save."""
        key = ("script runs", self.module, own)
        if key not in self.project._memo:
            runs = self._each_script_run(own)
            # the words a run passes are no value users are only told of, whichever script it runs
            commands = [command for _, command, _ in runs or ()] + (list(self.project.launch_commands) + list(self.project.plain_runs) if own else [])
            self.project._memo[key] = None if runs is None else (
                runs,
                frozenset(word for command in commands for word in _WORD.findall(command.command.lower())),
                {view.module: view._declared_here() for view, _, _ in runs},
            )
        return self.project._memo[key]

    def _each_script_run(self, own: bool = False) -> list[tuple[ProjectView, LaunchCommand, tuple[str, ...]]] | None:
        found = []
        reach = self.project.reach
        for user in [self.module] if own else self.users:
            if not reach.is_entry(user) or self.project.is_test(user):
                continue
            view = self.project.module_view(user)
            runs = view.runs(own=True)
            if not runs:
                return None
            written = tuple(command.command for command in runs)
            found += [(view, command, written) for command in runs]
        return found or None

    def _option_tests(self, key: str, line: int, offset: int | None) -> list[tuple[ast.expr, bool, Guard | None]]:
        """The tests around `line` of function `key` ("": the module's code): its `if`s
        (ProcessContext.guards_at) and, at `offset`, its conditional expressions, each with
        whether the line is in its body, and the `if`'s guard (None for a conditional expression)."""
        tests: list[tuple[ast.expr, bool, Guard | None]] = []
        for guard in self.context.guards_at(self.module, key, line):
            try:
                tests.append((ast.parse(guard.test, mode="eval").body, guard.sense, guard))
            except SyntaxError:
                continue
        if offset is None:
            return tests
        memo = ("conditional tests", self.module, key)
        if memo not in self.project._memo:
            scope = self.program.definition(self.module, key) if key else self.program.tree(self.module)
            self.project._memo[memo] = conditional_tests(scope) if scope is not None else ()
        return tests + [(test, sense, None) for test, sense, start, end in self.project._memo[memo] if start <= (line, offset) < end]

    def _resumes(self, key: str, guard: Guard | None) -> bool:
        """Whether the branch of function `key` ("": the module's code) under `guard` resumes a
        training: with the other branches of the function that the same test takes the same way
        (ProcessContext.branches_like), it restores the state of more than one object from a
        saved record (the model and its optimizer, scheduler or scaler: Program.restored_in),
        itself or through the project functions it calls. Every preempted or crashed training
        resumes, so such a branch runs though no documented command passes the option that turns
        it on (`--resume PATH`); a branch that only loads weights (`--finetune PATH`, `--eval`)
        runs where a command says so."""
        if guard is None:
            return False
        memo = ("resumes", self.module, key, guard.test, guard.sense)
        if memo not in self.project._memo:
            branches = self.context.branches_like(self.module, key, guard)
            restored = {found for lines in branches for found in self.program.restored_in(self.module, key, *lines)}
            self.project._memo[memo] = len(restored) > 1 or bool(restored) and self._restarts_loop(branches)
        return self.project._memo[memo]

    def _restarts_loop(self, branches: list[tuple[int, int]]) -> bool:
        """Whether code of this module at `branches` (their lines) sets, from an item of a saved
        record, where a loop of the module starts (`args.start_epoch = checkpoint['epoch']`
        beside `for epoch in range(args.start_epoch, args.epochs):`): training goes on from there."""
        tree, text = self.program.tree(self.module), self.program.read(self.module) or ""
        for node in ast.walk(tree) if tree is not None else ():
            if not (isinstance(node, ast.Assign) and any(first <= node.lineno <= last for first, last in branches)):
                continue
            value = node.value.left if isinstance(node.value, ast.BinOp) else node.value
            if not (isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and isinstance(value.slice.value, str)):
                continue
            for target in node.targets:
                if isinstance(target, (ast.Name, ast.Attribute)) and re.search(rf"\brange\(\s*{re.escape(ast.unparse(target))}\s*[,)]", text):
                    return True
        return False

    def _told_of(self, test: ast.expr, passed: frozenset[str]) -> bool:
        """Whether `test` compares with a word the project's documents name that no documented
        run passes (`passed`): a value users are told of ("we train on ... Hollywood2" beside
        `if args.dataset == 'hollywood2':`, the scripts running two other datasets)."""
        words = self.project._document_words
        return any(
            isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in words - passed
            for node in ast.walk(test)
        )

    def _run_written(self, command: str, written: tuple[str, ...], name: str, options: DeclaredOptions | None = None,
                     resume: bool = False) -> object:
        """The value run `command` gives the option stored under `name` (`_run_option`): a run
        that leaves out an option takes its default, whether another documented run of the
        script writes it (`written`, their texts: SimKD's CIFAR runs leave `--dataset` at
        cifar100, its ImageNet runs pass `--dataset imagenet`) or none does (`--dist_eval`, a
        `store_true` flag no command passes: the padded evaluation sampler it turns on is built
        in no documented run). Only an option no run writes whose branch resumes a training
        (`resume`: ProjectView._resumes), or that turns on a distributed mode of the script
        (Project.distributed_modes: OpenLTM's `--ddp`), is there to be passed: NOT_SHOWN."""
        options = options or self._declared_here()
        shown = options.shown(name)
        if shown is None:
            return NOT_SHOWN
        spelled = [re.compile(rf"(?<![\w-]){re.escape(string)}(?![\w-])") for string in shown[0] if string.startswith("-")]
        passable = resume or name in self.project.distributed_modes(self.module)
        if passable and not any(pattern.search(text) for pattern in spelled for text in written):
            return NOT_SHOWN
        return self._run_option(command, name, options)

    def _run_setting(self, command: str, path: tuple[str, ...]) -> object:
        """The value run `command` of this script gives the yacs setting an attribute path reads
        (`config.TRAIN.ACCUM_STEPS`; ddplint.model.settings), declared by this script or a module
        it imports: the value the command writes after the key (`--opts TRAIN.ACCUM_STEPS 4`,
        read as yacs reads it), else its literal default, where no assignment of the code may
        change it in this run (each is under an `if` of options false there: `if
        args.accum_steps:` with `--accum-steps` left at None), no file or other tree is merged
        into a config, and no document names the key that no run writes; NOT_SHOWN otherwise."""
        settings = self._settings()
        keys = settings.key_of(path[1:])
        value = settings.defaults[keys] if keys is not None and not settings.dynamic else NOT_SHOWN
        if keys is None or value is NOT_SHOWN:
            return NOT_SHOWN
        dotted = ".".join(keys)
        written = re.findall(rf"(?<![\w.-]){re.escape(dotted)}(?![\w.-])(?:[ \t]+([^\s\\]+))?", command)
        if written:
            return _yacs_value(written[-1], value)
        if settings.merges_files or dotted.lower() in self.project._document_words - self._words_runs_pass():
            return NOT_SHOWN  # a file merged in may set it; a document tells the user to set it
        option = functools.partial(self._run_option, command, options=self._declared_here())
        if any(not any(test_value(test, option) is (not sense) for test, sense in guards) for guards in settings.rewritten(keys)):
            return NOT_SHOWN  # an assignment this run may make
        return value

    def documented_values(self, path: tuple[str, ...]) -> frozenset | None:
        """The values the setting an attribute path reads takes in the documented runs of this
        module (`runs`; where none is shown, the one run that passes nothing): a yacs setting
        (`("config", "TRAIN", "EPOCHS")`, each run's as `_setting_values` reads it), or, where the
        path names none, a command-line option (`("args", "epochs")`, `("self", "args",
        "epochs")`: each run's as `_run_option` reads it), or a setting of a config file the code
        loads (`("config", "solver", "loss_type")`: each run's as `_loaded_setting` reads it).
        None where a run's value is not shown, and for a yacs setting where no run is documented."""
        if len(path) < 2:
            return None
        runs = [command.command for command in self.runs()]
        read = path[1:] if path[0] == "self" else path
        if self._settings().key_of(path[1:]) is None:
            if len(read) != 2:  # `config.train.epochs`: no option's read; a loaded config file's setting?
                return self._loaded_values([command for command in runs or [""]], path)
            options = self._declared_here()
            values = [self._run_option(command, path[-1], options) for command in runs or [""]]
            return None if NOT_SHOWN in values else frozenset(values)
        if not runs:
            return None
        found: set = set()
        for command in runs:
            values = self._setting_values(command, path)
            if values is NOT_SHOWN:
                return None
            found |= values  # type: ignore[operator]
        return frozenset(found)

    def _loaded_values(self, runs: list[str], path: tuple[str, ...]) -> frozenset | None:
        """The values the runs `runs` may give the setting of a loaded config file that `path`
        reads (`_loaded_setting`); None where one of them is not shown."""
        found: set = set()
        for command in runs:
            values = self._loaded_setting(command, path)
            if values is None:
                return None
            found |= values
        return frozenset(found)

    def _setting_values(self, command: str, path: tuple[str, ...]) -> set | object:
        """The values run `command` may give the yacs setting an attribute path reads (as
        `_run_setting`), where YAML files are merged into the config: the value the command
        writes after the key; else what the project's YAML files the command names give the key
        (merged in by a `merge_from_file(path)` of a path the code is handed; each file's
        `BASE`/`_BASE_` files, beside it, first), or the default where one of them gives none;
        with the value of each assignment of the code that this run may make (its `if`s not
        false there), read with this run's options (`config.TRAIN.X = args.x`: None where the
        run leaves `--x` unset). NOT_SHOWN where a value is not shown: a file merged that the
        code names or the command does not (`--cfg <path>`), a document naming the key, an
        assignment of a value not read."""
        settings = self._settings()
        keys = settings.key_of(path[1:])
        default = settings.defaults[keys] if keys is not None and not settings.dynamic else NOT_SHOWN
        if keys is None or default is NOT_SHOWN or settings.merges_fixed:
            return NOT_SHOWN
        dotted_key = ".".join(keys)
        written = re.findall(rf"(?<![\w.-]){re.escape(dotted_key)}(?![\w.-])(?:[ \t]+([^\s\\]+))?", command)
        if written:
            value = _yacs_value(written[-1], default)
            return NOT_SHOWN if value is NOT_SHOWN else {value}
        if dotted_key.lower() in self.project._document_words - self._words_runs_pass():
            return NOT_SHOWN  # a document tells the user to set it
        values: set = {default}
        if settings.merges_files:
            named = [word for word in re.findall(r"[^\s'\"=]+", command) if word.endswith(configs.CONFIG_SUFFIXES["yaml"])]
            files = [self.shipped_config(word, "yaml") for word in named]
            if not files or None in files:
                return NOT_SHOWN
            values = set()
            for file in files:
                given = self._yaml_setting(file, keys)  # type: ignore[arg-type]
                if given is NOT_SHOWN:
                    return NOT_SHOWN
                if isinstance(given, (dict, list)):
                    return NOT_SHOWN  # a subtree, not the setting's value
                values.add(default if given is configs.MISSING else given)
        option = functools.partial(self._run_option, command, options=self._declared_here())
        for guards, value in settings.writes(keys):
            if any(test_value(test, option) is (not sense) for test, sense in guards):
                continue  # this run does not make it
            assigned = expression_value(value, option) if value is not None else NOT_SHOWN
            if assigned is NOT_SHOWN:
                return NOT_SHOWN
            values.add(assigned)
        return values

    def _yaml_setting(self, relative: str, keys: tuple[str, ...], depth: int = 0) -> object:
        """What the project's YAML file `relative`, merged into a yacs config, sets the setting at
        `keys` to: its own value, else the last its `BASE`/`_BASE_` files (paths beside it, a
        string or a flow list, merged first) give; configs.MISSING where none of them sets it;
        NOT_SHOWN where a base file is not the project's or its list is not read."""
        own = self.project.config_value(relative, keys)
        if own is not configs.MISSING:
            return own
        value: object = configs.MISSING
        for key in ("BASE", "_BASE_"):
            bases = self.project.config_value(relative, (key,))
            if bases is configs.MISSING or bases is None:
                continue
            if not isinstance(bases, str) or depth > 4:
                return NOT_SHOWN
            listed = bases.strip("[]").split(",") if bases.startswith("[") else [bases]
            for base in (item.strip().strip("'\"") for item in listed):
                if not base:
                    continue
                found = posixpath.normpath(posixpath.join(posixpath.dirname(relative), base))
                inherited = self._yaml_setting(found, keys, depth + 1) if found in self.project.config_files else NOT_SHOWN
                if inherited is NOT_SHOWN:
                    return NOT_SHOWN
                if inherited is not configs.MISSING:
                    value = inherited
        return value

    def _words_runs_pass(self) -> frozenset[str]:
        """The words of every documented run of this module (`runs`), read once per module: the
        engine asks `runs_reaching` for every finding, and the language server on every edit."""
        key = ("run words", self.module)
        if key not in self.project._memo:
            self.project._memo[key] = frozenset(word for run in self.runs() for word in _WORD.findall(run.command.lower()))
        return self.project._memo[key]

    def _settings(self) -> Settings:
        """The yacs settings this script and the modules it imports (three imports deep; tests
        aside) declare, assign and merge: read once per module, and only where one of them
        names yacs."""
        key = ("settings", self.module)
        if key not in self.project._memo:
            modules, pending = {self.module}, [self.module]
            for _ in range(3):
                pending = [found for module in pending for found in self.project.imports_of(module) if found not in modules]
                modules.update(pending)
            modules = {module for module in modules if not self.project.is_test(module)}
            settings = Settings()
            if any("yacs" in (self.program.read(module) or "") for module in modules):
                for module in sorted(modules):
                    tree = self.program.tree(module)
                    if tree is not None:
                        settings.add(tree)
            self.project._memo[key] = settings
        return self.project._memo[key]

    def ranked_attributes(self, written: str) -> dict[str, Place]:
        """The attributes that the objects of the project class `written` (as this module names
        it: `ClusterManager`, `self`'s class) hold a value made from the process's rank in, in
        every documented run (ddplint.model.ranked), each with where it is first assigned: a path
        named after the rank is a file of each rank's own. {} where none is known."""
        key = ("ranked attributes", self.module, written)
        if key not in self.project._memo:
            made = self.project.program.class_of(self.module, written)
            held = ranked_attributes(self.project, made) if made is not None else {}
            self.project._memo[key] = {name: self.project.place(made[0], line) for name, line in held.items()}
        return self.project._memo[key]

    def entry_parameter(self, key: str, name: str) -> object:
        """The value every documented run gives parameter `name` of function `key` where the
        function's parameters are this module's command line (`fire.Fire(main)`: unless_passed,
        NOT_SHOWN where not shown); None where it is no such parameter."""
        declared = self.own_options().parameters.get((key, name))
        return None if declared is None else self.unless_passed(*declared, positional=True)

    def unless_passed(self, strings: Iterable[str], value: object, positional: bool = False) -> object:
        """The value every documented run of this module gives an option written `strings`
        (`--epochs`) that gets `value` unless passed: `value`, where no command of the project
        that runs this module passes it, nor (`positional`: the option may also be given by its
        place, as fire's are) any positional argument, and no document tells the user to set it;
        NOT_SHOWN otherwise."""
        strings = tuple(strings)
        if value is NOT_SHOWN:
            return NOT_SHOWN
        script = os.path.basename(self.path)
        for command in self.runs():
            if any(re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", command.command) for option in strings):
                return NOT_SHOWN
            if positional and _passes_positional(command.command, script):
                return NOT_SHOWN
        if any(self.describes_option(option, str(value)) for option in strings if option.startswith("--")):
            return NOT_SHOWN
        return value

    @property
    def program(self) -> Program:
        """The program model of the project: the general questions (ddplint.model.program)."""
        return self.project.program

    @property
    def context(self):
        """Who runs the project's functions (ddplint.model.context.ProcessContext)."""
        return self.project.program.context

    # -- the program model ---------------------------------------------------------------

    @functools.cached_property
    def single_process(self) -> bool:
        """Whether this module only ever runs as one process: a test module that starts no
        processes, an entry script (`if __name__ == "__main__":`) that names nothing
        distributed, has no launch point of Lightning, Fabric or Accelerate (their text,
        `torch_api.LAUNCH_POINT_TEXT`), imports no project module that does, and no module
        imports (`Project.one_process_script`), or a module naming nothing distributed that
        only such scripts import (`Project.run_by_demos_alone`); and which no shell script or
        document of the project runs with a launcher (`launch_line`); or a module naming
        distribution that only scripts running as one process run (`_only_one_process_runs`);
        or a script that runs as one process in every documented run (Project.one_process_run);
        or a module only scripts in a world of one run: every command of the project that runs
        them starts one process and hands it no option (Project.launched_alone, not `written`,
        `quiet`: torchrun with no count),
        or they leave themselves one visible GPU and spawn one process per visible GPU
        (Project.spawns_on_one_gpu); or a Jupyter notebook whose own code starts no processes (`starts_no_processes`: no
        spawn, `Process(...)`, `notebook_launcher(...)`, Lightning Trainer): one kernel runs it,
        and a process group it forms there has that one member (a `!torchrun x.py` line runs
        another file's code)."""
        facts = self.project.modules[self.module]
        if self.runs_as_one_process():
            return True  # what it may start is read there: a process group of one, a shell-out of mkdir
        if self.path.endswith(_NOTEBOOK_SUFFIX):
            return self.starts_no_processes()
        project = self.project
        if facts.get("starts"):
            return self._only_run_by(lambda root: project.spawns_on_one_gpu(root) or project.spawns_one(root))
        if project.is_test(self.module):
            return True
        if facts["dist"]:
            return self._launched_as_one_process() or self._only_one_process_runs or self._only_run_by(
                lambda root: project.launched_alone(root, written=False, quiet=True) or project.spawns_on_one_gpu(root)
                or project.spawns_one(root)
            )
        alone = self.project.one_process_script(self.module) or self.project.run_by_demos_alone(self.module)
        return alone and self.launch_line() is None  # a launcher the project documents runs it as ranks

    def _launched_as_one_process(self) -> bool:
        """Whether this is an entry script that no module imports, that neither starts processes
        nor a process group nor a DDP model itself (its launcher decides how many processes run
        it: an Accelerate script; Accelerate's `DistributedDataParallelKwargs` and an
        `init_process_group_kwargs` handler start nothing), and that every command of the project
        running it starts as one process (`accelerate launch --num_processes=1 train.py`, or a
        `--config_file` whose `distributed_type` is NO)."""
        project = self.project
        if not project.modules[self.module].get("main") or project.program.importers_of(self.module):
            return False
        launches = self.launches()
        if not launches or not all(_one_process(command) for command in launches):
            return False
        text = project.program.read(self.module)
        return text is not None and _OWN_START.search(text) is None

    def wrapped_parameters(self, key: str | None) -> dict:
        """The parameters of this module's function `key` (`name`, `Class.name`) that some call
        hands a DDP model: name -> ddplint.model.records.Wrapped."""
        program = self.project.program
        return program.held(program.parameters, (self.module, key), Wrapped) if key else {}

    def prepared_parameters(self, key: str | None) -> dict:
        """The parameters of this module's function `key` that some call hands what Accelerate's
        `accelerator.prepare(...)` returned: name -> ddplint.model.records.Prepared."""
        program = self.project.program
        return program.held(program.parameters, (self.module, key), Prepared) if key else {}

    def wrapped_attributes(self, cls: str) -> dict:
        """The `self` attributes of class `cls` that hold a DDP model: name -> Wrapped."""
        program = self.project.program
        return program.held(program.attributes, (self.module, cls), Wrapped)

    def inner_attributes(self, cls: str) -> dict:
        """The `self` attributes of class `cls` that hold a DDP model's inner module
        (`self.net = self.model.module`): name -> ddplint.model.records.Inner."""
        program = self.project.program
        return program.held(program.attributes, (self.module, cls), Inner)

    def unwrapped_argument(self, key: str | None, cls: str | None, callee: str) -> tuple[int | None, str] | None:
        """(position, name) of the argument whose inner module a call of `callee` gets back from
        a project function (`unwrap_model(model)`; ddplint.model.program.Program.unwrapped_argument), or None."""
        return self.project.program.unwrapped_argument(self.module, key, cls, callee)

    def wrapped_result(self, callee: str, cls: str | None, index: int | None = None, kind: type = Wrapped):
        """What a call of `callee` (as written here, inside class `cls`) returns from a project
        function (at position `index` of a tuple it returns): the Origin of the DDP model it
        wraps, or with `kind` the value of that kind (ddplint.model.records.Framework: an
        Accelerator, a DeepSpeed engine, an FSDP1 model and whether it shards); None otherwise."""
        return self.project.program.result_of(self.module, callee, cls, index, kind)

    def saved_parameter(self, key: str | None, cls: str | None, callee: str):
        """What a call of `callee` in this module's function `key` saves: the parameter of the
        project helper it reaches that the helper `torch.save`s, and its file
        (ddplint.model.values.SavedParameter), or None."""
        return self.project.program.values.saved_parameter(self.module, key, cls, callee)

    def callee_summary(self, key: str | None, cls: str | None, callee: str) -> dict | None:
        """What the project callable reached by calling `callee` in this module's function `key`
        does (ddplint.model.program.Program.callee_summary), or None when unknown."""
        return self.project.program.callee_summary(self.module, key, cls, callee)

    def combines(self, key: str | None, cls: str | None, callee: str):
        """The collective through which calling `callee` here combines results across ranks
        through project helpers (ddplint.model.program.Collective: "all_reduce at utils.py:44"),
        or None (ddplint.model.program.Program.combines)."""
        found = self.project.program.combines(self.module, key, cls, callee)
        return found if found is not None and found.place is not None else None

    def collective(self, key: str | None, cls: str | None, callee: str):
        """The collective every rank that calls `callee` here reaches inside the project functions
        it calls, with those functions (ddplint.model.program.Program.collective), or None."""
        return self.project.program.collective(self.module, key, cls, callee)

    def framework_collective(self, key: str | None, written: str) -> str | None:
        """The collective the method call `written` here runs on a framework object the program
        follows (ddplint.model.program.Program.framework_collective), or None."""
        return self.project.program.framework_collective(self.module, key, written)

    def evaluation(self, key: str | None, cls: str | None, callee: str, index: int | None, keyword: str | None,
                   line: int | None = None):
        """Where the project function a call (at `line`: with the objects that call hands it)
        hands a loader to evaluates it and combines the results: (its key, the loop's place, the
        combine's place), or None."""
        return self.project.program.evaluation(self.module, key, cls, callee, index, keyword, line)

    def inner_handed(self) -> dict:
        """The calls of this module that hand a DDP model's inner module to a project function
        that trains it (ddplint.model.inner.handed)."""
        return inner.handed(self.project.program, self.module)

    @property
    def values(self):
        """Saved files and DDP wraps across the program (ddplint.model.values.Values)."""
        return self.project.program.values

    # -- names -------------------------------------------------------------------------------

    def absolute(self, qualified: str, module: str | None = None, is_package: bool | None = None) -> str:
        """A relative origin (`.utils.f`, `..data.x`) made absolute from `module`."""
        module = self.module if module is None else module
        is_package = self.is_package if is_package is None else is_package
        if not qualified.startswith("."):
            return qualified
        dots = len(qualified) - len(qualified.lstrip("."))
        package = module.split(".") if is_package else module.split(".")[:-1]
        if dots - 1:
            package = package[: len(package) - (dots - 1)] if dots - 1 <= len(package) else []
        rest = qualified[dots:]
        return ".".join([*package, rest] if rest else package)

    def resolve(self, qualified: str | None, _depth: int = 0) -> tuple[str, str, str] | None:
        """(module, kind, name) of the project function ("function") or class ("class") that a
        qualified name refers to, through re-exports and star imports; None if not one. The
        module may also be one in a folder without an `__init__.py` (`from lib.data.sampler
        import DistributedSampler`, `lib/` a namespace package), which the index names by its
        package below `lib` alone: found by its path from the root, as Program.split finds it."""
        if not qualified or _depth > 8:
            return None
        head, _, symbol = self.absolute(qualified).rpartition(".")
        module = self.project_module(head)
        if module is None:
            return None
        return self._lookup(module, symbol, _depth)

    def project_module(self, name: str) -> str | None:
        """The project module an import names (absolute), also one in a folder without an
        `__init__.py` (`lib.data.sampler`), found by its path from the root; None if none."""
        module = self.project.module(name) if name else None
        if module is None and name:
            path = name.replace(".", "/")
            by_path = self.project.names.get(f"{path}.py") or self.project.names.get(f"{path}/__init__.py")
            module = self.project.module(by_path) if by_path is not None else None
        return module

    def base_attributes(self, origin: str) -> frozenset[str] | None:
        """The attributes that the project class an import of this module binds (`origin`, as the
        import writes it: `..modeling_utils.PreTrainedModel`) and its project base classes
        assign, by their text (`<name>.<attribute> = ...` anywhere in a class's body): a
        superset of those ddplint.model.context.ProcessContext.attribute_assignments finds. None when
        the class is not found (then any attribute may be assigned there)."""
        found = self._project_name(origin)
        if found is None:
            return frozenset()  # no project class (the program's `class_of` finds none either)
        return self.project.class_attributes(*found)

    def may_test_rank(self, origin: str) -> bool:
        """Whether a call of the project function an import of this module binds (`origin`, as
        the import writes it, with the attributes after it: `.utils.is_main_process`) may be a
        test of the rank, by the text of its body and of the project functions it calls: a body
        that names no rank, process, distribution or world, and calls none that may, says
        nothing of ranks (ddplint.model.context.ProgramContext.predicate). True when the
        function is not found."""
        found = self._project_name(origin)
        # no project function: the program's `resolve` finds none, and the name decides
        return self.project.function_may_test_rank(*found) if found is not None else False

    def may_save_call(self, origin: str) -> bool:
        """Whether a call of what an import of this module binds (`origin`, with the attributes
        after it) may reach a function of another project module that may save: the program's
        own first questions of a save helper (ddplint.rules.ddp014_save_on_every_rank.saving_helper)."""
        found = self._project_name(origin)
        return found is not None and self.project.program.may_save(found[0])

    def _project_name(self, origin: str) -> tuple[str, str] | None:
        """(module, top-level name) of another project module that `origin` names, as the
        program resolves it (ddplint.model.program.Program.split), or None."""
        found = self.project.program.split(self.absolute(origin), self.module)
        if found is None or not found[1] or "." in found[1] or found[0] == self.module:
            return None
        return found

    def _lookup(self, module: str, symbol: str, depth: int) -> tuple[str, str, str] | None:
        facts = self.project.modules[module]
        if symbol in facts["functions"]:
            return module, "function", symbol
        if symbol in facts["classes"]:
            return module, "class", symbol
        other = self.project.module_view(module)
        origin = facts["imports"].get(symbol)
        if origin is not None:
            return other.resolve(origin, depth + 1)
        for star in facts["stars"]:
            found = other.resolve(f"{star}.{symbol}" if not star.endswith(".") else star + symbol, depth + 1)
            if found is not None:
                return found
        return None

    def _function(self, qualified: str | None) -> tuple[str, str, dict] | None:
        """(module, name, facts) of the project function `qualified` names, or None."""
        found = self.resolve(qualified)
        if found is None or found[1] != "function":
            return None
        return found[0], found[2], self.project.modules[found[0]]["functions"][found[2]]

    def built_data(self, qualified: str | None, literals: list = (), line: int | None = None) -> dict[str, tuple[str, int | None, int | None]]:
        """What the project function `qualified` names returns of the shuffling DistributedSampler
        it builds (ddplint.model.loaders.built): "sampler"/"loader" -> (where the sampler is made,
        its index in the returned tuple or None, the argument position of its dataset or None);
        for a call passing `literals` ([position or keyword, value]), at `line` of this module
        (what it hands the builder's parameters)."""
        return loaders.built(self.project.program, self.absolute(qualified), self.module, literals, line) if qualified else {}

    @functools.cached_property
    def trained_unprepared(self) -> dict[str, list[prepared.Unprepared]]:
        """This module's functions whose returned loader a module importing them trains on
        unsharded, though it hands it, or a copy, to Accelerate's prepare
        (ddplint.model.prepared.trained_unprepared)."""
        return prepared.trained_unprepared(self.project.program, self.module)

    def endless_wrapper(self, qualified: str | None) -> loaders.Cycle | None:
        """The project generator `qualified` names, if it re-iterates a parameter forever without
        set_epoch (ddplint.model.loaders.cycled)."""
        return loaders.cycled(self.project.program, self.absolute(qualified), self.module) if qualified else None

    def one_pass(self, qualified: str | None) -> loaders.OnePass | None:
        """The project function `qualified` names, if it makes one pass over a parameter without
        set_epoch (ddplint.model.loaders.passed_once)."""
        return loaders.passed_once(self.project.program, self.absolute(qualified), self.module) if qualified else None

    def sets_epoch(self, qualified: str | None) -> bool:
        """Whether a call of the project function `qualified` names may call set_epoch
        (ddplint.model.loaders.sets_epoch)."""
        return loaders.sets_epoch(self.project.program, self.absolute(qualified), self.module) if qualified else False

    def runs_backward(self, key: str | None, cls: str | None, callee: str) -> Place | None:
        """Where calling `callee` in this module's function `key` runs a backward() through a
        project function or a library loss scaler (ddplint.model.program.Program.runs_backward)."""
        return self.project.program.runs_backward(self.module, key, cls, callee)

    def hands_back(self, key: str | None, cls: str | None, callee: str) -> int | None:
        """The position of the argument a call of `callee` here gets back unchanged from a project
        function or method (ddplint.model.loaders.hands_back), or None."""
        return loaders.hands_back(self.project.program, self.module, key, cls, callee)

    def batches(self, key: str | None, cls: str | None, callee: str) -> int | None:
        """The position of the argument a call of `callee` here gets back in a BatchSampler
        from a project function (ddplint.model.loaders.batches), or None."""
        return loaders.batches(self.project.program, self.module, key, cls, callee)

    def evaluated_samplers(self, where: Place | None = None) -> dict:
        """This module's samplers (those of the module of `where`, if given) whose loaders a
        project function evaluates and combines across ranks, by the line each is made on
        (ddplint.model.loaders.evaluated)."""
        module = self.module if where is None else self.project.names.get(where.path)
        return loaders.evaluated(self.project.program, module) if module is not None else {}

    def may_use_cuda(self, qualified: str | None) -> tuple[str, str, Place] | None:
        """(module, name, where it is defined) of the project function `qualified` names if its
        text, or that of a project function it calls, places tensors on CUDA (the index's text
        facts: cheap, and a superset of what the program model finds the function does, which
        what the prefilter hint ProjectFact.CUDA_HELPER rests on); else None."""
        found = self._function(qualified)
        if found is None or not self._function_cuda(found[0], found[1], set()):
            return None
        return found[0], found[1], self.project.place(found[0], found[2]["line"])

    def _function_cuda(self, module: str, name: str, active: set) -> bool:
        """Whether a project function's text touches CUDA, itself or through the functions it calls."""
        key = ("cuda", module, name)
        memo = self.project._memo
        if key in memo:
            return memo[key]
        if (module, name) in active:  # a cycle: no CUDA found along it
            return False
        active.add((module, name))
        facts = self.project.modules[module]
        record = facts["functions"][name]
        result = bool(record["cuda"])
        view = self.project.module_view(module)
        for call in () if result else record["calls"]:
            head, _, rest = call.partition(".")
            if head in facts["functions"] and not rest:
                result = self._function_cuda(module, head, active)
            elif head in facts["imports"]:
                origin = facts["imports"][head]
                found = view.resolve(f"{origin}.{rest}" if rest else origin)
                result = found is not None and found[1] == "function" and self._function_cuda(found[0], found[2], active)
            if result:
                break
        active.discard((module, name))
        memo[key] = result
        return result

    def subclass_of(self, qualified: str | None, targets: frozenset[str], _seen: frozenset = frozenset()) -> str | None:
        """Where the project class `qualified` names is defined, if one of its bases (through
        project classes) is one of the qualified `targets`; else None."""
        found = self.resolve(qualified)
        if found is None or found[1] != "class" or found in _seen:
            return None
        key = ("subclass", found, targets)
        if key not in self.project._memo:
            self.project._memo[key] = self._subclass_of(found, targets, _seen)
        return self.project._memo[key]

    def _subclass_of(self, found: tuple[str, str, str], targets: frozenset[str], _seen: frozenset) -> str | None:
        module, _, name = found
        view = self.project.module_view(module)
        for full in self._bases(found):
            if full in targets or view.subclass_of(full, targets, _seen | {found}):
                return self.project.place(module, self.project.modules[module]["classes"][name]["line"])
        return None

    def _bases(self, found: tuple[str, str, str]) -> list[str]:
        """The absolute names of the bases of the project class `found` that an import of its
        module or a class of it binds."""
        module, _, name = found
        record = self.project.modules[module]["classes"][name]
        view = self.project.module_view(module)
        imports = self.project.modules[module]["imports"]
        bases = []
        for base in record["bases"]:
            head, _, rest = base.partition(".")
            origin = imports.get(head)
            if origin is None:
                if head not in self.project.modules[module]["classes"]:
                    continue
                origin = f"{module}.{head}"
            bases.append(view.absolute(f"{origin}.{rest}" if rest else origin))
        return bases

    def epoch_sampler(self, qualified: str | None, _seen: frozenset = frozenset()) -> Place | None:
        """Where the project class `qualified` names is defined, if it is a DistributedSampler
        (a subclass of torch's, through project classes) whose order is torch's, drawn from
        seed + epoch (no `__iter__` of its own on the way), or one its own `__iter__` draws
        from `self.epoch` (the index's "iter"): it repeats its order until set_epoch is
        called. So is any sampler class of the project, a subclass or not, whose `set_epoch`
        stores its argument on self and whose `__iter__` seeds a generator from that attribute
        (the index's "epoch_seeded": a copy of DistributedSampler on a plain Sampler). None
        for one whose `__iter__` shuffles otherwise, or not a subclass."""
        found = self.resolve(qualified)
        if found is None or found[1] != "class" or found in _seen:
            return None
        module, _, name = found
        record = self.project.modules[module]["classes"][name]
        if record.get("epoch_seeded"):
            return self.project.place(module, record["line"])  # a sampler of its own with torch's epoch-seeded order
        if record.get("iter", "epoch") != "epoch":
            return None
        view = self.project.module_view(module)
        for full in self._bases(found):
            if full in DISTRIBUTED_SAMPLER.spellings or view.epoch_sampler(full, _seen | {found}) is not None:
                return self.project.place(module, record["line"])
        return None

    def padding_sampler(self, qualified: str | None) -> Place | None:
        """Where the project class `qualified` names is defined (utils/distributed.py:169), if
        its `__iter__` pads the index list with its own start, as DistributedSampler does
        (`indices += indices[: self.total_size - len(indices)]`, the index's "pads"); else None."""
        found = self.resolve(qualified)
        if found is None or found[1] != "class":
            return None
        record = self.project.modules[found[0]]["classes"][found[2]]
        return self.project.place(found[0], record["line"]) if record.get("pads") else None

    def loader_forwarder(self, qualified: str | None) -> str | None:
        """Where the project class `qualified` names builds the DataLoader its `__init__`
        passes its keyword arguments to ("data/loaders.py:12"), or None."""
        found = self.resolve(qualified)
        if found is None or found[1] != "class":
            return None
        return loaders.forwarder(self.project.program, found[0], found[2], DATALOADER.spellings)

    def _loader_like(self, qualified: str) -> bool:
        """A DataLoader subclass of the project, or a class that forwards to a DataLoader."""
        return bool(self.subclass_of(qualified, DATALOADER.spellings) or self.loader_forwarder(qualified))

    def star_bindings(self) -> dict[str, str]:
        """Names this module's star imports bind, with their (absolute) origins."""
        bindings: dict[str, str] = {}
        self._star_into(self.module, self.is_package, bindings, set())
        return bindings

    def _star_into(self, module: str, is_package: bool, bindings: dict[str, str], seen: set) -> None:
        facts = self.project.modules.get(module)
        if facts is None or module in seen:
            return
        seen.add(module)
        for star in facts["stars"]:
            target = self.project.program.star_module(module, star)
            if target is None:
                continue
            target_facts = self.project.modules[target]
            target_view = self.project.module_view(target)
            for name, origin in target_facts["imports"].items():
                if not name.startswith("_"):
                    bindings.setdefault(name, target_view.absolute(origin))
            for name in (*target_facts["functions"], *target_facts["classes"], *self.project.top_level_defs(target)):
                if not name.startswith("_"):
                    bindings.setdefault(name, f"{target}.{name}")
            self._star_into(target, self.project.relpaths[target].endswith("__init__.py"), bindings, seen)

    # -- prefilter hints -----------------------------------------------------------------------

    def _exports(self, absolute: str) -> tuple | None:
        """What an absolute import origin brings that the prefilters must know, once per
        project (every module importing `torch.nn` asks the same): for a project module, its
        CUDA helpers and whether it defines a DataLoader subclass (or forwarder); for a name,
        whether it is a CUDA helper, a DataLoader subclass or forwarder, a sampler (or loader)
        builder, an endless generator over its argument, a Sampler subclass; None when it is
        none of those."""
        memo = self.project._memo
        key = ("exports", absolute)
        if key in memo:
            return memo[key]
        found: tuple | None
        module = self.project.module(absolute)
        if module is not None:
            exported = self.project.modules[module]
            cuda = [name for name in exported["functions"] if self.may_use_cuda(f"{absolute}.{name}")]
            subclass = any(self._loader_like(f"{absolute}.{name}") for name in exported["classes"])
            found = (cuda, subclass) if cuda or subclass else None
        else:
            indexed = self.resolve(absolute) is not None  # builders and generators are the model's
            found = (
                indexed and bool(self.may_use_cuda(absolute)),
                indexed and self._loader_like(absolute),
                bool(self.built_data(absolute)),
                bool(self.endless_wrapper(absolute)),
                indexed and bool(self.subclass_of(absolute, SAMPLER.spellings)),
            )
            if not any(found):
                found = None
        memo[key] = found
        return found

    def hints(self) -> Hints:
        if self._hints is None:
            self._hints = self._compute_hints()
        return self._hints

    def _star_samplers(self, stars: list[str]) -> bool:
        """Whether a module this one star-imports may build a DistributedSampler (the index's "samplers")."""
        for star in stars:
            imported = self.project.program.star_module(self.module, star)
            if imported is not None and imported != self.module and self.project.builds_samplers(imported):
                return True
        return False

    def _compute_hints(self) -> Hints:
        facts = self.project.modules.get(self.module)
        known: set[ProjectFact] = {ProjectFact.DISTRIBUTED} if self.project.distributed else set()
        if facts is None:
            return Hints(frozenset(known), packages=self.project.packages)
        origins: list[tuple[str, str]] = []
        helpers: set[str] = set()
        for local, origin in facts["imports"].items():
            absolute = self.absolute(origin)
            home_name, _, function = absolute.rpartition(".")
            home = self.project.module(home_name) if self.project.distributed and home_name else None
            # the project module the import names, found as the program finds it (also in a folder
            # without an `__init__.py`, or beside the importer): (module, the name imported from it)
            found = self.project.program.split(absolute, self.module) if self.project.distributed else None
            seeder, imported_name = found if found is not None else (None, None)
            if (
                home is not None and home != self.module and self.project.may_save(home)
                and function in self.project.saving_functions(home)
            ):  # `from utils import save_checkpoint`: the screens see its calls as torch.save's
                known.add(ProjectFact.SAVE_HELPER)
                origins.append((local, TORCH_SAVE.name))
            seeds = seeder is not None and seeder != self.module and self.project.modules[seeder].get("seeds")
            if seeds and imported_name and imported_name in self.project.seeding_functions(seeder):
                # `from utils import seed_everything` (also `from speakerlab.utils.utils import set_seed`,
                # no `__init__.py` on the way): the screens see its calls as a seeding call
                known.add(ProjectFact.SEED_HELPER)
                origins.append((local, MANUAL_SEED.name))
            imported = self.project.module(absolute)
            if seeds and not imported_name and self.project.seeding_functions(seeder):
                # `import utils` ... `utils.fix_random_seeds(seed)`: the rule asks the model what the call seeds
                known.add(ProjectFact.SEED_HELPER)
            if imported is not None and imported != self.module and self.project.builds_samplers(imported):
                known.add(ProjectFact.SAMPLER_BUILDER)  # `data.make_sampler(ds)`: the model answers for the call
            exports = self._exports(absolute)
            if exports is None:
                continue
            if imported is not None:  # `import utils`: the names it exports
                cuda, loader_subclass = exports
                if cuda:  # the screen sees `utils.place(...)` in a default as a helper call
                    known.add(ProjectFact.CUDA_HELPER)
                    helpers.update(f"{local}.{name}" for name in cuda)
                if loader_subclass:
                    known.add(ProjectFact.LOADER_CLASS_MODULE)
                continue
            cuda, loader_subclass, builds_sampler, endless, sampler_subclass = exports
            if cuda:
                known.add(ProjectFact.CUDA_HELPER)
                helpers.add(local)
            if loader_subclass:
                known.add(ProjectFact.LOADER_CLASS)
                origins.append((local, DATALOADER.name))
            if builds_sampler:
                known.add(ProjectFact.SAMPLER_BUILDER)
                origins.append((local, DISTRIBUTED_SAMPLER.name))
            if endless:
                known.add(ProjectFact.ENDLESS_WRAPPER)
            if sampler_subclass:
                known.add(ProjectFact.SAMPLER_CLASS)
                origins.append((local, SAMPLER.name))
        if self._star_samplers(facts["stars"]):
            known.add(ProjectFact.SAMPLER_BUILDER)  # `from utils.distributed import *`, then `make_data_sampler(ds)`
        program = self.project.program
        writes = facts.get("saves") or facts.get("calls_saver") or facts.get("downloads")
        if writes and (self.project.distributed and self.run_by_ranks or self.launch_line()):
            known.add(ProjectFact.RUN_BY_RANKS)
        if facts.get("loads") and (program.values.wrapper_saves() or program.values.state_saves(Inner)):
            known.add(ProjectFact.LOADS_WRAPPER_CHECKPOINT)
        if facts.get("loaders") and self.project.distributed and self.trained_unprepared:
            known.add(ProjectFact.TRAINED_UNPREPARED)
        if program.receives_data(self.module):
            known.add(ProjectFact.HOLDS_LOADER)
        if program.values.parts_in(self.module):
            known.add(ProjectFact.WRAPPED_CLASS)
        if self.inner_handed():
            known.add(ProjectFact.HANDS_INNER_MODULE)
        if program.calls_unwrapper(self.module):
            known.add(ProjectFact.CALLS_UNWRAPPER)
        imported = [name for name in self.project._project_imports(self.module) if name != self.module]
        if any(self.project.may_collect(name) for name in imported):
            known.add(ProjectFact.CALLS_COLLECTIVE_HELPER)
        if placement.calls_wrap_helper(program, self.module):
            known.add(ProjectFact.CALLS_WRAP_HELPER)
        if facts.get("torch_loads") and not facts["dist"] and (self.ranks_started() or self.builds_launcher()):
            known.add(ProjectFact.LOAD_RUN_BY_RANKS)
        imports = tuple(sorted(self.star_bindings().items())) if facts["stars"] else ()
        fed = frozenset(
            name
            for name, fed_here in (
                ("WrappedModels", program.receives_wrapped(self.module)),
                ("LoaderFlow", program.hands_to_evaluation(self.module) or bool(self.evaluated_samplers())),
            )
            if fed_here
        )
        return Hints(frozenset(known), imports, tuple(origins), frozenset(helpers), fed, self.project.packages)


# -- building and caching -----------------------------------------------------------------


def build(root: str, cache_folder: str | None = None, files: list[str] | None = None) -> Project:
    """The index of every Python file under `root` (read from and written to the project
    cache in `cache_folder` where one is given)."""
    from ddplint.core.hashing import code_fingerprint, content_hash
    from ddplint import __version__

    root = os.path.abspath(root)
    cache_path = None
    entries: dict[str, dict] = {}
    if cache_folder is not None:
        key = content_hash(root.encode())[:12]
        cache_path = os.path.join(cache_folder, f"project-{__version__}-{code_fingerprint()}-{key}.json")
        entries = store.load(cache_path)
    modules: dict[str, dict] = {}
    relpaths: dict[str, str] = {}
    names: dict[str, str] = {}
    fresh: dict[str, dict] = {}
    paths = files if files is not None else python_files(root)
    packages = {
        os.path.dirname(_relative(path, root)).replace(os.sep, "/")
        for path in paths
        if os.path.basename(path) == "__init__.py"
    }
    ambiguous: set[str] = set()
    searched: dict[str, dict] = {}  # relative path -> the needles module_facts searched for
    for path in paths:
        relative = _relative(path, root)
        try:
            info = os.stat(path)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_INDEX_BYTES:
            continue  # a FIFO named x.py must not block the index; a huge file exports nothing
        entry = entries.get(relative)
        facts = None
        if entry is not None and entry.get("size") == info.st_size and entry.get("mtime") == info.st_mtime_ns:
            facts = entry.get("facts")
        if facts is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            digest = content_hash(data) if cache_path is not None else ""
            if entry is not None and entry.get("hash") == digest:
                facts = entry.get("facts")
            if facts is None:
                text = data.decode("utf-8", "replace")
                if module_name(relative, packages).partition(".")[0] in _EXTERNAL:
                    facts = _external_facts(text)  # never resolved: only whether it is distributed
                else:
                    scan = TextScan(text)
                    try:
                        facts = module_facts(text, scan, relative)
                    except Exception:  # text no pattern here foresaw: the module exports nothing
                        facts = _external_facts(text)
                    searched[relative] = (info.st_size, info.st_mtime_ns, scan.found)
            entry = {"size": info.st_size, "mtime": info.st_mtime_ns, "hash": digest, "facts": facts}
        fresh[relative] = entry
        name = module_name(relative, packages)
        if relative[: -len(".py")].replace(os.sep, "/") in packages:
            # `prune.py` beside the package `prune/`: `import prune` finds the package (a folder
            # comes first on the import path), so the file is only ever run as a script, a
            # module of its own under a name no import spells
            name = f"{name}-script"
        if name in modules:  # two scripts folders with a `utils.py`: neither is resolved
            ambiguous.add(name)
        modules[name] = facts
        relpaths[name] = relative
        names[relative] = name
    for name in ambiguous:
        del modules[name], relpaths[name]
    # Two scripts folders with a `utils.py`: each is kept under the dotted form of its path
    # (`TinyViT.utils`), and `shared` says which stand for the name they share. The index's
    # own lookups leave such names unresolved; the program model (ddplint.model.program)
    # resolves one by the importer's folder, which comes first on a script's sys.path.
    shared: dict[str, list[str]] = {}
    for relative, name in names.items():
        if name in ambiguous:
            unique = relative[: -len(".py")].removesuffix(f"{os.sep}__init__").replace(os.sep, ".")
            modules[unique], relpaths[unique], names[relative] = fresh[relative]["facts"], relative, unique
            shared.setdefault(name, []).append(unique)
    if cache_path is not None and fresh != entries:
        store.save(cache_folder, cache_path, fresh)  # type: ignore[arg-type]
    return Project(root, modules, relpaths, names=names, searched=searched, shared=shared, cache_path=cache_path)


def _given_or(given: dict, otherwise: Callable[[tuple[str, ...]], object], path: tuple[str, ...]) -> object:
    """The value `given` holds for setting `path`, else what `otherwise` reads."""
    return given[path] if path in given else otherwise(path)


def _opens(expr: ast.expr) -> bool:
    """Whether `expr` is `open(path, ...)`."""
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "open" and bool(expr.args)


def _relative(path: str, root: str) -> str:
    """`path` relative to the absolute `root` (os.path.relpath, without its cost for the
    paths found under the root)."""
    if path.startswith(root) and path[len(root) : len(root) + 1] == os.sep:
        return path[len(root) + 1 :]
    return os.path.relpath(os.path.abspath(path), root)


def _external_facts(text: str) -> dict:
    dist = any(marker in text for marker in DISTRIBUTED_MARKERS)
    # "torch": unknown is not "no" (torch's own modules, a text no pattern foresaw)
    return {"dist": dist, "torch": True, "imports": {}, "stars": [], "functions": {}, "classes": {}}


def alone(source: str, path: str) -> ProjectView:
    """A text linted without its project (standard input, `--no-project`, an example): a
    project of that one module, so that what its own functions hand each other is still
    followed (ddplint.model.program)."""
    name = os.path.splitext(os.path.basename(path))[0] or "module"
    relative = path or "module.py"  # as given: a tests/ folder in it still says what it is
    try:
        facts = module_facts(source)
    except Exception:  # text no pattern here foresaw
        facts = _external_facts(source)
    project = Project(os.getcwd(), {name: facts}, {name: relative}, names={relative: name}, texts={name: source})
    return project.module_view(name)


_LOADED: dict[str, Project] = {}


def for_file(path: str, cache: bool = True) -> Project | None:
    """The project of one file, for the flake8 plugin: built (or loaded from the project's
    own cache) once per process and root."""
    if not path or path in ("-", "stdin") or not os.path.exists(path):
        return None
    # With no marker above the file, the folder flake8 runs in stands for the project, as
    # the command line's common folder of its paths does (`flake8 .` == `ddplint check .`).
    root = root_seen_from(path, os.getcwd())
    project = _LOADED.get(root)
    if project is None:
        cache_folder = os.path.join(root, ".ddplint_cache") if cache else None
        project = _LOADED[root] = build(root, cache_folder)
    return project


def _passes_positional(command: str, script: str) -> bool:
    """Whether `command` hands the script called `script` an argument that is not an option nor
    an option's value (`train.py data/ --epochs 3`: `data/`); also where the script is not seen."""
    words = command.replace("\\\n", " ").split()
    at = next((i for i, word in enumerate(words) if word == script or word.endswith("/" + script)), None)
    if at is None:
        return True
    index = at + 1
    while index < len(words):
        word = words[index]
        if word in ("|", "||", "&&", ";", "&") or word.startswith((">", "2>", "<")):
            return False
        if not word.startswith("-"):
            return True
        # `--epochs 3` takes the next word as its value, `--epochs=3` and `--fp16 --x` do not
        takes_value = "=" not in word and index + 1 < len(words) and not words[index + 1].startswith("-")
        index += 2 if takes_value else 1
    return False
