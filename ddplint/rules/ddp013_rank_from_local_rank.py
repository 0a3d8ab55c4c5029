from __future__ import annotations

import libcst as cst

from ddplint.diagnostics import Applicability
from ddplint.analyses.ranks import environment_key, last_name, strip_int
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rule import Clean, Flagged, Rule
from ddplint.torch_api import INIT_PROCESS_GROUP, argument

_GLOBAL_RANK = 'int(os.environ["RANK"])'


class RankFromLocalRank(Rule):
    """
    `init_process_group(rank=...)` wants the global rank: 0 .. world_size-1 across all nodes.
    `LOCAL_RANK` (`args.local_rank`, `int(os.environ["LOCAL_RANK"])`) numbers the processes of
    one node only. On one node the two agree, which is why the mistake survives testing; on
    two nodes both node's first processes claim rank 0, both second ones rank 1, and the
    rendezvous either fails ("Address already in use", duplicate rank errors) or waits
    forever for ranks that never join (the field report in seed 001 passes
    `rank=args.local_rank`).

    Flagged: `init_process_group` (any import form) whose `rank` is LOCAL_RANK, directly or
    through a variable of the same function assigned from it.
    Fix (unsafe): `rank=int(os.environ["RANK"])`, the global rank that torchrun and
    `torch.distributed.launch` set. Unsafe because launchers that do not set `RANK`
    (`mp.spawn`, a hand-written launcher) need `node_rank * gpus_per_node + local_rank`
    instead. With `init_method="env://"` you may also drop `rank=` altogether.
    """

    code = "DDP013"
    name = "rank-from-local-rank"
    message = (
        "init_process_group(rank=...) gets LOCAL_RANK, which repeats on every node; "
        'pass the global rank: rank=int(os.environ["RANK"])'
    )
    fix = Applicability.UNSAFE
    trigger = CallTrigger(INIT_PROCESS_GROUP, also=(("local_rank", "LOCAL_RANK"),))

    flagged_examples = (
        Flagged(
            """
            import torch.distributed as dist

            def main(args):
                dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size, rank=args.local_rank)
            """,
            fixed="""
            import os

            import torch.distributed as dist

            def main(args):
                dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size, rank=int(os.environ["RANK"]))
            """,
        ),
        Flagged(
            """
            import os
            import torch

            local_rank = int(os.environ["LOCAL_RANK"])
            torch.distributed.init_process_group("nccl", rank=local_rank, world_size=int(os.environ["WORLD_SIZE"]))
            """,
            fixed="""
            import os
            import torch

            local_rank = int(os.environ["LOCAL_RANK"])
            torch.distributed.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
            """,
        ),
        Flagged(
            """
            import os
            from torch.distributed import init_process_group

            def setup():
                gpu = int(os.environ.get("LOCAL_RANK", 0))
                init_process_group(
                    backend="nccl",
                    rank=gpu,
                )
            """,
            fixed="""
            import os
            from torch.distributed import init_process_group

            def setup():
                gpu = int(os.environ.get("LOCAL_RANK", 0))
                init_process_group(
                    backend="nccl",
                    rank=int(os.environ["RANK"]),
                )
            """,
        ),
    )
    clean_examples = (
        Clean(
            """
            import os
            import torch.distributed as dist

            local_rank = int(os.environ["LOCAL_RANK"])
            dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
            torch.cuda.set_device(local_rank)
            """
        ),
        Clean(
            """
            import torch.distributed as dist

            def worker(local_rank, args):
                rank = args.node_rank * args.gpus + local_rank
                dist.init_process_group("nccl", rank=rank, world_size=args.world_size)
                dist.init_process_group(backend="nccl", init_method="env://")
            """
        ),
        Clean(
            """
            def init_process_group(rank):
                pass

            init_process_group(rank=args.local_rank)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        # Per function (by id of its node; None: module level), names holding the local rank.
        self._local_rank_names: dict[int | None, set[str]] = {}

    @property
    def _names_here(self) -> set[str]:
        frame = self.model.function
        return self._local_rank_names.setdefault(None if frame is None else id(frame.node), set())

    def visit_Assign(self, node: cst.Assign) -> None:
        local = self._is_local_rank(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                (set.add if local else set.discard)(self._names_here, target.target.value)

    def _is_local_rank(self, expr: cst.BaseExpression) -> bool:
        expr = strip_int(expr)
        if isinstance(expr, (cst.Subscript, cst.Call)):
            return environment_key(expr) == "LOCAL_RANK"
        if isinstance(expr, cst.Name) and expr.value in self._names_here:
            return True
        return isinstance(expr, (cst.Name, cst.Attribute)) and (last_name(expr) or "").lower() == "local_rank"

    def check(self, node: cst.Call) -> None:
        rank = argument(node, INIT_PROCESS_GROUP, "rank")
        if rank is None or not self._is_local_rank(rank.value):
            return
        fixed = rank.with_changes(value=cst.parse_expression(_GLOBAL_RANK))
        self.report(node, replace={rank: fixed}, imports=("import os",))
