"""The fixer's import handling, for every rule: imports a fix adds go where isort and ruff
put them, a definition a fix calls is added once after the imports, and an import a fix
leaves unused is removed (and nothing else)."""

import libcst as cst
import pytest

from ddplint.fixing.fixer import add_imports, remove_unused_imports


def added(source: str, *statements: str) -> str:
    return add_imports(cst.parse_module(source), statements).code


@pytest.mark.parametrize(
    "source, statement, expected",
    [
        # Into the standard-library section, in order.
        ("import os\nimport sys\n\nimport torch\n", "import resource",
         "import os\nimport resource\nimport sys\n\nimport torch\n"),
        # A new standard-library section before the third-party one, set off by a blank line.
        ('"""Doc."""\nimport torch\nx = 1\n', "import os", '"""Doc."""\nimport os\n\nimport torch\nx = 1\n'),
        # After `__future__`, before third party.
        ("from __future__ import annotations\n\nimport torch\n", "import os",
         "from __future__ import annotations\n\nimport os\n\nimport torch\n"),
        # `import x` lines before `from x import` lines of a section.
        ("import torch\nfrom torch import nn\n", "import numpy", "import numpy\nimport torch\nfrom torch import nn\n"),
        ("import torch\nfrom torch import nn\n", "from torch.utils import data",
         "import torch\nfrom torch import nn\nfrom torch.utils import data\n"),
        # A third-party import after the standard library.
        ("import os\n\nx = 1\n", "import torch", "import os\n\nimport torch\n\nx = 1\n"),
        # A comment above the first import stays at the top of the block.
        ("# header\nimport torch\n", "import os", "# header\nimport os\n\nimport torch\n"),
        # No imports: at the top, after the docstring, set off from the code.
        ('"""Doc."""\nx = 1\n', "import os", '"""Doc."""\nimport os\n\nx = 1\n'),
        ("def f():\n    pass\n", "import os", "import os\n\n\ndef f():\n    pass\n"),
        # Already there.
        ("import os\n", "import os", "import os\n"),
    ],
)
def test_added_imports_go_where_isort_puts_them(source, statement, expected):
    assert added(source, statement) == expected


def test_definitions_go_after_the_imports_once_and_in_order():
    source = "import os\nx = 1\n"
    result = added(source, "def _a():\n    return 1\n", "import sys", "def _b():\n    return 2\n", "def _a():\n    return 1\n")
    assert result == "import os\nimport sys\n\n\ndef _a():\n    return 1\n\n\ndef _b():\n    return 2\n\n\nx = 1\n"
    assert added(result, "def _a():\n    return 1\n") == result


@pytest.mark.parametrize(
    "source, gone, expected",
    [
        ("import os\nimport torch.multiprocessing as mp\n\nx = 1\n", {"mp"}, "import os\n\nx = 1\n"),
        # Still used, mentioned in a string (`__all__`), or kept by a comment: not removed.
        ("import torch.multiprocessing as mp\nmp.spawn(f)\n", {"mp"}, "import torch.multiprocessing as mp\nmp.spawn(f)\n"),
        ('import os\n__all__ = ["os"]\n', {"os"}, 'import os\n__all__ = ["os"]\n'),
        ("import os  # noqa: F401\n", {"os"}, "import os  # noqa: F401\n"),
        # One name of several.
        ("from os import environ, putenv, sep\nprint(sep)\n", {"environ", "putenv"}, "from os import sep\nprint(sep)\n"),
        # The first statement goes: no blank line is left at the top; a comment above it stays.
        ("import os\n\nx = 1\n", {"os"}, "x = 1\n"),
        ("# why\nimport os\nimport sys\n", {"os"}, "# why\nimport sys\n"),
        # An unused import whose name the fix did not remove is the user's business.
        ("import os\nimport sys\n", {"sys"}, "import os\n"),
    ],
)
def test_an_import_a_fix_orphans_is_removed(source, gone, expected):
    assert remove_unused_imports(cst.parse_module(source), gone).code == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ("f(a)", 'f(a, k="v")'),
        # Black's hugging layout: the new argument joins the line, `)` stays on its own.
        ("f(\n    a, b=1\n)", 'f(\n    a, b=1, k="v"\n)'),
        # One argument per line with a trailing comma: the new one gets its own line.
        ("f(\n    a,\n    b=1,\n)", 'f(\n    a,\n    b=1,\n    k="v",\n)'),
        ("f(a, # c\n)", 'f(a, k="v", # c\n)'),
    ],
)
def test_an_added_keyword_argument_keeps_the_call_layout(source, expected):
    from ddplint.semantic.edits import string_literal, with_keyword_argument

    call = cst.parse_expression(source)
    assert cst.Module([]).code_for_node(with_keyword_argument(call, "k", string_literal("v"))) == expected


def test_an_attribute_of_the_same_name_in_a_fix_does_not_keep_an_import_in_use():
    """Found by the mutation fuzzer: DDP011's fixes removed the only uses of `environ` and
    DDP012's fix wrote `os.environ.get(...)`; counting the attribute as a use of the imported
    name kept `from os import environ` although nothing reads it."""
    from ddplint.fixing.fixer import fix_text
    from ddplint.rules import all_rules

    source = (
        "import argparse\nimport torch.distributed\nfrom os import environ, putenv\n\ndef setup():\n"
        '    environ.update({"CUDA_LAUNCH_BLOCKING": "1"})\n    putenv("CUDA_LAUNCH_BLOCKING", "1")\n\n'
        'parser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", type=int, default=-1)\n'
        "args = parser.parse_args()\ndevice = args.local_rank\n"
    )
    fixed = fix_text(source, "x.py", all_rules(), unsafe_fixes=True).source
    assert "os.environ.get" in fixed and "from os import" not in fixed
