from __future__ import annotations

import ast

from dataclasses import dataclass

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.semantic.edits import argument_for, has_star_arguments, module_alias, with_keyword_argument
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.core.torch_api import (
    ACCELERATE_DEVICE_SPECIFIC, DISTRIBUTED_MARKERS, MANUAL_SEED, OTHER_GENERATORS, RANDOM_SPLIT, TORCH, TORCH_SEEDS,
)
from ddplint.model.context import holds_rank
from ddplint.model.records import Place
from ddplint.prefilter.screens import dotted, walk
from ddplint.semantic.walk import children
from ddplint.prefilter.project_facts import ProjectFact

# Seeding helpers of other libraries that seed torch's default generator too.
SEEDING_HELPERS = ("seed_everything", "set_seed")


def mentions_rank(node: cst.CSTNode) -> bool:
    """Whether an expression reads a name or attribute called like a rank (`seed + rank`,
    `args.local_rank`, `dist.get_rank()`)."""
    if isinstance(node, cst.Name) and "rank" in node.value.lower():
        return True
    return any(mentions_rank(child) for child in children(node))


@dataclass
class _Event:
    node: cst.Call
    function: cst.FunctionDef | None
    order: int
    rank_dependent: bool = False
    key: str | None = None  # the function's key in the program model ("Class.method")


class RandomSplitWithoutGenerator(Rule):
    """
    `torch.utils.data.random_split` draws from torch's default random generator. Under DDP
    every rank runs the same script, and unless that generator was seeded with the same value
    on every rank, each rank computes its own train/validation split: samples one rank
    trains on are another rank's validation data, so validation is leaked and its numbers are
    wrong. Seeding with the rank (`torch.manual_seed(seed + rank)`, common for different
    augmentations per rank) has the same effect.

    Fires when a file that uses torch.distributed (it mentions `torch.distributed`,
    `init_process_group`, DistributedDataParallel, DistributedSampler, LOCAL_RANK,
    Lightning's `global_rank` or Accelerate's `Accelerator(`) calls
    `random_split` (any import form) without a generator and without `*args`/`**kwargs`, and
    no rank-independent seed comes before it (see below).

    Pass a seeded generator: the fix adds `generator=torch.Generator().manual_seed(0)` (with
    this file's torch alias; `import torch` is added if torch is not imported), which makes
    the split identical on every rank and across runs. It is safe: it only fixes which
    samples land in which part. Not flagged: calls that pass a generator (third positional
    argument or `generator=`), and splits preceded by a rank-independent `torch.manual_seed`
    (or `seed_everything`/`set_seed`) call earlier in the same function, at module level, or
    in another function of the file (which may be the caller); the nearest seed before the
    split in the same function decides. A split with no seed before it in its own function is
    also spared when every call of that function in the project comes after a seed that names
    no rank in its caller, or in that caller's callers (`train.py` calls
    `torch.manual_seed(args.seed)`, then a `data.py` helper that splits). Only files that use
    torch.distributed are checked.
    """

    code = "DDP010"
    # its other needle is rare: in a distributed project it runs where torch.distributed is not named
    opened_by = frozenset((ProjectFact.DISTRIBUTED,))
    needs_ranks = True
    name = "random-split-without-generator"
    frameworks = (Framework.DDP, Framework.ACCELERATE, Framework.LIGHTNING)
    message = (
        "random_split without a seeded generator splits differently on every rank; "
        "pass generator=torch.Generator().manual_seed(0)"
    )
    fix = Applicability.SAFE
    # `also`: only distributed code splits differently per rank (met in any module of a
    # distributed project: ddplint.prefilter.needles.TextScan.matches).
    trigger = CallTrigger(RANDOM_SPLIT, also=(DISTRIBUTED_MARKERS,))

    flagged_examples = (
        Flagged(
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import random_split

            dist.init_process_group("nccl")
            train_set, val_set = random_split(dataset, [0.9, 0.1])
                                 ^
            """,
            fixed="""
            import torch
            import torch.distributed as dist
            from torch.utils.data import random_split

            dist.init_process_group("nccl")
            train_set, val_set = random_split(dataset, [0.9, 0.1], generator=torch.Generator().manual_seed(0))
            """,
        ),
        Flagged(
            """
            import torch as th
            import torch.utils.data as data

            def build(dataset):
                sampler_cls = data.DistributedSampler
                return data.random_split(dataset, [800, 200])
                       ^
            """,
            fixed="""
            import torch as th
            import torch.utils.data as data

            def build(dataset):
                sampler_cls = data.DistributedSampler
                return data.random_split(dataset, [800, 200], generator=th.Generator().manual_seed(0))
            """,
        ),
        Flagged(
            """
            from torch.utils.data.dataset import random_split

            local_rank = int(os.environ["LOCAL_RANK"])
            parts = random_split(dataset, lengths)
                    ^
            """,
            fixed="""
            import torch
            from torch.utils.data.dataset import random_split

            local_rank = int(os.environ["LOCAL_RANK"])
            parts = random_split(dataset, lengths, generator=torch.Generator().manual_seed(0))
            """,
        ),
        Flagged(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel

            def main(args, rank):
                torch.manual_seed(args.seed + rank)
                train, val = torch.utils.data.random_split(dataset, [0.8, 0.2])
                             ^
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel

            def main(args, rank):
                torch.manual_seed(args.seed + rank)
                train, val = torch.utils.data.random_split(dataset, [0.8, 0.2], generator=torch.Generator().manual_seed(0))
            """,
        ),
    )
    clean_examples = (
        Clean(
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import random_split
            g = torch.Generator().manual_seed(42)
            a, b = random_split(dataset, [0.9, 0.1], generator=g)
            c, d = random_split(dataset, [0.9, 0.1], g)
            e, f = random_split(dataset, [0.9, 0.1], **options)
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import random_split

            def main(args):
                torch.manual_seed(args.seed)
                dist.init_process_group("nccl")
                train, val = random_split(dataset, [0.9, 0.1])
            """
        ),
        Clean(
            """
            import torch
            from torch.utils.data import random_split
            import torch.distributed

            torch.manual_seed(0)

            def build():
                return random_split(dataset, [0.9, 0.1])
            """
        ),
        Clean(
            """
            from torch.utils.data import random_split
            from pytorch_lightning import seed_everything
            from torch.utils.data.distributed import DistributedSampler

            def run(cfg):
                seed_everything(cfg.seed)
                return random_split(dataset, [0.9, 0.1])
            """
        ),
        Clean(
            """
            # a single-process script: every run is one process, so one split
            from torch.utils.data import random_split
            train, val = random_split(dataset, [0.9, 0.1])
            """
        ),
        Clean(
            """
            import torch.distributed as dist
            from sklearn.model_selection import train_test_split as random_split
            train, val = random_split(dataset, test_size=0.1)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._splits: list[_Event] = []
        self._seeds: list[_Event] = []
        self._order = 0
        self._torch_alias: dict[int, tuple[str, tuple[str, ...]] | None] = {}

    def visit_Call(self, node: cst.Call) -> None:
        self._order += 1
        frame = self.model.function
        function = None if frame is None else frame.function
        qualified = self.model.qualified(node.func)
        if qualified in RANDOM_SPLIT:
            if argument_for(node, RANDOM_SPLIT, "generator") is None and not has_star_arguments(node):
                self._splits.append(_Event(node, function, self._order, key=self.model.frame.key))
                # The torch alias must be looked up in the call's own scope, current only now.
                self._torch_alias[id(node)] = module_alias(self.model, "torch")
        elif self._is_seed(node.func, qualified):
            self._seeds.append(_Event(node, function, self._order, mentions_rank(node)))

    @staticmethod
    def _is_seed(func: cst.BaseExpression, qualified: str | None) -> bool:
        if qualified in MANUAL_SEED:
            return True
        if qualified in TORCH or qualified is not None and qualified.startswith(OTHER_GENERATORS):
            return False  # torch seeds its CPU generator through MANUAL_SEED only (torch.cuda's seeds GPUs)
        last = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        if qualified is not None:
            return last in SEEDING_HELPERS
        return isinstance(last, str) and "seed" in last.lower()

    def leave_Module(self, original_node: cst.Module) -> None:
        for split in self._splits:
            if self._seeded(split) or self._seeded_by_callers(split):
                continue
            alias = self._torch_alias[id(split.node)]
            if alias is None:
                self.report(split.node)
                continue
            torch_name, imports = alias
            generator = cst.parse_expression(f"{torch_name}.Generator().manual_seed(0)")
            fixed = with_keyword_argument(split.node, "generator", generator)
            self.report(split.node, replace={split.node: fixed}, imports=imports)

    def _seeded_by_callers(self, split: _Event) -> bool:
        """No seed before the split in its own function, and every call of that function comes
        after a seed that names no rank in its caller (`train.py` seeds, then builds the data
        through `datasets.get_datasets`): every rank splits alike."""
        view = self.model.project
        if view is None or split.key is None or any(seed.function is split.function and seed.order < split.order for seed in self._seeds):
            return False
        return seeded_before_calls(view, split.key) is not None

    def _seeded(self, split: _Event) -> bool:
        before_in_same_body = [
            seed for seed in self._seeds if seed.function is split.function and seed.order < split.order
        ]
        if before_in_same_body:
            return not before_in_same_body[-1].rank_dependent
        return any(
            not seed.rank_dependent and seed.function is not split.function for seed in self._seeds
        )


def seeded_before_calls(view, key: str, depth: int = 0) -> Place | None:
    """Where torch's default generator is seeded alike on every rank before each call of
    function `key` of the view's module: in every caller, the last seed of it before the call
    (`torch.manual_seed(args.seed)`, `seed_everything(0)`, a project `set_seed(42)`) names no
    rank, or the calling function is itself so called (three calls up). None when a call is
    not so preceded, or no call of it is known."""
    program, context = view.program, view.context
    return _seeded_before(program, context, view.module, key, 0)


def _seeded_before(program, context, module: str, key: str, depth: int) -> Place | None:
    sites = context.call_sites(module, key)
    if not sites or depth > 2:
        return None
    found = None
    for site in sites:
        place = _seed_before(program, site.caller, site.caller_key, site.line)
        if place is None and site.caller_key:
            place = _seeded_before(program, context, site.caller, site.caller_key, depth + 1)
        if place is None:
            return None
        found = found or place
    return found


def _seed_before(program, module: str, key: str | None, line: int) -> Place | None:
    """Where function `key` of `module` (None: its module code) last seeds torch's default
    generator before `line`, when that seed names no rank (`torch.manual_seed(args.seed)`, not
    `seed + rank`, nor Accelerate's `device_specific=True`); None otherwise."""
    summary = program.summary(module)
    record = summary.context.get(key or "") if summary is not None else None
    seeds = [
        call for call in (record.calls if record is not None else ())
        if call.line < line and _seeds_torch(program.qualify(module, call.callee) or call.callee)
    ]
    if not seeds:
        return None
    last = max(seeds, key=lambda call: call.line)
    tree = program.tree(module)
    calls = [
        node for node in walk(tree) if isinstance(node, ast.Call) and node.lineno == last.line and dotted(node.func) == last.callee
    ] if tree is not None else []
    if len(calls) != 1 or _names_rank(calls[0], tree):
        return None
    return program.place(module, last.line)


def _seeds_torch(name: str) -> bool:
    """A call that seeds torch's default generator: torch's, Lightning's, Accelerate's or
    transformers' seed, or a helper named for seeding that is not numpy's, random's or another
    framework's."""
    if name in TORCH_SEEDS:
        return True
    last = name.rpartition(".")[2].lower()
    return "seed" in last and not name.startswith(OTHER_GENERATORS)


def _names_rank(call: ast.Call, tree: ast.Module) -> bool:
    """Whether a seed call's arguments may hold the rank in the function around it
    (`holds_rank`), or it asks for a seed per device (`device_specific=`)."""
    if any(keyword.arg == ACCELERATE_DEVICE_SPECIFIC for keyword in call.keywords):
        return True
    return any(holds_rank(argument, tree, call.lineno) for argument in (*call.args, *(keyword.value for keyword in call.keywords)))
