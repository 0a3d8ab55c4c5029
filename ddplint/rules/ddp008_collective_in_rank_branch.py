from __future__ import annotations

import re
from dataclasses import dataclass, replace

import libcst as cst

from ddplint.core.diagnostics import Applicability, StepKind
from ddplint.semantic.edits import argument_for, keyword_argument
from ddplint.semantic.model import dotted_name
from ddplint.core.torch_api import (
    API, BACKWARD, BUFFERED_LAYERS, COLLECTIVES, CONTAINER_LAYERS, CONVERT_SYNC_BATCHNORM, DDP, DISTRIBUTED_MARKERS,
    DTENSOR_FULL_TENSOR, FRAMEWORK_COLLECTIVES, FRAMEWORK_METHODS, SAME_VALUE_METHODS, TORCH_DISTRIBUTED, TORCH_NN,
)
from ddplint.analyses.branches import Branches, Path, exclusive
from ddplint.analyses.grad_mode import GradientMode
from ddplint.analyses.options import UNKNOWN, ParserOptions
from ddplint.analyses.ranks import RANK_GUARD_NEEDLE, RankRegions, WrappedModels, classify, last_name, rank_zero_calls
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule, wrap_links
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.triggers import CallTrigger

_FORWARD_MESSAGE = (
    "forward of the DDP model where only rank 0 runs it: DDP syncs buffers in forward and the "
    "other ranks never join; call model.module(...) for rank-0-only evaluation"
)
# The methods of framework objects that may be collectives, and a DTensor's all-gather.
_FRAMEWORK_CALLS = tuple(sorted(FRAMEWORK_METHODS | {DTENSOR_FULL_TENSOR}))
# Functions that evaluate by their name: no step of training runs in them.
_EVALUATION_FUNCTION = re.compile(r"_?(eval|evaluate|evaluation|validate|validation|val|test|predict|inference|infer)(_|$)")


@dataclass(frozen=True)
class _Collective:
    frame: str | None
    kinds: frozenset[str]
    helper: str | None  # the function that performs them, for a helper call (as written)
    node: cst.Call
    rank_zero_alone: bool
    other_ranks_alone: bool
    everywhere: bool  # neither rank-0-only nor other-ranks-only inside its function
    path: Path = ()  # the branches it is in (ddplint.analyses.branches)
    guard: cst.CSTNode | None = None  # what lets rank 0 alone get here
    origin: tuple[Link, ...] = ()  # where the model or framework object it uses is made, and how it gets here
    links: tuple[Link, ...] = ()  # the helpers between the call and the collective
    note: str = ""  # what the message adds: the helper and what it runs
    harm: str | None = None  # a forward's: why it communicates (None: no buffers shown)
    enclosing: tuple[str, ...] = ()  # the functions its function is defined in (a closure's)


@dataclass(frozen=True)
class _Jump:
    """A `continue` or `break` that rank 0 alone takes, where the walk shows it taken on a
    documented run: every `if` of its loop around it is a rank test or an option test a
    documented run passes."""

    node: cst.Continue | cst.Break
    frame: str | None
    loop: int  # id of the loop it leaves or restarts
    guard: cst.If  # what lets rank 0 alone get there
    path: Path
    after: int  # the collectives seen before it (walk order): those after may be skipped
    tests: tuple[str, ...]  # the option tests it is under, as written


@dataclass(frozen=True)
class _HelperCall:
    """A call of a same-module function: it may run collectives, or call a model passed to it."""

    event: _Collective  # the call, where it is
    callee: str
    # the DDP models' names there, when only rank 0 reaches it: (where each is wrapped, why its forward communicates)
    wrapped: dict[str, tuple[tuple[Link, ...], str | None]]

    def performing(self, kind: str, inner: _Collective, kinds: list[str] | None = None) -> _Collective:
        """The call as an event of the collective `kind` its callee runs through `inner` (and of
        the other `kinds` it runs)."""
        runs = f"`{kind}`" if inner.helper is None else f"`{kind}` through {inner.helper}()"
        here = Link(StepKind.REACHES, f"{self.callee}() runs {runs} here", inner.node)
        return replace(
            self.event, kinds=frozenset(kinds or (kind,)), origin=inner.origin, links=(here, *inner.links),
            note=f" ({self.callee}() runs `{kind}`)", harm=inner.harm,
        )


class CollectiveInRankBranch(Rule):
    """
    A collective (`dist.barrier()`, `all_reduce`, `all_gather`, `broadcast`, `reduce`, ...)
    completes only when every rank of the group calls it. Under `if rank == 0:` only rank 0
    calls it, so rank 0 waits forever (or until the NCCL timeout kills the job) while the
    others run ahead, typically into the next collective, and the run hangs with no error
    (gloo reports a mismatch instead). The frameworks' own collectives hang the same way: an
    Accelerator's `wait_for_everyone()` and `gather()`, and, where it is given a DeepSpeed or
    FSDP plugin, its `save_state()`/`get_state_dict()`/`save_model()` (DeepSpeed's
    `save_checkpoint` starts with a barrier, FSDP all-gathers the shards); a DeepSpeed engine's
    `save_checkpoint`/`load_checkpoint`; an FSDP model's `state_dict()`, `FSDP.full_optim_state_dict`,
    `get_model_state_dict` and kin, a DTensor's `full_tensor()`. The forward of a
    `DistributedDataParallel` model is a collective too where the wrapped module holds buffers:
    DDP broadcasts them from rank 0 (`broadcast_buffers=True`, the default) at the start of a
    forward that follows one with gradients on (a forward under `no_grad` turns the next
    broadcast off), so rank 0's first forward in the branch waits for a broadcast the other
    ranks make only in their next training forward, or never, once they have finished: the
    job hangs at the latest at the end of training; and where gradients are on and a backward
    follows, that backward all-reduces the gradients.
    A module with no buffers (convolutions, linear layers, group norms) under `no_grad` runs
    no collective in its forward, and rank 0 alone may sample with it.

    Fires when a collective is reached by rank 0 alone and no call of the same collective
    lets the other ranks meet it in the same function (or the function a closure is defined in).
    Fires too at a collective the other ranks reach later in a loop's iteration that rank 0
    alone leaves by `continue` or `break` (inside `if rank == 0:`, at any depth), where each
    test of that loop around the jump is a rank test or compares a command-line option with a
    literal in a way a documented run's value satisfies (`if args.mode == "infer": continue`
    with `--mode infer` in the launch script), and no call of the same collective only rank 0
    makes in the function makes up for it: rank 0 calls it fewer times than the others, which
    wait in it forever. A jump under a test the code cannot decide (a value of the data) is
    not assumed taken; a `return` is left alone (the caller may meet the collective).

    Flagged: a collective of `torch.distributed` (any import form) or of mpi4py's world
    communicator (`MPI.COMM_WORLD.bcast`, `.allreduce`, `.Barrier`, ...) where a command of the
    project starts the ranks with an MPI launcher (`mpiexec`, `mpirun`, `srun --mpi=...`: under
    torchrun or torch.distributed.launch each process is an MPI world of one, whose bcast
    completes alone, and where no launch is documented the world is unknown); a framework's collective
    on an object the program model follows from where it is made (`Accelerator(...)`, also
    returned by a project function or handed in as a parameter; `deepspeed.initialize(...)`;
    `FullyShardedDataParallel(...)`); a call of a project function, in this module or
    another, that reaches one on every rank entering it, through helpers at any depth
    (`if is_main_process(): sync_metrics(meters)` with `sync_metrics` in `utils/dist.py` calling
    `reduce_mean`, which calls `dist.all_reduce`); the forward of a name bound to
    `DistributedDataParallel(...)` whose module is shown to hold buffers (a torch batch norm,
    a project class that builds one or calls `register_buffer`), or followed by a backward
    (also passed to a same-module helper that calls it, or called in a same-module function
    or method, `self.evaluate()`); each where only rank 0 gets (`if rank == 0`, `if
    dist.get_rank() == 0`, `if is_main_process()`, `if accelerator.is_main_process`, a call
    of a project function whose body is such a test, the code after `if rank != 0: return`,
    ...). A rank predicate named without a call (`if is_main_process:`) is always true: every
    rank gets there. Not flagged: a helper whose collective runs only `if flag:` of a parameter
    the call passes False (`save_state(..., synchronize=False)`); the same collective on the other ranks in the same function
    (balanced if/else, also when both branches call the same helper that performs it and the
    test is more than a rank test, and the "main process first" pattern with `if rank != 0:
    dist.barrier()` before and `if rank == 0: dist.barrier()` after, also in a
    `@contextmanager` or across a class's `__enter__` and `__exit__`, counted together);
    collectives on an explicit `group=` (sub-groups may be rank 0's), also inside helpers, and helpers that run their collective under a rank test of their own,
    unless the other way of that test runs the same collective (guided-diffusion's
    `load_state_dict`: rank 0 reads the file and `bcast`s its bytes, the others `bcast` to
    receive them: every rank entering it broadcasts, so a call only rank 0 makes hangs); an
    Accelerator's `save_state()` without a sharding plugin (with DDP it saves per process); a
    DDP forward whose module's buffers are not shown (a model from a registry or a library)
    or that passes `broadcast_buffers=False`, under `no_grad`.

    The finding's chain shows where the model or framework object is made, the guard only
    rank 0 passes, each helper on the way to the collective, and why it hangs.

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
        methods=_FRAMEWORK_CALLS,
        within=rank_zero_calls(COLLECTIVES, DDP, _FRAMEWORK_CALLS),
        also=(DISTRIBUTED_MARKERS, RANK_GUARD_NEEDLE),
    )
    # a helper of another module runs the collective the call under the rank test reaches: the
    # screen then asks for a call of anything where rank 0 alone may get
    opened_by = screened_by = frozenset((ProjectFact.CALLS_COLLECTIVE_HELPER,))
    project_screen = replace(trigger.within, any_call=True)

    flagged_examples = (
        Flagged(
            # The DDP forward in a method that only rank 0 calls; the model holds buffers (a batch
            # norm's running statistics), which DDP's forward broadcasts from rank 0.
            """
            import torch
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.bn = nn.BatchNorm1d(4)

            class Trainer:
                def __init__(self, rank):
                    self.model = DDP(Net().to(rank))
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
            """,
            messages=(
                "collective reached by rank 0 only: the other ranks never call it and the job hangs; call it on every "
                "rank, outside the rank-0 branch (sync() runs `barrier`)"
            ),
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

            def main(args, batch):
                net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
                model = DDP(net.cuda(args.local_rank), device_ids=[args.local_rank])
                if args.local_rank == 0:
                    with torch.no_grad():
                        out = model(batch)
                              ^
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(args, batch):
                net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
                model = DDP(net.cuda(args.local_rank), device_ids=[args.local_rank])
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
                self.model = nn.parallel.DistributedDataParallel(nn.SyncBatchNorm(8))
                if self.accelerator.is_main_process:
                    return [self.model(x) for x in loader]
                            ^
            """,
            fixed="""
            import torch
            import torch.nn as nn

            @torch.no_grad()
            def evaluate(self, loader):
                self.model = nn.parallel.DistributedDataParallel(nn.SyncBatchNorm(8))
                if self.accelerator.is_main_process:
                    return [self.model.module(x) for x in loader]
            """,
            messages=_FORWARD_MESSAGE,
        ),
        Flagged(
            """
            import torch
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel

            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("mean", torch.zeros(4))

            def eval_it(model, loader):
                return sum(model(x).sum() for x in loader)

            def main(args, loader):
                net = Encoder()
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
            # The name is rebound at each step (`model = model.cuda()`, `model = DDP(model)`): the
            # module DDP wraps is what `model` held when the DDP call ran, a batch-normed Net.
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.norm = torch.nn.BatchNorm1d(16)

            def main(local_rank, loader):
                dist.init_process_group("nccl")
                model = Net()
                model = model.cuda()
                model = DDP(model, device_ids=[local_rank])
                for batch in loader:
                    model(batch).mean().backward()
                if dist.get_rank() == 0:
                    with torch.no_grad():
                        print(model(batch))
                              ^
            """,
            fixed="""
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.norm = torch.nn.BatchNorm1d(16)

            def main(local_rank, loader):
                dist.init_process_group("nccl")
                model = Net()
                model = model.cuda()
                model = DDP(model, device_ids=[local_rank])
                for batch in loader:
                    model(batch).mean().backward()
                if dist.get_rank() == 0:
                    with torch.no_grad():
                        print(model.module(batch))
            """,
            messages=_FORWARD_MESSAGE,
        ),
        Flagged(
            # In a training step, the forward under no_grad has no gradient to sync: the fix
            # applies there (the step's own forward, outside no_grad, is every rank's).
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train_step(rank, teacher_batch, batch):
                model = DDP(torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8)))
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

            def train_step(rank, teacher_batch, batch):
                model = DDP(torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8)))
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
            from torch.nn import BatchNorm1d
            from torch.nn.parallel import DistributedDataParallel as DDP

            def validate(rank, batch):
                model = DDP(BatchNorm1d(16))
                if rank == 0:
                    return model(batch)
                           ^
            """,
            fixed="""
            from torch.nn import BatchNorm1d
            from torch.nn.parallel import DistributedDataParallel as DDP

            def validate(rank, batch):
                model = DDP(BatchNorm1d(16))
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
        Flagged(
            # Accelerate's state save under a DeepSpeed plugin, and its barrier: rank 0 alone calls them.
            """
            from accelerate import Accelerator, DeepSpeedPlugin

            def train(args, model, loader, optimizer):
                plugin = DeepSpeedPlugin(zero_stage=2) if args.deepspeed else None
                accelerator = Accelerator(deepspeed_plugin=plugin)
                model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
                for batch in loader:
                    accelerator.backward(model(batch).mean())
                    if accelerator.is_main_process:
                        accelerator.save_state(args.output_dir)
                        ^
                        accelerator.wait_for_everyone()
                        ^
            """,
            messages=(
                "collective reached by rank 0 only: the other ranks never call it and the job hangs; call it on every "
                "rank, outside the rank-0 branch (`accelerator.save_state` is a collective: the Accelerator made at "
                "example.py:5 is given a DeepSpeed or FSDP plugin, which saves and gathers its state with collectives)",
                "collective reached by rank 0 only: the other ranks never call it and the job hangs; call it on every "
                "rank, outside the rank-0 branch (`accelerator.wait_for_everyone` is a collective: the Accelerator "
                "made at example.py:5 waits for or gathers from every process)",
            ),
        ),
        Flagged(
            # A DeepSpeed engine's checkpoint, an FSDP model's full state dict and a DTensor's gather.
            """
            import deepspeed
            import torch.distributed as dist
            from torch.distributed.checkpoint.state_dict import get_model_state_dict
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

            def save_engine(args, net):
                engine, optimizer, _, _ = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters())
                if dist.get_rank() == 0:
                    engine.save_checkpoint(args.output_dir)
                    ^

            def save_sharded(rank, net, weight):
                model = FSDP(net)
                if rank == 0:
                    state = model.state_dict()
                            ^
                    state = get_model_state_dict(model)
                            ^
                    print(weight.full_tensor())
                          ^
            """,
            messages=(
                "collective reached by rank 0 only: the other ranks never call it and the job hangs; call it on every "
                "rank, outside the rank-0 branch (`engine.save_checkpoint` is a collective: the DeepSpeed engine made "
                "at example.py:7 checkpoints with every rank (a barrier first))",
                "collective reached by rank 0 only: the other ranks never call it and the job hangs; call it on every "
                "rank, outside the rank-0 branch (`model.state_dict` is a collective: the FSDP model made at "
                "example.py:12 all-gathers every rank's shards)",
                "collective reached by rank 0 only: the other ranks never call it and the job hangs; call it on every "
                "rank, outside the rank-0 branch",
                "collective reached by rank 0 only: the other ranks never call it and the job hangs; call it on every "
                "rank, outside the rank-0 branch",
            ),
        ),
        Flagged(
            # A context manager's `__exit__` is counted with its `__enter__`: where neither
            # gives the other ranks the barrier rank 0 calls on entry, it still hangs.
            """
            import torch.distributed as dist

            class rank_zero_section:
                def __init__(self, rank):
                    self.rank = rank

                def __enter__(self):
                    if self.rank == 0:
                        dist.barrier()
                        ^
                    return self

                def __exit__(self, *exc):
                    if self.rank == 0:
                        print("done")
            """
        ),
        Flagged(
            # Rank 0 alone takes `continue` (directly under its rank test, or under a test of an
            # option that a documented run passes: here the option's default) and skips the
            # barrier the other ranks reach at the end of the same iteration.
            """
            import argparse
            import torch.distributed as dist

            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--mode", default="infer")
                args = parser.parse_args()
                dist.init_process_group("nccl")
                rank = dist.get_rank()
                for name in ["a", "b"]:
                    run(name)
                    dist.barrier()
                    if rank == 0:
                        if args.mode == "infer":
                            continue
                        evaluate(name)
                    dist.barrier()
                    ^
                for name in ["a", "b"]:
                    if rank == 0:
                        print(name)
                        continue
                    dist.barrier()
                    ^
            """,
            messages=(
                "collective rank 0 skips: only rank 0 takes `continue` under `rank == 0` before it, and the other "
                "ranks wait in it forever; let rank 0 reach it too (move the jump after it)",
            ) * 2,
        ),
    )
    clean_examples = (
        Clean(
            # The helper runs its barrier only `if synchronize:`, and rank 0 passes False.
            """
            import torch
            import torch.distributed as dist

            def save_state(path, state, synchronize=True):
                if synchronize:
                    dist.barrier()
                torch.save(state, path)

            def main(model):
                dist.init_process_group("nccl")
                if dist.get_rank() == 0:
                    save_state("last.pt", model.state_dict(), synchronize=False)
                    save_state("first.pt", model.state_dict(), False)
            """
        ),
        Clean(
            # Rank 0 steps an optimizer that calls the closure; the other ranks wait for its
            # signal and answer each broadcast of the closure in their `else:`.
            """
            import torch
            import torch.distributed as dist

            def step_together(rank, model, optimizer, signal):
                def closure():
                    if rank == 0:
                        signal.fill_(1)
                        dist.broadcast(signal, src=0)
                    return model.loss()

                if rank == 0:
                    optimizer.step(closure)
                    signal.fill_(0)
                    dist.broadcast(signal, src=0)
                else:
                    while True:
                        dist.broadcast(signal, src=0)
                        if signal.item() == 0:
                            break
                        closure()

            def main(rank, model, optimizer):
                dist.init_process_group("gloo")
                step_together(rank, model, optimizer, torch.zeros(1))
            """
        ),
        Clean(
            # DDP's forward under no_grad runs no collective where the module holds no buffers (a
            # generator of convolutions and group norms), or the wrap does not broadcast them; a
            # model built elsewhere, whose buffers the code does not show, is not guessed at.
            """
            import torch
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.GroupNorm(4, 8), nn.SiLU())

            def sample(args, net):
                generator = DDP(Generator().cuda(args.rank), device_ids=[args.rank])
                critic = DDP(nn.BatchNorm1d(8), broadcast_buffers=False)
                model = DDP(net)
                if args.rank == 0:
                    with torch.no_grad():
                        images = generator(torch.randn(4, 8, 16, 16))
                        score = critic(images.flatten(1)[:, :8])
                        logits = model(images)
            """
        ),
        Clean(
            # An Accelerator without a sharding plugin saves its state per process (DDP): no
            # collective; the state dict is gathered on every rank before the rank-0 save.
            """
            from accelerate import Accelerator

            def finish(args, model):
                accelerator = Accelerator()
                model = accelerator.prepare(model)
                if accelerator.is_main_process:
                    accelerator.save_state(args.output_dir)
                state = accelerator.get_state_dict(model)
                if accelerator.is_main_process:
                    accelerator.unwrap_model(model).save_pretrained(args.output_dir, state_dict=state)
            """
        ),
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
            # Rank 0's jump under a test the code cannot decide (a value of the data, an option
            # a run may set either way) is not assumed taken; rank 0 meets the barrier before it
            # jumps; and a jump of an inner loop does not skip the outer loop's barrier.
            """
            import torch.distributed as dist

            def main(args, names):
                rank = dist.get_rank()
                for name in names:
                    if rank == 0:
                        if name in args.skip:
                            continue
                        evaluate(name)
                    dist.barrier()
                for name in names:
                    if rank == 0:
                        dist.barrier()
                        continue
                    dist.barrier()
                for name in names:
                    if rank == 0:
                        for part in name:
                            if not part:
                                continue
                            print(part)
                        for part in name:
                            continue
                    dist.barrier()
            """
        ),
        Clean(
            # A context manager class is one protocol across `__enter__` and `__exit__`: the
            # other ranks' barrier on entry meets rank 0's on exit ("main process first"), and
            # the staggered form (even ranks wait on entry, odd ranks on exit) pairs up too.
            """
            import torch.distributed as dist

            class main_process_first:
                def __init__(self, rank):
                    self.rank = rank

                def __enter__(self):
                    if self.rank != 0:
                        dist.barrier()
                    return self

                def __exit__(self, *exc):
                    if self.rank == 0:
                        dist.barrier()

            class staggered:
                def __init__(self, local_rank, world_size):
                    self.local_rank, self.world_size = local_rank, world_size

                def __enter__(self):
                    if self.world_size > 1 and self.local_rank % 2 == 0:
                        dist.barrier()
                    return self

                def __exit__(self, *exc):
                    if self.world_size > 1:
                        if self.local_rank % 2 == 1:
                            dist.barrier()
                        dist.barrier()
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

    analyses = (RankRegions, WrappedModels, Branches, GradientMode, ParserOptions)

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
        self._called_params: dict[str, dict[str, cst.Call]] = {}  # function -> parameters it calls, and a call of each
        self._evaluation_frames: set[int] = set()  # open frames of functions named like evaluation
        self._flag_tests: dict[int, str] = {}  # id of an `if name:` -> the name it tests
        self._loop_of: dict[int, int] = {}  # id of an `if` or a collective call -> id of the innermost loop around it
        self._jumps: list[_Jump] = []

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.test, cst.Name):
            self._flag_tests[id(node)] = node.test.value
        if self.model.loops:
            self._loop_of[id(node)] = id(self.model.loops[-1])

    # -- a jump only rank 0 takes ---------------------------------------------------------

    def visit_Continue(self, node: cst.Continue) -> None:
        self._jump(node)

    def visit_Break(self, node: cst.Break) -> None:
        self._jump(node)

    def _jump(self, node: cst.Continue | cst.Break) -> None:
        """Note a jump only rank 0 takes, where each `if` of its loop around it is a rank test
        or an option test that a documented run passes; a test the code cannot decide (a value
        of the data) could be false on every run, and the jump is not noted."""
        guard, loops = self.ranks.rank_zero_guard, self.model.loops
        if not self.ranks.reached_by_rank_zero_alone or not isinstance(guard, cst.If) or not loops:
            return
        loop = id(loops[-1])
        if self._loop_of.get(id(guard)) != loop:
            return
        options = self.model.get(ParserOptions)
        tests = []
        for node_if, (_, in_else) in zip(self.model.ifs, self.branches.path):
            if self._loop_of.get(id(node_if)) != loop:
                continue
            taken = _taken(node_if.test, not in_else, self.ranks.facts, options)
            if taken is None:
                return
            tests.extend(taken)
        self._jumps.append(_Jump(node, self.model.frame.key, loop, guard, self.branches.path, len(self._collectives), tuple(tests)))

    def _skipped(self) -> list[tuple[_Collective, _Jump]]:
        """Collectives the other ranks reach later in the iteration rank 0 alone jumps out of,
        where no call of the same collective only rank 0 makes in the function makes up for it."""
        found, seen = [], set()
        for jump in self._jumps:
            for event in self._collectives[jump.after:]:
                if (
                    id(event.node) in seen or event.frame != jump.frame or event.rank_zero_alone
                    or self._loop_of.get(id(event.node)) != jump.loop or id(jump.guard) in dict(event.path)
                    or exclusive(jump.path, event.path)
                    or any(self._loop_of.get(key) == jump.loop and key not in self.branches.rank_tests for key, _ in event.path)
                    or any(other.frame == jump.frame and other.kinds & event.kinds and other.rank_zero_alone for other in self._collectives)
                ):
                    continue
                seen.add(id(event.node))
                found.append((event, jump))
        return found

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

    def _event(self, node: cst.Call, kinds: frozenset[str], **more) -> _Collective:
        """An event at `node` where the walk is: who reaches it, in which branches, behind which guard."""
        ranks, frame = self.ranks, self.model.frame
        if frame.loops:
            self._loop_of[id(node)] = id(frame.loops[-1])
        enclosing = []
        while (frame := frame.parent) is not None and frame.is_function:
            enclosing.append(frame.key)
        return _Collective(
            self.model.frame.key, kinds, more.pop("helper", None), node, ranks.reached_by_rank_zero_alone,
            ranks.reached_by_other_ranks_alone, not ranks.only_rank_zero and not ranks.never_rank_zero,
            self.branches.path, ranks.rank_zero_guard, enclosing=tuple(enclosing), **more,
        )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        frame = self.model.frame.key
        if qualified in BACKWARD or isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
            self._backward_frames.add(frame)
        if qualified in TORCH_DISTRIBUTED:
            kind = COLLECTIVES.get(qualified)
            if kind is not None and keyword_argument(node, "group") is None:
                self._collectives.append(self._event(node, frozenset({kind})))
            return
        if self._framework_call(node):
            return
        if isinstance(node.func, cst.Name) and frame is not None:
            function = self.ranks.functions.get(frame)
            if function is not None and node.func.value in _parameter_names(function):
                self._called_params.setdefault(frame, {}).setdefault(node.func.value, node)
        called = node.func.value if isinstance(node.func, cst.Attribute) and node.func.attr.value == "forward" else node.func
        if self._wrapped.is_wrapped(called):
            made, harm = self._forward_steps(called)
            self._forwards.append((self._event(node, frozenset({"forward"}), origin=made, harm=harm), self._gradients_off))
            return
        callee = self.ranks.callee_key(node)
        if callee is not None:
            alone = self.ranks.reached_by_rank_zero_alone
            wrapped = {name: self._forward_steps(cst.parse_expression(name)) for name in self._wrapped.names_here()} if alone else {}
            event = self._event(node, frozenset(), helper=callee)
            self._helper_calls.append(_HelperCall(event, callee, wrapped))
            return
        self._project_helper(node)

    def _framework_call(self, node: cst.Call) -> bool:
        """A DTensor's `full_tensor()`, or a method every rank must call of a framework object
        the program model follows (an Accelerator's `save_state` under a DeepSpeed plugin, a
        DeepSpeed engine's `save_checkpoint`): an event of it. Whether it was one."""
        func = node.func
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value == DTENSOR_FULL_TENSOR and not node.args:
            self._collectives.append(self._event(node, frozenset({DTENSOR_FULL_TENSOR})))
            return True
        project, written = self.model.project, dotted_name(func)
        if func.attr.value not in FRAMEWORK_METHODS or project is None or written is None:
            return False
        found = project.framework_collective(self.model.frame.key, written)
        if found is None:
            return False
        name, framework = found
        made = Link(StepKind.MADE, _made(framework, name), framework.made_at)
        note = f" (`{written}` is a collective: {_made(framework, name)})"
        self._collectives.append(self._event(node, frozenset({name}), origin=(made,), note=note))
        return True

    def _project_helper(self, node: cst.Call) -> None:
        """A call of a project function that every rank entering it takes to a collective, in
        another module or through an object (the program model's `collective`)."""
        project, callee = self.model.project, dotted_name(node.func)
        if project is None or callee is None:
            return
        self_class = self.model.frame.self_class
        found = project.collective(self.model.frame.key, self_class.name.value if self_class else None, callee)
        if found is None or _turned_off(project, self.model.frame.key, self_class.name.value if self_class else None, node, callee, found):
            return
        links = tuple(Link(StepKind.REACHES, f"{hop.function}() calls `{hop.call}` here", hop.place) for hop in found.hops)
        framework = found.framework
        origin = (Link(StepKind.MADE, _made(framework, found.name), framework.made_at),) if framework is not None else ()
        note = f" ({callee}() runs `{found.name}` at {found.place})"
        self._collectives.append(self._event(node, frozenset({found.name}), helper=callee, origin=origin, links=links, note=note))

    # -- why a forward of the DDP model hangs ---------------------------------------------

    def _forward_steps(self, called: cst.BaseExpression) -> tuple[tuple[Link, ...], str | None]:
        """Where the DDP model `called` was wrapped (a MADE step), and why its forward is a
        collective: it broadcasts the wrapped module's buffers, where the code shows the module
        holds some (a batch norm, a `register_buffer`); None where it does not or is unknown."""
        site = self._wrapped.wrap_site(called)
        made = wrap_links(dotted_name(called), site)
        if isinstance(site, cst.Call):
            off = argument_for(site, DDP, "broadcast_buffers")
            module = argument_for(site, DDP, "module")
            if _is_false(off) or module is None:
                return made, None
            buffers = self._expression_buffers(module.value, 0, site)
        elif site is not None:
            project = self.model.project
            buffers = _class_buffers(project.program, *site.wraps) if site.broadcasts and site.wraps and project else None
        else:
            return (), None
        if buffers is None:
            return made, None
        return made, f"DDP's forward broadcasts the wrapped module's buffers from rank 0 ({buffers}), and the other ranks never join"

    def _expression_buffers(self, expr: cst.BaseExpression, depth: int, wrap: cst.Call | None = None) -> str | None:
        """What holds buffers in the module `expr` builds: a torch batch norm, or an object of a
        project class that holds one or registers a buffer (also through a local name it was
        assigned and `.to(...)`/`.cuda()`, as the names stood when the DDP call `wrap` ran:
        `model = model.cuda(); model = DDP(model)`); None where none is shown."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in SAME_VALUE_METHODS:
            expr = expr.func.value
        if isinstance(expr, (cst.Name, cst.Attribute)) and depth < 3:
            value = self._wrapped.value_of(expr, wrap)
            return self._expression_buffers(value, depth + 1, wrap) if value is not None else None
        if not isinstance(expr, cst.Call):
            return None
        qualified, layer = self.model.qualified(expr.func), last_name(expr.func) or ""
        if qualified in CONVERT_SYNC_BATCHNORM or qualified in TORCH_NN and layer.startswith(CONTAINER_LAYERS):
            return next(filter(None, (self._expression_buffers(arg.value, depth, wrap) for arg in expr.args)), None)
        if qualified in TORCH_NN:
            return f"a {layer}" if layer.startswith(BUFFERED_LAYERS) else None
        project, callee = self.model.project, dotted_name(expr.func)
        made = project.program.class_of(project.module, callee) if project is not None and callee else None
        return _class_buffers(project.program, *made) if made is not None else None

    # -- reports --------------------------------------------------------------------------

    def leave_Module(self, original_node: cst.Module) -> None:
        self._forwards = [(replace(forward, harm=self._forward_harm(forward, off)), off) for forward, off in self._forwards]
        handed = self._report_forwards_through_helpers()
        collectives = self._collectives + self._helper_collectives()
        for event in _unbalanced(collectives, self.branches.rank_tests):
            if event.kinds != {"forward"}:
                kind = sorted(event.kinds)[0]
                self.report(event.node, self.message + event.note, chain=self._chain(event, _hang(kind)))
            elif id(event.node) not in handed and event.harm is not None:  # `self.evaluate()`, which calls the DDP model
                message = f"{_FORWARD_MESSAGE} (it runs in {event.helper}(), which calls it)"
                self.report(event.node, message, chain=self._chain(event, event.harm))
        for event, jump in self._skipped():
            self._report_skipped(event, jump)
        gradients_off = {id(forward.node): off for forward, off in self._forwards}
        for forward in _unbalanced([forward for forward, _ in self._forwards], self.branches.rank_tests):
            if forward.harm is None:
                continue
            call, chain = forward.node, self._chain(forward, forward.harm)
            if self._safely_unwrapped(forward, gradients_off[id(call)]) and last_name(call.func) != "forward":
                fixed = call.with_changes(func=cst.Attribute(value=call.func, attr=cst.Name("module")))
                self.report(call, _FORWARD_MESSAGE, replace={call: fixed}, chain=chain)
            else:
                self.report(call, _FORWARD_MESSAGE, chain=chain)

    def _report_skipped(self, event: _Collective, jump: _Jump) -> None:
        kind, word = sorted(event.kinds)[0], "continue" if isinstance(jump.node, cst.Continue) else "break"
        code = self.model.module.code_for_node
        under = f" (a documented run passes `{'`, `'.join(jump.tests)}`)" if jump.tests else ""
        runs = self.runs_link()
        chain = [
            *event.origin, *([runs] if runs is not None else []),
            Link(StepKind.RUNS, _guard_text(self.model, jump.guard), jump.guard),
            Link(StepKind.REACHES, f"rank 0 alone takes `{word}` here{under}, past the `{kind}` below", jump.node),
            *event.links,
            Link(StepKind.HARM, f"`{kind}` completes only when every rank of the group calls it; the other ranks wait in "
                 "it for a call rank 0 never makes: the calls go out of step and the job hangs (NCCL) or fails (gloo)", event.node),
        ]
        message = (
            f"collective rank 0 skips: only rank 0 takes `{word}` under `{code(jump.guard.test)}` before it, and the "
            "other ranks wait in it forever; let rank 0 reach it too (move the jump after it)"
        )
        self.report(event.node, message + event.note, chain=chain)

    def _safely_unwrapped(self, forward: _Collective, off: str | None) -> bool:
        """Whether `model.module(...)`, which skips DDP's gradient synchronisation, computes the
        same there: no gradient is computed (no_grad), or an evaluation function runs no backward."""
        return off == "certain" or off == "by name" and forward.frame not in self._backward_frames

    def _forward_harm(self, forward: _Collective, off: str | None) -> str | None:
        """Why a forward of the DDP model communicates: it broadcasts buffers, or gradients are on
        and a backward in its function all-reduces them; None where neither is shown."""
        if forward.harm is not None:
            return forward.harm
        return _BACKWARD_HARM if not self._safely_unwrapped(forward, off) and forward.frame in self._backward_frames else None

    def _chain(self, event: _Collective, harm: str) -> list[Link]:
        """Where the value is made, who runs the file, the guard only rank 0 passes, the
        helpers on the way to the collective, and why it hangs."""
        runs = self.runs_link()
        guard = [Link(StepKind.RUNS, _guard_text(self.model, event.guard), event.guard)] if event.guard is not None else []
        return [*event.origin, *([runs] if runs is not None else []), *guard, *event.links, Link(StepKind.HARM, harm, event.node)]

    def _helper_collectives(self) -> list[_Collective]:
        """Calls of same-module functions that, on every rank that enters them, run a collective
        or the DDP model's forward: one event at each call, chained to the event inside."""
        performs: dict[str, dict[str, _Collective]] = {}  # function -> kind -> the event there that runs it
        for event in self._collectives + [forward for forward, _ in self._forwards]:
            if event.everywhere and event.frame is not None:
                for kind in event.kinds:
                    performs.setdefault(event.frame, {}).setdefault(kind, event)
        grown = True
        while grown:  # helpers that call such helpers, to a fixed point
            grown = False
            for call in self._helper_calls:
                event = call.event
                if event.everywhere and event.frame is not None and call.callee in performs:
                    mine = performs.setdefault(event.frame, {})
                    for kind, inner in list(performs[call.callee].items()):
                        if kind not in mine:
                            mine[kind], grown = call.performing(kind, inner), True
        return [call.performing(kind, performs[call.callee][kind], sorted(performs[call.callee]))
                for call in self._helper_calls if call.callee in performs for kind in sorted(performs[call.callee])[:1]
                if not self._switched_off(call, kind)]

    def _switched_off(self, call: _HelperCall, kind: str) -> bool:
        """Every `kind` collective of the helper is under `if flag:` of a parameter that the
        call passes False (`save_state_dict(..., synchronize=False)` of `if synchronize: barrier()`)."""
        function = self.ranks.functions.get(call.callee)
        inner = [event for event in self._collectives if event.frame == call.callee and kind in event.kinds]
        if function is None or not inner:
            return False
        parameters = _parameter_names(function)
        if parameters and call.callee.count(".") and isinstance(call.event.node.func, cst.Attribute):
            parameters = parameters[1:]  # `self.helper(...)`: `self` is bound
        passed_false = _passed_false(call.event.node, parameters)
        return all(
            any(not in_else and self._flag_tests.get(branch) in passed_false for branch, in_else in event.path)
            for event in inner
        )

    def _report_forwards_through_helpers(self) -> set[int]:
        """Report the DDP model handed to a helper that calls it where only rank 0 runs; the
        ids of the calls reported."""
        reported = set()
        for call in self._helper_calls:
            event = call.event
            function = self.ranks.functions.get(call.callee)
            if not event.rank_zero_alone or function is None or call.callee not in self._called_params:
                continue
            parameters = _parameter_names(function)
            for index, arg in enumerate(event.node.args):
                parameter = arg.keyword.value if arg.keyword else (parameters[index] if index < len(parameters) else None)
                if arg.star or parameter not in self._called_params[call.callee]:
                    continue
                name = dotted_name(arg.value)
                if name in call.wrapped:
                    made, harm = call.wrapped[name]
                    if harm is None:
                        harm = _BACKWARD_HARM if call.callee in self._backward_frames else None
                    if harm is not None:
                        message = f"{_FORWARD_MESSAGE} (it is passed to {last_name(event.node)}, which calls it)"
                        forward = self._called_params[call.callee][parameter]
                        reaches = Link(StepKind.REACHES, f"{call.callee}() calls its parameter `{parameter}` here", forward)
                        handed = replace(event, origin=made, links=(reaches,))
                        self.report(event.node, message, chain=self._chain(handed, harm))
                    reported.add(id(event.node))
                    break
        return reported


# -- questions only this rule asks of the program model ----------------------------------------


def _turned_off(view, key: str | None, cls: str | None, call: cst.Call, callee: str, found) -> bool:
    """The call passes False to the parameter the helper runs its collective under: `if
    synchronize: barrier()` in `save_state_dict(..., synchronize=False)`."""
    program = view.program
    target = program.target(view.module, key, cls, callee)
    record = program.function(target.module, target.key) if target is not None and found.hops else None
    if record is None:
        return False
    line = found.hops[0].place.line
    passed_false = _passed_false(call, list(record.params[1:] if target.bound and record.method else record.params))
    return any(
        guard.sense and guard.first <= line <= guard.last and guard.test in passed_false
        for guard in program.context.guards_around(target.module, target.key)
    )


def _passed_false(call: cst.Call, parameters: list[str]) -> set[str]:
    """The parameters (of the called function, `self` left out) that `call` passes a literal False."""
    found = set()
    for index, arg in enumerate(call.args):
        name = arg.keyword.value if arg.keyword else (parameters[index] if index < len(parameters) and not arg.star else None)
        if name is not None and isinstance(arg.value, cst.Name) and arg.value.value == "False":
            found.add(name)
    return found


def _class_buffers(program, module: str, cls: str, depth: int = 0) -> str | None:
    """What makes an object of the project class `cls` of `module` hold buffers: a method
    registers one (`self.register_buffer`), its methods build a torch batch norm or an object of
    a project class that holds buffers, or it derives from such a class; None where the code
    shows none (a builder function, a registry and a library model are not followed)."""
    summary = program.summary(module) if depth <= _MAX_CLASS_DEPTH else None
    record = summary.classes.get(cls) if summary is not None else None
    if record is None:
        return None
    for key, function in summary.functions.items():
        if key.rpartition(".")[0] != cls:
            continue
        for call in function.invocations:
            last = call.callee.rpartition(".")[2]
            if last == _REGISTER_BUFFER and call.callee.startswith(("self.", "super().")):
                return f"{cls} registers a buffer"
            qualified = program.qualify(module, call.callee)
            if qualified in TORCH_NN and last.startswith(BUFFERED_LAYERS):
                return f"{cls} holds a {last}"
            made = program.class_of(module, call.callee) if qualified not in TORCH_NN else None
            inner = _class_buffers(program, *made, depth + 1) if made is not None and made != (module, cls) else None
            if inner is not None:
                return inner
    for base in record.bases:
        if program.qualify(module, base) in TORCH_NN and base.rpartition(".")[2].startswith(BUFFERED_LAYERS):
            return f"{cls} is a {base.rpartition('.')[2]}"
        made = program.class_of(module, base)
        inner = _class_buffers(program, *made, depth + 1) if made is not None and made != (module, cls) else None
        if inner is not None:
            return inner
    return None


_MAX_CLASS_DEPTH = 6  # project classes followed into each other for buffers; deeper is unknown
_REGISTER_BUFFER = "register_buffer"  # nn.Module's method
_BACKWARD_HARM = (
    "gradients are on and a backward follows here: it all-reduces the gradients, which the other ranks never join"
)


def _made(framework, method: str) -> str:
    """What makes a framework object's `method` a collective, for the message and the chain."""
    at = framework.made_at
    if framework.kind == "accelerate" and method in FRAMEWORK_COLLECTIVES["accelerate sharded"]:
        return f"the Accelerator made at {at} is given a DeepSpeed or FSDP plugin, which saves and gathers its state with collectives"
    if framework.kind == "accelerate":
        return f"the Accelerator made at {at} waits for or gathers from every process"
    if framework.kind == "deepspeed":
        return f"the DeepSpeed engine made at {at} checkpoints with every rank (a barrier first)"
    return f"the FSDP model made at {at} all-gathers every rank's shards"


def _hang(kind: str) -> str:
    return (f"`{kind}` completes only when every rank of the group calls it; only rank 0 gets here, so it waits "
            "while the other ranks run on to their next collective: a hang (NCCL) or a mismatch (gloo)")


def _guard_text(model, guard: cst.CSTNode) -> str:
    if isinstance(guard, cst.If):
        return f"only rank 0 gets here: `{model.module.code_for_node(guard.test)}`"
    if isinstance(guard, cst.FunctionDef):
        return f"only rank 0 runs {guard.name.value}(): it is decorated to run on rank 0 alone"
    return "only rank 0 gets here"


def _is_false(arg: cst.Arg | None) -> bool:
    return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "False"


def _unbalanced(events: list[_Collective], rank_tests: set[int]) -> list[_Collective]:
    """Events only rank 0 reaches, with no event of the same kind in the same function that
    only the other ranks reach ("main process first"), or that the other ranks can reach in
    the other branch of an `if` that tests the rank (balanced if/else, also when the test is
    not only a rank test: `if rank == 0 and verbose: evaluate(verbose=True) else: evaluate()`).
    A closure and the function it is defined in are one protocol: rank 0's broadcast inside
    `def closure():` is met by the other ranks' broadcast in the enclosing function's `else:`."""
    return [
        event
        for event in events
        if event.rank_zero_alone
        and not any(
            other.kinds & event.kinds
            and (
                other.other_ranks_alone and _one_protocol(event, other)
                or other.frame == event.frame and not other.rank_zero_alone and exclusive(event.path, other.path, among=rank_tests)
            )
            for other in events
        )
    ]


def _taken(test: cst.BaseExpression, way: bool, facts, options) -> list[str] | None:
    """Whether `test` comes out `way` on a run where the walk gets past it: a rank test (the
    ranks decide it, and a distributed run has rank 0), or an option of the command line compared
    with a literal that a documented run's value makes come out `way`: then the option tests it
    stands on, as written; None where not shown (a value of the data, an option no run is shown
    to set so)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _taken(test.expression, not way, facts, options)
    if isinstance(test, cst.BooleanOperation):
        if isinstance(test.operator, cst.And) != way:
            return None  # one part decides: which one is not known
        left, right = _taken(test.left, way, facts, options), _taken(test.right, way, facts, options)
        return None if left is None or right is None else left + right
    if classify(test, facts).is_rank_test:
        return []
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    operator, literal = test.comparisons[0].operator, test.comparisons[0].comparator
    if not isinstance(operator, (cst.Equal, cst.NotEqual)) or not isinstance(literal, cst.SimpleString):
        return None
    values = options.documented_values(test.left)
    if values is UNKNOWN:
        return None
    equal = isinstance(operator, cst.Equal) == way
    if not any((str(value) == literal.evaluated_value) == equal for value in values if value is not None):
        return None
    return [cst.Module([]).code_for_node(test) if way else f"not {cst.Module([]).code_for_node(test)}"]


def _one_protocol(first: _Collective, second: _Collective) -> bool:
    """The two events are in one function, or one's function is defined inside the other's, or
    they are in the `__enter__` and `__exit__` of one context manager class (every rank that
    enters the `with` leaves it: "main process first" written as a class)."""
    return (
        first.frame == second.frame or first.frame in second.enclosing or second.frame in first.enclosing
        or _context_pair(first.frame, second.frame)
    )


_CONTEXT_METHODS = ({"__enter__", "__exit__"}, {"__aenter__", "__aexit__"})


def _context_pair(first: str | None, second: str | None) -> bool:
    """`first` and `second` are the entry and exit methods of one class."""
    if first is None or second is None:
        return False
    (cls, _, one), (other_cls, _, other) = first.rpartition("."), second.rpartition(".")
    return bool(cls) and cls == other_cls and {one, other} in _CONTEXT_METHODS


def _parameter_names(function: cst.FunctionDef) -> list[str]:
    params = function.params
    return [param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)]
