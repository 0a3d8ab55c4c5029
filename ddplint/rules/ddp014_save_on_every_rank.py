from __future__ import annotations

import libcst as cst

from ddplint.edits import argument
from ddplint.names import TORCH_SAVE, dotted_name
from ddplint.ranks import DDP_WRAPPERS, RANK_ENVIRONMENT, RankAwareRule, environment_key, is_rank_expression
from ddplint.rule import Clean, Flagged

SPAWN = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes"})
IN_MEMORY_FILES = frozenset({"io.BytesIO"})


def _mentions_rank(expr: cst.CSTNode) -> bool:
    """The expression names the rank somewhere (`f"ckpt_{rank}.pt"`): one file per rank."""
    if isinstance(expr, cst.BaseExpression) and is_rank_expression(expr):
        return True
    return any(_mentions_rank(child) for child in expr.children)


class SaveOnEveryRank(RankAwareRule):
    """
    Every rank of a DDP job runs the same script, so a `torch.save(...)` that is not behind a
    rank-0 guard is executed by every rank at once, all writing the same path. On a shared
    file system the writers interleave and truncate each other's output: the checkpoint is
    corrupt ("PytorchStreamReader failed reading zip archive", pytorch issue 73168), or a
    rank that loads it right after reads a half-written file. It also wastes I/O N times.

    Flagged: `torch.save` (any import form) in a file that is evidently distributed (it
    calls torch.distributed or DistributedDataParallel, spawns ranks, or reads LOCAL_RANK),
    in code every rank reaches: module code, or a function that tests the rank or calls
    torch.distributed itself, or is called from such code outside a rank-0 guard.
    Recognised guards: `if rank == 0`, `if dist.get_rank() == 0`, `if is_main_process()`
    (`is_master`, `is_rank_zero`, `accelerator.is_main_process`, `trainer.is_global_zero`,
    ...), `if args.local_rank in [-1, 0]`, `if not args.distributed or rank == 0`, early
    returns such as `if rank != 0: return`, `@rank_zero_only`, and a same-module function
    (`save_checkpoint()`) whose every call is under such a guard.
    Not flagged: saves to a path that names the rank (`f"ckpt_{rank}.pt"`), saves into an
    `io.BytesIO` buffer, and functions with no evidence of running distributed (a library
    helper called from another module is judged where it is called).

    No fix: wrapping the save in `if dist.get_rank() == 0:` is right only when no other rank
    reads the file before a barrier, which the linter cannot see. Guard it yourself, and
    add `dist.barrier()` after it if other ranks load the checkpoint.
    """

    code = "DDP014"
    name = "save-on-every-rank"
    message = (
        "torch.save runs on every rank and all of them write the same file, which corrupts it; "
        "save on rank 0 only (if dist.get_rank() == 0:)"
    )
    fix = None
    needles = ("save", ("distributed", "DistributedDataParallel", "init_process_group", "LOCAL_RANK", "spawn"))

    flagged = (
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def train(model, epochs):
                dist.init_process_group("nccl")
                for epoch in range(epochs):
                    step(model)
                    torch.save(model.state_dict(), "checkpoint.pt")
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
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def save_checkpoint(model, path):
                torch.save(model.state_dict(), path)

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

            class Trainer:
                def save(self):
                    torch.save(self.model.state_dict(), self.path)

                def fit(self):
                    if dist.get_rank() == 0:
                        print("start")
                    for epoch in range(3):
                        self.save()
            """
        ),
    )
    clean = (
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
            import torch
            import torch.distributed as dist

            def save_checkpoint(state, filename):
                torch.save(state, filename)

            def payload(obj):
                dist.barrier()
                buffer = io.BytesIO()
                torch.save(obj, buffer)
                return buffer.getvalue()
            """
        ),
    )

    def __init__(self, names) -> None:
        super().__init__(names)
        self._saves: list[tuple[cst.Call, str | None]] = []
        self._distributed_frames: set[str | None] = set()
        self._spawned: set[str] = set()
        self._buffers: dict[str | None, set[str]] = {}
        self._reads_local_rank = False

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and self.names.qualified(node.value.func) in IN_MEMORY_FILES:
            buffers = self._buffers.setdefault(self.frame.key, set())
            buffers.update(name for t in node.targets if (name := dotted_name(t.target)) is not None)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if environment_key(node) in RANK_ENVIRONMENT:
            self._reads_local_rank = True

    def check_call(self, node: cst.Call) -> None:
        qualified = self.names.qualified(node.func)
        if qualified is None:
            if environment_key(node) in RANK_ENVIRONMENT:
                self._reads_local_rank = True
            return
        if qualified.startswith("torch.distributed.") or qualified in DDP_WRAPPERS:
            self._distributed_frames.add(self.frame.key)
        elif qualified in SPAWN:
            self._distributed_frames.add(self.frame.key)
            target = argument(node, 0, "fn")
            if target is not None and isinstance(target.value, cst.Name):
                self._spawned.add(target.value.value)
        elif qualified in TORCH_SAVE and not self.only_rank_zero:
            destination = argument(node, 1, "f")
            if destination is None or _mentions_rank(destination.value):
                return
            if dotted_name(destination.value) in self._buffers.get(self.frame.key, ()):
                return
            self._saves.append((node, self.frame.key))

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._saves or not (self._distributed_frames or self._reads_local_rank):
            return
        guarded = self.functions_only_rank_zero_calls()
        callers: dict[str, list] = {}
        for site in self.call_sites:
            callers.setdefault(site.callee, []).append(site)
        memo: dict[str | None, bool] = {}

        def every_rank_runs(key: str | None) -> bool:
            if key is None:
                return True
            if key in memo:
                return memo[key]
            memo[key] = False  # a cycle proves nothing
            if key in guarded:
                return False
            if key in callers and key in self.functions:
                result = any(not site.only_zero and every_rank_runs(site.caller) for site in callers[key])
            else:
                result = key in self._spawned or key in self._distributed_frames or key in self.rank_aware_frames
            memo[key] = result
            return result

        for node, frame in self._saves:
            if every_rank_runs(frame):
                self.report(node)
