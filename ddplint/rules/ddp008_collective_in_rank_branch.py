from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.semantic.edits import keyword_argument
from ddplint.core.fixpoint import fixed_point
from ddplint.semantic.model import dotted_name
from ddplint.core.torch_api import API, BACKWARD, COLLECTIVES, DDP, DISTRIBUTED_MARKERS, TORCH_DISTRIBUTED
from ddplint.analyses.branches import Branches, Path, exclusive
from ddplint.analyses.grad_mode import GradientMode
from ddplint.analyses.ranks import RANK_GUARD_NEEDLE, RankRegions, WrappedModels, last_name, rank_zero_calls
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.prefilter.triggers import CallTrigger

_FORWARD_MESSAGE = (
    "forward of the DDP model where only rank 0 runs it: DDP syncs buffers in forward and the "
    "other ranks never join; call model.module(...) for rank-0-only evaluation"
)
# Functions that evaluate by their name: no step of training runs in them.
_EVALUATION_FUNCTION = re.compile(r"_?(eval|evaluate|evaluation|validate|validation|val|test|predict|inference|infer)(_|$)")


@dataclass
class _Collective:
    frame: str | None
    kinds: frozenset[str]
    helper: str | None  # the same-module function that performs them, for a helper call
    node: cst.Call
    rank_zero_alone: bool
    other_ranks_alone: bool
    everywhere: bool  # neither rank-0-only nor other-ranks-only inside its function
    path: Path = ()  # the branches it is in (ddplint.analyses.branches)


@dataclass(frozen=True)
class _HelperCall:
    """A call of a same-module function: it may run collectives, or call a model passed to it."""

    node: cst.Call
    callee: str
    frame: str | None
    rank_zero_alone: bool
    other_ranks_alone: bool
    everywhere: bool
    wrapped: frozenset[str]  # the DDP models' names there, when only rank 0 reaches it
    path: Path

    def performing(self, kinds: frozenset[str]) -> _Collective:
        """The call as an event of the collectives its callee runs."""
        return _Collective(
            self.frame, kinds, self.callee, self.node, self.rank_zero_alone, self.other_ranks_alone, self.everywhere, self.path
        )


class CollectiveInRankBranch(Rule):
    """
    A collective (`dist.barrier()`, `all_reduce`, `all_gather`, `broadcast`, `reduce`, ...)
    completes only when every rank of the group calls it. Under `if rank == 0:` only rank 0
    calls it, so rank 0 waits forever (or until the NCCL timeout kills the job) while the
    others run ahead, typically into the next collective, and the run hangs with no error.
    The forward of a `DistributedDataParallel` model is a collective too: it broadcasts
    buffers from rank 0 and prepares the gradient reduction, so rank-0-only evaluation with
    the wrapped model hangs the same way.

    Fires when a collective is reached by rank 0 alone and no call of the same collective
    lets the other ranks meet it in the same function.

    Flagged: a collective of `torch.distributed` (any import form), or a call of a
    same-module helper that performs one, or the forward of a name bound to
    `DistributedDataParallel(...)` (also passed to a same-module helper that calls it, or
    called in a same-module function or method, `self.evaluate()`), where
    only rank 0 gets (`if rank == 0`, `if dist.get_rank() == 0`, `if is_main_process()`, a
    call of a same-module function whose body is such a test, the code after `if rank != 0:
    return`, ...). A rank predicate named without a call (`if is_main_process:`) is always
    true: every rank gets there. Not flagged: the same collective on the other
    ranks in the same function (balanced if/else, also when both branches call the same
    helper that performs it and the test is more than a rank test, and the "main process
    first" pattern with
    `if rank != 0: dist.barrier()` before and `if rank == 0: dist.barrier()` after, also in a
    `@contextmanager`), and collectives on an explicit `group=` (sub-groups may be rank 0's).

    Fix: only for the DDP forward, and only where gradients are off: inside
    `with torch.no_grad()`/`torch.inference_mode()` or a function decorated with them, or in
    an evaluation function (`evaluate`, `validate`, `test_...`, `predict`, ...) in which no
    backward pass runs: call the wrapped module, `model.module(...)`, which
    computes the same outputs without any communication. That is safe there; in a training
    step it would skip DDP's gradient synchronisation, so none is offered. Collectives get no
    fix: where the other ranks should join depends on the program.
    """

    code = "DDP008"
    needs_ranks = True
    name = "collective-in-rank-branch"
    frameworks = (Framework.DDP, Framework.ACCELERATE)
    message = (
        "collective reached by rank 0 only: the other ranks never call it and the job hangs; "
        "call it on every rank, outside the rank-0 branch"
    )
    fix = Applicability.SAFE
    # Every report needs a collective call, or a call of DistributedDataParallel to bind a model.
    # `also`: a file that uses torch.distributed, and a rank test by one of the spellings
    # ranks.py knows: most files with the word "gather" or "reduce" have neither.
    # `within`: such a call where rank 0 alone may get, which the file's `ast` can rule out (a
    # library's collectives sit under no rank test: most files with both words have none).
    trigger = CallTrigger(
        API(frozenset(COLLECTIVES)) | DDP,
        within=rank_zero_calls(COLLECTIVES, DDP),
        also=(DISTRIBUTED_MARKERS, RANK_GUARD_NEEDLE),
    )

    flagged_examples = (
        Flagged(
            # The DDP forward in a method that only rank 0 calls.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, net, rank):
                    self.model = DDP(net)
                    self.rank = rank

                def evaluate(self, batch):
                    with torch.no_grad():
                        return self.model(batch)

                def fit(self, batch):
                    if self.rank == 0:
                        print(self.evaluate(batch))
                              ^
            """,
            messages=(
                "forward of the DDP model where only rank 0 runs it: DDP syncs buffers in forward and the other "
                "ranks never join; call model.module(...) for rank-0-only evaluation (it runs in "
                "Trainer.evaluate(), which calls it)"
            ),
        ),
        Flagged(
            """
            import torch.distributed as dist

            def train(rank):
                if rank == 0:
                    save_checkpoint()
                    dist.barrier()
                    ^
            """
        ),
        Flagged(
            """
            import torch
            from torch.distributed import all_reduce

            def validate(loss):
                if torch.distributed.get_rank() == 0:
                    all_reduce(loss)
                    ^
                    print(loss.item())
            """
        ),
        Flagged(
            # distributed_c10d, the module that defines the collectives, is an import form too.
            """
            import torch.distributed as dist
            from torch.distributed.distributed_c10d import all_reduce

            def validate(loss):
                if dist.get_rank() == 0:
                    all_reduce(loss)
                    ^
                    print(loss.item())
            """
        ),
        Flagged(
            """
            import torch

            def report(rank, metrics):
                if rank == 0:
                    torch.distributed.distributed_c10d.all_reduce(metrics)
                    ^
            """
        ),
        Flagged(
            """
            import torch.distributed as dist

            def sync(tag):
                print("barrier", tag)
                dist.barrier()

            def main(args):
                if is_main_process():
                    evaluate()
                    sync("epoch")
                    ^
            """
        ),
        Flagged(
            """
            import torch.distributed as dist

            def log_metrics(rank, metrics):
                if rank != 0:
                    return
                dist.all_reduce(metrics)
                ^
                print(metrics)
            """
        ),
        Flagged(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(args, net, batch):
                model = DDP(net, device_ids=[args.local_rank])
                if args.local_rank == 0:
                    with torch.no_grad():
                        out = model(batch)
                              ^
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(args, net, batch):
                model = DDP(net, device_ids=[args.local_rank])
                if args.local_rank == 0:
                    with torch.no_grad():
                        out = model.module(batch)
            """,
            messages=_FORWARD_MESSAGE,
        ),
        Flagged(
            """
            import torch
            import torch.nn as nn

            @torch.no_grad()
            def evaluate(self, loader):
                self.model = nn.parallel.DistributedDataParallel(self.model)
                if self.accelerator.is_main_process:
                    return [self.model(x) for x in loader]
                            ^
            """,
            fixed="""
            import torch
            import torch.nn as nn

            @torch.no_grad()
            def evaluate(self, loader):
                self.model = nn.parallel.DistributedDataParallel(self.model)
                if self.accelerator.is_main_process:
                    return [self.model.module(x) for x in loader]
            """,
            messages=_FORWARD_MESSAGE,
        ),
        Flagged(
            """
            from torch.nn.parallel import DistributedDataParallel

            def eval_it(model, loader):
                return sum(model(x).sum() for x in loader)

            def main(args, net, loader):
                model = DistributedDataParallel(net)
                if args.local_rank == 0:
                    loss = eval_it(model, loader)
                           ^
                model.train()
                loss = model(x)
            """,
            messages=(
                "forward of the DDP model where only rank 0 runs it: DDP syncs buffers in forward and the other "
                "ranks never join; call model.module(...) for rank-0-only evaluation (it is passed to eval_it, "
                "which calls it)"
            ),
        ),
        Flagged(
            # In a training step, the forward under no_grad has no gradient to sync: the fix
            # applies there (the step's own forward, outside no_grad, is every rank's).
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train_step(rank, net, teacher_batch, batch):
                model = DDP(net)
                if rank == 0:
                    with torch.no_grad():
                        target = model(teacher_batch)
                                 ^
                loss = (model(batch) - target).pow(2).mean()
                loss.backward()
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train_step(rank, net, teacher_batch, batch):
                model = DDP(net)
                if rank == 0:
                    with torch.no_grad():
                        target = model.module(teacher_batch)
                loss = (model(batch) - target).pow(2).mean()
                loss.backward()
            """,
            messages=_FORWARD_MESSAGE,
        ),
        Flagged(
            # A rank-0 forward in a function named like evaluation that also runs a backward:
            # gradients may be on, so `model.module(...)` (no gradient sync) is not offered.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def validate_and_step(rank, net, batch):
                model = DDP(net)
                if rank == 0:
                    loss = model(batch).sum()
                           ^
                    loss.backward()
            """,
            messages=_FORWARD_MESSAGE,
        ),
        Flagged(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def validate(rank, net, batch):
                model = DDP(net)
                if rank == 0:
                    return model(batch)
                           ^
            """,
            fixed="""
            from torch.nn.parallel import DistributedDataParallel as DDP

            def validate(rank, net, batch):
                model = DDP(net)
                if rank == 0:
                    return model.module(batch)
            """,
            messages=_FORWARD_MESSAGE,
        ),
        Flagged(
            # Both calls are rank 0's: the inner if/else does not balance them; nor does the
            # other branch of an `if` that is not about the rank.
            """
            import torch.distributed as dist

            def sync(rank, fast):
                if rank == 0:
                    if fast:
                        dist.barrier()
                        ^
                    else:
                        dist.barrier()
                        ^

            def step(rank, cached):
                if cached:
                    if rank == 0:
                        dist.barrier()
                        ^
                else:
                    dist.barrier()
            """,
        ),
        Flagged(
            # A same-module predicate is a rank-0 test by its definition, whatever its name.
            """
            import torch.distributed as dist

            def should_log():
                return not dist.is_initialized() or dist.get_rank() == 0

            def report(metrics):
                if should_log():
                    dist.all_reduce(metrics)
                    ^
                    print(metrics)
            """
        ),
    )
    clean_examples = (
        Clean(
            # Rank 0 evaluates through the inner module: no DDP forward, no communication.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def evaluate(model, batch):
                with torch.no_grad():
                    return model.module(batch)

            def main(net, rank, batch):
                model = DDP(net)
                if rank == 0:
                    print(evaluate(model, batch))
            """
        ),
        Clean(
            # `is_main_process` is named, not called: the test is always true and every rank
            # reaches the collective (the bug is the missing call, not a one-rank collective).
            """
            import torch.distributed as dist
            from utils import is_main_process

            def report(metrics):
                if is_main_process:
                    dist.all_reduce(metrics)
                    print(metrics)
                if dist.is_initialized and epoch % 10 == 0:
                    dist.barrier()
            """
        ),
        Clean(
            # Both branches call the helper that performs the collective: every rank calls it.
            """
            import torch.distributed as dist

            def evaluate(model, loader, verbose=False):
                total = compute(model, loader)
                dist.all_reduce(total)
                return total

            def main(args, model, loader):
                if args.rank == 0 and args.verbose:
                    evaluate(model, loader, verbose=True)
                else:
                    evaluate(model, loader)

            class Trainer:
                def validate(self):
                    dist.barrier()

                def run(self, epoch):
                    if self.is_main_process() and epoch % 10 == 0:
                        self.validate()
                    else:
                        self.validate()
            """
        ),
        Clean(
            """
            import torch.distributed as dist

            def load_data(rank):
                if rank != 0:
                    dist.barrier()
                data = download()
                if rank == 0:
                    dist.barrier()
                return data
            """
        ),
        Clean(
            """
            from contextlib import contextmanager
            import torch.distributed as dist

            @contextmanager
            def torch_distributed_zero_first(local_rank: int):
                if local_rank not in [-1, 0]:
                    dist.barrier(device_ids=[local_rank])
                yield
                if local_rank == 0:
                    dist.barrier(device_ids=[0])

            def build(rank):
                with torch_distributed_zero_first(rank):
                    dataset = make_dataset()
            """
        ),
        Clean(
            """
            import torch.distributed as dist

            def share(rank, tensor):
                if rank == 0:
                    tensor.fill_(1)
                    dist.broadcast(tensor, src=0)
                else:
                    dist.broadcast(tensor, src=0)
                dist.barrier()
                if dist.get_rank() == 0:
                    print("done")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(rank, net, batch, group):
                model = DDP(net)
                if rank == 0:
                    dist.all_reduce(batch, group=group)
                    out = model.module(batch)
                    net(batch)
                    print(model)
                if epoch == 0:
                    dist.barrier()
                if not args.distributed:
                    dist.barrier()
            """
        ),
        Clean(
            """
            import torch.nn as nn

            def step(rank, net, batch):
                ddp = nn.parallel.DistributedDataParallel(net)
                if rank == 0:
                    out = ddp(batch[:1])
                else:
                    out = ddp(batch)
                return out
            """
        ),
        Clean(
            """
            class Tracker:
                def barrier(self):
                    pass

            def main(rank, tracker):
                if rank == 0:
                    tracker.barrier()
                    reduce(lambda a, b: a + b, [1, 2])
            """
        ),
        Clean(
            """
            import torch.distributed as dist

            def sync():
                if dist.get_rank() == 0:
                    print("syncing")
                dist.barrier()

            def main(rank):
                sync()
            """
        ),
        Clean(
            # One collective under its two spellings, one in each branch: every rank calls it.
            """
            import torch.distributed as dist
            from torch.distributed.distributed_c10d import all_reduce

            def validate(loss):
                if dist.get_rank() == 0:
                    all_reduce(loss)
                    print(loss.item())
                else:
                    dist.all_reduce(loss)
            """
        ),
    )

    analyses = (RankRegions, WrappedModels, Branches, GradientMode)

    def __init__(self, model) -> None:
        super().__init__(model)
        self.ranks = model.get(RankRegions)
        self._wrapped = model.get(WrappedModels)
        self.branches = model.get(Branches)
        self.gradient_mode = model.get(GradientMode)
        self._backward_frames: set[str | None] = set()  # functions that run a backward pass
        self._collectives: list[_Collective] = []
        self._forwards: list[tuple[_Collective, str | None]] = []  # (forward, gradients off there)
        self._helper_calls: list[_HelperCall] = []
        self._called_params: dict[str, set[str]] = {}  # function -> parameters it calls
        self._evaluation_frames: set[int] = set()  # open frames of functions named like evaluation

    # -- gradient mode --------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if _EVALUATION_FUNCTION.match(node.name.value) is not None:
            self._evaluation_frames.add(id(self.model.frame))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._evaluation_frames.discard(id(self.model.frame))

    @property
    def _gradients_off(self) -> str | None:
        """"certain" under no_grad/inference_mode; "by name" in an evaluation function (a
        guess, which a backward in the same function refutes); None otherwise."""
        if self.gradient_mode.gradients_off:
            return "certain"
        return "by name" if id(self.model.frame) in self._evaluation_frames else None

    # -- calls ----------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        frame = self.model.frame.key
        ranks = self.ranks
        alone = ranks.reached_by_rank_zero_alone
        others = ranks.reached_by_other_ranks_alone
        everywhere = not ranks.only_rank_zero and not ranks.never_rank_zero
        path = self.branches.path
        if qualified in BACKWARD or isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
            self._backward_frames.add(frame)
        if qualified in TORCH_DISTRIBUTED:
            kind = COLLECTIVES.get(qualified)
            if kind is not None and keyword_argument(node, "group") is None:
                self._collectives.append(_Collective(frame, frozenset({kind}), None, node, alone, others, everywhere, path))
            return
        if isinstance(node.func, cst.Name) and frame is not None:
            function = self.ranks.functions.get(frame)
            if function is not None and node.func.value in _parameter_names(function):
                self._called_params.setdefault(frame, set()).add(node.func.value)
        if self._wrapped.is_wrapped(node.func):
            forward = _Collective(frame, frozenset({"forward"}), None, node, alone, others, everywhere, path)
            self._forwards.append((forward, self._gradients_off))
            return
        callee = self.ranks.callee_key(node)
        if callee is not None:
            wrapped = frozenset(self._wrapped.names_here()) if alone else frozenset()
            self._helper_calls.append(_HelperCall(node, callee, frame, alone, others, everywhere, wrapped, path))

    def leave_Module(self, original_node: cst.Module) -> None:
        handed = self._report_forwards_through_helpers()
        collectives = self._collectives + self._helper_collectives()
        for event in _unbalanced(collectives, self.branches.rank_tests):
            if event.kinds != {"forward"}:
                self.report(event.node)
            elif id(event.node) not in handed:  # `self.evaluate()`, which calls the DDP model
                self.report(event.node, f"{_FORWARD_MESSAGE} (it runs in {event.helper}(), which calls it)")
        gradients_off = {id(forward.node): off for forward, off in self._forwards}
        for forward in _unbalanced([forward for forward, _ in self._forwards], self.branches.rank_tests):
            call = forward.node
            # `model.module(...)` skips DDP's gradient synchronisation: only where no gradient
            # is computed (no_grad), or in an evaluation function that runs no backward pass.
            off = gradients_off[id(call)]
            if off == "certain" or off == "by name" and forward.frame not in self._backward_frames:
                fixed = call.with_changes(func=cst.Attribute(value=call.func, attr=cst.Name("module")))
                self.report(call, _FORWARD_MESSAGE, replace={call: fixed})
            else:
                self.report(call, _FORWARD_MESSAGE)

    def _helper_collectives(self) -> list[_Collective]:
        """Calls of same-module functions that, on every rank that enters them, run a collective
        or the DDP model's forward."""
        performs: dict[str, frozenset[str]] = {}  # function -> the kinds of collective it runs
        for event in self._collectives + [forward for forward, _ in self._forwards]:
            if event.everywhere and event.frame is not None:
                performs[event.frame] = performs.get(event.frame, frozenset()) | event.kinds

        def and_through_helpers(performs: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
            grown = dict(performs)
            for call in self._helper_calls:
                if call.everywhere and call.frame is not None and call.callee in performs:
                    grown[call.frame] = grown.get(call.frame, frozenset()) | performs[call.callee]
            return grown

        performs = fixed_point(and_through_helpers, performs)
        return [call.performing(performs[call.callee]) for call in self._helper_calls if call.callee in performs]

    def _report_forwards_through_helpers(self) -> set[int]:
        """Report the DDP model handed to a helper that calls it where only rank 0 runs; the
        ids of the calls reported."""
        reported = set()
        for call in self._helper_calls:
            function = self.ranks.functions.get(call.callee)
            if not call.rank_zero_alone or function is None or call.callee not in self._called_params:
                continue
            parameters = _parameter_names(function)
            for index, arg in enumerate(call.node.args):
                parameter = arg.keyword.value if arg.keyword else (parameters[index] if index < len(parameters) else None)
                if arg.star or parameter not in self._called_params[call.callee]:
                    continue
                if dotted_name(arg.value) in call.wrapped:
                    self.report(call.node, f"{_FORWARD_MESSAGE} (it is passed to {last_name(call.node)}, which calls it)")
                    reported.add(id(call.node))
                    break
        return reported


def _unbalanced(events: list[_Collective], rank_tests: set[int]) -> list[_Collective]:
    """Events only rank 0 reaches, with no event of the same kind in the same function that
    only the other ranks reach ("main process first"), or that the other ranks can reach in
    the other branch of an `if` that tests the rank (balanced if/else, also when the test is
    not only a rank test: `if rank == 0 and verbose: evaluate(verbose=True) else: evaluate()`)."""
    return [
        event
        for event in events
        if event.rank_zero_alone
        and not any(
            other.frame == event.frame
            and other.kinds & event.kinds
            and (
                other.other_ranks_alone
                or not other.rank_zero_alone and exclusive(event.path, other.path, among=rank_tests)
            )
            for other in events
        )
    ]


def _parameter_names(function: cst.FunctionDef) -> list[str]:
    params = function.params
    return [param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)]
