"""The engine's own walk and positions must agree with libcst's visitor and PositionProvider."""

import pathlib

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, reject, settings
from libcst.metadata import MetadataWrapper, PositionProvider

from ddplint.walk import SKIPPED, positions, walk

REPO = pathlib.Path(__file__).resolve().parent.parent
SOURCES = sorted(p for p in REPO.glob("ddplint/**/*.py")) + sorted(REPO.glob("fixtures/**/*.py"))


class _Recorder(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.entered, self.left = [], []

    def on_visit(self, node):
        if type(node) not in SKIPPED:
            self.entered.append(node)
        return True

    def on_leave(self, node):
        if type(node) not in SKIPPED:
            self.left.append(node)


def _check(module: cst.Module) -> None:
    reference = _Recorder()
    module.visit(reference)
    entered, left = [], []
    every_class = {type(node) for node in reference.entered}
    walk(module, {cls: [entered.append] for cls in every_class}, {cls: [left.append] for cls in every_class})
    assert [id(n) for n in entered] == [id(n) for n in reference.entered]
    assert [id(n) for n in left] == [id(n) for n in reference.left]

    nodes = [node for node in reference.entered if not isinstance(node, cst.Module)]
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    ours, _ = positions(module, nodes)
    for node in nodes:
        where = expected[node]
        assert ours[id(node)] == ((where.start.line, where.start.column), (where.end.line, where.end.column))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_walk_and_positions_match_libcst_on_project_code(path):
    _check(cst.parse_module(path.read_bytes()))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_walk_and_positions_match_libcst_on_generated_code(source):
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:  # hypothesmith's nodes can mix tabs and spaces, which libcst refuses
        reject()
    _check(module)
