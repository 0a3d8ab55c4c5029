from __future__ import annotations

import ast
import os
import re

from dataclasses import dataclass

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.semantic.edits import argument_for, has_star_arguments, module_alias, with_keyword_argument
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.core.torch_api import (
    ACCELERATE_DEVICE_SPECIFIC, API, DATASETS, DATASETS_SPLIT_METHOD, DISTRIBUTED_MARKERS, GENERATOR_LIBRARIES, RANDOM_SPLIT,
    SKLEARN_SPLIT, generators_seeded,
)
from ddplint.model.context import holds_rank
from ddplint.model.records import Place
from ddplint.prefilter.screens import dotted, walk
from ddplint.semantic.walk import children
from ddplint.prefilter.project_facts import ProjectFact

# Seeding helpers of other libraries that seed torch's and numpy's global generators too.
SEEDING_HELPERS = ("seed_everything", "set_seed")


@dataclass(frozen=True)
class SplitKind:
    """A splitting call that draws from a global generator unless one of its parameters fixes
    the draw, and the keyword the fix passes."""

    generator: str  # the global generator it draws from (a key of GENERATOR_LIBRARIES)
    seeding_parameters: tuple[str, ...]
    fix_keyword: str
    message: str


TORCH_SPLIT = SplitKind(
    "torch", ("generator",), "generator",
    "random_split without a seeded generator splits differently on every rank; "
    "pass generator=torch.Generator().manual_seed(0)",
)
SKLEARN_KIND = SplitKind(
    "numpy", ("random_state",), "random_state",
    "train_test_split without random_state draws numpy's global generator, which is not seeded alike on every "
    "rank, so each rank splits differently; pass random_state=0",
)
DATASETS_KIND = SplitKind(
    "numpy", ("seed", "generator"), "seed",
    "Dataset.train_test_split without seed draws from numpy's global state, which is not seeded alike on every "
    "rank, so each rank splits differently; pass seed=0",
)


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
    kind: SplitKind | None = None  # a split's
    generators: frozenset[str] = frozenset()  # what a seed seeds


class RandomSplitWithoutGenerator(Rule):
    """
    `torch.utils.data.random_split` draws from torch's default random generator. Under DDP
    every rank runs the same script, and unless that generator was seeded with the same value
    on every rank, each rank computes its own train/validation split: samples one rank
    trains on are another rank's validation data, so validation is leaked and its numbers are
    wrong. Seeding with the rank (`torch.manual_seed(seed + rank)`, common for different
    augmentations per rank) has the same effect. scikit-learn's `train_test_split` without
    `random_state`, and Hugging Face datasets' `Dataset.train_test_split` without `seed` or
    `generator`, do the same with numpy's global generator.

    Fires when a file that uses torch.distributed (it mentions `torch.distributed`,
    `init_process_group`, DistributedDataParallel, DistributedSampler, LOCAL_RANK,
    Lightning's `global_rank` or Accelerate's `Accelerator(`), or any module of a project
    that does, calls `random_split` (any import form) without a generator, scikit-learn's
    `train_test_split` without `random_state`, or `.train_test_split(...)` without `seed` or
    `generator` in a file that imports `datasets`; none of them with `*args`/`**kwargs` or
    `shuffle=False`, and with no rank-independent seed of the generator it draws from before it
    (see below).

    Pass a seed: the fix adds `generator=torch.Generator().manual_seed(0)` to `random_split`
    (with this file's torch alias; `import torch` is added if torch is not imported),
    `random_state=0` to scikit-learn's split and `seed=0` to the datasets method, which makes
    the split identical on every rank and across runs. It is safe: it only fixes which
    samples land in which part. Not flagged: splits preceded by a rank-independent seed of
    their generator (`torch.manual_seed` for `random_split`, `numpy.random.seed` for the
    other two; `seed_everything`/`set_seed` and a function of the file named for seeding for
    all) earlier in the same function, at module level, or in another function of the file
    (which may be the caller); the nearest seed before the split in the same function
    decides. A split with no seed before it in its own function is also spared when every
    call of that function in the project comes after such a seed that names no rank in its
    caller, or in that caller's callers (`train.py` calls `torch.manual_seed(args.seed)`, then
    a `data.py` helper that splits); where a module that may call it is unread (past the
    model's bounds, or unparsable), the calls read decide, and with none read it is flagged.
    A split that only one process runs is not flagged, nor one in a file of a training
    project that nothing shows ranks run (no process group, launch or script that starts them
    reaches it); a package's users may run its code in their ranks (the package: what its
    metadata ships, `src/` alone where `package_dir={"": "src"}` says so).
    """

    code = "DDP010"
    # its other needle is rare: in a distributed project it runs where torch.distributed is not named
    opened_by = frozenset((ProjectFact.DISTRIBUTED,))
    needs_ranks = True
    name = "random-split-without-generator"
    frameworks = (Framework.DDP, Framework.ACCELERATE, Framework.LIGHTNING)
    message = TORCH_SPLIT.message
    fix = Applicability.SAFE
    # `also`: only distributed code splits differently per rank (met in any module of a
    # distributed project: ddplint.prefilter.needles.TextScan.matches).
    trigger = CallTrigger(RANDOM_SPLIT | SKLEARN_SPLIT, methods=(DATASETS_SPLIT_METHOD,), also=(DISTRIBUTED_MARKERS,))

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
            import torch.distributed
            import torch.utils.data as data

            def build(dataset):
                sampler_cls = data.DistributedSampler
                return data.random_split(dataset, [800, 200])
                       ^
            """,
            fixed="""
            import torch as th
            import torch.distributed
            import torch.utils.data as data

            def build(dataset):
                sampler_cls = data.DistributedSampler
                return data.random_split(dataset, [800, 200], generator=torch.Generator().manual_seed(0))
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
        Flagged(
            """
            import numpy as np
            import torch
            import torch.distributed as dist
            from sklearn.model_selection import train_test_split

            def main(args):
                dist.init_process_group("nccl")
                torch.manual_seed(args.seed)
                np.random.seed(args.seed + dist.get_rank())
                x_train, x_val, y_train, y_val = train_test_split(features, labels, test_size=0.2, stratify=labels)
                                                 ^
            """,
            fixed="""
            import numpy as np
            import torch
            import torch.distributed as dist
            from sklearn.model_selection import train_test_split

            def main(args):
                dist.init_process_group("nccl")
                torch.manual_seed(args.seed)
                np.random.seed(args.seed + dist.get_rank())
                x_train, x_val, y_train, y_val = train_test_split(features, labels, test_size=0.2, stratify=labels, random_state=0)
            """,
            messages=SKLEARN_KIND.message,
        ),
        Flagged(
            """
            import torch
            from accelerate import Accelerator
            from datasets import load_dataset

            def main(args):
                accelerator = Accelerator()
                torch.manual_seed(args.seed)
                dataset = load_dataset(args.data, split="train").train_test_split(test_size=100)
                          ^
            """,
            fixed="""
            import torch
            from accelerate import Accelerator
            from datasets import load_dataset

            def main(args):
                accelerator = Accelerator()
                torch.manual_seed(args.seed)
                dataset = load_dataset(args.data, split="train").train_test_split(test_size=100, seed=0)
            """,
            messages=DATASETS_KIND.message,
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
            import numpy as np
            import torch.distributed as dist
            from sklearn.model_selection import train_test_split as random_split

            def main(args):
                np.random.seed(args.seed)
                dist.init_process_group("nccl")
                train, val = random_split(dataset, test_size=0.1)
                fixed, rest = random_split(dataset, test_size=0.1, random_state=args.seed)
                ordered, tail = random_split(dataset, test_size=0.1, shuffle=False)
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist
            from datasets import load_dataset

            def main(args):
                torch.manual_seed(args.seed)  # not numpy's generator, but the split passes a seed
                dist.init_process_group("nccl")
                parts = load_dataset("json", data_files=args.data)["train"].train_test_split(test_size=0.1, seed=args.seed)
            """
        ),
        Clean(
            """
            # a script that names torch.distributed but starts no ranks, and nothing launches: one process
            import torch.distributed as dist
            from sklearn.model_selection import train_test_split

            if __name__ == "__main__":
                train_rows, test_rows = train_test_split(rows, test_size=0.01)
                print(dist.is_available())
            """
        ),
        Clean(
            """
            # a project method of the same name, in a file that does not import datasets
            import torch.distributed as dist
            parts = folds.train_test_split(0.1)
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
        kind = self._split_kind(node, qualified)
        if kind is not None:
            self._splits.append(_Event(node, function, self._order, key=self.model.frame.key, kind=kind))
            # The torch alias must be looked up in the call's own scope, current only now.
            self._torch_alias[id(node)] = module_alias(self.model, "torch")
            return
        generators = self._generators_seeded(node.func, qualified)
        if generators:
            self._seeds.append(_Event(node, function, self._order, mentions_rank(node), generators=generators))

    def _split_kind(self, node: cst.Call, qualified: str | None) -> SplitKind | None:
        """The kind of split `node` is when it draws from a global generator (it passes none of
        the parameters that fix the draw, nor `*args`/`**kwargs`, nor `shuffle=False`)."""
        if qualified in RANDOM_SPLIT:
            kind, api = TORCH_SPLIT, RANDOM_SPLIT
        elif qualified in SKLEARN_SPLIT:
            kind, api = SKLEARN_KIND, SKLEARN_SPLIT
        elif (
            isinstance(node.func, cst.Attribute) and node.func.attr.value == DATASETS_SPLIT_METHOD and qualified is None
            and self._imports_datasets()
        ):
            kind, api = DATASETS_KIND, API(frozenset(), (), ("shuffle", *DATASETS_KIND.seeding_parameters))
        else:
            return None
        if has_star_arguments(node) or any(argument_for(node, api, name) is not None for name in kind.seeding_parameters):
            return None
        shuffle = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "shuffle"), None)
        if isinstance(shuffle, cst.Name) and shuffle.value == "False":
            return None
        return kind

    def _imports_datasets(self) -> bool:
        """Whether the module imports Hugging Face `datasets` (whose `Dataset` has the method)."""
        return any(
            origin is not None and (origin == DATASETS.name or origin in DATASETS)
            for origin in self.model.module_scope.bindings.values()
        )

    @staticmethod
    def _generators_seeded(func: cst.BaseExpression, qualified: str | None) -> frozenset[str]:
        """The global generators a call seeds: a known seed's; for a helper of another library
        named like Lightning's and Accelerate's, all of them; for a function of this file named
        for seeding, all but those of libraries it is not from."""
        known = generators_seeded(qualified)
        if known is not None:
            return known
        if qualified is not None and qualified.startswith(tuple(GENERATOR_LIBRARIES.values())):
            return frozenset()  # torch.cuda.manual_seed, random.seed: not a generator a split draws from
        last = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        if qualified is not None:
            return frozenset(GENERATOR_LIBRARIES) if last in SEEDING_HELPERS else frozenset()
        return frozenset(GENERATOR_LIBRARIES) if isinstance(last, str) and "seed" in last.lower() else frozenset()

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._splits and self.runs_link() is None and not _package(self.model.project):
            return  # nothing shows that ranks run this file (nor is it a package's, whose users may): one process splits once
        for split in self._splits:
            if self._seeded(split) or self._seeded_by_callers(split):
                continue
            kind = split.kind
            assert kind is not None
            if kind is not TORCH_SPLIT:
                fixed = with_keyword_argument(split.node, kind.fix_keyword, cst.Integer("0"))
                self.report(split.node, kind.message, replace={split.node: fixed})
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
        if view is None or split.key is None or any(seed.function is split.function and seed.order < split.order for seed in self._seeds_of(split)):
            return False
        return seeded_before_calls(view, split.key, split.kind.generator) is not None

    def _seeds_of(self, split: _Event) -> list[_Event]:
        """The seeds of this file that seed the generator `split` draws from."""
        return [seed for seed in self._seeds if split.kind.generator in seed.generators]

    def _seeded(self, split: _Event) -> bool:
        seeds = self._seeds_of(split)
        before_in_same_body = [seed for seed in seeds if seed.function is split.function and seed.order < split.order]
        if before_in_same_body:
            return not before_in_same_body[-1].rank_dependent
        return any(not seed.rank_dependent and seed.function is not split.function for seed in seeds)


# Files whose presence at the project root makes it a package others install or import.
_PACKAGE_FILES = ("setup.py", "setup.cfg", "pyproject.toml", "__init__.py")


# Where packaging metadata says the packages are: `package_dir={"": "src"}`,
# `find_packages("src")`, `where = ["src"]` (setup.cfg, pyproject.toml)
_PACKAGE_FOLDER = re.compile(
    r"""package_dir\s*=\s*\{\s*['"]{2}\s*:\s*['"]([\w./-]+)['"]"""
    r"""|find(?:_namespace)?_packages\(\s*(?:where\s*=\s*)?['"]([\w./-]+)['"]"""
    r"""|\bwhere\s*=\s*\[?\s*['"]?([\w./-]+)"""
)


def _package(view) -> bool:
    """Whether this file is a package's (packaging metadata at the project's root, or the root
    is an importable package itself: `ddplint check pl_bolts` in an unpacked wheel): its code
    runs in its users' processes too, which nothing in it shows. Not a text linted alone, nor a
    file outside the folder the metadata takes the packages from (`package_dir={"": "src"}`
    ships `src/` alone: `projects/train.py` beside it is the project's own script)."""
    texts = [view.document(name) for name in _PACKAGE_FILES] if view is not None else []
    if not any(text is not None for text in texts):
        return False
    if texts[-1] is not None:  # the root is a package: all of it is
        return True
    folders = {
        next(group for group in match.groups() if group).strip("./")
        for text in texts if text is not None for match in _PACKAGE_FOLDER.finditer(text)
    }
    path = view.path.replace(os.sep, "/")
    return not folders or any(not folder or path.startswith(folder + "/") for folder in folders)


def seeded_before_calls(view, key: str, generator: str = "torch") -> Place | None:
    """Where the global `generator` (torch's default one) is seeded alike on every rank before each call of
    function `key` of the view's module: in every caller, the last seed of it before the call
    (`torch.manual_seed(args.seed)`, `seed_everything(0)`, a project `set_seed(42)`) names no
    rank, or the calling function is itself so called (three calls up). None when a call is
    not so preceded, or no call of it is known. Where a module that may call it is unread, the
    calls read decide (none read: None)."""
    program, context = view.program, view.context
    return _seeded_before(program, context, view.module, key, generator, 0)


def _seeded_before(program, context, module: str, key: str, generator: str, depth: int) -> Place | None:
    # A module that may call it unread (past the model's bounds, unparsable): the calls read decide.
    sites = context.call_sites(module, key, read_only=True)
    if not sites or depth > 2:
        return None
    found = None
    for site in sites:
        place = _seed_before(program, site.caller, site.caller_key, site.line, generator)
        if place is None and site.caller_key:
            place = _seeded_before(program, context, site.caller, site.caller_key, generator, depth + 1)
        if place is None:
            return None
        found = found or place
    return found


def _seed_before(program, module: str, key: str | None, line: int, generator: str) -> Place | None:
    """Where function `key` of `module` (None: its module code) last seeds the global
    `generator` before `line`, when that seed names no rank (`torch.manual_seed(args.seed)`, not
    `seed + rank`, nor Accelerate's `device_specific=True`); None otherwise."""
    summary = program.summary(module)
    record = summary.context.get(key or "") if summary is not None else None
    seeds = [
        call for call in (record.calls if record is not None else ())
        if call.line < line and _seeds(program.qualify(module, call.callee) or call.callee, generator)
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


def _seeds(name: str, generator: str) -> bool:
    """A call that seeds the global `generator`: a known seed of it (torch's, numpy's,
    Lightning's, Accelerate's or transformers'), or a helper named for seeding that is not
    another generator library's."""
    known = generators_seeded(name)
    if known is not None:
        return generator in known
    others = tuple(prefix for library, prefix in GENERATOR_LIBRARIES.items() if library != generator)
    return "seed" in name.rpartition(".")[2].lower() and not name.startswith(others)


def _names_rank(call: ast.Call, tree: ast.Module) -> bool:
    """Whether a seed call's arguments may hold the rank in the function around it
    (`holds_rank`), or it asks for a seed per device (`device_specific=`)."""
    if any(keyword.arg == ACCELERATE_DEVICE_SPECIFIC for keyword in call.keywords):
        return True
    return any(holds_rank(argument, tree, call.lineno) for argument in (*call.args, *(keyword.value for keyword in call.keywords)))
