"""The two fixed points the analyses, the rules and the project model compute, written once:
what is reachable from some seeds, and a value grown by a step until the step adds nothing.
Imports nothing from ddplint, so that every layer can use it."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TypeVar

H = TypeVar("H", bound=Hashable)
T = TypeVar("T")


def reachable(seeds: Iterable[H], successors: Callable[[H], Iterable[H]]) -> Iterator[H]:
    """Yield `seeds` and everything reached from them through `successors`, each once, depth
    first (the last seed first). Lazy: a caller looking for one item stops the search there."""
    seen: set[H] = set()
    pending = list(seeds)
    while pending:
        item = pending.pop()
        if item in seen:
            continue
        seen.add(item)
        yield item
        pending.extend(successors(item))


def fixed_point(step: Callable[[T], T], start: T) -> T:
    """`step` applied to `start`, then to what it returns, until it returns what it was given."""
    current = start
    while True:
        following = step(current)
        if following == current:
            return current
        current = following
