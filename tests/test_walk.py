"""The engine's own walk and positions must agree with libcst's visitor and PositionProvider."""

import ast
import pathlib

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, reject, settings
from libcst.metadata import MetadataWrapper, PositionProvider

from ddplint.semantic.walk import SKIPPED, _holders, positions, walk

pytestmark = pytest.mark.slow  # CI runs this module on Python 3.11 only (see .ci/run)

REPO = pathlib.Path(__file__).resolve().parent.parent
SOURCES = sorted(p for p in REPO.glob("ddplint/**/*.py")) + sorted(REPO.glob("fixtures/**/*.py"))


_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


class _Recorder(cst.CSTVisitor):
    """libcst's own visit, less the statements of a block after one that always leaves it
    (code that never runs, which the engine's walk does not enter)."""

    def __init__(self):
        super().__init__()
        self.entered, self.left, self.dead = [], [], set()

    def on_visit(self, node):
        if id(node) in self.dead:
            return False
        if isinstance(node, cst.IndentedBlock):
            exits = [i for i, line in enumerate(node.body) if isinstance(line, cst.SimpleStatementLine) and any(isinstance(small, _EXITS) for small in line.body)]
            if exits:
                self.dead.update(id(line) for line in node.body[exits[0] + 1 :])
        if type(node) not in SKIPPED:
            self.entered.append(node)
        return True

    def on_leave(self, node):
        if type(node) not in SKIPPED and id(node) not in self.dead:
            self.left.append(node)


def _check(module: cst.Module) -> None:
    reference = _Recorder()
    module.visit(reference)
    entered, left = [], []
    every_class = {type(node) for node in reference.entered}
    walk(module, {cls: [entered.append] for cls in every_class}, {cls: [left.append] for cls in every_class})
    assert [id(n) for n in entered] == [id(n) for n in reference.entered]
    assert [id(n) for n in left] == [id(n) for n in reference.left]

    nodes = [node for node in reference.entered if not isinstance(node, cst.Module)]
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    ours, _ = positions(module, nodes)
    for node in nodes:
        where = expected[node]
        assert ours[id(node)] == ((where.start.line, where.start.column), (where.end.line, where.end.column))
    _check_positions_from_the_ast(module, nodes, ours)


def _check_positions_from_the_ast(module: cst.Module, nodes: list, full: dict) -> None:
    """Positions found by generating only the statements that hold the nodes (placed by the
    ast) are those of the whole module, for runs of nodes in walk order, and so are the layouts
    of the statements among them."""
    try:
        tree = ast.parse(module.code)
    except SyntaxError:  # code libcst accepts and CPython does not: there is no ast to place by
        return
    step = max(1, len(nodes) // 8)
    for start in range(0, len(nodes), step):
        run = nodes[start : start + step]
        statements = [node for node in run if isinstance(node, cst.BaseStatement)][:3]
        ours, layouts = positions(module, run, statements, tree)
        assert ours == {id(node): full[id(node)] for node in run}
        assert layouts == positions(module, [], statements)[1]


def test_positions_generate_only_the_statement_that_holds_the_node() -> None:
    methods = "".join(f"    def m{i}(self):\n        return torch.load(p{i})\n\n" for i in range(30))
    source = f'import torch\n\n\nclass Trainer:\n    """A long class."""\n\n{methods}x = 1; y = 2\n'
    module = cst.parse_module(source)
    trainer = module.body[1]
    method = trainer.body.body[8]  # m7, after the docstring
    statement = method.body.body[0]
    call = statement.body[0].value
    tree = ast.parse(source)
    [holder] = _holders(module, tree, [call])  # the innermost statement of a block that holds it
    assert holder[0] is statement and holder[1] == 29 and holder[2] == "        "
    [holder] = _holders(module, tree, [method.name])  # in a method's header: the method
    assert holder[0] is method and holder[2] == "    "
    spans, _ = positions(module, [call], tree=tree)
    assert spans[id(call)] == positions(module, [call])[0][id(call)] == ((29, 15), (29, 29))
    [holder] = _holders(module, tree, [trainer.name])  # in a class's header: the class
    assert holder[0] is trainer


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_walk_and_positions_match_libcst_on_project_code(path):
    _check(cst.parse_module(path.read_bytes()))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_walk_and_positions_match_libcst_on_generated_code(source):
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:  # hypothesmith's nodes can mix tabs and spaces, which libcst refuses
        reject()
    _check(module)


@pytest.mark.parametrize("source", ["try:\n    pass\nexcept* ValueError as error:\n    pass\n", "try: pass\nexcept* ...:\n pass\n"])
def test_walk_visits_an_except_star_clause_in_source_order(source):
    """hypothesmith found it: `except*`'s type came after its body (the dataclass order). Parsed
    as 3.11 code, which libcst reads on any Python."""
    _check(cst.parse_module(source, config=cst.PartialParserConfig(python_version="3.11")))


def test_walk_does_not_enter_code_after_a_statement_that_leaves_its_block():
    source = (
        "def save(model):\n    raise RuntimeError('unsupported')\n    torch.save(model, 'a.pt')\n"
        "for x in xs:\n    if x:\n        continue\n        dead(x)\n    live(x)\n"
        "def f():\n    return 1\n    dead()\n"
    )
    called = []
    walk(cst.parse_module(source), {cst.Call: [lambda node: called.append(node.func.value if isinstance(node.func, cst.Name) else "save")]}, {})
    assert called == ["RuntimeError", "live"]
