"""Files over the parse limit are checked statement by statement (engine.large_file_parts):
the top-level statements are found without a tree, the kept ones are parsed with the imports,
and findings and fixes land on the file's own lines."""

import ast
import sys
from pathlib import Path

import pytest

from ddplint.engine import lint as engine
from ddplint.api import Mode, process_source
from ddplint.engine.lint import MAX_PARSE_CHARS, top_level_starts, analyse, analyse_large
from ddplint.fixing.fixer import _fix_large, fix_text
from ddplint.rules import all_rules

pytestmark = pytest.mark.slow  # CI runs this module on Python 3.11 only (see .ci/run)

RULES = all_rules()


def _ast_starts(source: str) -> list[int]:
    """First lines of the top-level statements (`a = 1; b = 2` is one line)."""
    return sorted({
        min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        for node in ast.parse(source).body
    })


TRICKY = '''"""Module docstring
with a line at column 0."""
import os  # comment
from typing import (
    Any,
)
x = """
def not_a_statement():
"""
y = [
1,
]
z = 1 + \\
2
@decorator
# a comment between
@other(
arg)
def f():
    s = \'\'\'
class Nope:
\'\'\'
if x:
    pass
elif y:
    pass
else:
    pass
try:
    pass
except E:
    pass
finally:
    pass
async def g(): pass
a = 1; b = 2
w = f"{x!r} {'#'} {{"  # not a comment start
class C:
    pass
'''


def test_top_level_statements_are_found_as_ast_finds_them():
    starts, heads = top_level_starts(TRICKY)
    assert starts == _ast_starts(TRICKY)
    assert heads[:4] == ['"', "import", "from", "x"]


def test_top_level_statements_of_torch_itself():
    torch = pytest.importorskip("torch")
    files = sorted(Path(torch.__file__).parent.rglob("*.py"))[::7]
    checked = 0
    for path in files:
        source = path.read_text(encoding="utf-8", errors="replace")
        try:
            expected = _ast_starts(source)
        except SyntaxError:
            continue
        assert top_level_starts(source)[0] == expected, path
        checked += 1
    assert checked > 100


def _padded(code: str) -> str:
    return code + "\n" + "".join(f"TABLE_{i} = [{i}, {i + 1}]\n" for i in range(40))


@pytest.mark.parametrize(
    "rule, index",
    [(rule, i) for rule in RULES for i, example in enumerate(rule.flagged_examples)],
    ids=lambda value: value.code if hasattr(value, "code") else str(value),
)
def test_in_part_finds_what_the_whole_file_finds_on_the_same_lines(rule, index):
    """Each flagged example followed by generated statements, checked in part: every finding
    is one the whole-file check makes, at the same place. What the skipped statements define
    is not seen, so a fix may be withheld (a module-level helper, a constant) or refused when
    it is applied; a fix that is made is the one the whole-file fix makes. (DDP012 judges the
    line length on the statements it sees, which differ here.)"""
    source = _padded(rule.flagged_examples[index].code)
    whole = analyse(source, "big.py", RULES)
    part = analyse_large(source, "big.py", RULES)
    place = lambda d: (d.line, d.col, d.end_line, d.end_col, d.code)  # noqa: E731
    assert {place(d) for d in part.diagnostics} <= {place(d) for d in whole.diagnostics}
    assert part.notes and "checked in part" in part.notes[0]
    if rule.code == "DDP012":
        return
    fixed_whole = fix_text(source, "big.py", RULES, unsafe_fixes=True)
    fixed_part = _fix_large(source, "big.py", RULES, True, True, 10)
    key = lambda d: (*place(d), d.message, d.fix and d.fix.edits)  # noqa: E731
    if {key(d) for d in part.diagnostics} == {key(d) for d in whole.diagnostics} and fixed_part.fixed_count:
        assert fixed_part.source == fixed_whole.source
        assert [key(d) for d in fixed_part.remaining.diagnostics] == [key(d) for d in fixed_whole.remaining.diagnostics]
    else:  # some fixes withheld: what was fixed still compiles, nothing new is found
        compile(fixed_part.source, "big.py", "exec")
        assert {d.code for d in fixed_part.remaining.diagnostics} <= {d.code for d in part.diagnostics}


def test_an_import_used_only_in_skipped_statements_is_kept():
    source = (
        "import torch.multiprocessing as mp\n"
        + "".join(f"T{i} = {i}\n" for i in range(10))
        + 'mp.set_sharing_strategy("file_system")\n'
        + "N = mp.cpu_count()\n"
        + "mp.spawn(evaluate, nprocs=N)\n"
    )
    fixed = _fix_large(source, "big.py", RULES, True, True, 10).source
    assert fixed.startswith("import resource\n\nimport torch.multiprocessing as mp\n")
    assert fixed.endswith("N = mp.cpu_count()\nmp.spawn(evaluate, nprocs=N)\n")


def generated_module(megabytes: float) -> str:
    """A generated module (operator wrappers, tables) with three DDP pitfalls in the middle."""
    parts = ['"""Generated operator table. Do not edit."""\n', "import collections\n", "import torch\n",
             "import torch.distributed as dist\n", "import torch.multiprocessing as mp\n"]
    size, index = sum(map(len, parts)), 0
    while size < megabytes * 1e6:
        if index % 3 == 0:
            block = (f"\n\ndef op_{index}(x, scale={index % 7}.0):\n    y = torch.ops.aten.mul(x, scale)\n"
                     f"    if y.is_cuda:\n        y = y.cuda()\n    return torch.ops.aten.add(y, {index})\n")
        elif index % 3 == 1:
            block = f"TABLE_{index} = [" + ", ".join(f"({j}, {j * 0.5}, 'k{j}')" for j in range(8)) + "]\n"
        else:
            block = f"NAMES_{index} = {{'name': 'op_{index}', 'tags': ('pointwise', 'generated')}}\n"
        parts.append(block)
        size += len(block)
        index += 1
        if index == 20000:
            parts.append('\n\ndef load_weights(path):\n    return torch.load(path)\n\n\n'
                         'VOCAB_INDEX = collections.defaultdict(lambda: "<unk>")\n\nmp.set_sharing_strategy("file_system")\nloader = torch.utils.data.DataLoader(TABLE_1, num_workers=2)\n')
    return "".join(parts)


def test_six_megabyte_file_with_findings_is_checked_and_fixed():
    source = generated_module(6)
    assert len(source) > MAX_PARSE_CHARS
    result = process_source(source, "big.py", RULES, Mode())
    assert result.error is None
    assert [d.code for d in result.diagnostics] == ["DDP004", "DDP002", "DDP005"]
    lines = source.splitlines()
    assert [lines[d.line - 1].strip()[:20] for d in result.diagnostics] == [
        "return torch.load(pa", "VOCAB_INDEX = collec", 'mp.set_sharing_strat'
    ]
    assert "checked in part" in result.fix_problems[0]

    fixed = process_source(source, "big.py", RULES, Mode(fix=True, unsafe_fixes=True, write=False))
    assert fixed.error is None and fixed.fixed_count == 3 and not fixed.diagnostics
    new = fixed.fixed_source
    assert new.startswith('"""Generated operator table. Do not edit."""\nimport collections\nimport resource\nimport torch\nimport torch.distributed as dist\n\n\n'
                          'def _default_unk():\n    return "<unk>"\n')
    assert "import torch.multiprocessing as mp" not in new  # used only by the replaced call
    assert 'torch.load(path, map_location="cpu")' in new
    assert "INDEX = collections.defaultdict(_default_unk)" in new
    assert "resource.setrlimit(resource.RLIMIT_NOFILE, (nofile_hard, nofile_hard))" in new
    # Everything else is unchanged.
    assert new.count("\ndef op_") == source.count("\ndef op_") and new.endswith(source[-200:])


def test_a_warm_run_prints_the_warning_the_cold_run_printed(run, tmp_path, monkeypatch):
    """The results cache keeps a file's notes with its findings: a file checked in part
    still says so when its result comes from the cache."""
    (tmp_path / "big.py").write_text(generated_module(2.5))
    cache = tmp_path / "cache"
    monkeypatch.setenv("DDPLINT_CACHE_DIR", str(cache))
    cold = run("check", "big.py")
    assert cold.returncode == 1 and "big.py: checked in part: " in cold.stderr
    assert "big.py" in next(cache.glob("results-*.json")).read_text()
    warm = run("check", "big.py")
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
