"""Where the program hands its model to DDP: a question on the program model
(ddplint.model.program.Program) that the prefilter hints and the rule about wrapping order share.

- `device_wraps`: the parameters a function hands, untouched, to `DDP(..., device_ids=...)`;
- `calls_wrap_helper`: does a module call a project function that does so? (`model =
  wrap(model, rank)`: ProjectFact.CALLS_WRAP_HELPER.)
"""

from __future__ import annotations

from ddplint.model.records import FunctionSummary


def device_wraps(program, module: str, record: FunctionSummary) -> list[tuple[str, int]]:
    """(parameter, line) of each `DDP(param, device_ids=...)` of a function of `module` that wraps
    a parameter nothing touched before (its summary's `handed`)."""
    return [
        (hand.param, hand.line) for hand in record.handed
        if "device_ids" in hand.keywords and program.makes_ddp(module, hand.callee)
    ]


def calls_wrap_helper(program, module: str) -> bool:
    """Whether a function of `module` calls a project function that wraps a parameter untouched in
    `DDP(..., device_ids=...)` (`device_wraps`): `model = wrap(model, rank)`."""
    names = program.function_names("wraps on a device", lambda name, record: bool(device_wraps(program, name, record)))

    def reaches(module: str, key: str | None, cls: str | None, callee: str) -> bool:
        target = program.target(module, key, cls, callee)
        return target is not None and bool(device_wraps(program, target.module, program.summary(target.module).functions[target.key]))

    return program.calls_any(module, names, reaches)
