"""The catalog (ddplint/core/torch_api.py) is the one place where a torch name is spelled, and it
imports nothing heavy, so that every layer can read it."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import ddplint
from ddplint.core.torch_api import COLLECTIVE_NAMES, COMBINING_COLLECTIVES
from ddplint_test_support import needs_torch

PACKAGE = Path(ddplint.__file__).parent
# A torch name, or the prefix of the names under a torch package ("torch.nn."); `{}` stands for
# a placeholder of an f-string (f"torch.cuda.{name}"). A string that goes on past the name is a
# message, a label or code shown to people, not a name compared with what code calls:
# "torch.load was never called", "torch.device(cuda)".
TORCH_NAME = re.compile(r"torch(?:\.(?:[A-Za-z_]\w*|\{\})+)*\.?")
EXAMPLES = {"flagged_examples", "clean_examples"}
# The CPU mapping's counters take labels that the verify report prints, named after what the
# script called ("torch.cuda.set_device"); they are never matched against code.
LABELS = {"_count", "_counted"}
EXEMPT_FILES = {
    "core/torch_api.py": "the catalog itself",
    "prefilter/index.py": "generated from the rules and the catalog (`python -m ddplint.commands.docs`)",
}


def _docstring(node: ast.AST) -> ast.AST | None:
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[0].value
    return None


def _exempt(tree: ast.AST) -> set[int]:
    """Ids of the nodes in docstrings, rule examples and the CPU mapping's labels."""
    exempt: set[int] = set()
    for node in ast.walk(tree):
        docstring = _docstring(node)
        if docstring is not None:
            exempt.add(id(docstring))
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.Assign) and {getattr(t, "id", None) for t in statement.targets} & EXAMPLES:
                    exempt.update(id(inner) for inner in ast.walk(statement.value))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in LABELS:
            exempt.update(id(inner) for arg in node.args for inner in ast.walk(arg))
    return exempt


def torch_names(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string in `source` that spells a torch name, outside docstrings,
    rule examples and the CPU mapping's labels."""
    tree = ast.parse(source)
    exempt = _exempt(tree)
    strings = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # judged whole, as the text it makes
            exempt.update(id(part) for part in node.values)
            text = "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
            strings.append((node, text))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.append((node, node.value))
    return sorted(
        (node.lineno, text)
        for node, text in strings
        if text != "torch" and TORCH_NAME.fullmatch(text) and id(node) not in exempt
    )


def test_torch_names_are_strings_that_spell_one_outside_docs_examples_and_labels():
    source = '''
"""Reads torch.load."""
import torch
ALL = ("torch.load", "torch.nn.")
modules = [f"torch.cuda.{name}" for name in names]
message = "torch.load was never called"
label = "torch.device(cuda)"
_count("torch.cuda.set_device")


class Rule:
    """`torch.save` on every rank."""

    flagged_examples = (Flagged("torch.save(x, p)\\n"), Flagged(code("torch.save")))
    clean_examples = ("torch.distributed",)

    def check(self, qualified):
        return qualified == "torch.distributed.barrier"
'''
    expected = [(4, "torch.load"), (4, "torch.nn."), (5, "torch.cuda.{}"), (18, "torch.distributed.barrier")]
    assert torch_names(source) == expected


def test_torch_names_are_spelled_in_the_catalog_only():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative not in EXEMPT_FILES:
            names = torch_names(path.read_text(encoding="utf-8"))
            found += [f"ddplint/{relative}:{line}: {text!r}" for line, text in names]
    assert found == [], "spell these in ddplint/core/torch_api.py and import them:\n" + "\n".join(found)


def test_the_catalog_imports_nothing_heavy():
    code = (
        "import sys, ddplint.core.torch_api\n"
        "print(*sorted(m for m in sys.modules if m.startswith(('ddplint', 'libcst', 'torch'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["ddplint", "ddplint.core", "ddplint.core.torch_api"]


# The words in the name of each torch.distributed collective: what every rank of a group must
# reach. Point-to-point calls (send, isend, batch_isend_irecv) and group management are not in it.
COLLECTIVE_WORDS = ("gather", "reduce", "scatter", "broadcast", "barrier", "all_to_all")


@needs_torch
def test_the_catalog_has_every_collective_the_installed_torch_exports():
    import types

    import torch.distributed

    exported = {
        name
        for name, value in vars(torch.distributed).items()
        # type(), not isinstance(): the deprecated `reduce_op` warns when asked its __class__
        if not name.startswith("_") and type(value) is types.FunctionType and any(w in name for w in COLLECTIVE_WORDS)
    }
    missing = sorted(exported - set(COLLECTIVE_NAMES))
    assert missing == [], f"add to COLLECTIVE_NAMES in ddplint/core/torch_api.py (torch {torch.__version__}): {missing}"
    combining = {name.rpartition(".")[2] for name in COMBINING_COLLECTIVES}
    assert combining <= set(COLLECTIVE_NAMES)
