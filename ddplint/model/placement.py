"""Where the program puts its model and its process: questions on the program model
(ddplint.model.program.Program) about devices, across functions and modules.

- `cpu_built`: does a call return a model as its constructor left it, on the CPU?
  (`model = build_model(cfg)` where `build_model` returns `Net(cfg)` untouched.)
- `handed_to_ddp`: does a call hand its argument, untouched, to `DDP(..., device_ids=...)`?
  (`wrap(model, rank)` before `model.to(rank)`.)
- `nccl_group`: does a call reach `init_process_group("nccl")` in a helper whose modules bind
  no device? (`utils.init_distributed_mode(args)`.)
- `binds_device`: does a call reach a project function whose module binds a device?
- `bare_placement`: does a call reach a project function of another module that moves to the
  current CUDA device only (`model.cuda()` in `build_model(args)`), in a module binding none?
- `cuda_placement`: does a function put a tensor or module on CUDA, itself or through the
  project functions it calls? (`to_gpu(x)` in `utils.py` calling `x.cuda()`.)

Each answers None or False when it does not know: a call it cannot resolve, a summary it
cannot read, a chain deeper than MAX_DEPTH.
"""

from __future__ import annotations

from typing import Callable

from ddplint.core.fixpoint import reachable
from ddplint.core.torch_api import INIT_PROCESS_GROUP

MAX_DEPTH = 3  # helpers followed below the call asked about


def cpu_built(program, module: str, callee: str, cls: str | None, constructor: Callable[[str], bool],
              depth: int = 0) -> str | None:
    """Where the model that calling `callee` in `module` returns was built and left on the
    CPU ("models.py:12"): a project class, a call `constructor(qualified name)` accepts, or a
    project function every `return` of which gives such a model untouched; None otherwise."""
    if depth > MAX_DEPTH or program.summary(module) is None:
        return None
    qualified = program._qualify(module, callee)
    if qualified is not None and constructor(qualified):
        return "here"
    made = program.class_of(module, callee)
    if made is not None:  # a project class, unless its __init__ places something on CUDA itself
        init = program.summary(made[0])["functions"].get(f"{made[1]}.__init__")
        return "here" if init is None or init["cuda"] is None else None
    target = program.resolve(module, callee, cls)
    if target is None or target[2]:  # unknown, or a method: its object may have moved it
        return None
    record = program.summary(target[0])["functions"][target[1]]
    returns = record.get("fresh", [])
    if not returns or None in returns:
        return None
    places = []
    for inner, line in returns:
        place = cpu_built(program, target[0], inner, record["class"], constructor, depth + 1)
        if place is None:
            return None
        places.append(program.location(target[0], line) if place == "here" else place)
    return places[0]


def handed_to_ddp(program, module: str, key: str | None, cls: str | None, callee: str, position: int | str) -> str | None:
    """Where the project function that calling `callee` reaches hands the argument at `position`
    (an index, or a keyword: `wrap(model=net)`), untouched, to `DDP(..., device_ids=...)`
    ("helpers.py:5"); None otherwise."""
    target = program.target(module, key, cls, callee)
    if target is None:
        return None
    record = program.summary(target[0])["functions"][target[1]]
    params = record["params"][1:] if target[2] else record["params"]
    if isinstance(position, int):
        position = params[position] if position < len(params) else None
    return next((program.location(target[0], line) for param, line in _device_wraps(program, target[0], record) if param == position), None)


def _device_wraps(program, module: str, record: dict) -> list[tuple[str, int]]:
    """(parameter, line) of each `DDP(param, device_ids=...)` of a function that wraps a parameter
    untouched (`handed`)."""
    return [
        (param, line) for inner, param, line, keywords in record.get("handed", ())
        if "device_ids" in keywords and program._makes_ddp(module, inner)
    ]


def calls_wrap_helper(program, module: str) -> bool:
    """Whether a function of `module` calls a project function that wraps a parameter untouched in
    `DDP(..., device_ids=...)` (`handed_to_ddp`): `model = wrap(model, rank)`."""
    names = program.function_names("wraps on a device", lambda name, record: bool(_device_wraps(program, name, record)))

    def reaches(module: str, key: str | None, cls: str | None, callee: str) -> bool:
        target = program.target(module, key, cls, callee)
        return target is not None and bool(_device_wraps(program, target[0], program.summary(target[0])["functions"][target[1]]))

    return program.calls_any(module, names, reaches)


def nccl_group(program, module: str, key: str | None, cls: str | None, callee: str, depth: int = 0) -> str | None:
    """Where calling `callee` in function `key` creates an NCCL process group without
    `device_id=` through project helpers ("utils.py:40"), no module on the way binding a
    device; None otherwise."""
    target = program.target(module, key, cls, callee) if depth <= MAX_DEPTH else None
    if target is None or target[0] == module and depth == 0:
        return None  # the module's own calls are its rule's to judge
    summary = program.summary(target[0])
    if summary is None or summary.get("binds_device", True):
        return None
    record = summary["functions"][target[1]]
    if any(binds_device(program, target[0], target[1], record["class"], inner, depth + 1) for inner, _ in record["invocations"]):
        return None  # a helper beside the group binds (`setup_gpu()` in another module)
    for name, line, backend, bound in record.get("process_groups", ()):
        if program._qualify(target[0], name) in INIT_PROCESS_GROUP and backend == "nccl" and not bound:
            return program.location(target[0], line)
    for inner, _ in record["invocations"]:
        found = nccl_group(program, target[0], target[1], record["class"], inner, depth + 1)
        if found is not None:
            return found
    return None


def binds_device(program, module: str, key: str | None, cls: str | None, callee: str, depth: int = 0) -> bool:
    """Whether calling `callee` in function `key` reaches a project function whose module may
    bind the process to a device (ddplint.model.program._binds_device)."""
    target = program.target(module, key, cls, callee) if depth <= MAX_DEPTH else None
    if target is None or target[0] == module:
        return False
    summary = program.summary(target[0])
    if summary is None:
        return False
    if summary.get("binds_device", True):
        return True
    record = summary["functions"][target[1]]
    return any(binds_device(program, target[0], target[1], record["class"], inner, depth + 1) for inner, _ in record["invocations"])


def bare_placement(program, module: str, key: str | None, cls: str | None, callee: str) -> str | None:
    """Where the project function of another module that calling `callee` in function `key`
    reaches moves to the current CUDA device ("models.py:9"), when each of its moves is such a
    move (`.cuda()`, `.to("cuda")`; none names an index, a rank or a device variable) and its
    module binds no device; None otherwise. The function itself only: a helper it calls in
    turn may choose the device."""
    target = program.target(module, key, cls, callee)
    if target is None or target[0] == module:
        return None  # the module's own moves are its rule's to read
    summary = program.summary(target[0])
    if summary is None or summary.get("binds_device", True):
        return None
    record = summary["functions"][target[1]]
    if record.get("bare_cuda") is None or record.get("device_moves", True):
        return None
    return program.location(target[0], record["bare_cuda"])


def cuda_placement(program, module: str, key: str) -> str | None:
    """Where function `key` of `module`, or a project function it calls at any depth and across
    modules, puts a tensor or module on CUDA (its summary's `cuda`): the place of that call
    ("utils.py:7"), or None. Each function reached is read once, so recursion ends; what the
    program cannot read (past its bounds, a module that does not parse) places nothing."""

    def record(function: tuple[str, str]) -> dict | None:
        summary = program.summary(function[0])
        return summary["functions"].get(function[1]) if summary is not None else None

    def called(function: tuple[str, str]) -> list[tuple[str, str]]:
        found = record(function)
        targets = (program.resolve(function[0], callee, found["class"]) for callee, _ in found["invocations"]) if found else ()
        return [target[:2] for target in targets if target is not None]

    for function in reachable([(module, key)], called):
        found = record(function)
        if found is not None and found.get("cuda"):
            return program.location(function[0], found["cuda"])
    return None
