from __future__ import annotations

import libcst as cst

from ddplint.core.diagnostics import Applicability, StepKind
from ddplint.semantic.edits import argument_for, module_alias
from ddplint.analyses.ranks import environment_key, last_name, strip_int
from ddplint.core.torch_api import CPU_COUNT, DATALOADER, DISTRIBUTED_MARKERS, GET_WORLD_SIZE, SCHED_GETAFFINITY
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule
from ddplint.prefilter.triggers import CallTrigger
from ddplint.semantic.model import Frame, dotted_name
from ddplint.semantic.walk import NodeMemo, children
from ddplint.prefilter.project_facts import ProjectFact

class WorkersPerRank(Rule):
    """
    `DataLoader(num_workers=os.cpu_count())` looks right in a single-process script. Under
    DDP every rank on the machine runs that line: with 8 ranks on a 64-core node that is 512
    worker processes fighting for 64 cores, each holding its own copy of the dataset and
    open file descriptors. Training slows down instead of speeding up, memory runs out, and
    the usual error is "Too many open files" — in the field (seed report 001) it led to
    `set_sharing_strategy("file_system")` and a job that never exited.

    Fires when a DataLoader's `num_workers` is given as `os.cpu_count()`,
    `multiprocessing.cpu_count()`, `psutil.cpu_count()` or `len(os.sched_getaffinity(0))`, or
    as such a count divided by a literal or less a literal (`cpu_count() // 2`, `cpu_count() -
    1` are still a share of the whole machine for every rank, and so is a share made whole by
    `int` or `round`: `int(os.cpu_count() / 1.5)`), also inside `max(...)`
    (`max(2, os.cpu_count() - 1)`), and several
    processes of one node are shown to build the loader: this file starts or joins the ranks
    (`init_process_group`, `mp.spawn`, DDP, a rank variable read, a launch point of
    Accelerate, a Fabric for several devices or a LightningModule), a script that imports it
    does, or it imports torch.distributed (the finding's chain names which). So too, where such processes build it, a count per
    rank that grows with the number of ranks: the world size (`dist.get_world_size()`,
    `WORLD_SIZE` from the environment, a variable or attribute called `world_size`) times a
    literal (`num_workers=args.world_size * 4`): each rank starts world size × 4 workers, so a
    node of 4 ranks starts 64, and the count grows with the square of the GPUs; the fix
    (unsafe) gives each rank the literal share (`num_workers=4`). A file of a
    distributed project that shows none of this is not reported: a `Fabric(devices=1)` script
    beside distributed examples runs one process. The count may also reach `num_workers` through a variable of the
    function (or module), or through an attribute of `self` that some method of the class
    sets, itself or from its own variable (`num_workers = multiprocessing.cpu_count() // 2`,
    then `self.num_workers = num_workers` in `__init__`, and
    `DataLoader(..., num_workers=self.num_workers)` in `train_dataloader`): then the count is
    reported where it is computed, once, without a fix (the variable may have other uses).
    Either way the finding is on the expression that computes the count (`os.cpu_count()`,
    `cpu_count() // 2`), not on `num_workers=`: that expression is the fault, it is there
    whether the count is passed by keyword, by position or through a variable, and it is
    what the fix rewrites.
    Not flagged: counts divided by something else (the ranks per node) or capped by
    anything (`min(8, ...)`, `min(n // world, ...)`, also a setting: `min(cfg.workers,
    os.cpu_count() - 1)` gives each rank at most the setting, and the machine is oversubscribed
    only when the setting times the ranks per node passes its cores, which the code does not
    show: with sd-scripts' default of 8 it does not), variables and attributes that are also
    recomputed from themselves (`n = min(n, 8)`, `n //= world`), literals, and single-process
    files. The fix divides by the number of ranks on this machine:
    `max(1, <count> // int(os.environ.get("LOCAL_WORLD_SIZE", 1)))`, inside the `max(...)` where
    there is one. torchrun sets
    `LOCAL_WORLD_SIZE`; where it is not set (mp.spawn) the count is unchanged. It is unsafe
    because it changes how many workers run (and so speed and memory).
    """

    code = "DDP018"
    # its other needles are rare: in a distributed project it runs where torch.distributed is not named
    opened_by = frozenset((ProjectFact.DISTRIBUTED,))
    needs_ranks = True
    name = "workers-per-rank"
    frameworks = (Framework.DDP, Framework.ACCELERATE, Framework.LIGHTNING)
    message = "num_workers=cpu_count() in every rank oversubscribes the machine; divide by the ranks per node (LOCAL_WORLD_SIZE)"
    world_message = (
        "num_workers grows with the world size in every rank: the node starts ranks per node × world size × {share} "
        "workers; give each rank its own share ({share})"
    )
    fix = Applicability.UNSAFE
    # `also`: the worker count it flags, in distributed code (met in any module of a
    # distributed project: ddplint.prefilter.needles.TextScan.matches).
    trigger = CallTrigger(DATALOADER, also=(("cpu_count", "sched_getaffinity", "world_size", "WORLD_SIZE"), DISTRIBUTED_MARKERS))

    flagged_examples = (
        Flagged(
            """
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, num_workers=int(os.cpu_count() / 1.5))
                                                     ^
            """,
            fixed="""
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, num_workers=max(1, int(os.cpu_count() / 1.5) // int(os.environ.get("LOCAL_WORLD_SIZE", 1))))
            """,
            messages=(
                "num_workers=cpu_count() in every rank oversubscribes the machine; divide by the ranks per node (LOCAL_WORLD_SIZE)",
            ),
        ),
        Flagged(
            """
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader

            loader = DataLoader(dataset, batch_size=32, num_workers=os.cpu_count())
                                                                    ^
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
                                                                                    ^
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
                            ^
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
        Flagged(
            # A count per rank that grows with the world size: 4 ranks of a node start 16 each.
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def build(dataset, args):
                dist.init_process_group("nccl")
                sampler = DistributedSampler(dataset)
                return DataLoader(dataset, sampler=sampler, num_workers=args.world_size * 4)
                                                                        ^
            """,
            fix_edits=(("args.world_size * 4)", "4)"),),
            messages=(
                "num_workers grows with the world size in every rank: the node starts ranks per node × world size × 4 "
                "workers; give each rank its own share (4)",
            ),
        ),
        Flagged(
            """
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader

            def loader(dataset):
                workers = os.cpu_count()
                          ^
                return DataLoader(dataset, num_workers=workers, shuffle=True)

            half = DataLoader(dataset, num_workers=os.cpu_count() // 2)
                                                   ^
            """,
            fixed="""
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader

            def loader(dataset):
                workers = os.cpu_count()
                return DataLoader(dataset, num_workers=workers, shuffle=True)

            half = DataLoader(dataset, num_workers=max(1, (os.cpu_count() // 2) // int(os.environ.get("LOCAL_WORLD_SIZE", 1))))
            """,
            messages=(
                (
                    "num_workers=cpu_count() in every rank oversubscribes the machine; divide by the ranks per node "
                    "(LOCAL_WORLD_SIZE) (this count becomes num_workers through `workers`)"
                ),
                (
                    "num_workers=cpu_count() in every rank oversubscribes the machine; divide by the ranks per node "
                    "(LOCAL_WORLD_SIZE)"
                ),
            ),
        ),
        Flagged(
            """
            import multiprocessing
            import lightning
            from torch.utils.data import DataLoader

            class Task(lightning.LightningDataModule):
                def __init__(self, dataset, num_workers=None):
                    super().__init__()
                    if num_workers is None:
                        num_workers = multiprocessing.cpu_count() // 2
                                      ^
                    self.num_workers = num_workers
                    self.dataset = dataset

                def train_dataloader(self):
                    return DataLoader(self.dataset, shuffle=True, num_workers=self.num_workers)

                def val_dataloader(self):
                    return DataLoader(self.dataset, num_workers=self.num_workers)

                def setup(self, stage):
                    # Lightning runs its hooks on every rank
                    self.shard = self.dataset.shard(self.trainer.global_rank)
            """,
            messages=(
                "num_workers=cpu_count() in every rank oversubscribes the machine; divide by the ranks per node "
                "(LOCAL_WORLD_SIZE) (this count becomes num_workers through `self.num_workers`)"
            ),
        ),
        Flagged(
            # All but one core, at least two: every rank still takes the whole machine.
            """
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader

            def build_loader(cfg, dataset):
                workers = max(2, os.cpu_count() - 1)
                                 ^
                return DataLoader(dataset, batch_size=cfg.batch, num_workers=workers)

            def build_eval_loader(args, dataset):
                return DataLoader(dataset, num_workers=max(1, os.cpu_count() - 1))
                                                              ^

            def main(cfg):
                dist.init_process_group("nccl")
            """,
            fixed="""
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader

            def build_loader(cfg, dataset):
                workers = max(2, os.cpu_count() - 1)
                return DataLoader(dataset, batch_size=cfg.batch, num_workers=workers)

            def build_eval_loader(args, dataset):
                return DataLoader(dataset, num_workers=max(1, max(1, (os.cpu_count() - 1) // int(os.environ.get("LOCAL_WORLD_SIZE", 1)))))

            def main(cfg):
                dist.init_process_group("nccl")
            """,
            messages=(
                (
                    "num_workers=cpu_count() in every rank oversubscribes the machine; divide by the ranks per node "
                    "(LOCAL_WORLD_SIZE) (this count becomes num_workers through `workers`)"
                ),
                "num_workers=cpu_count() in every rank oversubscribes the machine; divide by the ranks per node (LOCAL_WORLD_SIZE)",
            ),
        ),
    )
    clean_examples = (
        Clean(
            # a count per rank that does not grow with the ranks, or shrinks with them
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader

            world_size = dist.get_world_size()
            a = DataLoader(dataset, num_workers=args.workers * 2)
            b = DataLoader(dataset, num_workers=32 // world_size)
            """
        ),
        Clean(
            """
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            world = int(os.environ["LOCAL_WORLD_SIZE"])
            a = DataLoader(dataset, num_workers=os.cpu_count() // world)
            b = DataLoader(dataset, num_workers=min(8, os.cpu_count()))
            # capped by a setting: each rank gets at most cfg.workers
            d = DataLoader(dataset, num_workers=min(cfg.workers, os.cpu_count() - 1))
            c = DataLoader(dataset, num_workers=4)
            """
        ),
        Clean(
            """
            import os
            import torch.distributed as dist
            from torch.utils.data import DataLoader

            class Data:
                def __init__(self, world):
                    self.shared = os.cpu_count() // world
                    capped = os.cpu_count()
                    capped = min(capped, 8)
                    self.capped = capped
                    self.pool = os.cpu_count()

                def shrink(self):
                    self.pool //= int(os.environ["LOCAL_WORLD_SIZE"])

                def loaders(self, dataset):
                    return [DataLoader(dataset, num_workers=self.shared), DataLoader(dataset, num_workers=self.capped),
                            DataLoader(dataset, num_workers=self.pool)]
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

    def __init__(self, model) -> None:
        super().__init__(model)
        self._reported: set[int] = set()  # counts already reported (two loaders share one)
        # (the count, the num_workers value it reaches, whether held in a variable) per loader:
        # reported after the walk, when the file's evidence of who runs it is complete
        self._counts: list[tuple[cst.BaseExpression, cst.BaseExpression, bool]] = []
        self._grown: list[tuple[cst.BinaryOperation, cst.Integer]] = []  # `world_size * 4`, and its 4

    def visit_Call(self, node: cst.Call) -> None:
        if self.model.qualified(node.func) not in DATALOADER:
            return
        workers = argument_for(node, DATALOADER, "num_workers")
        if workers is None:
            return
        grown = self._world_count(workers.value)
        if grown is not None:
            self._grown.append(grown)
            return
        count = self._machine_count(workers.value)
        if count is not None:
            self._counts.append((count, workers.value, False))
            return
        held = self._held_count(workers.value)
        if held is not None and id(held) not in self._reported:
            self._reported.add(id(held))
            self._counts.append((held, workers.value, True))

    def leave_Module(self, original_node: cst.Module) -> None:
        runs = self.runs_link() if self._counts or self._grown else None
        if runs is None:
            return  # nothing shows that more than one process of a node builds these loaders
        for product, share in self._grown:
            harm = Link(StepKind.HARM, f"each of these processes starts world size × {share.value} loader workers: the node's count is its ranks × the world size × the share, the square of the ranks on one node", product)
            message = self.world_message.format(share=share.value)
            self.report(product, message, replace={product: share.with_changes(lpar=(), rpar=())}, chain=[runs, harm])
        for count, workers, held in self._counts:
            if held:
                through = dotted_name(workers)
                reaches = Link(StepKind.REACHES, f"the count becomes num_workers of this DataLoader through `{through}`", workers)
                self.report(count, f"{self.message} (this count becomes num_workers through `{through}`)", chain=self._chain(count, runs, reaches))
            else:
                self._report_with_fix(count, runs)

    def _report_with_fix(self, count: cst.BaseExpression, runs: Link) -> None:
        alias = module_alias(self.model, "os")
        if alias is None:
            self.report(count, chain=self._chain(count, runs))
            return
        os_name, imports = alias
        per_rank = cst.parse_expression(
            f'max(1, __count__ // int({os_name}.environ.get("LOCAL_WORLD_SIZE", 1)))'
        )
        if isinstance(count, cst.BinaryOperation):  # `cpu_count() // 2`
            written = count.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        else:
            written = count
        per_rank = per_rank.deep_replace(_placeholder(per_rank), written)  # type: ignore[assignment]
        self.report(count, replace={count: per_rank}, imports=imports, chain=self._chain(count, runs))

    def _chain(self, count: cst.BaseExpression, runs: Link, reaches: Link | None = None) -> list[Link]:
        """How the count harms: (how it reaches the loader,) which processes build the loader, and
        that each of them starts that many workers."""
        harm = Link(StepKind.HARM, "each of these processes starts this many loader workers: ranks per node × the machine's cores", count)
        return [*([reaches] if reaches is not None else []), runs, harm]

    def _world_count(self, expr: cst.BaseExpression) -> tuple[cst.BinaryOperation, cst.Integer] | None:
        """`args.world_size * 4`, `4 * dist.get_world_size()`, `int(os.environ["WORLD_SIZE"]) * 4`:
        a count per rank that grows with the number of ranks, and its literal factor."""
        if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply)):
            return None
        for share, world in ((expr.right, expr.left), (expr.left, expr.right)):
            if isinstance(share, cst.Integer) and int(share.evaluated_value) > 0 and self._is_world_size(world):
                return expr, share
        return None

    def _is_world_size(self, expr: cst.BaseExpression) -> bool:
        """The job's number of ranks: `dist.get_world_size()` (or a helper of that name),
        `WORLD_SIZE` from the environment, a variable or attribute called `world_size`."""
        expr = strip_int(expr)
        if isinstance(expr, cst.Call):
            return self.model.qualified(expr.func) in GET_WORLD_SIZE or not expr.args and last_name(expr) == "get_world_size" or environment_key(expr) == "WORLD_SIZE"
        if isinstance(expr, cst.Subscript):
            return environment_key(expr) == "WORLD_SIZE"
        return isinstance(expr, (cst.Name, cst.Attribute)) and last_name(expr) == "world_size"

    def _machine_count(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """The part of `expr` that counts the whole machine's cores, where `expr` gives every
        rank that many: the count (`os.cpu_count()`, `cpu_count() // 2`, `cpu_count() - 1`), a
        or a `max(...)` with one; None otherwise (a `min(...)` caps it)."""
        if self._is_cpu_count(expr) or self._rounded_share(expr):
            return expr
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "max"):
            return None
        if self.model.scope.lookup(expr.func.value)[0] or len(expr.args) < 2 or any(a.star or a.keyword for a in expr.args):
            return None
        operands = [arg.value for arg in expr.args]
        return next((found for operand in operands if (found := self._machine_count(operand)) is not None), None)

    def _rounded_share(self, expr: cst.BaseExpression) -> bool:
        """`int(os.cpu_count() / 1.5)`, `round(cpu_count() * 0.75)`: a share of the machine's
        cores, made a whole number by the builtin `int` or `round`."""
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("int", "round")):
            return False
        if self.model.scope.lookup(expr.func.value)[0] or not expr.args or expr.args[0].star or expr.args[0].keyword:
            return False
        share = expr.args[0].value
        return (
            isinstance(share, cst.BinaryOperation)
            and isinstance(share.operator, (cst.Divide, cst.Multiply, cst.FloorDivide, cst.Subtract))
            and isinstance(share.right, (cst.Integer, cst.Float))
            and self._is_cpu_count(share.left)
        )

    def _is_cpu_count(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.FloorDivide, cst.Subtract)) and isinstance(expr.right, cst.Integer):
            expr = expr.left  # a share of the machine, or all of it but a few, is still per machine
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
            and self.model.qualified(expr.args[0].value.func) in SCHED_GETAFFINITY
        )

    def _held_count(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """The count a variable of this function (or module) or an attribute of `self` holds:
        the first count assigned to it, where no assignment derives it from itself."""
        frame: Frame | None = self.model.frame
        if isinstance(expr, cst.Name):
            owner = self.model.binding_scope(expr.value)
            if owner is None or self.model.qualified(expr) is not None:
                return None
            while frame is not None and frame.scope is not owner:
                frame = frame.parent
            if frame is None or frame.is_class:
                return None
            return self._first_count(_assigned(frame.node, expr.value))
        name = dotted_name(expr)
        head, _, attribute = (name or "").partition(".")
        if frame is None or frame.self_class is None or head != frame.self_name or not attribute or "." in attribute:
            return None
        counts = []
        for method in frame.self_class.body.body:  # every method that sets `self.<attribute>`
            if not isinstance(method, cst.FunctionDef):
                continue
            params = method.params.posonly_params or method.params.params
            if not params:
                continue
            values = _assigned(method, f"{params[0].name.value}.{attribute}")
            if values is None:
                return None
            for value in values:  # `self.workers = workers`: the method's own variable
                counts.append(self._first_count(_assigned(method, value.value)) if isinstance(value, cst.Name) else value)
        return self._first_count(counts)

    def _first_count(self, values: list[cst.BaseExpression | None] | None) -> cst.BaseExpression | None:
        counts = (self._machine_count(value) for value in values or () if value is not None)
        return next((count for count in counts if count is not None), None)


def _assigned(body: cst.CSTNode, target: str) -> list[cst.BaseExpression] | None:
    """The values `body` (a function or the module) assigns to `target`, a name or
    `self.attribute`, outside nested definitions, in source order; None where one is derived
    from it (`n = min(n, 8)`, `n //= world`): then it is no longer the count."""
    values = _assigned_under(body.body if isinstance(body, cst.FunctionDef) else body, target)
    return None if values is None or any(_mentions(value, target) for value in values) else list(values)


# _assigned_under's answers for statements, kept across lints: a 1,000-line training function
# is read again for each loader's count on every keystroke, and most of its statements are
# the same objects as at the last lint
_under_statement = NodeMemo()


def _assigned_under(node: cst.CSTNode, target: str) -> tuple[cst.BaseExpression, ...] | None:
    """What the nodes under `node` assign to `target` (as `_assigned`), before the check that
    none derives it from itself; None where one augments it."""
    values: tuple[cst.BaseExpression, ...] = ()
    for child in children(node):
        # an expression holds no assignment statement (a walrus is not read as one either)
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.BaseExpression)):
            continue
        if isinstance(child, cst.AugAssign) and dotted_name(child.target) == target:
            return None
        if isinstance(child, cst.Assign) and any(dotted_name(t.target) == target for t in child.targets):
            values += (child.value,)
        elif isinstance(child, cst.AnnAssign) and child.value is not None and dotted_name(child.target) == target:
            values += (child.value,)
        if isinstance(child, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            continue
        if isinstance(child, cst.BaseStatement):
            found = _under_statement.get(child, target, lambda: _assigned_under(child, target))  # noqa: B023
        else:
            found = _assigned_under(child, target)
        if found is None:
            return None
        values += found
    return values


def _mentions(node: cst.CSTNode, target: str) -> bool:
    if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) == target:
        return True
    if isinstance(node, cst.Attribute):  # `cfg.workers` does not mention `workers`
        return _mentions(node.value, target)
    return any(_mentions(child, target) for child in children(node))


def _placeholder(expr: cst.BaseExpression) -> cst.Name:
    """The `__count__` name inside the parsed template."""
    found = cst.ensure_type(expr, cst.Call).args[1].value
    return cst.ensure_type(cst.ensure_type(found, cst.BinaryOperation).left, cst.Name)
