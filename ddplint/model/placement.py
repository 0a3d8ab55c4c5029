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
from ddplint.model.records import FunctionSummary, Place

MAX_DEPTH = 3  # helpers followed below the call asked about


class BuiltHere:
    """`cpu_built`'s answer for a call that builds the model itself (a constructor, a project class)."""

    def __repr__(self) -> str:
        return "HERE"


HERE = BuiltHere()


def cpu_built(program, module: str, callee: str, cls: str | None, constructor: Callable[[str], bool],
              depth: int = 0) -> Place | BuiltHere | None:
    """Where the model that calling `callee` in `module` returns was built and left on the
    CPU: HERE when the call builds it (a project class, a call `constructor(qualified name)`
    accepts), the place of that build in a project function every `return` of which gives such a
    model untouched; None otherwise."""
    if depth > MAX_DEPTH or program.summary(module) is None:
        return None
    qualified = program.qualify(module, callee)
    if qualified is not None and constructor(qualified):
        return HERE
    made = program.class_of(module, callee)
    if made is not None:  # a project class, unless its __init__ places something on CUDA itself
        init = program.summary(made[0]).functions.get(f"{made[1]}.__init__")
        return HERE if init is None or init.cuda is None else None
    target = program.resolve(module, callee, cls)
    if target is None or target.bound:  # unknown, or a method: its object may have moved it
        return None
    record = program.summary(target.module).functions[target.key]
    returns = record.fresh
    if not returns or None in returns:
        return None
    places = []
    for made_by in returns:
        place = cpu_built(program, target.module, made_by.callee, record.cls, constructor, depth + 1)
        if place is None:
            return None
        places.append(program.place(target.module, made_by.line) if place is HERE else place)
    return places[0]


def handed_to_ddp(program, module: str, key: str | None, cls: str | None, callee: str, position: int | str) -> Place | None:
    """Where the project function that calling `callee` reaches hands the argument at `position`
    (an index, or a keyword: `wrap(model=net)`), untouched, to `DDP(..., device_ids=...)`;
    None otherwise."""
    target = program.target(module, key, cls, callee)
    if target is None:
        return None
    record = program.summary(target.module).functions[target.key]
    params = record.arguments(target.bound)
    if isinstance(position, int):
        position = params[position] if position < len(params) else None
    return next((program.place(target.module, line) for param, line in _device_wraps(program, target.module, record) if param == position), None)


def _device_wraps(program, module: str, record: FunctionSummary) -> list[tuple[str, int]]:
    """(parameter, line) of each `DDP(param, device_ids=...)` of a function that wraps a parameter
    untouched (`handed`)."""
    return [
        (hand.param, hand.line) for hand in record.handed
        if "device_ids" in hand.keywords and program.makes_ddp(module, hand.callee)
    ]


def calls_wrap_helper(program, module: str) -> bool:
    """Whether a function of `module` calls a project function that wraps a parameter untouched in
    `DDP(..., device_ids=...)` (`handed_to_ddp`): `model = wrap(model, rank)`."""
    names = program.function_names("wraps on a device", lambda name, record: bool(_device_wraps(program, name, record)))

    def reaches(module: str, key: str | None, cls: str | None, callee: str) -> bool:
        target = program.target(module, key, cls, callee)
        return target is not None and bool(_device_wraps(program, target.module, program.summary(target.module).functions[target.key]))

    return program.calls_any(module, names, reaches)


def nccl_group(program, module: str, key: str | None, cls: str | None, callee: str, depth: int = 0) -> Place | None:
    """Where calling `callee` in function `key` creates an NCCL process group without
    `device_id=` through project helpers, no module on the way binding a device; None otherwise."""
    target = program.target(module, key, cls, callee) if depth <= MAX_DEPTH else None
    if target is None or target.module == module and depth == 0:
        return None  # the module's own calls are its rule's to judge
    summary = program.summary(target.module)
    if summary is None or summary.binds_device:
        return None
    record = summary.functions[target.key]
    if any(binds_device(program, target.module, target.key, record.cls, call.callee, depth + 1) for call in record.invocations):
        return None  # a helper beside the group binds (`setup_gpu()` in another module)
    for group in record.process_groups:
        if program.qualify(target.module, group.callee) in INIT_PROCESS_GROUP and group.backend == "nccl" and not group.bound:
            return program.place(target.module, group.line)
    for call in record.invocations:
        found = nccl_group(program, target.module, target.key, record.cls, call.callee, depth + 1)
        if found is not None:
            return found
    return None


def binds_device(program, module: str, key: str | None, cls: str | None, callee: str, depth: int = 0) -> bool:
    """Whether calling `callee` in function `key` reaches a project function whose module may
    bind the process to a device (ddplint.model.summary reads it)."""
    target = program.target(module, key, cls, callee) if depth <= MAX_DEPTH else None
    if target is None or target.module == module:
        return False
    summary = program.summary(target.module)
    if summary is None:
        return False
    if summary.binds_device:
        return True
    record = summary.functions[target.key]
    return any(binds_device(program, target.module, target.key, record.cls, call.callee, depth + 1) for call in record.invocations)


def bare_placement(program, module: str, key: str | None, cls: str | None, callee: str) -> Place | None:
    """Where the project function of another module that calling `callee` in function `key`
    reaches moves to the current CUDA device, when each of its moves is such a move (`.cuda()`,
    `.to("cuda")`; none names an index, a rank or a device variable) and its module binds no
    device; None otherwise. The function itself only: a helper it calls in turn may choose the device."""
    target = program.target(module, key, cls, callee)
    if target is None or target.module == module:
        return None  # the module's own moves are its rule's to read
    summary = program.summary(target.module)
    if summary is None or summary.binds_device:
        return None
    record = summary.functions[target.key]
    if record.bare_cuda is None or record.device_moves:
        return None
    return program.place(target.module, record.bare_cuda)


def cuda_placement(program, module: str, key: str) -> Place | None:
    """Where function `key` of `module`, or a project function it calls at any depth and across
    modules, puts a tensor or module on CUDA (its summary's `cuda`): the place of that call, or
    None. Each function reached is read once, so recursion ends; what the program cannot read
    (past its bounds, a module that does not parse) places nothing."""

    def called(function: tuple[str, str]) -> list[tuple[str, str]]:
        found = program.function(*function)
        targets = (program.resolve(function[0], call.callee, found.cls) for call in found.invocations) if found else ()
        return [target.function for target in targets if target is not None]

    for function in reachable([(module, key)], called):
        found = program.function(*function)
        if found is not None and found.cuda:
            return program.place(function[0], found.cuda)
    return None
