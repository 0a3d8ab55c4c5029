"""Which environment variables does a statement set? Shared by the rules about variables
left in code (CUDA_LAUNCH_BLOCKING) and set too late (CUDA_VISIBLE_DEVICES)."""

from __future__ import annotations

import libcst as cst

from ddplint.semantic.edits import argument_at

OS_ENVIRON = "os.environ"
SETTERS = frozenset({"os.environ.setdefault", "os.putenv"})
UPDATE = "os.environ.update"


def environ_writes(names, node: cst.Assign | cst.Call) -> list[tuple[str | None, cst.BaseExpression]]:
    """(variable, value) for each variable `node` sets in the process environment through
    `os.environ[...] = ...`, `os.environ.setdefault`, `os.putenv` or `os.environ.update`; the
    variable is None where its name is not a string known statically. Empty for any other node."""
    if isinstance(node, cst.Assign):
        writes: list[tuple[str | None, cst.BaseExpression]] = []
        for target in node.targets:
            subscript = target.target
            if (
                isinstance(subscript, cst.Subscript)
                and names.qualified(subscript.value) == OS_ENVIRON
                and len(subscript.slice) == 1
                and isinstance(subscript.slice[0].slice, cst.Index)
            ):
                writes.append((names.string_value(subscript.slice[0].slice.value), node.value))
        return writes
    qualified = names.qualified(node.func)
    if qualified in SETTERS:
        key, value = argument_at(node, 0, "key"), argument_at(node, 1, "value")
        if key is None or value is None:
            return []
        return [(names.string_value(key.value), value.value)]
    if qualified != UPDATE:
        return []
    writes = []
    for arg in node.args:
        if arg.keyword is not None:
            writes.append((arg.keyword.value, arg.value))
        elif isinstance(arg.value, cst.Dict):
            for element in arg.value.elements:
                key = names.string_value(element.key) if isinstance(element, cst.DictElement) else None
                writes.append((key, element.value))
        else:
            writes.append((None, arg.value))
    return writes
