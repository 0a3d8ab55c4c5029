"""The module inside a DDP model, handed to a project function that trains it: a question on the
program model (ddplint.model.program.Program).

`main()` wraps the model and keeps `model_without_ddp = model.module` for the optimizer and the
checkpoints; when it hands that inner module to `train_one_epoch(...)`, every rank steps through
a forward DDP never saw, and no gradient is all-reduced. What counts as the inner module
(ddplint.model.program._unwrapped): `model.module`, `model.module if distributed else model`
(either way round) and `getattr(model, "module", model)`, or a name bound to one of them, where
`model` is a DDP model.

A function trains what it is handed when it calls it (`model(x)`, `model.forward(x)`) where
gradients are on, and a `backward()` follows: in the same function at or after that line,
through a project helper or a library loss scaler called at or after it (`loss_scaler(loss, optimizer)`), or in a loop
around it that runs one. A function that also calls a DDP model does not count (a second
forward whose gradients are reduced with the first's, as in ddplint's DDP019). The value is
followed where the function hands it on and onto `self` (Program.follow).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ddplint.model.records import FunctionSummary, Inner, Place, Wrapped


@dataclass(frozen=True)
class Trained:
    """The inner module of a DDP model handed to the project function `function`, which trains
    it: its forward at `forward`, a backward after it."""

    inner: Inner
    function: str
    forward: Place


def trains(program, module: str, key: str | None, cls: str | None, callee: str, position: int | str):
    """(the function's key, the place of its forward) where the project function a call of
    `callee` in function `key` reaches, or one it hands the value on to, trains the argument at
    `position` (an index or a keyword); None if it does not, or is unknown."""
    index, keyword = (position, None) if isinstance(position, int) else (None, position)
    check = functools.partial(_trains, program)
    return program.follow(program.memos.trainings, check, module, key, cls, callee, index, keyword)


def _trains(program, module: str, key: str, record: FunctionSummary, source) -> tuple[str, Place] | None:
    lines = [passed.line for passed in record.forward_passes if passed.source == source]
    if not lines or any(isinstance(program.evaluate(module, key, passed.source), Wrapped) for passed in record.forward_passes):
        return None
    for line in lines:
        if _backward_after(program, module, key, record, line):
            return key, program.place(module, line)
    return None


def _backward_after(program, module: str, key: str, record: FunctionSummary, line: int) -> bool:
    if any(at >= line for at in record.backward):
        return True
    if any(loop.first <= line <= loop.last and loop.trains for loop in record.loops):
        return True
    for call in record.invocations:
        helper = program.callee_summary(module, key, record.cls, call.callee) if call.line >= line else None
        if helper is not None and helper.summary.backward:
            return True
    return False


def handed(program, module: str) -> dict[tuple, Trained]:
    """The calls of `module` that hand the inner module of a DDP model to a project function that
    trains it, where the inner module is taken (not a parameter that holds one: its caller is
    reported), by (function key, callee as written, position, argument as written)."""
    memo = program.memos.handed_inner
    if module not in memo:
        memo[module] = found = {}
        # Only a module the solution read can hold a DDP model (it names DDP, or a value led there):
        # asking of the others reads nothing, so each module's hints cost no reading.
        summary = program.known(module) if program.solved_module(module) else None
        for key, function in summary.functions.items() if summary is not None else ():
            for hand in function.unwrapped:
                value = program.evaluate(module, key, hand.source)
                if not isinstance(value, Inner):
                    continue
                trained = trains(program, module, key, function.cls, hand.callee, hand.position)
                if trained is not None:
                    found[(key, hand.written, hand.position, hand.argument)] = Trained(value, *trained)
    return memo[module]
