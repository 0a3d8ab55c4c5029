"""Building blocks for fixes, shared by the rules: small, layout-preserving node rewrites."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from ddplint.core.torch_api import API


def keyword_argument(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional_arguments(call: cst.Call) -> list[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and arg.star == ""]


def has_star_arguments(call: cst.Call, stars: Sequence[str] = ("*", "**")) -> bool:
    return any(arg.star in stars for arg in call.args)


def argument_at(call: cst.Call, position: int | None, name: str) -> cst.Arg | None:
    """The argument bound to parameter `name` at `position`: by keyword, else positionally
    (only by keyword when `position` is None)."""
    found = keyword_argument(call, name)
    if found is not None:
        return found
    positional = positional_arguments(call)
    return positional[position] if position is not None and len(positional) > position else None


def passed_arguments(call: cst.Call):
    """(index or keyword, value) of a call's arguments, as the program model numbers them:
    positions end at a `*args`."""
    index, positional = 0, True
    for arg in call.args:
        if arg.keyword is not None:
            yield arg.keyword.value, arg.value
        elif arg.star:
            positional = False
        elif positional:
            yield index, arg.value
            index += 1


def argument_for(call: cst.Call, target: API, name: str) -> cst.Arg | None:
    """The argument `call` passes for parameter `name` of `target` (an API of
    `ddplint.core.torch_api`): by keyword, or at the parameter's position in its signature."""
    return argument_at(call, target.position(name), name)


def with_keyword_argument(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """`call` with `name=value` appended, keeping the call's layout: a call written one
    argument per line with a trailing comma gets the new argument on its own line too."""
    new = cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    if not call.args:
        return call.with_changes(args=[new])
    args = list(call.args)
    last = args[-1]
    if isinstance(last.comma, cst.Comma):
        # `f(\n    a,\n)`: the new argument takes the old trailing comma (and the newline
        # before `)`); the old last argument's comma is followed by the indent of the first.
        indent = call.whitespace_before_args
        if not isinstance(indent, cst.ParenthesizedWhitespace):
            indent = cst.SimpleWhitespace(" ")  # `f(a, # c\n)`: the call starts on one line
        args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=indent))
        args.append(new.with_changes(comma=last.comma))
    else:
        # `f(\n    a\n)`: the new argument goes after the last one, before the newline that
        # precedes `)`, which the new last argument takes over.
        args[-1] = last.with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
            whitespace_after_arg=cst.SimpleWhitespace(""),
        )
        args.append(new.with_changes(whitespace_after_arg=last.whitespace_after_arg))
    return call.with_changes(args=args)


def string_literal(value: str) -> cst.SimpleString:
    return cst.SimpleString('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')


def is_docstring(statement: cst.CSTNode) -> bool:
    """A statement that is only a string literal (a module, class or function docstring)."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def module_alias(names, module: str) -> tuple[str, tuple[str, ...]] | None:
    """The name under which `module` (e.g. "torch") can be used in the current scope, and the
    import a fix must add for it: `("th", ())` after `import torch as th`, `("torch",
    ("import torch",))` when it is not imported, None when `torch` means something else here."""
    candidates = [module, *(bound for bound, origin in names.module_scope.bindings.items() if origin == module)]
    for bound in candidates:
        if names.qualified(cst.Name(bound)) == module:
            return bound, ()
    found, _ = names.scope.lookup(module)
    if found:
        return None
    return module, (f"import {module}",)


class _ReplaceById(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.CSTNode]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(id(original_node), updated_node)


def replace_nodes(tree: cst.CSTNode, replacements: dict[cst.CSTNode, cst.CSTNode]) -> cst.CSTNode:
    """`tree` with each original node of it (a key) replaced by its value: for a fix that
    rewrites a node and, at the same time, nodes inside it."""
    if not replacements:
        return tree
    return tree.visit(_ReplaceById({id(original): new for original, new in replacements.items()}))


def names_in(tree: cst.CSTNode) -> set[str]:
    """Every identifier written in `tree` (to pick a new local name that shadows nothing)."""
    found: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    tree.visit(_Names())
    return found


def referenced_names(tree: cst.CSTNode) -> set[str]:
    """The identifiers in `tree` that read a binding: not an attribute's own name (`os.environ`
    reads `os`, not `environ`) nor a keyword argument's."""
    found: set[str] = set()

    class _References(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    tree.visit(_References())
    return found


def unique_name(base: str, taken: set[str]) -> str:
    name = base
    while name in taken:
        name += "_"
    taken.add(name)
    return name
