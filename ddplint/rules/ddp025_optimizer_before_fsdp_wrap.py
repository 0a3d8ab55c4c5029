from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.analyses.sharding import ShardedModels, ShardingWrap
from ddplint.core.diagnostics import Applicability, StepKind
from ddplint.core.torch_api import FSDP, FULLY_SHARD, NOT_OPTIMIZERS, OPTIMIZER_PARAMS, PARAMETER_METHODS, TORCH_OPTIM
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule
from ddplint.semantic.edits import names_in
from ddplint.semantic.model import dotted_name
from ddplint.semantic.walk import children


@dataclass
class _Optimizer:
    """`name = Optimizer(<parameters of `owners`>)` in function `frame` at walk position `order`."""

    name: str
    owners: frozenset[str]
    frame: str | None
    order: int
    call: cst.Call
    statement: cst.SimpleStatementLine | None
    blocks: tuple[cst.CSTNode, ...]
    direct: bool  # its call names the parameters itself (no list gathered earlier)


@dataclass
class _Late:
    optimizer: _Optimizer
    owner: str
    wrap: ShardingWrap
    statement: cst.SimpleStatementLine | None
    blocks: tuple[cst.CSTNode, ...]


class OptimizerBeforeFsdpWrap(Rule):
    """
    FSDP replaces the parameters of the module it shards. FSDP1 (`FullyShardedDataParallel`)
    flattens them into flat parameters of its own unless it is given `use_orig_params=True`;
    FSDP2 (`fully_shard`) replaces each by a new DTensor parameter. An optimizer built before
    the wrap holds the module's original parameters: they no longer take part in the forward,
    never receive a gradient, and `optimizer.step()` skips them. Nothing fails and nothing
    warns; the loss stays where it started. PyTorch's FSDP documentation says to build the
    optimizer after the wrap for this reason.

    Measured on CPU with gloo, two ranks, five SGD steps of one small model
    (ddplint/harness/scenarios/ddp025/experiment_stale_optimizer.py): with the optimizer built
    before `FullyShardedDataParallel(model)` the loss is the same after every step and no
    parameter changes; before `fully_shard(model)` the same; after the wrap, or before an
    FSDP1 wrap with `use_orig_params=True`, the loss falls from the first step on.

    Fires when, in one function, an optimizer of `torch.optim` is built from a module's
    parameters (`model.parameters()`, `model.named_parameters()`, also inside a filter,
    comprehension or parameter groups, or through a name bound to them) and later in the same
    function, on the same path (not in another branch of an `if`), that module, a module
    holding it or one inside it is wrapped by `FullyShardedDataParallel(...)` without
    `use_orig_params=True`, or sharded by `fully_shard(...)`; and the optimizer is not built
    again after the wrap.

    Not flagged: an optimizer built after the wrap; FSDP1 with `use_orig_params=True`, or with
    a value or `**kwargs` the code decides at run time (unknown); an optimizer built by a helper
    or in another method (the order is unknown here); Accelerate's `accelerator.prepare(model,
    optimizer)` with an FSDP plugin and Lightning's strategies, which build or re-bind the
    optimizer after the wrap themselves (`configure_optimizers` runs after `configure_model`).

    Fix (safe): move the optimizer's statement to just after the wrap, where
    `model.parameters()` gives the sharded parameters; offered when both are statements of the
    same block, the wrap re-binds the module's own name (or shards it in place), and nothing in
    between uses the optimizer or re-binds a name its construction reads.
    """

    code = "DDP025"
    name = "optimizer-before-fsdp-wrap"
    needs_ranks = True
    frameworks = (Framework.FSDP,)
    message = (
        "optimizer built before the FSDP wrap holds the original parameters, which FSDP replaces: they never get "
        "gradients and the loss stays flat; build the optimizer after the wrap, from the wrapped model's parameters"
    )
    fix = Applicability.SAFE
    # `also`: the optimizer is built from the module's parameters.
    trigger = CallTrigger(FSDP | FULLY_SHARD, also=("parameters",))
    analyses = (ShardedModels,)

    flagged_examples = (
        Flagged(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

            def setup(model, rank):
                optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
                            ^
                model = FSDP(model, device_id=rank)
                return model, optimizer
            """,
            fixed="""
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

            def setup(model, rank):
                model = FSDP(model, device_id=rank)
                optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
                return model, optimizer
            """,
            messages=(
                "optimizer built before the FSDP wrap holds the original parameters, which FSDP replaces: they "
                "never get gradients and the loss stays flat; build the optimizer after the wrap, from the wrapped "
                "model's parameters (`optimizer` holds `model`'s parameters; FullyShardedDataParallel wraps "
                "`model` later in this function)"
            ),
        ),
        Flagged(
            """
            from torch import optim
            from torch.distributed.fsdp import fully_shard

            def build(model, cfg):
                opt = optim.SGD([{"params": model.parameters(), "lr": cfg.lr}], momentum=0.9)
                      ^
                for block in model.blocks:
                    fully_shard(block)
                fully_shard(model)
                return opt
            """,
            fixed="""
            from torch import optim
            from torch.distributed.fsdp import fully_shard

            def build(model, cfg):
                for block in model.blocks:
                    fully_shard(block)
                fully_shard(model)
                opt = optim.SGD([{"params": model.parameters(), "lr": cfg.lr}], momentum=0.9)
                return opt
            """,
            messages=(
                "optimizer built before the FSDP wrap holds the original parameters, which FSDP replaces: they "
                "never get gradients and the loss stays flat; build the optimizer after the wrap, from the wrapped "
                "model's parameters (`opt` holds `model`'s parameters; fully_shard shards `model` later in this "
                "function)"
            ),
        ),
        Flagged(
            # The wrap binds another name: moving the optimizer would not give it the sharded
            # parameters (`model.parameters()` is the inner module's), so no fix.
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy

            class Trainer:
                def __init__(self, net):
                    self.optimizer = torch.optim.Adam(net.parameters())
                                     ^
                    self.model = FullyShardedDataParallel(net, sharding_strategy=ShardingStrategy.HYBRID_SHARD, use_orig_params=False)
            """,
            messages=(
                "optimizer built before the FSDP wrap holds the original parameters, which FSDP replaces: they "
                "never get gradients and the loss stays flat; build the optimizer after the wrap, from the wrapped "
                "model's parameters (`self.optimizer` holds `net`'s parameters; FullyShardedDataParallel wraps "
                "`net` later in this function)"
            ),
        ),
        Flagged(
            # The parameters were gathered into a list before the wrap: moving the optimizer
            # alone would not help, so no fix.
            """
            import torch
            from torch.distributed.fsdp import fully_shard

            def build(model):
                trainable = [p for p in model.parameters() if p.requires_grad]
                optimizer = torch.optim.AdamW(trainable, lr=1e-4)
                            ^
                fully_shard(model)
                return optimizer
            """,
            messages=(
                "optimizer built before the FSDP wrap holds the original parameters, which FSDP replaces: they "
                "never get gradients and the loss stays flat; build the optimizer after the wrap, from the wrapped "
                "model's parameters (`optimizer` holds `model`'s parameters; fully_shard shards `model` later in "
                "this function)"
            ),
        ),
    )
    clean_examples = (
        Clean(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, fully_shard

            def after(model, rank):
                model = FSDP(model, device_id=rank)
                return torch.optim.AdamW(model.parameters(), lr=1e-4)

            def original_parameters_kept(model, rank):
                optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
                model = FSDP(model, device_id=rank, use_orig_params=True)
                return model, optimizer

            def decided_at_run_time(model, rank, options):
                optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
                model = FSDP(model, **options)
                return model, optimizer

            def rebuilt(model):
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                fully_shard(model)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                return optimizer

            def scheduler_only(model, optimizer):
                scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
                fully_shard(model)
                return scheduler
            """
        ),
        Clean(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

            def either(model, cfg):
                if cfg.fsdp:
                    model = FSDP(model)
                    optimizer = torch.optim.AdamW(model.parameters())
                else:
                    optimizer = torch.optim.AdamW(model.parameters())
                return model, optimizer

            def other_module(model, head):
                optimizer = torch.optim.AdamW(head.parameters())
                model = FSDP(model)
                return model, optimizer

            class Trainer:
                def __init__(self, net):
                    self.optimizer = torch.optim.AdamW(net.parameters())

                def setup(self):
                    # the order of __init__ and setup is the caller's: unknown here
                    self.model = FSDP(self.model)
            """
        ),
        Clean(
            """
            import torch
            import lightning as L
            from torch.distributed.fsdp import fully_shard

            class Model(L.LightningModule):
                def configure_model(self):
                    for block in self.blocks:
                        fully_shard(block)
                    fully_shard(self)

                def configure_optimizers(self):
                    return torch.optim.AdamW(self.parameters(), lr=1e-4)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._blocks: list[cst.CSTNode] = []
        self._optimizers: list[_Optimizer] = []
        self._parameter_lists: dict[tuple[str | None, str], frozenset[str]] = {}
        self._late: list[_Late] = []

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        frame = self.model.frame.key
        value = node.value
        names = [name for target in node.targets if (name := dotted_name(target.target)) is not None]
        optimizer = isinstance(value, cst.Call) and self._is_optimizer(value)
        given = value.args[0].value if optimizer and value.args else value  # type: ignore[union-attr]
        owners = self._owners(given, frame)
        direct = not any(isinstance(n, cst.Name) and (frame, n.value) in self._parameter_lists for n in _walk(given))
        for name in names:
            self._parameter_lists.pop((frame, name), None)
            if owners and not optimizer:
                self._parameter_lists[(frame, name)] = owners
        if optimizer and owners and names and _first_is_params(value):  # type: ignore[arg-type]
            order = self.model.get(ShardedModels).order
            statement = self.model.statement
            self._optimizers.append(_Optimizer(names[0], owners, frame, order, value, statement, tuple(self._blocks), direct))  # type: ignore[arg-type]

    def _is_optimizer(self, call: cst.Call) -> bool:
        qualified = self.model.qualified(call.func)
        return qualified in TORCH_OPTIM and not qualified.startswith(NOT_OPTIMIZERS)  # type: ignore[union-attr]

    def _owners(self, expr: cst.BaseExpression, frame: str | None) -> frozenset[str]:
        """The modules whose parameters `expr` hands out: `model` for `model.parameters()`, also
        inside comprehensions, filters and parameter groups, and through names bound to them."""
        found: set[str] = set()
        for node in _walk(expr):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in PARAMETER_METHODS:
                owner = dotted_name(node.func.value)
                if owner is not None:
                    found.add(owner)
            elif isinstance(node, cst.Name):
                found |= self._parameter_lists.get((frame, node.value), frozenset())
        return frozenset(found)

    def check(self, node: cst.Call) -> None:
        sharded = self.model.get(ShardedModels)
        wrap = next((w for w in sharded.wraps if w.call is node), None)
        if wrap is None or wrap.module is None or (not wrap.fsdp2 and wrap.flattens is not True):
            return
        for optimizer in self._optimizers:
            owner = next((o for o in sorted(optimizer.owners) if _related(o, wrap.module)), None)
            if (
                owner is not None
                and optimizer.frame == wrap.frame
                and optimizer.order < wrap.order
                and [id(b) for b in self._blocks[: len(optimizer.blocks)]] == [id(b) for b in optimizer.blocks]
            ):
                self._late.append(_Late(optimizer, owner, wrap, self.model.statement, tuple(self._blocks)))

    def leave_Module(self, original_node: cst.Module) -> None:
        bindings = self.model.get(ShardedModels).bindings
        reported: set[int] = set()
        for late in self._late:
            optimizer, wrap = late.optimizer, late.wrap
            rebuilt = any(b.name == optimizer.name and b.frame == wrap.frame and b.order > wrap.order for b in bindings)
            if rebuilt or id(optimizer.call) in reported:
                continue
            reported.add(id(optimizer.call))
            self._report(late)

    def _report(self, late: _Late) -> None:
        optimizer, wrap = late.optimizer, late.wrap
        if wrap.fsdp2:
            how, replaced = f"fully_shard shards `{wrap.module}`", "replaces each parameter by a DTensor parameter"
        else:
            how, replaced = f"FullyShardedDataParallel wraps `{wrap.module}`", "flattens the parameters into its own (use_orig_params is not True)"
        runs = self.runs_link()
        chain = [
            Link(StepKind.MADE, f"`{optimizer.name}` takes `{late.owner}`'s parameters here", optimizer.call),
            *([runs] if runs is not None else []),
            Link(StepKind.HARM, f"{how} after that and {replaced}: the optimizer's parameters never get a "
                 "gradient, so its step changes nothing", wrap.call),
        ]
        note = f"`{optimizer.name}` holds `{late.owner}`'s parameters; {how} later in this function"
        self.report(optimizer.call, f"{self.message} ({note})", replace=self._fix(late), chain=chain)

    def _fix(self, late: _Late) -> dict | None:
        """Move the optimizer's statement to just after the wrap's (see the docstring)."""
        optimizer, wrap = late.optimizer, late.wrap
        moved, after = optimizer.statement, late.statement
        same_block = [id(b) for b in late.blocks] == [id(b) for b in optimizer.blocks]
        if not optimizer.direct or moved is None or after is None or not optimizer.blocks or not same_block:
            return None
        body = list(optimizer.blocks[-1].body)  # type: ignore[attr-defined]
        if moved not in body or after not in body or len(moved.body) != 1 or len(after.body) != 1:
            return None
        if not _binds_module_itself(after.body[0], wrap):
            return None
        between = body[body.index(moved) + 1: body.index(after)]
        read = names_in(optimizer.call)
        base = optimizer.name.split(".")[0]
        for statement in between:
            used = names_in(statement)
            if base in used or _assigned(statement) & read:
                return None
        return {moved: cst.RemovalSentinel.REMOVE, after: cst.FlattenSentinel([after, moved])}


def _walk(node: cst.CSTNode):
    """`node` and every node below it."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))


def _first_is_params(call: cst.Call) -> bool:
    first = call.args[0]
    return first.star == "" and (first.keyword is None or first.keyword.value == OPTIMIZER_PARAMS)


def _related(owner: str, wrapped: str) -> bool:
    """Whether wrapping `wrapped` replaces parameters of `owner`: the same module, one inside
    it (`model.head` when `model` is wrapped), or one holding it."""
    return owner == wrapped or owner.startswith(wrapped + ".") or wrapped.startswith(owner + ".")


def _binds_module_itself(small: cst.BaseSmallStatement, wrap: ShardingWrap) -> bool:
    """`model = FSDP(model, ...)` or `fully_shard(model)`: after it, `model` names the sharded model."""
    if isinstance(small, cst.Expr):
        return wrap.fsdp2 and small.value is wrap.call
    if isinstance(small, cst.Assign) and small.value is wrap.call:
        return all(dotted_name(target.target) == wrap.module for target in small.targets)
    return False


def _assigned(statement: cst.CSTNode) -> set[str]:
    """The plain names a statement (and what it holds) binds."""
    found: set[str] = set()
    for node in _walk(statement):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            target = node.target
            found |= {n.value for n in [target] if isinstance(n, cst.Name)}
            if isinstance(target, (cst.Tuple, cst.List)):
                found |= {e.value.value for e in target.elements if isinstance(e.value, cst.Name)}
        elif isinstance(node, (cst.For, cst.CompFor)) and isinstance(node.target, cst.Name):
            found.add(node.target.value)
    return found
