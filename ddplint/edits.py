"""Building blocks for fixes, shared by the rules: small, layout-preserving node rewrites."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst


def keyword_argument(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional_arguments(call: cst.Call) -> list[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and arg.star == ""]


def has_star_arguments(call: cst.Call, stars: Sequence[str] = ("*", "**")) -> bool:
    return any(arg.star in stars for arg in call.args)


def argument(call: cst.Call, position: int, name: str) -> cst.Arg | None:
    """The argument bound to parameter `name` at `position`: by keyword, else positionally."""
    found = keyword_argument(call, name)
    if found is not None:
        return found
    positional = positional_arguments(call)
    return positional[position] if len(positional) > position else None


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
        args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=indent))
        args.append(new.with_changes(comma=last.comma))
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(new)
    return call.with_changes(args=args)


def string_literal(value: str) -> cst.SimpleString:
    return cst.SimpleString('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
