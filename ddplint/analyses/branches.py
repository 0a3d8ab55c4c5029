"""Which branch of each enclosing `if` the walk is in: mutually exclusive code, and code that
only a run without distribution reaches.

The model's `ifs` says which `if` statements enclose a node, not whether the node is in the
body or in the `else` (an `elif` is an `if` inside the `else`). Rules that compare two places
(DDP007: the sampler and the loader, DDP008: a collective and its counterpart, DDP017: the
CUDA call and the variable write) need that: code in the two branches of one `if` never runs
in the same pass, and code under the false branch of `if args.distributed:` never runs in a
distributed job at all.

A `Path` is a tuple of (id of an `if`, in its `else`), outermost first; read `path` during the
walk and keep it (a tuple, cheap to store).
"""

from __future__ import annotations

import libcst as cst

from ddplint.analyses.ranks import classify
from ddplint.semantic.model import Analysis, SemanticModel

Path = tuple[tuple[int, bool], ...]


def exclusive(first: Path, second: Path, among: set[int] | None = None) -> bool:
    """The two places are in different branches of one `if` (one of `among`, by id, when
    given): they never both run in one pass through it."""
    branches = dict(first)
    return any(
        key in branches and branches[key] != in_else and (among is None or key in among) for key, in_else in second
    )


class Branches(Analysis):
    """The branch path of the walk, and whether a distributed run can reach it."""

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self._open: list[tuple[cst.If, bool, bool]] = []  # (if, in its else, not distributed there)
        self.path: Path = ()
        self.rank_tests: set[int] = set()  # ids of the `if`s whose test says something about the rank

    def _update(self) -> None:
        self.path = tuple((id(node), in_else) for node, in_else, _ in self._open)

    def _enter_else(self, owner_orelse: cst.CSTNode) -> None:
        if self._open and self._open[-1][0].orelse is owner_orelse:
            node = self._open[-1][0]
            self._open[-1] = (node, True, self._not_distributed(node, True))
            self._update()

    def _not_distributed(self, node: cst.If, in_else: bool) -> bool:
        test = classify(node.test)
        if test.is_rank_test:
            self.rank_tests.add(id(node))
        if in_else:
            return test.false_only_zero and test.false_never_zero
        return test.true_only_zero and test.true_never_zero

    def visit_If(self, node: cst.If) -> None:
        self._enter_else(node)  # an `elif`: the enclosing `if` is now in its else
        self._open.append((node, False, self._not_distributed(node, False)))
        self._update()

    def leave_If(self, original_node: cst.If) -> None:
        self._open.pop()
        self._update()

    def visit_Else(self, node: cst.Else) -> None:
        self._enter_else(node)

    @property
    def not_distributed(self) -> bool:
        """Only a run that is not distributed gets here (`else:` of `if args.distributed:`,
        the body of `if world_size == 1:`)."""
        return any(flag for _, _, flag in self._open)
