"""The fixed-point helpers every layer uses (ddplint/core/fixpoint.py)."""

import ast
import pathlib

from ddplint.core import fixpoint
from ddplint.core.fixpoint import fixed_point, reachable


def test_reachable_visits_each_item_once_depth_first():
    graph = {"a": ["b", "c"], "c": ["d", "b"], "b": ["a"], "d": []}
    assert list(reachable(["a"], lambda item: graph[item])) == ["a", "c", "b", "d"]


def test_reachable_is_lazy():
    reached = []

    def successors(item):
        reached.append(item)
        return [item + 1]

    assert next(item for item in reachable([0], successors) if item == 3) == 3
    assert reached == [0, 1, 2]


def test_fixed_point_grows_until_nothing_is_added():
    calls = {"f": {"g"}, "g": {"h"}, "h": set(), "k": set()}
    cuda = fixed_point(lambda found: found | {name for name, called in calls.items() if called & found}, {"h"})
    assert cuda == {"f", "g", "h"}


def test_fixpoint_imports_nothing_from_ddplint():
    tree = ast.parse(pathlib.Path(fixpoint.__file__).read_text())
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert not [name for name in imported if name and name.startswith("ddplint")]
