"""Whether a file's own code shows that ranks run it: the one answer every rule asks, from the
catalog's spellings (ddplint.core.torch_api: DISTRIBUTED_CALLS, DISTRIBUTED_IMPORTS,
TORCH_DISTRIBUTED, RANK_ENVIRONMENT) and the launch points of the libraries that start the ranks
themselves (ddplint.analyses.launches). The prefilter's screen of the same evidence
(ddplint.prefilter.triggers.DISTRIBUTED_EVIDENCE_CODE) reads the same catalog names, so it admits
every file this finds evidence in.

The first evidence is kept with its line (`where`): the step of a finding's chain that says
why ranks run the code.
"""

from __future__ import annotations

import libcst as cst

from ddplint.analyses.launches import Launches
from ddplint.analyses.ranks import environment_key
from ddplint.core.torch_api import (
    DISTRIBUTED_CALLS, DISTRIBUTED_IMPORTS, DISTRIBUTED_QUERIES, DISTRIBUTED_SAMPLER, RANK_ENVIRONMENT, TORCH_DISTRIBUTED,
)
from ddplint.semantic.model import Analysis, SemanticModel, dotted_name


class DistributedEvidence(Analysis):
    """Read `found`, `where` (what the first evidence is), `node` (where), `starts` and
    `script` (the file runs as a script) after the walk.
    The engine builds it for every file it parses: each finding's chain says why ranks run it."""

    requires = (Launches,)

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self._first: tuple[str, cst.CSTNode] | None = None
        self._strong: tuple[str, cst.CSTNode] | None = None
        self.script = False  # it runs as a script: `if __name__ == "__main__":`
        self.launches = model.get(Launches)

    def _note(self, what: str, node: cst.CSTNode, strong: bool = False) -> None:
        if self._first is None:
            self._first = (what, node)
        if strong and self._strong is None:
            self._strong = (what, node)

    @property
    def found(self) -> bool:
        return self._first is not None or self.launches.any

    @property
    def where(self) -> str | None:
        """What shows it first: "calls torch.distributed.init_process_group", "imports ..."."""
        if self._first is not None:
            return self._first[0]
        return "is a launch point of a library that starts the ranks" if self.launches.any else None

    @property
    def node(self) -> cst.CSTNode | None:
        """Where the first evidence is."""
        return self._first[1] if self._first is not None else None

    @property
    def starts(self) -> tuple[str, cst.CSTNode] | None:
        """What in this file starts or joins the ranks, and where: a call of a name under
        torch.distributed or of DDP, a spawn of ranks, a read of a rank variable (an import, a
        sampler, or a question one process asks too, `dist.is_initialized()`, is evidence, not a
        start), or a launch point of a library that starts the ranks; None when nothing here does."""
        return self._strong or self.launches.point

    def visit_Call(self, node: cst.Call) -> None:
        if environment_key(node) in RANK_ENVIRONMENT:
            self._note(f"reads {environment_key(node)}", node, strong=True)
            return
        qualified = self.model.qualified(node.func)
        if qualified is not None and (qualified in TORCH_DISTRIBUTED or qualified in DISTRIBUTED_CALLS):
            # a sampler, or a question one process asks as well (`dist.is_initialized()`), starts nothing
            strong = qualified not in DISTRIBUTED_SAMPLER and qualified not in DISTRIBUTED_QUERIES
            self._note(f"calls {qualified}", node, strong=strong)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if environment_key(node) in RANK_ENVIRONMENT:
            self._note(f"reads {environment_key(node)}", node, strong=True)

    def visit_If(self, node: cst.If) -> None:
        if self.model.frame.function is None and is_main_guard(node.test):
            self.script = True

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            if name == TORCH_DISTRIBUTED.name or name in TORCH_DISTRIBUTED:
                self._note(f"imports {name}", node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = dotted_name(node.module) if node.module is not None and not node.relative else None
        if module is None or isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = f"{module}.{dotted_name(alias.name)}"
            if module == TORCH_DISTRIBUTED.name or module in TORCH_DISTRIBUTED or name == TORCH_DISTRIBUTED.name or name in DISTRIBUTED_IMPORTS:
                self._note(f"imports {name}", node)


def is_main_guard(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = (test.left, target.comparator)
    named = any(isinstance(side, cst.Name) and side.value == "__name__" for side in sides)
    return named and any(isinstance(side, cst.SimpleString) and side.evaluated_value == "__main__" for side in sides)

