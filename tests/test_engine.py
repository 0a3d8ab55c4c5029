"""Engine behaviour that no single rule shows: prefiltering, one traversal, noqa reach."""

import libcst as cst
import pytest

import ddplint
from ddplint.engine import lint as engine
from ddplint.engine.noqa import Suppressions
from ddplint.rules import all_rules


def test_file_without_needles_is_never_parsed(monkeypatch):
    def refuse(source):
        raise AssertionError("parsed a file that has no needles")

    monkeypatch.setattr(engine, "parse", refuse)
    assert engine.analyse("import os\nprint(os.getcwd())\n", "x.py", all_rules()).diagnostics == []


def test_only_rules_whose_needles_occur_are_run():
    source = "import torch.distributed\ntorch.load('x.pt')\n"
    active = engine.rules_for_text(source, all_rules())
    assert [rule.code for rule in active] == ["DDP004"]


def test_needles_on_comment_lines_admit_nothing():
    licence = "# distributed under the License is distributed on an \"AS IS\" BASIS\n"
    load = "import torch\nstate = torch.load('w.pt')\n"
    assert engine.rules_for_text(licence + load, all_rules()) == []
    # the same word on a line of code, after the comment, still counts
    assert [rule.code for rule in engine.rules_for_text(licence + load + "distributed = True\n", all_rules())] == ["DDP004"]
    # a trailing comment is not told apart from the code before it
    assert [rule.code for rule in engine.rules_for_text(load + "x = 1  # distributed\n", all_rules())] == ["DDP004"]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_comment_lines_end_at_every_newline(newline):
    from ddplint.prefilter.needles import in_code

    assert not in_code(newline.join(["#!/usr/bin/env python", "# torch.distributed", "x = 1"]), "distributed")
    assert in_code(newline.join(["#!/usr/bin/env python", "import torch.distributed", ""]), "distributed")
    assert in_code(newline.join(["# torch.distributed", "  # distributed", "y = distributed"]), "distributed")


def test_findings_are_placed_by_the_screens_ast_not_a_second_pass_over_the_module(monkeypatch):
    from ddplint.semantic import walk

    trees = []
    real = walk.positions
    monkeypatch.setattr(engine, "positions", lambda *a, **k: trees.append(a[3] if len(a) > 3 else k.get("tree")) or real(*a, **k))
    source = "import torch.distributed\nstate = torch.load('w.pt')\n"
    assert [d.code for d in engine.analyse(source, "x.py", all_rules()).diagnostics] == ["DDP004"]
    assert len(trees) == 1 and trees[0] is not None


def test_one_parse_per_file(monkeypatch):
    calls = []
    real = cst.parse_module
    monkeypatch.setattr(cst, "parse_module", lambda text, *a, **k: calls.append(text) or real(text, *a, **k))
    source = "import torch.distributed, torch.multiprocessing as mp\nmp.set_sharing_strategy('file_system')\ntorch.load('x.pt')\nmp.spawn(evaluate, nprocs=2)\n"
    assert len(engine.analyse(source, "x.py", all_rules()).diagnostics) == 2
    assert calls.count(source) == 1


def test_diagnostics_are_sorted_and_carry_fix_edits():
    source = "import torch.distributed\nb = torch.load('b.pt')\na = torch.load('a.pt')\n"
    found = ddplint.lint_source(source)
    assert [(d.line, d.col) for d in found] == [(2, 5), (3, 5)]
    edit = found[0].fix.edits[0]
    assert (edit.line, edit.col, edit.end_line, edit.end_col) == (2, 5, 2, 23)
    assert edit.content == "torch.load('b.pt', map_location=\"cpu\")"


def test_public_api_round_trip():
    assert ddplint.fix_source("import torch.distributed\nx = torch.load(ckpt)\n") == 'import torch.distributed\nx = torch.load(ckpt, map_location="cpu")\n'
    with pytest.raises(ddplint.api.SourceError):
        ddplint.lint_source("import torch.distributed\ntorch.load(\n")


@pytest.mark.parametrize(
    "source, line, code, covered",
    [
        ("x = 1  # noqa\n", 1, "DDP004", True),
        ("x = 1  # noqa: DDP004\n", 1, "DDP004", True),
        ("x = 1  # noqa:DDP005,DDP004\n", 1, "DDP004", True),
        ("x = 1  # noqa: DDP\n", 1, "DDP004", True),
        ("x = 1  # noqa: DDP005\n", 1, "DDP004", False),
        ("x = f(\n    1)  # noqa: DDP004\n", 1, "DDP004", True),
        ("x = 1\ny = 2  # noqa\n", 1, "DDP004", False),
        ("s = '# noqa'\n", 1, "DDP004", True),  # flake8 reads it the same way
        ("# flake8: noqa\nx = 1\n", 2, "DDP004", True),  # the whole file, as flake8 skips it
        ("x = 1\n  # ddplint: NOQA\n", 1, "DDP004", True),
        ("# ddplint: noqa: DDP004, DDP012\nx = 1\n", 2, "DDP004", True),  # the codes, file-wide
        ("# flake8: noqa: C901\nx = 1\n", 2, "DDP004", False),  # as ruff reads it
        ("x = 1  # flake8: noqa\n", 1, "DDP004", False),  # flake8 too wants a line of its own
        ("# ruff: noqa\nx = 1\n", 2, "DDP004", False),  # another tool's own word
    ],
)
def test_noqa(source, line, code, covered):
    assert Suppressions(source).covers(line, code) is covered


def test_noqa_tokenizes_only_the_statement_that_holds_a_finding(monkeypatch):
    import tokenize

    many = "".join(f"x{i} = f(\n    {i})\n" for i in range(2000))
    source = f"import os  # noqa: DDP004\n{many}def g():\n    y = h(\n        1)  # noqa: DDP004\n"
    read = []
    real = tokenize.generate_tokens
    monkeypatch.setattr(tokenize, "generate_tokens", lambda readline: real(lambda: read.append(1) or readline()))
    suppressions = Suppressions(source)
    last = source.count("\n")
    assert [suppressions.covers(line, "DDP004") for line in (1, 2, 3, last - 1, last)] == [True, False, False, True, True]
    assert len(read) < 10


# Python and libcst end a line at \n, \r\n or \r only; str.splitlines also at a form feed (a
# page break on a line of its own, in GNU-style files), \u2028 and other separators.
ODD_SEPARATORS = [
    "import torch.distributed\n\x0c\nx = torch.load(ckpt)\n",
    "import torch.distributed\n# a\u2028b\ns = 'c\u2028d'\nx = torch.load(ckpt)\n",
]


@pytest.mark.parametrize("source", ODD_SEPARATORS)
def test_noqa_and_add_noqa_count_lines_as_python_does(source, run, tmp_path):
    flagged = source.replace("x = torch.load(ckpt)", "x = torch.load(ckpt)  # noqa: DDP004")
    assert [d.line for d in ddplint.lint_source(source)] == [source.count("\n")]
    assert ddplint.lint_source(flagged) == []
    (tmp_path / "m.py").write_bytes(source.encode())
    assert run("--add-noqa", "m.py").stdout == "Added 1 noqa comment.\n"
    assert (tmp_path / "m.py").read_bytes() == flagged.encode()


@pytest.mark.parametrize("source", ODD_SEPARATORS)
def test_fix_and_full_output_keep_odd_line_separators(source, run, tmp_path):
    (tmp_path / "m.py").write_bytes(source.encode())
    shown = run("--output-format", "full", "m.py").stdout
    assert f"{source.count(chr(10))} | x = torch.load(ckpt)" in shown, shown
    assert run("--fix", "m.py").returncode == 0
    assert (tmp_path / "m.py").read_bytes() == source.replace("(ckpt)", '(ckpt, map_location="cpu")').encode()


def test_fix_adding_an_import_to_a_module_indented_with_a_form_feed():
    source = 'import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\nmp.spawn(evaluate, nprocs=2)\nif x:\n\x0c pass\n'
    fixed = ddplint.fix_source(source, unsafe_fixes=True)
    assert "import resource\n" in fixed and fixed.endswith("if x:\n\x0c pass\n")
    assert ddplint.fix_source(fixed, unsafe_fixes=True) == fixed


def test_flake8_plugin_imports_libcst_only_when_a_rule_can_fire():
    import subprocess
    import sys

    from ddplint_test_support import cli_env

    code = (
        "import ast, sys\nfrom ddplint.commands.flake8_plugin import Flake8Plugin\n"
        "def run(text):\n"
        "    lines = text.splitlines(keepends=True)\n"
        "    found = Flake8Plugin(ast.parse(text), lines, 'a.py').run()\n"
        "    return [message.split()[0] for _, _, message, _ in found]\n"
        # no needle at all; then needles (torch.load, a defaultdict, a lambda) but no construct
        "print(run('import os\\nprint(os.getcwd())\\n'), 'libcst' in sys.modules)\n"
        "print(run('import torch\\nfrom collections import defaultdict\\n'\n"
        "          'x = torch.load(ckpt, map_location=\"cpu\")\\nf = lambda: 0\\n'), 'libcst' in sys.modules)\n"
        "print(run('import torch.distributed\\nx = torch.load(ckpt)\\n'), 'libcst' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env())
    assert out.stdout.splitlines() == ["[] False", "[] False", "['DDP004'] True"], out.stdout + out.stderr


def test_needle_index_agrees_with_the_rules():
    from ddplint.prefilter.index import NEEDLES, SCREENS

    assert NEEDLES == {rule.code: tuple(rule.needles) for rule in all_rules()}
    assert SCREENS == {rule.code: rule.screen for rule in all_rules()}


def test_a_files_tree_is_freed_without_the_cyclic_collector():
    """Rules and analyses hold the model, and the model holds the tree: a cycle among them
    keeps the whole tree alive until the collector finds it, which in a batch run cost about a
    tenth of the CPU. After `analyse`, reference counting alone must free it."""
    import gc

    rules = all_rules()
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for rule in rules:
            for example in rule.flagged_examples:
                engine.analyse(example.code, "x.py", rules)
                gc.set_debug(gc.DEBUG_SAVEALL)
                gc.collect()
                pinned = any(isinstance(found, cst.Module) for found in gc.garbage)
                gc.set_debug(0)
                gc.garbage.clear()
                gc.collect()
                assert not pinned, (rule.code, example.code)
    finally:
        gc.set_debug(0)
        if enabled:
            gc.enable()
