from __future__ import annotations

import libcst as cst

from ddplint.analyses.launches import Launches
from ddplint.analyses.ranks import (
    RANK_ENVIRONMENT,
    RankRegions,
    environment_key,
    last_name,
    mentions_rank as _mentions_rank,
)
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.triggers import SAVE_EVIDENCE_CODE, CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.model import dotted_name
from ddplint.semantic.edits import argument_for
from ddplint.core.torch_api import DDP, DISTRIBUTED_MODULES, SAVE_EVIDENCE, SPAWN, START_PROCESSES, TORCH_SAVE

# Files private to the process that opens them: every rank writing its own is fine.
PRIVATE_FILES = frozenset(
    {"io.BytesIO", "tempfile.TemporaryFile", "tempfile.NamedTemporaryFile", "tempfile.SpooledTemporaryFile"}
)


# The message, with the rank-0 test of the framework the file uses.
_MESSAGE = (
    "torch.save runs on every rank and all of them write the same file, which corrupts it; save on rank 0 only ({})"
)


_HELPER_MESSAGE = (
    "{}() runs torch.save ({}) with no rank test, and every rank makes this call: all of them write the "
    "same file, which corrupts it; call it on rank 0 only ({})"
)


def _builds_path(expr: cst.BaseExpression) -> bool:
    """A string or path built from parts: `f"ckpt_{rank}.pt"`, `"ckpt_%d" % rank`, `os.path.join(...)`."""
    if isinstance(expr, (cst.FormattedString, cst.BinaryOperation, cst.ConcatenatedString)):
        return True
    return isinstance(expr, cst.Call) and (last_name(expr.func) or "") in ("join", "format", "Path", "str")


def _is_process_group_api(qualified: str) -> bool:
    """`torch.distributed.barrier`, `...distributed_c10d.get_rank`: calls that only make sense
    in a process group. Its subpackages (`torch.distributed.checkpoint` tools) do not count."""
    module, _, _ = qualified.rpartition(".")
    return module in DISTRIBUTED_MODULES


class SaveOnEveryRank(Rule):
    """
    Every rank of a DDP job runs the same script, so a `torch.save(...)` that is not behind a
    rank-0 guard is executed by every rank at once, all writing the same path. On a shared
    file system the writers interleave and truncate each other's output: the checkpoint is
    corrupt ("PytorchStreamReader failed reading zip archive", pytorch issue 73168), or a
    rank that loads it right after reads a half-written file. It also wastes I/O N times.

    Fires when `torch.save` (any import form) runs in a file that is evidently distributed (it
    calls torch.distributed or DistributedDataParallel, spawns ranks, or reads RANK or
    LOCAL_RANK), or that a launcher runs on every rank without naming DDP (a function that
    builds an Accelerate `Accelerator(...)` or calls `fabric.launch()` on a Fabric for several
    devices, the function `fabric.launch(fn)` starts, a LightningModule's hooks unless every
    Lightning Trainer the file builds is for one device), in code every rank reaches: a
    function (or module code) that tests the rank or does one of those things itself, or is
    called from such code outside a rank-0 guard.
    Recognised guards: `if rank == 0`, `if dist.get_rank() == 0`, `if is_main_process()`
    (`is_master`, `is_rank_zero`, `accelerator.is_main_process`, `trainer.is_global_zero`,
    ...), a call of a same-module function or method whose body is such a test, whatever its
    name (`def should_save(): return dist.get_rank() == 0`, also `return not
    dist.is_initialized() or dist.get_rank() == 0` or a call of another such function), `if
    args.local_rank in [-1, 0]`,
    `if not args.distributed or rank == 0` (and `if rank == 0 or not args.distribution` with
    any flag the module starts its process group under: `if args.distribution:
    dist.init_process_group(...)`), early returns such as `if rank != 0: return`,
    `@rank_zero_only` (`@main_process`, ...), a same-module function
    (`save_checkpoint()`) whose every call is under such a guard, and any of these tests held
    in a variable or attribute: `verbose = rank == 0` then `if verbose:`, `self.is_main =
    dist.get_rank() == 0` then `if self.is_main:` in another method (also of a subclass, in
    another module too: its values are those its class and project base classes assign it),
    `args.save_logs =
    args.logs and is_master(args)` then `if args.save_logs:` in another function. Such a
    variable is a guard when every value assigned to it in the module is a rank-0 test (or a
    constant `True`/`False`); one assigned anything else, or also bound as a parameter or loop
    variable, is not (values assigned where no distributed run gets, such as `master_process =
    True` under the `else:` of `if ddp:`, do not count). Not guards: a same-module function named like one whose body tests no
    rank (`def is_master(args): return args.save`), and a rank predicate named without a call
    (`if is_main_process:`, `if dist.is_initialized and ...`): a function object is always
    true, so every rank saves, and the message says so.
    With the project index, the save may be in a function of another module: a call, in code
    every rank reaches and outside a rank-0 guard, of a project function that runs `torch.save`
    under no `if` and says nothing of ranks (`save_checkpoint(state, is_best, out_dir)` in
    `utils.py`, also through such helpers it calls: `fit(...)` in `engine.py` that calls it) is
    reported at that call, naming the save; a call that passes a path naming the rank is not.
    Not flagged: saves to a path that names the rank (`f"ckpt_{rank}.pt"`, also through a
    variable or `with open(...) as f`), saves into an `io.BytesIO` buffer or a `tempfile`, and functions with no evidence of running distributed (a library
    helper called from another module is judged where it is called).

    The message suggests the rank-0 test of the framework the file uses: `if
    accelerator.is_main_process:` (the name the file gives its `Accelerator`), `if
    fabric.is_global_zero:` (its Fabric's name), `if self.trainer.is_global_zero:` or
    `@rank_zero_only` in a LightningModule's hooks; in a function that is no launch point, that
    of its class's or the file's launch point. `if dist.get_rank() == 0:` where the file uses no
    launcher, or calls torch.distributed itself and the function is no launch point.

    No fix: wrapping the save in a rank-0 test is right only when no other rank
    reads the file before a barrier, which the linter cannot see. Guard it yourself, and
    add `dist.barrier()` after it if other ranks load the checkpoint.
    """

    code = "DDP014"
    # the save may be in a helper of another module that this one imports and calls (the
    # screen sees a call of it as one of torch.save: ddplint.model.project.Hints.origins)
    opened_by = frozenset((ProjectFact.SAVE_HELPER,))
    needs_ranks = True
    name = "save-on-every-rank"
    frameworks = (Framework.DDP, Framework.ACCELERATE, Framework.LIGHTNING, Framework.FABRIC)
    message = _MESSAGE.format("if dist.get_rank() == 0:")
    fix = None
    # `also`: the catalog's distributed evidence for saves (torch_api.SAVE_EVIDENCE). `within`:
    # the report needs code that shows it runs distributed (`leave_Module` returns early
    # without), which a word in a docstring or an import alone is not: on the pip corpus half
    # the files with a save and that text had none.
    trigger = CallTrigger(TORCH_SAVE, within=SAVE_EVIDENCE_CODE, also=(SAVE_EVIDENCE,))

    flagged_examples = (
        Flagged(
            # The process group starts whatever `args.multi_gpu` says: the flag may be off
            # in a distributed run, and then every rank saves.
            """
            import torch
            import torch.distributed as dist

            def train(model, args):
                dist.init_process_group("nccl")
                if dist.get_rank() == 0 or not args.multi_gpu:
                    torch.save(model.state_dict(), "best.pt")
                    ^
            """
        ),
        Flagged(
            # The base class also sets the flag from the configuration: any rank may save.
            """
            import torch
            import torch.distributed as dist

            class BaseTrainer:
                def __init__(self, config):
                    self._primary = dist.get_rank() == 0
                    if config.save_everywhere:
                        self._primary = config.save

            class Trainer(BaseTrainer):
                def fit(self, model):
                    dist.barrier()
                    if self._primary:
                        torch.save(model.state_dict(), "last.pt")
                        ^
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def train(model, epochs):
                dist.init_process_group("nccl")
                for epoch in range(epochs):
                    step(model)
                    torch.save(model.state_dict(), "checkpoint.pt")
                    ^
            """
        ),
        Flagged(
            """
            import os
            from torch import save
            from torch.nn.parallel import DistributedDataParallel as DDP

            local_rank = int(os.environ["LOCAL_RANK"])
            model = DDP(build(), device_ids=[local_rank])
            train(model)
            save(model.module.state_dict(), "final.pt")
            ^
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def save_checkpoint(model, path):
                torch.save(model.state_dict(), path)
                ^

            def main(rank):
                model = setup(rank)
                if rank == 0:
                    save_checkpoint(model, "best.pt")
                dist.barrier()
                save_checkpoint(model, "last.pt")
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def train(model, args):
                dist.init_process_group("nccl")
                save = dist.get_rank() == 0
                if args.save_every_rank:
                    save = True
                if save:
                    torch.save(model.state_dict(), "checkpoint.pt")
                    ^
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            class Trainer:
                def save(self):
                    torch.save(self.model.state_dict(), self.path)
                    ^

                def fit(self):
                    if dist.get_rank() == 0:
                        print("start")
                    for epoch in range(3):
                        self.save()
            """
        ),
        Flagged(
            # A predicate named without a call is always true; a helper named like a guard
            # whose body tests no rank is no guard.
            """
            import torch
            import torch.distributed as dist
            from utils import is_main_process

            def is_master(args):
                return args.save_checkpoints

            def train(model, args):
                dist.init_process_group("nccl")
                if is_main_process:
                    torch.save(model.state_dict(), "checkpoint.pt")
                    ^
                if is_master(args):
                    torch.save(model.state_dict(), "last.pt")
                    ^
            """,
            messages=(
                (
                    "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                    "rank 0 only (if dist.get_rank() == 0:); `is_main_process` is not called, so the test is always "
                    "true"
                ),
                (
                    "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                    "rank 0 only (if dist.get_rank() == 0:)"
                ),
            ),
        ),
        Flagged(
            # Fabric starts the ranks; the script never names DDP.
            """
            import lightning as L
            import torch

            def main():
                fabric = L.Fabric(accelerator="cuda", devices=4, strategy="ddp")
                fabric.launch()
                model, optimizer = fabric.setup(build(), make_optimizer())
                train(fabric, model, optimizer)
                torch.save(model.state_dict(), "final.pt")
                ^
            """,
            messages=(
                "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                "rank 0 only (if fabric.is_global_zero:)"
            ),
        ),
        Flagged(
            # The Trainer runs a LightningModule's hooks on every rank.
            """
            import pytorch_lightning as pl
            import torch

            class Classifier(pl.LightningModule):
                def on_validation_epoch_end(self):
                    torch.save(self.state_dict(), "best.pt")
                    ^
            """,
            messages=(
                "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                "rank 0 only (if self.trainer.is_global_zero: or @rank_zero_only)"
            ),
        ),
    )
    clean_examples = (
        Clean(
            # A Fabric for one device is one process; rank-0 regions inside launched code.
            """
            import lightning as L
            import torch
            from lightning.pytorch.utilities import rank_zero_only

            def generate():
                fabric = L.Fabric(devices=1)
                fabric.launch()
                torch.save(sample(fabric), "samples.pt")

            def main():
                fabric = L.Fabric(devices=8, strategy="ddp")
                fabric.launch()
                model = fabric.setup(build())
                if fabric.is_global_zero:
                    torch.save(model.state_dict(), "final.pt")

            class Task(L.LightningModule):
                @rank_zero_only
                def export(self):
                    torch.save(self.state_dict(), "export.pt")

                def on_train_end(self):
                    if self.trainer.is_global_zero:
                        torch.save(self.state_dict(), "last.pt")

                def setup(self, stage):
                    self.queue_path = f"queue{self.trainer.global_rank}.pth"

                def on_train_epoch_end(self):
                    torch.save(self.queue, self.queue_path)
            """
        ),
        Clean(
            # A guard held in an attribute: one rank-0 test or the other.
            """
            import torch
            from accelerate import Accelerator

            class Trainer:
                def __init__(self, local_disk, use_ema):
                    self.accelerator = Accelerator()
                    self.use_ema = use_ema and self.accelerator.is_main_process
                    self.can_checkpoint = self.accelerator.is_local_main_process if local_disk else self.accelerator.is_main_process

                def save(self, path):
                    if not self.can_checkpoint:
                        return
                    state = {"model": self.model.state_dict()}
                    if self.use_ema:
                        state["ema"] = self.ema.state_dict()
                    torch.save(state, path)
            """
        ),
        Clean(
            # Every Trainer of the file is for one device.
            """
            import pytorch_lightning as pl
            import torch

            class Classifier(pl.LightningModule):
                def on_train_end(self):
                    torch.save(self.state_dict(), "last.pt")

            trainer = pl.Trainer(accelerator="cpu", devices=1)
            trainer.fit(Classifier())
            """
        ),
        Clean(
            # The single-process branch's `master_process = True` is never taken by a rank of
            # a distributed run (formerly flagged).
            """
            import os
            import torch
            import torch.distributed as dist

            ddp = int(os.environ.get("RANK", -1)) != -1
            if ddp:
                dist.init_process_group("nccl")
                master_process = int(os.environ["RANK"]) == 0
            else:
                master_process = True
            model = train()
            if master_process:
                torch.save(model.state_dict(), "ckpt.pt")
            """
        ),
        Clean(
            # Rank-0 predicates of this module, judged by their definition (formerly flagged).
            """
            import os
            import torch
            import torch.distributed as dist

            def should_save():
                return dist.get_rank() == 0

            def is_leader():
                return not dist.is_initialized() or dist.get_rank() == 0

            def on_rank_zero():
                return int(os.environ["RANK"]) == 0

            def is_main_worker():
                if not dist.is_initialized():
                    return True
                return is_leader()

            class Trainer:
                def is_chief(self):
                    return self.rank == 0

                def fit(self, model):
                    dist.barrier()
                    if self.is_chief():
                        torch.save(model.state_dict(), "chief.pt")

            def train(model):
                dist.init_process_group("nccl")
                if should_save():
                    torch.save(model.state_dict(), "a.pt")
                if is_leader():
                    torch.save(model.state_dict(), "b.pt")
                if on_rank_zero():
                    torch.save(model.state_dict(), "c.pt")
                if is_main_worker():
                    torch.save(model.state_dict(), "d.pt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def train(model, rank):
                dist.init_process_group("nccl")
                verbose = rank == 0
                master = dist.get_rank() == 0
                if verbose:
                    torch.save(model.state_dict(), "a.pt")
                if master and epoch % 10 == 0:
                    torch.save(model.state_dict(), "b.pt")
                if not master:
                    return
                torch.save(model.state_dict(), "c.pt")
            """
        ),
        Clean(
            # The process group starts only when the flag is set: in a distributed run it
            # is, and only rank 0 saves.
            """
            import torch
            import torch.distributed as dist

            def train(model, args):
                rank = 0
                if args.distribution:
                    dist.init_process_group("nccl")
                    rank = dist.get_rank()
                fit(model)
                if rank == 0 or not args.distribution:
                    torch.save(model.state_dict(), "best.pt")

            def finetune(model, single_gpu):
                if not single_gpu:
                    dist.init_process_group("nccl")
                fit(model)
                if single_gpu or dist.get_rank() == 0:
                    torch.save(model.state_dict(), "finetuned.pt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def main(args):
                dist.init_process_group("nccl")
                args.save_logs = args.logs and args.logs.lower() != "none" and is_master(args)
                train(model, args)

            def train(model, args):
                dist.barrier()
                if args.save_logs:
                    torch.save(model.state_dict(), "epoch.pt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            class Trainer:
                def __init__(self, model):
                    self.model = model
                    self.is_main = dist.get_rank() == 0
                    self.should_save = False
                    if args.checkpointing:
                        self.should_save = int(os.environ["RANK"]) == 0

                def fit(self):
                    dist.barrier()
                    if self.is_main:
                        torch.save(self.model.state_dict(), "a.pt")
                    if self.should_save:
                        torch.save(self.model.state_dict(), "b.pt")
            """
        ),
        Clean(
            # Set in a base class (also one in another module of the project), read in a
            # subclass's method, also through a local variable.
            """
            import torch
            import torch.distributed as dist

            class BaseTrainer:
                def __init__(self):
                    self._primary = dist.get_rank() == 0

            class Trainer(BaseTrainer):
                def fit(self, model, best):
                    dist.barrier()
                    if self._primary:
                        torch.save(model.state_dict(), "last.pt")
                    should_save = False
                    if best:
                        should_save = self._primary
                    if should_save:
                        torch.save(model.state_dict(), "best.pt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def train(model, args):
                dist.init_process_group("nccl")
                if dist.get_rank() == 0:
                    torch.save(model.state_dict(), "a.pt")
                if args.local_rank in [-1, 0]:
                    torch.save(model.state_dict(), "b.pt")
                if not args.distributed or args.rank == 0:
                    torch.save(model.state_dict(), "c.pt")
                if is_main_process():
                    torch.save(model.state_dict(), "d.pt")
                if accelerator.is_main_process:
                    torch.save(model.state_dict(), "e.pt")
                if trainer.is_global_zero and epoch % 10 == 0:
                    torch.save(model.state_dict(), "f.pt")
                torch.save(model.state_dict(), f"shard_{dist.get_rank()}.pt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def save_checkpoint(model, path):
                torch.save(model.state_dict(), path)

            def main(rank):
                dist.init_process_group("gloo")
                if rank == 0:
                    save_checkpoint(model, "best.pt")
                dist.barrier()
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def finish(model, rank):
                dist.barrier()
                if rank != 0:
                    return
                torch.save(model.state_dict(), "final.pt")

            @rank_zero_only
            def dump(model):
                torch.save(model, "model.pt")
            """
        ),
        Clean(
            """
            import torch

            model = train()
            torch.save(model.state_dict(), "model.pt")
            """
        ),
        Clean(
            """
            import io
            import tempfile
            import torch
            import torch.distributed as dist

            def save_checkpoint(state, filename):
                torch.save(state, filename)

            def payload(obj):
                dist.barrier()
                buffer = io.BytesIO()
                torch.save(obj, buffer)
                with tempfile.NamedTemporaryFile() as tmp:
                    torch.save(obj, tmp.name)
                with open(f"{dist.get_rank()}.pt", "wb") as handle:
                    torch.save(obj, handle)
                return buffer.getvalue()
            """
        ),
    )

    analyses = (RankRegions, Launches)

    def __init__(self, model) -> None:
        super().__init__(model)
        self.ranks = model.get(RankRegions)
        self.launches = model.get(Launches)
        # (save, its function, the predicate an enclosing `if` names without calling it)
        # (save, its function, the predicate an enclosing `if` names without calling it, the
        # `self` attribute it saves to as (class, name))
        self._saves: list[tuple[cst.Call, str | None, str | None, tuple[str, str] | None]] = []
        self._distributed_frames: set[str | None] = set()
        self._spawned: set[str] = set()
        # frame -> names bound to an in-memory file, or to a value that names the rank
        self._buffers: dict[str | None, set[str]] = {}
        self._per_rank: dict[str | None, set[str]] = {}
        self._per_rank_attributes: set[tuple[str, str]] = set()  # `self` attributes some method binds per rank
        # calls of other modules' functions outside a rank-0 guard: (call, its function, qualified name)
        self._helper_calls: list[tuple[cst.Call, str | None, str]] = []
        self._rank_paths: dict[str | None, set[str]] = {}  # frame -> names bound to a path that names the rank

    def _attribute(self, name: str | None) -> tuple[str, str] | None:
        """(class, attribute) for `self.<attribute>` in a method; None for anything else."""
        frame = self.model.frame
        if name is None or frame.self_class is None or not name.startswith(f"{frame.self_name}."):
            return None
        return frame.self_class.name.value, name.partition(".")[2]

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        name = dotted_name(target)
        if name is None:
            return
        if isinstance(value, cst.Call) and (
            self.model.qualified(value.func) in PRIVATE_FILES or "temp" in (last_name(value) or "").lower()
        ):
            self._buffers.setdefault(self.model.frame.key, set()).add(name)
        per_rank = self._per_rank.setdefault(self.model.frame.key, set())
        if _mentions_rank(value, per_rank):
            if _builds_path(value):
                self._rank_paths.setdefault(self.model.frame.key, set()).add(name)
            per_rank.add(name)
            attribute = self._attribute(name)
            if attribute is not None:  # `self.path = f"queue{rank}.pth"` in another method
                self._per_rank_attributes.add(attribute)
        else:
            per_rank.discard(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:  # `with open(rank_path, "wb") as f:`
            self._bind(node.asname.name, node.item)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if environment_key(node) in RANK_ENVIRONMENT:
            self._distributed_frames.add(self.model.frame.key)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        if qualified is None:
            if environment_key(node) in RANK_ENVIRONMENT:
                self._distributed_frames.add(self.model.frame.key)
            return
        if _is_process_group_api(qualified) or qualified in DDP:
            self._distributed_frames.add(self.model.frame.key)
        elif qualified in SPAWN or qualified in START_PROCESSES:
            self._distributed_frames.add(self.model.frame.key)
            target = argument_for(node, SPAWN, "fn")
            if target is not None and isinstance(target.value, cst.Name):
                self._spawned.add(target.value.value)
        elif qualified not in TORCH_SAVE and self.model.project is not None and not self.ranks.only_rank_zero:
            per_rank = self._per_rank.get(self.model.frame.key, set())
            paths = self._rank_paths.get(self.model.frame.key, set())
            if not any(  # `save(state, f"ckpt_{rank}.pt")`, or a name bound to one
                dotted_name(arg.value) in paths or (_builds_path(arg.value) and _mentions_rank(arg.value, per_rank))
                for arg in node.args
            ):
                self._helper_calls.append((node, self.model.frame.key, qualified))
        elif qualified in TORCH_SAVE and not self.ranks.only_rank_zero:
            destination = argument_for(node, TORCH_SAVE, "f")
            if destination is None or _mentions_rank(destination.value, self._per_rank.get(self.model.frame.key, set())):
                return
            name = dotted_name(destination.value)  # `buffer`, `tmp`, `tmp.name`
            if name is not None and name.split(".")[0] in self._buffers.get(self.model.frame.key, ()):
                return
            self._saves.append((node, self.model.frame.key, self.ranks.uncalled_guard, self._attribute(name)))

    def leave_Module(self, original_node: cst.Module) -> None:
        launched = self.launches.every_rank
        if not (self._saves or self._helper_calls) or not (self._distributed_frames or launched):
            return
        guarded = self.ranks.functions_only_rank_zero_calls()
        callers: dict[str, list] = {}
        for site in self.ranks.call_sites:
            callers.setdefault(site.callee, []).append(site)
        memo: dict[str | None, bool] = {}

        def shows_distributed(key: str | None) -> bool:
            return (
                key in self._distributed_frames or key in self.ranks.rank_aware_frames or key in self._spawned
                or key in launched
            )

        def every_rank_runs(key: str | None) -> bool:
            """Module code or a function that shows it runs distributed and is reached outside a
            rank-0 guard (or has no caller here), or that is called from such code unguarded."""
            if key is None:
                return shows_distributed(None)
            if key in memo:
                return memo[key]
            memo[key] = False  # a cycle proves nothing
            if key in guarded:
                return False
            unguarded = [site for site in callers.get(key, ()) if not site.only_zero]
            if shows_distributed(key):
                result = bool(unguarded) or key not in callers
            else:
                result = any(every_rank_runs(site.caller) for site in unguarded)
            memo[key] = result
            return result

        for node, frame, uncalled, attribute in self._saves:
            if attribute in self._per_rank_attributes:
                continue
            if every_rank_runs(frame):
                # the rank-0 test of the launcher the file uses, where it uses no torch.distributed
                guard = self.launches.guard(frame, elsewhere=not self._distributed_frames)
                message = self.message if guard is None else _MESSAGE.format(guard)
                always_true = f"{message}; `{uncalled}` is not called, so the test is always true"
                self.report(node, message if uncalled is None else always_true)
        for node, frame, qualified in self._helper_calls:
            if every_rank_runs(frame):
                where = saving_helper(self.model.project, qualified)  # type: ignore[arg-type]
                if where is not None:
                    guard = self.launches.guard(frame, elsewhere=not self._distributed_frames)
                    test = "if dist.get_rank() == 0:" if guard is None else guard
                    self.report(node, _HELPER_MESSAGE.format(qualified.rpartition(".")[2], where, test))
        del every_rank_runs  # a recursive closure is a cycle, and it holds `self`: the file's tree


# -- questions only this rule asks of the program model -------------------------------------


MAX_HELPER_DEPTH = 3  # save helpers followed through the helpers they call; deeper is unknown


def saving_helper(view, qualified: str | None):
    """Where the function of another project module that `qualified` names (as the view's module
    imports it) calls `torch.save` under no `if`, saying nothing of ranks, itself or through such
    helpers it calls (ddplint.model.files.settle_save): every process that calls it writes the
    file. None otherwise; only modules that may save, by their text and imports, are read."""
    if not qualified:
        return None
    program = view.program
    found = program.split(view.absolute(qualified), view.module)
    if found is None or not found[1] or "." in found[1] or found[0] == view.module:
        return None
    target = program.resolve(found[0], found[1], None) if program.may_save(found[0]) else None
    return _saving(program, target.module, target.key, 0) if target is not None and not target.bound else None


def _saving(program, module: str, key: str, depth: int):
    if depth > MAX_HELPER_DEPTH or not program.may_save(module):
        return None
    record = program.function(module, key)
    for call in record.escapes.plain_saves if record is not None else ():
        if program.values.is_save(module, call.callee):
            return program.place(module, call.line)
        inner = program.resolve(module, call.callee, None)
        where = _saving(program, inner.module, inner.key, depth + 1) if inner is not None and not inner.bound else None
        if where is not None:
            return where
    return None
