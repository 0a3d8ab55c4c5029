"""The language server's statement cache and the text-level fixes its code actions send."""

from __future__ import annotations

import os

import pytest

from ddplint.diagnostics import Edit
from ddplint.engine import analyse, parse
from ddplint.quickfix import apply_fix, changed_span, import_edit
from ddplint.rules import all_rules
from ddplint.server.statements import StatementCache

LAYOUTS = [
    "import torch.distributed\n\ndef f():\n    x = 1\n    # a comment at the end of the body\n\n# before g\n@deco\ndef g(): pass\n",
    "a = 1; b = 2\nc = (1,\n     2)\n# trailing\n# comments",
    "if True:\n  x = 1\nwhile x:\n  break\n",  # two-space indent
    "x = 1\r\ny = 2\r\n",
    "\n\n# only a header\nimport os\nos.environ['X'] = '1'\n\n\n",
    'def f():\n    """doc\n\n    text"""\n    return torch.load(p)\n\nclass A:\n\tdef g(self): ...\n',
]


@pytest.mark.parametrize("source", LAYOUTS)
def test_the_assembled_tree_prints_the_source_back(source: str) -> None:
    cache = StatementCache()
    assert cache(source).code == source
    edited = source.replace("1", "3")
    assert cache(edited).code == edited


def test_an_edit_reparses_only_the_statement_it_touched() -> None:
    statements = [f"def f{i}(ckpt):\n    return torch.load(ckpt)\n\n" for i in range(20)]
    source = "import torch.distributed\n\n" + "".join(statements)
    cache = StatementCache()
    rules = all_rules()
    first = analyse(source, "f.py", rules, parser=cache)
    edited = source.replace("def f7(ckpt):\n    return torch.load(ckpt)", "def f7(ckpt):\n    return torch.load(ckpt, 1)")
    second = analyse(edited, "f.py", rules, parser=cache)
    assert cache.reused == 20  # of 21 chunks
    assert second.diagnostics == analyse(edited, "f.py", rules).diagnostics
    assert len(first.diagnostics) == 20


def test_a_long_class_is_reparsed_one_method_at_a_time() -> None:
    methods = [
        f'    @property\n    def m{i}(self):\n        """Doc\n\n    dedented line\n        """\n        return torch.load(self.p)\n\n'
        for i in range(12)
    ]
    source = "import torch.distributed\n\n# the class\nclass Checkpoints:\n    x = 1; y = 2\n" + "".join(methods) + "# after\n"
    cache = StatementCache()
    assert cache(source).code == source
    edited = source.replace("def m5(self)", "def m5(self, extra)")
    assert cache(edited).code == edited
    assert cache.reused == 13  # all but the edited method: the import, the class head, 11 methods
    rules = all_rules()
    assert analyse(edited, "c.py", rules, parser=cache).diagnostics == analyse(edited, "c.py", rules).diagnostics


def test_the_cache_agrees_with_a_full_parse_on_real_code() -> None:
    torch = pytest.importorskip("torch")
    root = os.path.dirname(torch.__file__)
    rules = all_rules()
    for name in ("serialization.py", "storage.py", "distributed/distributed_c10d.py", "utils/data/dataloader.py"):
        with open(os.path.join(root, name), encoding="utf-8") as handle:
            source = handle.read()
        cache = StatementCache()
        assert cache(source).code == source
        variant = source + "\nimport torch.distributed\nm = torch.load(path)\n"
        assert analyse(variant, name, rules, parser=cache).diagnostics == analyse(variant, name, rules).diagnostics


def test_a_fix_and_its_import_as_text() -> None:
    source = 'import torch.multiprocessing as mp\n\nmp.set_sharing_strategy("file_system")\n'
    [diagnostic] = analyse(source, "x.py", all_rules()).diagnostics
    fixed = apply_fix(source, diagnostic)
    assert fixed.startswith("import resource\n\nimport torch.multiprocessing as mp\n")
    assert import_edit(source, ["import resource"]) == Edit(1, 1, 1, 1, "import resource\n\n")
    assert import_edit(fixed, ["import resource"]) is None


@pytest.mark.parametrize(("old", "new", "span"), [("abc", "abc", (3, 3, "")), ("abXc", "abc", (2, 3, "")), ("aa", "aaa", (2, 2, "a"))])
def test_changed_span(old: str, new: str, span) -> None:
    assert changed_span(old, new) == span
    start, end, text = span
    assert old[:start] + text + old[end:] == new


def test_parse_still_reports_a_syntax_error_through_the_cache() -> None:
    from ddplint.engine import SourceError

    with pytest.raises(SourceError):
        StatementCache()("def f(:\n")
    assert parse("x = 1\n").code == "x = 1\n"
    with pytest.raises(SourceError, match="line 1, column 7"):
        parse("def f(:\n")
    with pytest.raises(SourceError, match="^cannot parse: invalid syntax$"):  # without CPython's second opinion
        parse("def f(:\n", explain=False)


def test_the_same_text_is_parsed_once() -> None:
    """The server asks libcst first where CPython's ast fails, then lints with the same tree."""
    cache = StatementCache()
    source = "import torch\n\nx = torch.load(p)\nprint(x)\n"
    assert cache(source) is cache(source)
    assert cache(source.replace("p)", "q)")).code == source.replace("p)", "q)")
