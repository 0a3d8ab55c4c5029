"""A fast, order-faithful walk of a libcst tree, and positions for just the nodes asked for.

libcst's visitor protocol rebuilds every node as it goes and its PositionProvider records a
range for every node of the file. Measured on torch's largest test file (77k nodes): parse
1.6 s, libcst's visit of an empty visitor 1.1 s, PositionProvider 3.1 s; this walk takes 0.1 s
and `positions` one codegen pass, about 0.4 s.

The walk reads each node's dataclass fields directly. It skips whitespace and punctuation
nodes (no rule visits them) and visits children in source order: for the classes whose fields
are not declared in source order, ORDER gives it (checked against libcst in the tests).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.internal import CodegenState

SKIPPED = frozenset(
    {
        cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.EmptyLine,
        cst.Newline, cst.Comment, cst.Comma, cst.Dot, cst.LeftParen, cst.RightParen,
        cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace,
        cst.AssignEqual, cst.Colon, cst.Semicolon,
    }
)

# Source order of the child-bearing fields, where the dataclass declares them otherwise.
ORDER: dict[type, tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "asynchronous", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.AnnAssign: ("target", "annotation", "value"),
    cst.Arg: ("keyword", "value"),
    cst.Subscript: ("value", "slice"),
    cst.Slice: ("lower", "upper", "step"),
    cst.ListComp: ("elt", "for_in"),
    cst.SetComp: ("elt", "for_in"),
    cst.GeneratorExp: ("elt", "for_in"),
    cst.DictComp: ("key", "value", "for_in"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.Lambda: ("params", "body"),
    cst.Assert: ("test", "msg"),
    cst.Attribute: ("value", "attr"),
    cst.Call: ("func", "args"),
    cst.ImportFrom: ("module", "names"),
}

_FIELDS: dict[type, tuple[str, ...]] = {}
# Fields that hold only SKIPPED nodes (whitespace, punctuation) or plain values: not read at
# all, which saves a third of the walk's reads.
_LEAF_FIELDS = frozenset({
    "lpar", "rpar", "semicolon", "comma", "leading_lines", "lbrace", "rbrace", "lbracket", "rbracket", "equal",
    "trailing_whitespace", "footer", "header", "lines_after_decorators", "colon", "first_colon", "second_colon",
    "newline", "dot", "relative", "default_indent", "default_newline", "encoding", "has_trailing_newline", "indent",
    "empty_lines", "trailing_comma",
})


def _fields(cls: type) -> tuple[str, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        declared = [
            field.name
            for field in dataclasses.fields(cls)
            if not field.name.startswith("whitespace") and field.name not in _LEAF_FIELDS
        ]
        ordered = [name for name in ORDER.get(cls, ()) if name in declared]
        found = _FIELDS[cls] = tuple(ordered + [name for name in declared if name not in ordered])
    return found


_IS_CHILD: dict[type, bool] = {}


def _is_child(cls: type) -> bool:
    """A node worth visiting: `isinstance(x, CSTNode)` goes through the ABC machinery on
    every call, so the answer is cached per class."""
    found = _IS_CHILD.get(cls)
    if found is None:
        found = _IS_CHILD[cls] = issubclass(cls, cst.CSTNode) and cls not in SKIPPED
    return found


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    for name in _fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is list or kind is tuple:
            found.extend(item for item in value if _is_child(type(item)))
        elif _is_child(kind):
            found.append(value)
    return found


class NodeMemo:
    """Answers about libcst nodes kept across lints, by the node's identity and a key. A libcst
    node never changes, and in the language server an edit re-parses only the statements it
    touched, so the nodes elsewhere are the same objects from one edit to the next: an answer
    that depends on nothing but the node (and the key) holds for them. Each entry holds its
    node, so an id is not reused while it is here; the whole is dropped past `limit` nodes."""

    def __init__(self, limit: int = 50_000) -> None:
        self._entries: dict[int, tuple[cst.CSTNode, dict]] = {}
        self._limit = limit

    def get(self, node: cst.CSTNode, key: Hashable, compute: Callable[[], object]):
        """The answer for (`node`, `key`): kept, else `compute()`d and kept."""
        entry = self._entries.get(id(node))
        if entry is None or entry[0] is not node:
            if len(self._entries) >= self._limit:
                self._entries.clear()
            entry = self._entries[id(node)] = (node, {})
        answers = entry[1]
        if key not in answers:
            answers[key] = compute()
        return answers[key]


# The nodes of a class under each statement, kept across lints (see `nodes_under`).
_below = NodeMemo()


def nodes_under(node: cst.CSTNode, kind: type[cst.CSTNode]) -> tuple:
    """Every node of class `kind` (exactly) under `node`, itself included, in no particular
    order. What a statement below it holds is kept by the statement: in the language server an
    edit re-parses only the statements it touched, so the others are the same objects and are
    not searched again (a keystroke in one method of a 1,500-line class searches that method's
    statements)."""
    found: list[cst.CSTNode] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current is not node and _statement(type(current)):
            found.extend(_below.get(current, kind, lambda below=current: nodes_under(below, kind)))  # type: ignore[arg-type]
            continue
        if type(current) is kind:
            found.append(current)
        stack.extend(children(current))
    return tuple(found)


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and every node under it (in no particular order)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


Method = Callable[[cst.CSTNode], object]


class VisitorFailed(Exception):
    """A visit or leave method raised; `method` says whose (`method.__self__`)."""

    def __init__(self, method: Method, error: Exception) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.method = method
        self.error = error


def walk(root: cst.CSTNode, visits: dict[type, list[Method]], leaves: dict[type, list[Method]]) -> None:
    """Call `visits[type]` on entering and `leaves[type]` on leaving each node, depth first,
    without recursion (deep expressions do not hit Python's recursion limit). A method that
    raises stops the walk with VisitorFailed naming it; a `try` costs nothing until then."""
    for node, leaving in events(root, frozenset(visits), frozenset(leaves)):
        for method in (leaves if leaving else visits)[type(node)]:
            try:
                method(node)
            except (RecursionError, MemoryError):
                raise
            except Exception as error:
                raise VisitorFailed(method, error) from error


# The walk's events (node, leaving) of each statement, for the node classes visited and left
# then: in the language server an edit re-parses only the statements it touched, and the others
# are the same objects, so their events are not found again. Kept for the statements the last
# walk reached (those it took whole, and those it went into); entries hold their statement, so
# an id is not reused while it is here.
_statement_events: dict[int, tuple[cst.CSTNode, tuple[frozenset, frozenset], list]] = {}
_IS_STATEMENT: dict[type, bool] = {}


def _statement(cls: type) -> bool:
    found = _IS_STATEMENT.get(cls)
    if found is None:
        found = _IS_STATEMENT[cls] = issubclass(cls, cst.BaseStatement)
    return found


def events(root: cst.CSTNode, entered: frozenset[type], left: frozenset[type]) -> list[tuple[cst.CSTNode, bool]]:
    """(node, leaving) in the order a depth-first walk meets them, for the nodes of the classes
    in `entered` (on entering) and `left` (on leaving) only."""
    global _statement_events
    key = (entered, left)
    reached: dict[int, tuple[cst.CSTNode, tuple[frozenset, frozenset], list]] = {}
    found: list[tuple[cst.CSTNode, bool]] = []
    starts: list[int] = []  # where each open statement's events start in `found`
    stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        cls = type(node)
        statement = _IS_STATEMENT.get(cls)
        if statement is None:
            statement = _IS_STATEMENT[cls] = issubclass(cls, cst.BaseStatement)
        if leaving:
            if cls in left:
                found.append((node, True))
            if statement:
                reached[id(node)] = (node, key, found[starts.pop() :])
            continue
        if statement:
            cached = _statement_events.get(id(node))
            if cached is not None and cached[0] is node and cached[1] == key:
                found.extend(cached[2])
                reached[id(node)] = cached
                continue
            starts.append(len(found))
        if cls in entered:
            found.append((node, False))
        stack.append((node, True))
        below = children(node)
        if cls is cst.IndentedBlock:
            below = _live(below)
        stack.extend((child, False) for child in reversed(below))
    _statement_events = reached
    return found


_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def _live(statements: list[cst.CSTNode]) -> list[cst.CSTNode]:
    """A block's statements up to the first that always leaves it (`raise`, `return`,
    `continue`, `break`): the code after it never runs, and no rule reads it (relora's
    `save_model_fsdp` raises first; a save after that writes nothing)."""
    for index, statement in enumerate(statements):
        if type(statement) is cst.SimpleStatementLine and any(type(small) in _EXITS for small in statement.body):  # type: ignore[attr-defined]
            return statements[: index + 1]
    return statements


_NEWLINES = re.compile(r"\r\n?|\n")
Span = tuple[tuple[int, int], tuple[int, int]]  # ((line, column), (end_line, end_column)), 1-based lines, 0-based columns


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where a node sits, for text edits that replace it as a rewrite of the tree would: the
    indentation of its block, and its whole extent (a statement's leading comment lines and
    its trailing newline included)."""

    indent: str
    whole: Span


@dataclasses.dataclass
class _PositionState(CodegenState):
    """Codegen that only tracks where it is: the same positions as libcst's PositionProvider
    (syntactic where libcst records one, whitespace-inclusive otherwise), as plain tuples."""

    line: int = 1
    column: int = 0
    spans: dict[int, Span] = dataclasses.field(default_factory=dict)
    _starts: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    # Nodes (by id) whose Layout is wanted, the layouts found, and their indentation so far.
    watch: frozenset[int] = frozenset()
    layouts: dict[int, Layout] = dataclasses.field(default_factory=dict)
    _indents: dict[int, str] = dataclasses.field(default_factory=dict)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        if "\n" not in value and "\r" not in value:
            self.column += len(value)
            return
        segments = _NEWLINES.split(value)
        self.line += len(segments) - 1
        self.column = len(segments[-1])

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append((self.line, self.column))
        if id(node) in self.watch:
            self._indents[id(node)] = "".join(self.indent_tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        self.spans.setdefault(id(node), (start, (self.line, self.column)))
        if id(node) in self.watch:
            self.layouts[id(node)] = Layout(self._indents.pop(id(node)), (start, (self.line, self.column)))

    @contextmanager
    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        start = (self.line, self.column)
        try:
            yield
        finally:
            end = (self.line, self.column)
            if start_node is not None:
                start = self.spans[id(start_node)][0]
            if end_node is not None:
                end = self.spans[id(end_node)][1]
            self.spans[id(node)] = (start, end)


@dataclasses.dataclass
class _RenderState(_PositionState):
    """Codegen that keeps its text as well as where each node is in it."""

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        super().add_token(value)


def render(nodes: Sequence[cst.CSTNode], module: cst.Module, indent: str = "", *, whole: bool = False) -> str:
    """The source of `nodes`, one after another, as they would read in `module` inside a
    block indented by `indent`. With `whole`, all of it (statements with their leading lines
    and newlines); else from the first node's syntactic start to the last one's syntactic
    end, the extent `positions` gives a node."""
    state = _RenderState(default_indent=module.default_indent, default_newline=module.default_newline)
    state.indent_tokens = [indent] if indent else []
    for node in nodes:
        node._codegen(state)
    text = "".join(state.tokens)
    if whole:
        return text
    starts = [0, *(end.end() for end in _NEWLINES.finditer(text))]  # lines as add_token counts them
    (line, column), _ = state.spans[id(nodes[0])]
    _, (end_line, end_column) = state.spans[id(nodes[-1])]
    return text[starts[line - 1] + column : starts[end_line - 1] + end_column]


def positions(
    module: cst.Module,
    nodes: Iterable[cst.CSTNode],
    laid_out: Iterable[cst.CSTNode] = (),
    tree: ast.Module | None = None,
) -> tuple[dict[int, Span], dict[int, Layout]]:
    """Spans of `nodes` (by id) in `module`, and the Layout of the `laid_out` nodes. Without
    `tree`, one codegen pass over the module. With `tree`, CPython's ast of the same text, only
    the statements that hold those nodes are generated (top-level statements, or the
    statements of a top-level class body), each shifted to the line the ast starts it on; where
    the two trees do not pair up, or a node lies outside those statements (a class's bases),
    the whole module is."""
    nodes, laid_out = list(nodes), list(laid_out)
    wanted = {id(node) for node in (*nodes, *laid_out)}
    parts = _holders(module, tree, nodes + laid_out) if tree is not None else None
    watch = frozenset(map(id, laid_out))
    spans: dict[int, Span] = {}
    layouts: dict[int, Layout] = {}
    for node, line, indent in parts or [(module, 1, "")]:
        generated, found = _generated_once(node, indent, module, watch) if parts else _generated_now(node, indent, module, watch)
        shift = line - generated[id(node)][0][0] if parts else 0
        for key in wanted.intersection(generated):
            spans[key] = _shifted(generated[key], shift)
        for key, layout in found.items():
            layouts[key] = Layout(layout.indent, _shifted(layout.whole, shift))
    return {id(node): spans[id(node)] for node in nodes}, layouts


def _generated_now(node: cst.CSTNode, indent: str, module: cst.Module, watch: frozenset[int]):
    """(span of every node under `node` as generated alone, the layouts of those in `watch`)."""
    state = _PositionState(default_indent=module.default_indent, default_newline=module.default_newline)
    state.watch = watch
    state.indent_tokens = [indent] if indent else []
    node._codegen(state)
    return state.spans, state.layouts


# The codegen of the statements that held nodes asked about, by id. In the language server an
# edit re-parses only the statements it touched, and several rules and the engine ask about
# nodes of the same statement: a statement that is the same object, in the same block, is not
# generated again (its nodes lie where they lay in it; only where it starts may have moved).
# Entries hold their statement, so an id is not reused while it is here; a statement that a
# module no longer holds is dropped when a later call sees the module (`_prune`).
_generated: dict[int, tuple[cst.CSTNode, str, dict[int, Span], dict[int, Layout]]] = {}


def _generated_once(node: cst.CSTNode, indent: str, module: cst.Module, watch: frozenset[int]):
    cached = _generated.get(id(node))
    if cached is not None and cached[0] is node and cached[1] == indent:
        _, _, generated, found = cached
        if all(key in found for key in watch.intersection(generated)):
            return generated, {key: found[key] for key in watch.intersection(generated)}
    generated, found = _generated_now(node, indent, module, watch)
    _generated[id(node)] = (node, indent, generated, found)
    return generated, found


def _shifted(span: Span, lines: int) -> Span:
    (line, column), (end_line, end_column) = span
    return (line + lines, column), (end_line + lines, end_column)


# The holder found for each node asked about, while that holder is in the module the calls
# see. In the language server an edit re-parses only the statements it touched, so the nodes
# of findings elsewhere, and the statements that hold them, are the same objects as before:
# they are placed again without a search (several rules and the engine ask, each lint).
_last_holders: dict[int, tuple[cst.CSTNode, cst.CSTNode]] = {}


Place = tuple[cst.CSTNode, int, str]  # a statement, the line its syntax starts on, its block's indentation


def _holders(module: cst.Module, tree: ast.Module, nodes: list[cst.CSTNode]) -> list[Place] | None:
    """(statement, the line its syntax starts on, its block's indentation) for each statement
    that holds one of `nodes`: the innermost statement that holds it, among those of the
    module's blocks (`_places`: the bodies of classes, functions, loops, `with`, `if` and
    `try` at any depth); None where some node is not found so."""
    places = _places(module, tree)
    if places is None:
        return None
    holder_of: dict[int, cst.CSTNode] = {}
    left: dict[int, cst.CSTNode] = {}
    for node in nodes:
        last = _last_holders.get(id(node))
        if last is not None and last[0] is node and id(last[1]) in places:
            holder_of[id(node)] = last[1]
        else:
            left[id(node)] = node
    for statement, _, _ in _search_order(places):
        if not left:
            break
        for node in _descendants_outside(statement, places):
            if id(node) in left:
                holder_of[id(node)] = statement
                del left[id(node)]
    if left:
        return None
    for key in [key for key in _generated if key not in places]:
        del _generated[key]  # statements no longer in the module
    for key in [key for key, (_, holder) in _last_holders.items() if id(holder) not in places]:
        del _last_holders[key]
    _last_holders.update((id(node), (node, holder_of[id(node)])) for node in nodes)
    return list({id(holder): places[id(holder)] for holder in holder_of.values()}.values())


def _descendants_outside(statement: cst.CSTNode, places: dict[int, Place]) -> Iterator[cst.CSTNode]:
    """`statement` and the nodes under it, but not those under another of the `places` (they
    are searched as theirs)."""
    stack = [statement]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in children(current) if id(child) not in places)


# The compound statements whose body's statements are places of their own, and where the body is.
_BLOCKS = (cst.ClassDef, cst.FunctionDef, cst.For, cst.While, cst.With, cst.If, cst.Try)


_last_places: list = [None, None, None]  # the module and ast the last `_places` paired, and its answer
# The places of the last module paired (`_places`) in the order a search for a node goes through
# them (`_search_order`), and the ids of those of the module before it.
_last_order: list = [None, []]
_earlier_places: set[int] = set()


def _search_order(places: dict[int, Place]) -> list[Place]:
    """The places of the module, those that were not places of the module paired before it
    first: a node asked about for the first time after an edit lies most often in a statement
    the edit made (each node has one holder, so the order does not change what is found; a
    search in file order went through half the file for a node in its middle)."""
    if _last_order[0] is not places:
        fresh = [place for key, place in places.items() if key not in _earlier_places]
        kept = [place for key, place in places.items() if key in _earlier_places]
        _last_order[:] = [places, fresh + kept]
    return _last_order[1]


def _places(module: cst.Module, tree: ast.Module) -> dict[int, Place] | None:
    """Each statement of the module's blocks, by id (top-level ones, and those of the body of a
    class, function, loop, `with`, `if` or `try` at any depth, where its ast pairs up): the
    statement, the line the ast starts it on, the indentation of its block; None where the
    module and the ast do not pair up at the top level. (Several rules and the engine ask
    about the same module in one lint: it is paired once.)"""
    if _last_places[0] is not module or _last_places[1] is not tree:
        if _last_places[2] is not None:
            _earlier_places.clear()
            _earlier_places.update(_last_places[2])
        _last_places[:] = [module, tree, _paired_places(module, tree)]
    return _last_places[2]


def _paired_places(module: cst.Module, tree: ast.Module) -> dict[int, Place] | None:
    pairs = _paired(module.body, tree.body)
    if pairs is None:
        return None
    places: dict[int, Place] = {}
    pending: list[tuple[list[tuple[cst.CSTNode, ast.stmt]], str]] = [(pairs, "")]
    while pending:
        pairs, indent = pending.pop()
        for statement, first in pairs:
            places[id(statement)] = (statement, first.lineno, indent)
            block = statement.body if type(statement) in _BLOCKS else None  # type: ignore[attr-defined]
            if type(block) is cst.IndentedBlock and hasattr(first, "body"):
                inner = _paired(block.body, first.body)  # type: ignore[attr-defined]
                if inner:
                    pending.append((inner, indent + (module.default_indent if block.indent is None else block.indent)))
    return places


def _paired(statements: Sequence[cst.BaseStatement], body: list[ast.stmt]) -> list[tuple[cst.CSTNode, ast.stmt]] | None:
    """Each libcst statement with the first ast statement of the same line (`a = 1; b = 2` is
    one libcst statement and two ast ones), or None where they do not correspond."""
    firsts: list[ast.stmt] = []
    counts: list[int] = []
    end = 0
    for statement in body:
        if firsts and statement.lineno <= end:
            counts[-1] += 1
        else:
            firsts.append(statement)
            counts.append(1)
        end = max(end, statement.end_lineno or statement.lineno)
    if len(firsts) != len(statements):
        return None
    for statement, first, count in zip(statements, firsts, counts):
        if type(statement) is cst.SimpleStatementLine:
            same = len(statement.body) == count
        else:
            same = count == 1 and type(first).__name__.replace("Async", "") == type(statement).__name__
        if not same:
            return None
    return list(zip(statements, firsts))
