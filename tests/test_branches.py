"""The branch analysis: which places are mutually exclusive, and which only a run without
distribution reaches (DDP007, DDP008, DDP017 rely on it)."""

import textwrap

import libcst as cst

from ddplint.analyses.branches import Branches, exclusive
from ddplint.engine.lint import traverse
from ddplint.semantic.model import SemanticModel


class _Places(cst.BatchableCSTVisitor):
    """Records (path, not distributed) at each call `mark_<name>()`."""

    def __init__(self, model):
        super().__init__()
        self.branches = model.get(Branches)
        self.places = {}

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value.startswith("mark_"):
            self.places[node.func.value[5:]] = (self.branches.path, self.branches.not_distributed)


def places(source):
    module = cst.parse_module(textwrap.dedent(source))
    model = SemanticModel(module)
    model.add_analysis(Branches(model))
    visitor = _Places(model)
    traverse(module, model, [visitor])
    return visitor.places


def test_if_elif_else_are_exclusive_and_code_around_is_not():
    found = places(
        """
        mark_before()
        if a:
            mark_body()
            if b:
                mark_inner()
        elif c:
            mark_elif()
        else:
            mark_else()
        mark_after()
        """
    )
    path = {name: place[0] for name, place in found.items()}
    assert exclusive(path["body"], path["elif"])
    assert exclusive(path["inner"], path["else"])
    assert exclusive(path["elif"], path["else"])
    assert not exclusive(path["body"], path["inner"])
    assert not any(exclusive(path["before"], other) or exclusive(path["after"], other) for other in path.values())


def test_not_distributed_branches():
    found = places(
        """
        if args.distributed:
            mark_distributed()
        else:
            mark_single()
            if x:
                mark_nested()
        if not dist.is_initialized():
            mark_uninitialised()
        if world_size == 1:
            mark_one()
        if rank == 0:
            mark_rank_zero()
        """
    )
    flags = {name: place[1] for name, place in found.items()}
    assert flags == {
        "distributed": False,
        "single": True,
        "nested": True,
        "uninitialised": True,
        "one": True,
        "rank_zero": False,
    }
