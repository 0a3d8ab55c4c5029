from __future__ import annotations

import libcst as cst

from ddplint.analyses.sharding import Binding, ShardedModels
from ddplint.core.diagnostics import Applicability, StepKind
from ddplint.core.torch_api import CLIP_GRAD_NORM, FSDP, FSDP_CLIP_GRAD_NORM, MODULE_PARAMETERS
from ddplint.prefilter.triggers import CallTrigger, any_of
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule
from ddplint.semantic.edits import argument_for, has_star_arguments
from ddplint.semantic.model import dotted_name
from ddplint.model.records import Framework as FrameworkObject, Place

# The program model's kind of a model FSDP1 wraps (ddplint.model.records.Framework).
_FSDP_KIND = "fsdp"


class ClipGradNormOnFsdp(Rule):
    """
    `torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)` computes the norm of the
    gradients it is handed. On a model wrapped in FSDP1 (`FullyShardedDataParallel`) each rank
    holds only its shard of every flat parameter and of its gradient, so each rank computes the
    norm of its own shard, clips its shard by that, and the ranks disagree: every rank scales
    its part of the update by a different factor, and none by the true global norm. Nothing
    fails; training follows a distorted gradient, and the norm it logs is a shard's. FSDP1's own
    `model.clip_grad_norm_(max_norm)` all-reduces the squared shard norms first and clips every
    shard by the same global norm.

    Measured on CPU with gloo, two ranks, one model and one backward
    (ddplint/harness/scenarios/ddp026/experiment_clip_shards.py): `clip_grad_norm_` returns
    0.355 on rank 0 and 1.598 on rank 1, `model.clip_grad_norm_` 1.637 on both (the square root
    of the sum of their squares); the same with `use_orig_params=True` and with
    `SHARD_GRAD_OP`; equal with `NO_SHARD`, where every rank holds whole gradients.

    Fires when the parameters handed to `torch.nn.utils.clip_grad_norm_` are `model.parameters()`
    and `model` holds an FSDP1 wrapper there: bound to `FullyShardedDataParallel(...)` earlier
    in the same function, or, for `self.model` in a method, by every other method of the class
    that stores it (the wrap in `setup()`, the clipping in `train_step()`); or bound to the result
    of a project function, in any module, that returns its model wrapped in FSDP1
    (`model = fsdp_wrapper(model, cfg)`), with a strategy known there.

    Not flagged: FSDP2 (`fully_shard`), whose DTensor parameters make `clip_grad_norm_` compute
    the global norm (measured: 1.637 on both ranks); an FSDP1 wrap with
    `sharding_strategy=ShardingStrategy.NO_SHARD`, or with a strategy or `**kwargs` the code
    decides at run time (unknown; also in a helper: `ShardingStrategy[cfg.sharding_strategy]`);
    a model that comes from elsewhere (a parameter: unknown here); `model.clip_grad_norm_(...)`;
    the gradient clipping of Accelerate (`accelerator.clip_grad_norm_`), Fabric
    (`fabric.clip_gradients`) and Lightning (`Trainer(gradient_clip_val=...)`), which know the
    strategy.

    Fix (safe): `model.clip_grad_norm_(max_norm)`, with the `max_norm` and `norm_type` the call
    passed (only when it passes nothing else: FSDP's method takes neither `error_if_nonfinite`
    nor `foreach`). It returns the total norm as the function did.
    """

    code = "DDP026"
    name = "clip-grad-norm-on-fsdp"
    needs_ranks = True
    frameworks = (Framework.FSDP,)
    message = (
        "torch.nn.utils.clip_grad_norm_ on an FSDP model's parameters takes each rank's norm over its own "
        "shard: every rank clips by a different, wrong norm; call model.clip_grad_norm_(max_norm), which "
        "all-reduces the norm"
    )
    fix = Applicability.SAFE
    # `also`: the FSDP1 wrap that makes the model sharded is in the same file.
    trigger = CallTrigger(CLIP_GRAD_NORM, also=(any_of(FSDP.last_names),))
    analyses = (ShardedModels,)

    flagged_examples = (
        Flagged(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

            def train(model, loader, rank):
                model = FSDP(model, device_id=rank)
                optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
                for batch in loader:
                    loss = model(batch).mean()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    ^
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            fix_edits=(("torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)", "model.clip_grad_norm_(1.0)"),),
            messages=(
                "torch.nn.utils.clip_grad_norm_ on an FSDP model's parameters takes each rank's norm over its "
                "own shard: every rank clips by a different, wrong norm; call model.clip_grad_norm_(max_norm), "
                "which all-reduces the norm (`model` is wrapped in FullyShardedDataParallel in this function)"
            ),
        ),
        Flagged(
            """
            from torch.nn.utils import clip_grad_norm_
            from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy

            class Trainer:
                def setup(self, net):
                    self.model = FullyShardedDataParallel(net, sharding_strategy=ShardingStrategy.SHARD_GRAD_OP, use_orig_params=True)

                def step(self, batch, optimizer):
                    self.model(batch).sum().backward()
                    norm = clip_grad_norm_(self.model.parameters(), max_norm=self.max_norm, norm_type=2.0)
                           ^
                    optimizer.step()
                    return norm
            """,
            fixed="""
            from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy

            class Trainer:
                def setup(self, net):
                    self.model = FullyShardedDataParallel(net, sharding_strategy=ShardingStrategy.SHARD_GRAD_OP, use_orig_params=True)

                def step(self, batch, optimizer):
                    self.model(batch).sum().backward()
                    norm = self.model.clip_grad_norm_(max_norm=self.max_norm, norm_type=2.0)
                    optimizer.step()
                    return norm
            """,
            messages=(
                "torch.nn.utils.clip_grad_norm_ on an FSDP model's parameters takes each rank's norm over its "
                "own shard: every rank clips by a different, wrong norm; call model.clip_grad_norm_(max_norm), "
                "which all-reduces the norm (`self.model` is wrapped in FullyShardedDataParallel in Trainer.setup)"
            ),
        ),
        Flagged(
            # FSDP's method takes no `foreach`: reported without a fix.
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

            def step(net, batch):
                model = FSDP(net)
                model(batch).sum().backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5, foreach=True)
                ^
            """,
            messages=(
                "torch.nn.utils.clip_grad_norm_ on an FSDP model's parameters takes each rank's norm over its "
                "own shard: every rank clips by a different, wrong norm; call model.clip_grad_norm_(max_norm), "
                "which all-reduces the norm (`model` is wrapped in FullyShardedDataParallel in this function)"
            ),
        ),
    )
    clean_examples = (
        Clean(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy, fully_shard

            def fsdp1(model, batch):
                model = FSDP(model)
                model(batch).sum().backward()
                model.clip_grad_norm_(1.0)

            def fsdp2(model, batch):
                for layer in model.layers:
                    fully_shard(layer)
                fully_shard(model)
                model(batch).sum().backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)

            def replicated(model, batch):
                model = FSDP(model, sharding_strategy=ShardingStrategy.NO_SHARD)
                model(batch).sum().backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)

            def decided_at_run_time(model, batch, strategy):
                model = FSDP(model, sharding_strategy=strategy)
                model(batch).sum().backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            """
        ),
        Clean(
            """
            import torch
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

            def train_step(model, batch, optimizer):
                # `model` comes from the caller: wrapped there or not, this function cannot tell
                model(batch).sum().backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()

            def main(net, batch, optimizer):
                head = torch.nn.Linear(4, 4)
                model = FSDP(net)
                torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
                model = net
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            """
        ),
        Clean(
            """
            import torch
            from accelerate import Accelerator
            from torch.distributed.fsdp import FullyShardedDataParallel

            def train(model, optimizer, loader):
                accelerator = Accelerator()
                model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
                for batch in loader:
                    accelerator.backward(model(batch).mean())
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
            """
        ),
    )

    def check(self, node: cst.Call) -> None:
        given = argument_for(node, CLIP_GRAD_NORM, "parameters")
        owner = _parameters_of(given.value) if given is not None else None
        if owner is None:
            return
        frame = self.model.frame
        self_class = frame.self_class
        sharded = self.model.get(ShardedModels)
        binding = sharded.holding(owner, frame.key, self_class.name.value if self_class else None, sharded.order)
        wrap = binding.wrap if binding is not None else None
        made = wrap.call if wrap is not None and not wrap.fsdp2 and wrap.shards is True else self._helper_wrap(binding)
        if made is None:
            return
        where = "this function" if binding.frame == frame.key else binding.frame  # type: ignore[union-attr]
        if wrap is None:  # by a project helper: named with the place of its wrap
            where = f"{dotted_name(binding.call.func)} (at {made})"  # type: ignore[union-attr]
        note = f"`{owner}` is wrapped in FullyShardedDataParallel in {where}"
        runs = self.runs_link()
        chain = [
            Link(StepKind.MADE, f"`{owner}` is wrapped here in FullyShardedDataParallel, which shards its "
                 "parameters and gradients across the ranks", made),
            *([runs] if runs is not None else []),
            Link(StepKind.HARM, "clip_grad_norm_ takes the norm of this rank's shard of the gradients and clips "
                 "by it: a different norm on every rank, none the global one", node),
        ]
        self.report(node, f"{self.message} ({note})", replace=_fix(node, given, owner), chain=chain)


    def _helper_wrap(self, binding: Binding | None) -> Place | None:
        """Where the project function that `binding`'s call reaches wraps the model it returns in
        FSDP1 with a sharding strategy known to shard (`model = fsdp_wrapper(model, cfg)`, the
        wrap in another module); None for any other value, or a strategy decided at run time."""
        project = self.model.project
        written = dotted_name(binding.call.func) if binding is not None and binding.call is not None else None
        made = project.wrapped_result(written, binding.cls, kind=FrameworkObject) if project is not None and written else None  # type: ignore[union-attr]
        return made.made_at if made is not None and made.kind == _FSDP_KIND and made.sharded else None


def _parameters_of(expr: cst.BaseExpression) -> str | None:
    """`model` for `model.parameters()` (the module whose parameters an expression hands out)."""
    if isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute):
        if expr.func.attr.value == MODULE_PARAMETERS:
            return dotted_name(expr.func.value)
    return None


def _fix(call: cst.Call, given: cst.Arg, owner: str) -> dict | None:
    """`owner.clip_grad_norm_(max_norm, norm_type)` with the call's other arguments, when those
    are all FSDP's method takes."""
    rest = [arg for arg in call.args if arg is not given]
    kept = {"max_norm", "norm_type"}
    if has_star_arguments(call) or any(arg.keyword is not None and arg.keyword.value not in kept for arg in rest):
        return None
    if len([arg for arg in rest if arg.keyword is None]) > 2 or argument_for(call, CLIP_GRAD_NORM, "max_norm") is None:
        return None
    if rest:
        rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    method = cst.Attribute(value=cst.parse_expression(owner), attr=cst.Name(FSDP_CLIP_GRAD_NORM.last_names[0]))
    return {call: call.with_changes(func=method, args=rest)}
