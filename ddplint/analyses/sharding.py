"""Where this file shards a model with FSDP, and what each name is bound to, in the order the
code binds them.

FSDP1 (`FullyShardedDataParallel(module, ...)`) returns a wrapper and, unless it is given
`use_orig_params=True`, replaces the module's parameters by flat parameters; FSDP2
(`fully_shard(module)`) shards the module in place, replacing each parameter by a DTensor one.
A wrap's `flattens` and `shards` say what its arguments establish: True or False where they are
literals (or left out, at their defaults), None where the code decides at run time (a variable,
`**kwargs`).

`bindings` lists every assignment to a dotted name (`model = ...`, `self.model = ...`) with the
wrap it binds, if any, in walk order (`order` counts assignments and calls), so that a rule can
ask what a name holds at a later call of the same function or class.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.core.torch_api import FSDP, FSDP_NO_SHARD, FSDP_SHARDING_STRATEGY, FSDP_USE_ORIG_PARAMS, FULLY_SHARD
from ddplint.semantic.edits import argument_for, has_star_arguments
from ddplint.semantic.model import Analysis, SemanticModel, dotted_name


@dataclass(frozen=True)
class ShardingWrap:
    """An FSDP1 wrap (`fsdp2` False) or an FSDP2 `fully_shard` of the module named `module`
    (None when it is not a dotted name), in function `frame`, at walk position `order`."""

    call: cst.Call
    fsdp2: bool
    module: str | None
    frame: str | None
    order: int
    flattens: bool | None  # FSDP1 replaces the parameters by flat ones (not use_orig_params=True)
    shards: bool | None  # the parameters and gradients are split across ranks (not NO_SHARD)


@dataclass(frozen=True)
class Binding:
    """`name = value` in function `frame` (the class's name in `cls` for a method), at walk
    position `order`; `wrap` when the value is an FSDP1 wrap; `call` when it is any call (a
    project helper that may return one)."""

    name: str
    frame: str | None
    cls: str | None
    order: int
    wrap: ShardingWrap | None
    call: cst.Call | None = None


class ShardedModels(Analysis):
    """Read `wraps`, `bindings` and `order` during or after the walk."""

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self.order = 0
        self.wraps: list[ShardingWrap] = []
        self.bindings: list[Binding] = []
        self._by_call: dict[int, ShardingWrap] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        self.order += 1
        wrap = self._wrap(node.value) if isinstance(node.value, cst.Call) else None
        self_class = self.model.frame.self_class
        for target in node.targets:
            name = dotted_name(target.target)
            if name is not None:
                cls = self_class.name.value if self_class is not None else None
                call = node.value if isinstance(node.value, cst.Call) else None
                self.bindings.append(Binding(name, self.model.frame.key, cls, self.order, wrap, call))

    def visit_Call(self, node: cst.Call) -> None:
        self.order += 1
        self._wrap(node)

    def _wrap(self, call: cst.Call) -> ShardingWrap | None:
        if id(call) in self._by_call:
            return self._by_call[id(call)]
        qualified = self.model.qualified(call.func)
        if qualified not in FSDP and qualified not in FULLY_SHARD:
            return None
        target = FSDP if qualified in FSDP else FULLY_SHARD
        module = argument_for(call, target, "module")
        fsdp2 = qualified in FULLY_SHARD
        wrap = ShardingWrap(
            call, fsdp2, dotted_name(module.value) if module is not None else None, self.model.frame.key,
            self.order, None if fsdp2 else self._flattens(call), True if fsdp2 else self._shards(call),
        )
        self._by_call[id(call)] = wrap
        self.wraps.append(wrap)
        return wrap

    def _flattens(self, call: cst.Call) -> bool | None:
        given = argument_for(call, FSDP, FSDP_USE_ORIG_PARAMS)
        if given is None:
            return None if has_star_arguments(call) else True
        value = given.value
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            return value.value == "False"
        return None

    def _shards(self, call: cst.Call) -> bool | None:
        given = argument_for(call, FSDP, FSDP_SHARDING_STRATEGY)
        if given is None:
            return None if has_star_arguments(call) else True
        value = given.value
        if isinstance(value, cst.Attribute) and (value.attr.value.isupper() or value.attr.value.startswith("_")):
            return value.attr.value != FSDP_NO_SHARD  # `ShardingStrategy.FULL_SHARD`, `._HYBRID_SHARD_ZERO2`
        return None

    def holding(self, name: str, frame: str | None, cls: str | None, before: int) -> Binding | None:
        """The binding that `name` holds at walk position `before` in function `frame` (of class
        `cls`): its last assignment before that in the same function; for `self.x` in a method,
        else the value every other method of the class that assigns it leaves there last (a
        wrap stored in `setup()` and read in `train_step()`); None when unknown."""
        here = [b for b in self.bindings if b.name == name and b.frame == frame and b.order < before]
        if here:
            return here[-1]
        if cls is None or not name.startswith("self."):
            return None
        last: dict[str | None, Binding] = {}
        for binding in self.bindings:
            if binding.name == name and binding.cls == cls and binding.frame != frame:
                last[binding.frame] = binding
        kinds = {binding.wrap is not None for binding in last.values()}
        return next(iter(last.values())) if len(last) == 1 or kinds == {True} else None
