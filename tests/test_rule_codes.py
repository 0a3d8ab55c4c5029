"""A rule's code is named only in the rule's own module: code elsewhere in the package that
names one (a table keyed by codes, a check for one rule) is a hand-kept list that a new rule
would have to be added to. Adding a rule is its module plus the files `python -m ddplint.commands.docs`
regenerates (CONTRIBUTING.md)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

import ddplint
from ddplint.rules import rule_by_code

PACKAGE = Path(ddplint.__file__).parent
CODE = re.compile(r"DDP\d{3}")
# A rule's own module, and its own runtime evidence: the folder the verify harness reads.
RULE_OWN = re.compile(r"rules/ddp\d{3}_\w+\.py|harness/scenarios/ddp\d{3}/\w+\.py")
# Generated from the rule modules by `python -m ddplint.commands.docs` (tests/test_ecosystem.py fails when stale).
GENERATED = {"prefilter/index.py"}
# Strings and identifiers; on Python 3.12 and later an f-string's text is FSTRING_MIDDLE.
_CHECKED = {tokenize.NAME, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _docstrings(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) of each docstring: the string a module, class or function body starts with."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                spans.append(((first.lineno, first.col_offset), (first.end_lineno, first.end_col_offset)))
    return spans


def rule_codes(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string or identifier in `source` that names a rule code, outside
    docstrings and comments."""
    docstrings = _docstrings(source)
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _CHECKED or not CODE.search(token.string):
            continue
        if any(start <= token.start and token.end <= end for start, end in docstrings):
            continue
        found.append((token.start[0], token.string))
    return found


def _exempt(relative: str) -> bool:
    return RULE_OWN.fullmatch(relative) is not None or relative in GENERATED


def test_rule_codes_are_found_in_strings_and_names_but_not_in_docstrings_or_comments():
    source = '''
"""Module doc: DDP004."""
import x  # noqa: DDP005


class Table:
    """Class doc: DDP006."""

    KEYS = {"DDP001": 1}

    def check(self):
        """Function doc: DDP007."""
        "not a docstring: DDP002"
        return f"see DDP003 for {self}", is_DDP008(self)
'''
    assert [text for _, text in rule_codes(source)] == [
        '"DDP001"', '"not a docstring: DDP002"', *_fstring("see DDP003 for "), "is_DDP008",
    ]


def _fstring(text: str) -> list[str]:
    """The token(s) holding an f-string's text: the whole literal before Python 3.12."""
    return [text] if hasattr(tokenize, "FSTRING_MIDDLE") else [f'f"{text}{{self}}"']


def test_the_exemptions_are_the_rule_modules_their_evidence_and_generated_files():
    assert _exempt("rules/ddp004_torch_load_without_map_location.py")
    assert _exempt("prefilter/index.py")
    assert _exempt("harness/scenarios/ddp001/train.py")
    assert not _exempt("rules/__init__.py")
    assert not _exempt("harness/script.py")
    assert not _exempt("harness/scenarios/__init__.py")
    assert not _exempt("project.py")
    for path in GENERATED:
        assert (PACKAGE / path).is_file(), f"{path} is gone: drop its exemption"


def test_no_package_code_outside_a_rule_module_names_a_rule_code():
    named = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if not _exempt(relative):
            named += [f"ddplint/{relative}:{line}: {text}" for line, text in rule_codes(path.read_text(encoding="utf-8"))]
    assert not named, "rule codes outside the rules' own modules (declare it on the rule instead):\n" + "\n".join(named)


FIXTURES = PACKAGE.parent / "fixtures"


@pytest.mark.parametrize("folder", sorted(p for p in FIXTURES.iterdir() if p.is_dir()), ids=lambda folder: folder.name)
def test_every_fixture_folder_is_a_rule_that_each_of_its_programs_shows(folder):
    # fixtures/DDPNNN/ is found by its name: a new rule's folder needs no list of folders.
    assert rule_by_code(folder.name) is not None and folder.name == folder.name.upper()
    programs = sorted(folder.glob("*.py"))
    assert programs
    for path in programs:
        assert folder.name in [d.code for d in ddplint.lint_source(path.read_text(), str(path))], path
