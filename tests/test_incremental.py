"""The language server's statement cache and the text-level fixes its code actions send."""

from __future__ import annotations

import ast
import importlib.util
import os
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ddplint.core.diagnostics import Edit
from ddplint.engine.lint import SourceError, analyse, parse
from ddplint.fixing.quickfix import apply_fix, changed_span, import_edit
from ddplint.rules import all_rules
from ddplint.server.statements import StatementCache

pytestmark = pytest.mark.slow  # CI runs this module on Python 3.11 only (see .ci/run)

LAYOUTS = [
    "import torch.distributed\n\ndef f():\n    x = 1\n    # a comment at the end of the body\n\n# before g\n@deco\ndef g(): pass\n",
    "a = 1; b = 2\nc = (1,\n     2)\n# trailing\n# comments",
    "if True:\n  x = 1\nwhile x:\n  break\n",  # two-space indent
    "x = 1\r\ny = 2\r\n",
    "\n\n# only a header\nimport os\nos.environ['X'] = '1'\n\n\n",
    'def f():\n    """doc\n\n    text"""\n    return torch.load(p)\n\nclass A:\n\tdef g(self): ...\n',
    # A form feed ends no line for Python (str.splitlines would end one there).
    "import os\n\x0c\ndef f():\n    x = (1,\n         2)\n    return x\n\ns = 'a\x0cb'\ndef g():\n    return 2\n",
]


# Trailing lines of nested blocks, in statements long enough to be parsed in pieces: libcst
# gives a block the comment and blank lines after it up to the last one indented as deep as it.
_STEPS = "".join(f"            x{i} = {i}\n" for i in range(45))
LAYOUTS += [
    "class A:\n    def f(self):\n        for i in y:\n" + _STEPS + "            # end of the loop\n\n        # end of f\n    \n\n"
    "    def g(self):\n" + _STEPS.replace("            ", "        ") + "        \n# after\n",
    "def f():\n    with a:\n" + _STEPS.replace("            ", "        ") + "    \n\n    if b:  # b\n\n        # first\n"
    + _STEPS + "            \n",
]


@pytest.mark.parametrize("source", LAYOUTS)
def test_the_assembled_tree_prints_the_source_back(source: str) -> None:
    """...and is the tree libcst makes of the whole text, node for node."""
    cache = StatementCache()
    assert cache(source).code == source and cache(source).deep_equals(parse(source))
    edited = source.replace("1", "3")
    assert cache(edited).code == edited and cache(edited).deep_equals(parse(edited))


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
    assert cache.reused == 15  # all but the edited method: the import, the class's header (for the module and for the class), `x = 1; y = 2`, 11 methods
    rules = all_rules()
    assert analyse(edited, "c.py", rules, parser=cache).diagnostics == analyse(edited, "c.py", rules).diagnostics


def test_an_edit_deep_in_a_long_method_reparses_the_statement_it_is_in() -> None:
    """A training loop of a long method of a long class: a keystroke in the loop re-parses that
    loop's statement, not the method (nor the loop, nor the class)."""
    steps = "".join(f"            loss{i} = step(batch, {i})\n" for i in range(30))
    train = (
        "    def train(self, loader):\n        # the loop\n\n"
        "        for epoch in range(10):  # epochs\n"
        "            for batch in loader:\n" + steps.replace("            ", "                ")
        + "            # after the batches\n" + steps + "        return loss0\n\n"
    )
    source = 'import torch.distributed\n\nclass Trainer:\n    """Doc."""\n\n' + train + "    def other(self):\n        pass\n"
    cache = StatementCache()
    assert cache(source).code == source
    # In the epoch loop (the batch loop, 31 lines, is parsed as one piece): one of 38 pieces.
    edited = source.replace("\n            loss7 = step(batch, 7)\n", "\n            loss7 = step(batch, 77)\n")
    assert cache(edited).code == edited
    assert cache.reused == 38  # the class's header counts twice (for the module and for the class)
    rules = all_rules()
    assert analyse(edited, "t.py", rules, parser=cache).diagnostics == analyse(edited, "t.py", rules).diagnostics
    typed = edited.replace("loss7 = step(batch, 77)\n", "loss7 = step(batch, 77)\n            x = (\n")
    with pytest.raises(SourceError):
        cache(typed)
    assert cache(edited).code == edited


def test_a_long_class_whose_parts_do_not_fit_together_is_parsed_as_it_stands() -> None:
    """Here the file ends in spaces after a long class, which its last part, parsed behind its
    stand-in header, keeps in the block: the class is parsed whole instead, from its own text."""
    methods = "".join(f"    def m{i}(self):\n        return torch.load(self.p)\n\n" for i in range(25))
    source = "import torch.distributed\n\nclass Checkpoints:\n" + methods + "    "
    cache = StatementCache()
    assert cache(source).code == source
    rules = all_rules()
    assert analyse(source, "c.py", rules, parser=cache).diagnostics == analyse(source, "c.py", rules).diagnostics


def test_statements_of_the_same_text_are_different_nodes() -> None:
    helper = "def helper(x=torch.zeros(1).cuda()):\n    return x\n\n"
    source = "import torch\n\n" + helper * 2 + "y = 1\n"
    cache = StatementCache()
    default = lambda statement: statement.params.params[0].default  # noqa: E731
    first, second = cache(source).body[1:3]
    assert default(first) is not default(second)
    edited = source.replace("y = 1", "y = 2")
    first, second = cache(edited).body[1:3]
    assert default(first) is not default(second)
    rules = all_rules()
    found = analyse(edited, "h.py", rules, parser=cache).diagnostics
    assert found == analyse(edited, "h.py", rules).diagnostics and [d.line for d in found] == [3, 6]


def test_the_cache_agrees_with_a_full_parse_on_real_code() -> None:
    torch = pytest.importorskip("torch")
    root = os.path.dirname(torch.__file__)
    rules = all_rules()
    for name in ("serialization.py", "storage.py", "distributed/distributed_c10d.py", "utils/data/dataloader.py"):
        with open(os.path.join(root, name), encoding="utf-8") as handle:
            source = handle.read()
        cache = StatementCache()
        assert cache(source).code == source and cache(source).deep_equals(parse(source))
        variant = source + "\nimport torch.distributed\nm = torch.load(path)\n"
        assert analyse(variant, name, rules, parser=cache).diagnostics == analyse(variant, name, rules).diagnostics


def test_a_fix_lands_on_its_line_after_a_form_feed() -> None:
    source = 'import torch\nimport torch.distributed as dist\n\ndist.init_process_group("nccl")\n'
    source += 'x = "\x0c"\nstate = torch.load(p)\n'
    [diagnostic] = analyse(source, "x.py", all_rules()).diagnostics
    assert apply_fix(source, diagnostic) == source.replace("load(p)", 'load(p, map_location="cpu")')


def test_a_fix_and_its_import_as_text() -> None:
    source = 'import torch.multiprocessing as mp\n\nmp.set_sharing_strategy("file_system")\nmp.spawn(evaluate, nprocs=2)\n'
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
    from ddplint.engine.lint import SourceError

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


# -- the server's incremental lint equals a full lint, edit after edit ----------------------------

# Text that makes or removes findings, or leaves a line half typed, inserted where an edit lands.
SNIPPETS = (
    "state = torch.load(path)\n",
    "state = torch.load(path, map_location='cpu')\n",
    "torch.distributed.barrier()\n",
    "if torch.distributed.get_rank() == 0:\n    torch.save(state, 'last.pt')\n",
    "torch.save(model.state_dict(), 'model.pt')\n",
    "loader = torch.utils.data.DataLoader(data, num_workers=os.cpu_count())\n",
    "def helper(x=torch.zeros(1).cuda()):\n    return x\n",
    "class Holder:\n    pass\n",
    "else:\n    pass\n",
    '"""',
    "(",
    ")",
    ":",
    "    ",
    "# ",
    "\n",
    "\x0c",  # a form feed: whitespace to Python, a line break to str.splitlines
)


# Two of torch's own modules, with long classes, where torch is installed (read, never imported).
_TORCH = importlib.util.find_spec("torch")
TORCH_MODULES = {"format_utils": "distributed/checkpoint/format_utils.py", "sampler": "utils/data/distributed.py"}
EDITABLE = ["engine", *(TORCH_MODULES if _TORCH is not None and _TORCH.origin is not None else ())]


@pytest.fixture(scope="module")
def edited_project(tmp_path_factory) -> dict[str, Path]:
    """A project of real files to edit: DETR's engine beside the main.py that wraps its model
    (cross-module findings), and the torch modules there are."""
    import shutil

    root = tmp_path_factory.mktemp("edited") / "project"
    shutil.copytree(Path(__file__).parent / "data" / "projects" / "engine_module", root)
    files = {"engine": root / "detr" / "engine.py"}
    for name in EDITABLE[1:]:
        files[name] = root / "detr" / Path(TORCH_MODULES[name]).name
        shutil.copyfile(Path(_TORCH.origin).parent / TORCH_MODULES[name], files[name])  # type: ignore[union-attr]
    return files


def _edited(text: str, position: int, kind: str, snippet: str, length: int) -> str:
    """`text` after one edit at `position`: a snippet typed at the start of a line with that
    line's indentation, a snippet typed anywhere or at the end, or a few characters deleted."""
    position = len(text) if kind == "end" else position % (len(text) + 1)
    if kind == "line":
        start = text.rfind("\n", 0, position) + 1
        line = text[start : text.find("\n", start) if "\n" in text[start:] else len(text)]
        indent = line[: len(line) - len(line.lstrip(" "))]
        typed = "".join(indent + part for part in snippet.splitlines(keepends=True))
        return text[:start] + typed + text[start:]
    if kind in ("type", "end"):
        return text[:position] + snippet + text[position:]
    return text[:position] + text[position + length :]


KINDS = st.sampled_from(["line", "type", "end", "delete"])
EDIT = st.tuples(st.integers(0, 10**6), KINDS, st.sampled_from(SNIPPETS), st.integers(1, 30))
EDITS = st.lists(EDIT, min_size=1, max_size=8)


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(EDITABLE), edits=EDITS)
# A finding typed into a method of a long class, half typed and completed again; then, in
# another long class, a finding placed, and lines inserted above it (its holder is remembered);
# then an `else:` that joins the `if __name__ == "__main__":` block ending the file; then spaces
# ending a file whose last statement is a long class, and a finding typed into that class; then
# the same function typed twice.
@example(name="format_utils", edits=[(3000, "line", SNIPPETS[0], 1), (3000, "type", "(", 1), (3000, "delete", "", 1)])
@example(name="sampler", edits=[(4000, "line", SNIPPETS[4], 1), (100, "line", "\n", 1), (100, "line", "# \n", 1)])
@example(name="format_utils", edits=[(0, "end", "else", 1), (0, "end", ":\n    pass\n", 1)])
@example(name="sampler", edits=[(0, "end", "    ", 1), (12382, "line", SNIPPETS[0], 1)])
@example(name="engine", edits=[(0, "line", SNIPPETS[6], 1), (0, "line", SNIPPETS[6], 1)])
def test_the_servers_findings_after_every_edit_equal_a_full_lint(edited_project, name, edits) -> None:
    """The server's lint reuses the trees of the statements an edit did not touch, the
    holders of findings it placed before and the project model built from the saved files;
    after every edit of a random sequence its findings (fixes included) are those of a full
    lint of the same text with the same project, and once saved, those of `ddplint check`."""
    import gc

    from ddplint.api import lint_paths
    from ddplint.engine.lint import SourceError
    from ddplint.server.lsp import Linter

    if name not in edited_project:
        return  # an example in a module of torch, which is not installed
    path = edited_project[name]
    original = text = path.read_text(encoding="utf-8")
    linter = Linter()
    uri = path.as_uri()
    try:
        for edit in [None, *edits]:  # opened as saved, then edited
            text = text if edit is None else _edited(text, *edit)
            found, _ = linter.lint(uri, str(path), text)
            settings_, rules, _ = linter.settings(str(path))
            view, _ = linter.project_view(str(path))
            try:
                full = analyse(text, str(path), settings_.rules_for(str(path), rules), project=view).diagnostics
            except SourceError:
                full = []
            assert found == full
        path.write_text(text, encoding="utf-8")  # saved: the server builds the model again
        linter.forget_project(str(path))
        found, _ = linter.lint(uri, str(path), text)
        [result] = [result for result in lint_paths([str(path)]) if Path(result.path) == path]
        assert found == (result.diagnostics if result.error is None else [])
    finally:
        path.write_text(original, encoding="utf-8")
        gc.unfreeze()


def test_a_statement_met_twice_is_parsed_once_and_gets_nodes_of_its_own() -> None:
    """`args = get_args()` in every function: each occurrence keeps its own tree across edits
    (one object in two places would get one position), and none is parsed again."""
    functions = "".join(f"def f{i}():\n    args = get_args()\n    return torch.load(args.p{i})\n\n" for i in range(6))
    source = "import torch.distributed\n\n" + "".join(["args = get_args()\n"] * 4) + functions
    cache = StatementCache()
    first = cache(source)
    edited = source.replace("args.p3", "args.q3")
    second = cache(edited)
    assert second.code == edited and second.deep_equals(parse(edited))
    assert cache.reused == 10  # the import, the four top-level lines, five of the six functions
    top = [statement for statement in second.body if isinstance(statement, cst.SimpleStatementLine)][1:]
    assert len({id(statement) for statement in top}) == 4
    # (the first follows a blank line, which the assembled module puts on it: a text of its own)
    assert [id(statement) for statement in top[1:]] == [id(statement) for statement in first.body[2:5]]
    rules = all_rules()
    assert analyse(edited, "a.py", rules, parser=cache).diagnostics == analyse(edited, "a.py", rules).diagnostics


def test_a_long_statement_the_edit_did_not_touch_is_the_same_object_after_it() -> None:
    """Long functions are put together from their pieces; the ones an edit did not touch are
    put together once, so that the walk takes their events whole."""
    body = "".join(f"    x{i} = step({i}, {{j}})\n" for i in range(50))
    source = "import torch.distributed\n\n\n" + "".join(f"def f{j}():\n{body.format(j=j)}\n\n" for j in range(3))
    cache = StatementCache()
    first = cache(source)
    edited = source.replace("def f1():\n    x0 = step(0, 1)\n", "def f1():\n    x0 = step(100, 1)\n")
    second = cache(edited)
    assert second.code == edited and second.deep_equals(parse(edited))
    assert [a is b for a, b in zip(first.body, second.body)] == [True, True, False, True]


# -- the server's long-lived program answers equal a fresh server's, edit after edit ---------------

# What a project's calls pass for a parameter (`Trainer(device=rank)`, `benchmark("resume")`) is
# read once per program and kept while it lives (ddplint.model.context.ProcessContext); these
# snippets put rank tests and saves on such parameters, and other findings, into the edited file.
PROGRAM_SNIPPETS = (
    "if self.device == 0:\n    torch.save(self.model.state_dict(), 'best.pt')\n",
    "if device == 0:\n    torch.save(model.state_dict(), 'best.pt')\n",
    "torch.save(model.state_dict(), 'model.pt')\n",
    "state = torch.load(path)\n",
    "if model_name == 'from-scratch':\n    state = torch.load(checkpoint)\n",
    "if model_name == 'resume':\n    state = torch.load(checkpoint)\n",
    "torch.distributed.barrier()\n",
    "def helper(device, x=1):\n    return x\n",
    "(",
    ":",
    "    ",
    "\n",
)
PROGRAM_PROJECTS = {
    "trainer": ("projects/rank_through_parameter", "trainer.py"),
    "bench": ("process_context/never_equal", "bench.py"),
}
PROGRAM_EDIT = st.tuples(st.integers(0, 10**6), KINDS, st.sampled_from(PROGRAM_SNIPPETS), st.integers(1, 30))


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(sorted(PROGRAM_PROJECTS)), edits=st.lists(PROGRAM_EDIT, min_size=1, max_size=6))
@example(name="trainer", edits=[(300, "line", PROGRAM_SNIPPETS[0], 1), (300, "delete", "", 20)])
@example(name="bench", edits=[(250, "line", PROGRAM_SNIPPETS[4], 1), (250, "line", PROGRAM_SNIPPETS[5], 1)])
def test_a_long_lived_servers_findings_equal_a_fresh_servers(tmp_path_factory, name, edits) -> None:
    """One server lints every edit of a random sequence with the program model it built on
    opening (and the answers it keeps in it); after each edit its findings equal those of a
    fresh server, which builds the model and answers every question anew, for the same text;
    once saved, those of `ddplint check`."""
    import gc
    import shutil

    from ddplint.api import lint_paths
    from ddplint.server.lsp import Linter

    folder, file = PROGRAM_PROJECTS[name]
    root = tmp_path_factory.mktemp("program") / "project"
    shutil.copytree(Path(__file__).parent / "data" / folder, root)
    path = root / file
    text = path.read_text(encoding="utf-8")
    linter, uri = Linter(), path.as_uri()
    try:
        for edit in [None, *edits]:
            text = text if edit is None else _edited(text, *edit)
            found, _ = linter.lint(uri, str(path), text)
            fresh, _ = Linter().lint(uri, str(path), text)
            assert found == fresh
        path.write_text(text, encoding="utf-8")
        linter.forget_project(str(path))
        found, _ = linter.lint(uri, str(path), text)
        [result] = [result for result in lint_paths([str(path)]) if Path(result.path) == path]
        assert found == (result.diagnostics if result.error is None else [])
    finally:
        gc.unfreeze()


# -- answers kept per statement across edits (ddplint.semantic.walk.nodes_under) -----------------

_FILLER = "".join(f"    x{i} = step({i})\n" for i in range(45))
_RANK_NAMED = f'''import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def save_checkpoint(model, path):
    torch.save(model.module.state_dict(), path)


def main():
    dist.init_process_group("gloo")
    model = DDP(torch.nn.Linear(16, 4))
{_FILLER}    save_checkpoint(model, f"last_{{dist.get_rank()}}.pt")


def evaluate(model):
    dist.barrier()
{_FILLER}    save_checkpoint(model, f"best_{{dist.get_rank()}}.pt")
'''


def test_nodes_under_a_statement_kept_across_edits_are_those_of_the_new_text() -> None:
    """The calls under each statement are kept by the statement object; an edit that adds or
    drops a call in one statement of a long function, whose other statements are reused, is
    seen at once, and the answer is what a search of the new tree finds."""
    from ddplint.semantic.walk import descendants, nodes_under

    cache = StatementCache()
    texts = [_RANK_NAMED, _RANK_NAMED.replace("    x7 = step(7)\n", "    x7 = 7\n"), _RANK_NAMED]
    for text in texts:
        module = cache(text)
        for statement in module.body:
            found = nodes_under(statement, cst.Call)
            assert len(found) == len(set(map(id, found)))
            assert {id(node) for node in found} == {id(node) for node in descendants(statement) if type(node) is cst.Call}
    assert cache.reused > 0


def test_a_finding_that_rests_on_another_statement_follows_an_edit_there() -> None:
    """DDP014 reads what every call of a function passes for its path (the calls of each
    top-level function are kept per statement across edits): an edit of one call, in a long
    function whose other statements and the functions around it are reused, gives or takes
    away the finding at the save in another function, as a full lint of the same text does."""
    rules = all_rules()
    edited = _RANK_NAMED.replace('f"best_{dist.get_rank()}.pt"', '"best.pt"')
    cache = StatementCache()
    found = []
    for text in (_RANK_NAMED, edited, _RANK_NAMED, edited):
        diagnostics = analyse(text, "a.py", rules, parser=cache).diagnostics
        assert diagnostics == analyse(text, "a.py", rules).diagnostics
        found.append([(d.line, d.code) for d in diagnostics])
    assert cache.reused > 0
    assert found == [[], [(7, "DDP014")], [], [(7, "DDP014")]]


def test_positions_after_an_edit_find_nodes_in_new_and_kept_statements() -> None:
    """`positions` searches the statements an edit made first for a node it has not placed
    before; nodes in those and in the statements the edit did not touch are placed where a
    codegen of the whole module places them."""
    from ddplint.semantic.walk import nodes_under, positions

    cache = StatementCache()
    texts = [_RANK_NAMED, _RANK_NAMED.replace("    x7 = step(7)\n", "    x7 = step(7, 8)\n"), _RANK_NAMED.replace("x40", "y40")]
    for text in texts:
        module = cache(text)
        tree = ast.parse(text)
        calls = [call for statement in module.body for call in nodes_under(statement, cst.Call)]
        assert positions(module, calls, tree=tree)[0] == positions(module, calls)[0]
    assert cache.reused > 0


# -- program-model answers kept for the model's life, an if's test kept for its leave ------------

_HELPERS = '''import torch
import torch.distributed as dist


def save(model, path):
    torch.save(model.state_dict(), path)
'''

_TRAINER = '''import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from helpers import save


def train(model, path):
    dist.init_process_group("nccl")
    model = DDP(model)
    if dist.get_rank() != 0:
        return
    save(model, path)


def evaluate(model, path):
    if dist.get_rank() == 0:
        print("saving")
    else:
        print("waiting")
    save(model, path)


if __name__ == "__main__":
    train(torch.nn.Linear(2, 2), "model.pt")
    evaluate(torch.nn.Linear(2, 2), "model.pt")
'''


def test_answers_kept_across_edits_equal_a_fresh_servers(tmp_path) -> None:
    """The program model's answers (which project function a call reaches, a helper's
    definition, the commands that launch the script) are kept for the model's life, and the
    rank analysis reads an `if`'s test once per walk (visit_If for leave_If): after each edit
    of a sequence that gives and takes away findings (a rank-0 guard's early exit that
    DDP014's save through a helper rests on, a barrier under a rank test), one long-lived
    server's findings equal a fresh server's, which asks everything anew."""
    import gc

    from ddplint.server.lsp import Linter

    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "helpers.py").write_text(_HELPERS, encoding="utf-8")
    (tmp_path / "README.md").write_text("    torchrun --nproc_per_node 4 train.py\n", encoding="utf-8")
    path = tmp_path / "train.py"
    path.write_text(_TRAINER, encoding="utf-8")
    unguarded = _TRAINER.replace("    if dist.get_rank() != 0:\n        return\n", "")
    barrier = _TRAINER.replace('print("saving")', "dist.barrier()")
    linter, uri = Linter(), path.as_uri()
    found = []
    try:
        for text in (_TRAINER, unguarded, _TRAINER, barrier, unguarded, barrier, _TRAINER):
            diagnostics, problem = linter.lint(uri, str(path), text)
            assert problem is None
            assert diagnostics == Linter().lint(uri, str(path), text)[0]
            found.append([(d.line, d.code) for d in diagnostics])
    finally:
        gc.unfreeze()
    assert found[:4] == [[(21, "DDP014")], [(11, "DDP014"), (19, "DDP014")], [(21, "DDP014")], [(18, "DDP008"), (21, "DDP014")]]
    assert found[4:] == found[1:2] + found[3:4] + found[:1]
