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


def test_a_depth_memo_reuses_a_negative_answer_only_as_deep():
    """A "none" found deep down a chain of helpers saw less below it: asked nearer the top, the
    question is answered again; a positive answer holds at every depth, and a key being
    answered reads as "none" (a cycle proves nothing)."""
    memo = fixpoint.DepthMemo()
    assert memo.get("load", 0) == (False, None)
    memo.start("load")
    assert memo.get("load", 3) == (True, None)
    memo.put("load", None, 3)
    assert memo.get("load", 4) == (True, None) and memo.get("load", 0) == (False, None)
    assert memo.put("load", "bcast", 0) == "bcast"
    assert memo.get("load", 5) == (True, "bcast")
    flags = fixpoint.DepthMemo(none=False)
    flags.put("rank zero", False, 2)
    assert flags.get("rank zero", 1) == (False, None) and flags.get("rank zero", 2) == (True, False)
