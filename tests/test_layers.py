"""The package's folders are its layers, and no module imports from a layer above its own.

From the bottom: the shared vocabulary (`core`), one file's tree and names (`semantic`), the
text and `ast` prefilters, the per-file analyses, the project model, the rules, the engine that
lints a file, fixing, and on top the user-facing commands, the language server, the runtime
harness, the doctor and the public `api`. A module may import from its own layer or any below it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import ddplint

PACKAGE = Path(ddplint.__file__).parent
LAYERS = (
    {"core"},
    {"semantic"},
    {"prefilter"},
    {"analyses"},
    {"model"},
    {"rules"},
    {"engine"},
    {"fixing"},
    {"commands", "server", "harness", "doctor", "api", "__main__"},
)
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def layer_of(module: str) -> int | None:
    """The layer of `ddplint.X...`; None for the package itself and what it holds (its version)."""
    parts = module.split(".")
    return RANK.get(parts[1]) if len(parts) > 1 else None


def imported_modules(tree: ast.AST, module: str = "ddplint.x") -> list[tuple[int, str]]:
    """Every ddplint module `module` imports anywhere, function-level and relative imports
    included (`from ..core import hashing` in ddplint.harness.launcher is ddplint.core)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            package = module.split(".")[: -node.level] if node.level else []
            base = ".".join(package + ([node.module] if node.module else []))
            if base.split(".")[0] != "ddplint":
                continue
            if base == "ddplint" or not node.module:  # `from ddplint import api`, `from . import x`: modules, or a version
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == "ddplint"]
    return sorted(found)


def modules():
    """(path, dotted name) of every module but the package's own `__init__`."""
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if len(relative.parts) > 1 or relative.stem != "__init__":
            yield path, "ddplint." + ".".join(relative.with_suffix("").parts)


def test_every_module_is_in_a_layer():
    assert sorted({module.split(".")[1] for _, module in modules()} - set(RANK)) == []


def test_no_module_imports_from_a_layer_above_its_own():
    upward = []
    for path, module in modules():
        own = layer_of(module)
        for line, imported in imported_modules(ast.parse(path.read_text(encoding="utf-8")), module):
            target = layer_of(imported)
            if target is not None and target > own:
                upward.append(f"{module}:{line} imports {imported}")
    assert upward == []


def test_an_upward_import_is_caught():
    tree = ast.parse("def f():\n    from ddplint.engine.lint import parse\nfrom ddplint import api\nfrom ..commands import cli\n")
    found = imported_modules(tree, "ddplint.model.program")
    assert found == [(2, "ddplint.engine.lint"), (3, "ddplint.api"), (4, "ddplint.commands")]
    assert all(layer_of(module) > layer_of("ddplint.model.program") for _, module in found)


def private_imports(tree: ast.AST, module: str = "ddplint.x") -> list[str]:
    """`from ddplint.a import _b` in `module`: a name its own module keeps to itself, taken by
    another (`line: a._b`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "ddplint"):
            found += [f"{node.lineno}: {node.module}.{alias.name}" for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


def test_no_module_takes_a_private_name_of_another():
    taken = [f"{module}:{found}" for path, module in modules() for found in private_imports(ast.parse(path.read_text(encoding="utf-8")), module)]
    assert taken == []


def test_a_private_import_is_caught():
    tree = ast.parse("from ddplint.model.context import _tested, public\nfrom .lint import __version__\nfrom os import _exit\n")
    assert private_imports(tree) == ["1: ddplint.model.context._tested"]


LONGEST_FUNCTION = 100


def _long_functions(source: str) -> list[tuple[str, int]]:
    """(name, length in lines) of each function in `source` longer than LONGEST_FUNCTION."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > LONGEST_FUNCTION
    ]


def test_no_function_in_the_package_runs_past_a_hundred_lines():
    """A function one cannot read on a screen or two hides its steps; split it where they part."""
    long = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if (found := _long_functions(path.read_text(encoding="utf-8")))
    }
    assert long == {}


def test_a_long_function_is_caught():
    body = "\n".join(f"    x{n} = {n}" for n in range(LONGEST_FUNCTION))
    assert _long_functions(f"def short():\n    pass\n\ndef long():\n{body}\n") == [("long", LONGEST_FUNCTION + 1)]
