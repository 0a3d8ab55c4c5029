from __future__ import annotations

import libcst as cst

from ddplint.diagnostics import Applicability
from ddplint.analyses.distributed_context import DISTRIBUTED_MARKERS
from ddplint.edits import argument, module_alias
from ddplint.torch_api import DATALOADER
from ddplint.rule import Clean, Flagged, Rule
from ddplint.prefilter.screens import Calls

CPU_COUNT = frozenset({"os.cpu_count", "os.process_cpu_count", "multiprocessing.cpu_count", "psutil.cpu_count"})
SCHED_GETAFFINITY = "os.sched_getaffinity"
NUM_WORKERS_POSITION = 5  # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers)


class WorkersPerRank(Rule):
    """
    `DataLoader(num_workers=os.cpu_count())` looks right in a single-process script. Under
    DDP every rank on the machine runs that line: with 8 ranks on a 64-core node that is 512
    worker processes fighting for 64 cores, each holding its own copy of the dataset and
    open file descriptors. Training slows down instead of speeding up, memory runs out, and
    the usual error is "Too many open files" — in the field (seed report 001) it led to
    `set_sharing_strategy("file_system")` and a job that never exited.

    Fires when a DataLoader's `num_workers` is given as `os.cpu_count()`,
    `multiprocessing.cpu_count()`, `psutil.cpu_count()` or `len(os.sched_getaffinity(0))`, in a
    file that uses torch.distributed (it mentions `torch.distributed`, `init_process_group`,
    DistributedDataParallel, DistributedSampler or LOCAL_RANK). Not flagged: counts already
    divided or capped (`min(8, ...)`), literals, and single-process files. The fix divides by
    the number of ranks on this machine:
    `max(1, <count> // int(os.environ.get("LOCAL_WORLD_SIZE", 1)))`. torchrun sets
    `LOCAL_WORLD_SIZE`; where it is not set (mp.spawn) the count is unchanged. It is unsafe
    because it changes how many workers run (and so speed and memory).
    """

    code = "DDP018"
    name = "workers-per-rank"
    message = "num_workers=cpu_count() in every rank oversubscribes the machine; divide by the ranks per node (LOCAL_WORLD_SIZE)"
    fix = Applicability.UNSAFE
    needles = ("DataLoader", ("cpu_count", "sched_getaffinity"), DISTRIBUTED_MARKERS)
    screen = Calls(targets=tuple(sorted(DATALOADER)))

    flagged_examples = (
        Flagged(
            """
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader

            loader = DataLoader(dataset, batch_size=32, num_workers=os.cpu_count())
            """,
            fixed="""
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader

            loader = DataLoader(dataset, batch_size=32, num_workers=max(1, os.cpu_count() // int(os.environ.get("LOCAL_WORLD_SIZE", 1))))
            """,
        ),
        Flagged(
            """
            import multiprocessing
            import torch
            from torch.nn.parallel import DistributedDataParallel

            def loaders(train_set):
                return torch.utils.data.DataLoader(train_set, 16, True, None, None, multiprocessing.cpu_count())
            """,
            fixed="""
            import multiprocessing
            import os
            import torch
            from torch.nn.parallel import DistributedDataParallel

            def loaders(train_set):
                return torch.utils.data.DataLoader(train_set, 16, True, None, None, max(1, multiprocessing.cpu_count() // int(os.environ.get("LOCAL_WORLD_SIZE", 1))))
            """,
        ),
        Flagged(
            """
            import os as system
            from torch.utils.data import DataLoader, DistributedSampler

            loader = DataLoader(
                dataset,
                sampler=DistributedSampler(dataset),
                num_workers=len(system.sched_getaffinity(0)),
            )
            """,
            fixed="""
            import os as system
            from torch.utils.data import DataLoader, DistributedSampler

            loader = DataLoader(
                dataset,
                sampler=DistributedSampler(dataset),
                num_workers=max(1, len(system.sched_getaffinity(0)) // int(system.environ.get("LOCAL_WORLD_SIZE", 1))),
            )
            """,
        ),
    )
    clean_examples = (
        Clean(
            """
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            world = int(os.environ["LOCAL_WORLD_SIZE"])
            a = DataLoader(dataset, num_workers=os.cpu_count() // world)
            b = DataLoader(dataset, num_workers=min(8, os.cpu_count()))
            c = DataLoader(dataset, num_workers=4)
            """
        ),
        Clean(
            """
            # one process: all cores for its workers is fine
            import os
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, num_workers=os.cpu_count())
            """
        ),
        Clean(
            """
            import os
            import torch.distributed as dist
            from mylib import DataLoader
            pool_size = os.cpu_count()
            loader = DataLoader(dataset, num_workers=os.cpu_count())
            """
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.model.qualified(node.func) not in DATALOADER:
            return
        workers = argument(node, NUM_WORKERS_POSITION, "num_workers")
        if workers is None or not self._is_cpu_count(workers.value):
            return
        alias = module_alias(self.model, "os")
        if alias is None:
            self.report(workers)
            return
        os_name, imports = alias
        per_rank = cst.parse_expression(
            f'max(1, __count__ // int({os_name}.environ.get("LOCAL_WORLD_SIZE", 1)))'
        )
        per_rank = per_rank.deep_replace(_placeholder(per_rank), workers.value)  # type: ignore[assignment]
        self.report(workers, replace={workers.value: per_rank}, imports=imports)

    def _is_cpu_count(self, expr: cst.BaseExpression) -> bool:
        if not isinstance(expr, cst.Call):
            return False
        if self.model.qualified(expr.func) in CPU_COUNT:
            return True
        return (
            isinstance(expr.func, cst.Name)
            and expr.func.value == "len"
            and not self.model.scope.lookup("len")[0]
            and len(expr.args) == 1
            and isinstance(expr.args[0].value, cst.Call)
            and self.model.qualified(expr.args[0].value.func) == SCHED_GETAFFINITY
        )


def _placeholder(expr: cst.BaseExpression) -> cst.Name:
    """The `__count__` name inside the parsed template."""
    found = cst.ensure_type(expr, cst.Call).args[1].value
    return cst.ensure_type(cst.ensure_type(found, cst.BinaryOperation).left, cst.Name)
