"""The program model's shape: typed records that survive the cache, no import cycle inside
`ddplint/model/`, and a model that answers general questions which rules ask, never the other
way round.

- A question only one rule asks lives beside that rule (ruff's `SemanticModel` against a rule
  group's `helpers.rs`): a public function or method of `ddplint/model/` must be asked by the
  model itself, by another layer, or by two rules at least.
- A rule or an analysis reaches the model through `self.model.project` (the module's view) and
  what the view hands out, never through a private name or the view's own `project`.
"""

from __future__ import annotations

import ast
import dataclasses
from collections import defaultdict
from pathlib import Path

import ddplint
from ddplint.model import records
from ddplint.model.summary import summarize

PACKAGE = Path(ddplint.__file__).parent
MODEL = PACKAGE / "model"


def _module_name(path: Path) -> str:
    return "ddplint." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)


def _imports(path: Path) -> set[str]:
    """The ddplint modules `path` imports anywhere in it (function-level imports included)."""
    own = _module_name(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(own.split(".")[: -node.level] + ([node.module] if node.module else [])) if node.level else node.module
            if base and base.startswith("ddplint"):
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("ddplint"))
    return found


def model_cycles(folder: Path = MODEL) -> list[list[str]]:
    """The cycles of the import graph of the modules in `folder` (each once, from its least module)."""
    modules = {_module_name(path): path for path in folder.glob("*.py") if path.stem != "__init__"}
    graph = {name: sorted(_imports(path) & set(modules)) for name, path in modules.items()}
    cycles = []

    def visit(start: str, node: str, path: list[str]) -> None:
        for following in graph[node]:
            if following == start:
                cycles.append(path)
            elif following not in path and following > start:
                visit(start, following, [*path, following])

    for name in sorted(graph):
        visit(name, name, [name])
    return cycles


def test_the_model_has_no_import_cycle():
    assert model_cycles() == []


def test_a_cycle_is_found(tmp_path):
    folder = tmp_path / "ddplint" / "model"
    folder.mkdir(parents=True)
    (folder / "a.py").write_text("def f():\n    from ddplint.model import b\n")
    (folder / "b.py").write_text("from ddplint.model.a import f\n")
    (folder / "c.py").write_text("import os\n")
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "ddplint"
    try:
        assert model_cycles(folder) == [["ddplint.model.a", "ddplint.model.b"]]
    finally:
        PACKAGE = saved


def _questions() -> dict[str, list[tuple[Path, ast.AST, bool]]]:
    """The model's public functions and methods, by name: where each is defined, and whether it
    is a method (asked as an attribute) or a module's function (asked by its name)."""
    found: dict[str, list[tuple[Path, ast.AST, bool]]] = defaultdict(list)
    for path in sorted(MODEL.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            members = [(member, True) for member in node.body] if isinstance(node, ast.ClassDef) else [(node, False)]
            for member, method in members:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and not member.name.startswith("_"):
                    found[member.name].append((path, member, method))
    return found


def _references() -> dict[tuple[str, bool], list[tuple[Path, int]]]:
    """Where each name is asked, by module and line: as an attribute (`x.name`, key (name,
    True)), or by name or import (`name(...)`, `from m import name`, key (name, False))."""
    found: dict[tuple[str, bool], list[tuple[Path, int]]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                found[(node.attr, True)].append((path, node.lineno))
                found[(node.attr, False)].append((path, node.lineno))  # `module.function(...)`
            elif isinstance(node, ast.Name):
                found[(node.id, False)].append((path, node.lineno))
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    found[(alias.name, False)].append((path, node.lineno))
    return found


def one_rule_questions() -> list[str]:
    """The model's public functions and methods that exactly one rule asks and nothing else does
    (a function's references inside its own body, its recursion, do not count; a method is
    asked only as an attribute, a function only by its name or an import)."""
    references, lonely = _references(), []
    for name, all_definitions in _questions().items():
        for method in {method for _, _, method in all_definitions}:
            definitions = [(where, node) for where, node, kind in all_definitions if kind == method]
            askers = {
                path for path, line in references.get((name, method), ())
                if not any(path == where and node.lineno <= line <= node.end_lineno for where, node in definitions)
            }
            rules = {path for path in askers if path.parent.name == "rules" and path.stem.startswith("ddp")}
            if len(rules) == 1 and askers == rules:
                lonely.append(f"{name} ({', '.join(sorted(p.stem for p, _ in definitions))}): only {next(iter(rules)).stem}")
    return sorted(lonely)


def test_no_model_question_is_asked_by_exactly_one_rule():
    assert one_rule_questions() == []


def reaches_into_the_model() -> list[str]:
    """Places where a rule or an analysis reads a private name of another object, or the
    project behind its module's view (`view.project`, `self.model.project.project`)."""
    found = []
    for folder in ("rules", "analyses"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Attribute):
                    continue
                owner = ast.unparse(node.value)
                private = node.attr.startswith("_") and not node.attr.startswith("__") and owner not in ("self", "cls")
                behind_view = node.attr == "project" and owner not in ("self.model", "model")
                if private or behind_view:
                    found.append(f"{path.stem}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_rules_and_analyses_ask_the_model_and_never_reach_into_it():
    assert reaches_into_the_model() == []


def test_every_record_survives_the_cache():
    tree = ast.parse(
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        "if flag:\n    from .a import b\n\n"
        "class Trainer(Base):\n    def __init__(self, model, loader, **kwargs):\n        self.model = model.module\n"
        "        self.loader = DataLoader(kwargs['ds'], sampler=DistributedSampler(kwargs['ds'], shuffle=False))\n\n"
        "def build(split, ds):\n    if split == 'train':\n        s = DistributedSampler(ds)\n"
        "        return {'train': DataLoader(ds, sampler=s)}, [s]\n    return None\n\n"
        "def use(ds):\n    loader, sampler = build('train', ds)\n    return loader['train']\n\n"
        "def train(model, loader, scaler, update):\n    for x in loader:\n        loss = model(x)\n        loss.backward()\n"
        "        if update:\n            scaler.step(x)\n    torch.save({'model': model.state_dict()}, 'best.pt')\n"
        "    dist.init_process_group('nccl')\n    return [model(y) for y in loader]\n",
    )
    summary = summarize(tree)
    assert records.decode(records.encode(summary)) == summary
    kinds = {type(value).__name__ for value in _records_in(summary)}
    assert {"FunctionSummary", "CallResult", "DataCall", "Group", "Item", "InnerOf", "Loop", "Save", "Guard"} <= kinds
    value = records.Pack((records.Loader(records.Place("a.py", 3), records.Sampler(records.Place("a.py", 2), None)), None))
    assert records.decode(records.encode(value)) == value


def _records_in(value):
    if dataclasses.is_dataclass(value):
        yield value
        for item in dataclasses.fields(value):
            yield from _records_in(getattr(value, item.name))
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _records_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _records_in(item)
