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


class DepthMemo:
    """The answers of a question that follows calls to a bounded depth, kept by key. An answer
    found at some depth saw less below it than the same question asked nearer the top: a
    negative answer (`none`) is reused only for a question asked as deep or deeper, so that
    the findings never hang on the order in which files ask (a file linted first asked it deep
    down a chain of helpers and cached "no collective" for the top-level call of another).
    While a key is being answered it reads as `none` at every depth: a cycle proves nothing."""

    def __init__(self, none=None) -> None:
        self._none = none
        self._known: dict = {}

    def get(self, key, depth: int):
        """(True, the answer) where one is known for `key` at `depth`, else (False, None)."""
        known = self._known.get(key)
        if known is not None and (known[0] != self._none or known[1] <= depth):
            return True, known[0]
        return False, None

    def start(self, key) -> None:
        self._known[key] = (self._none, -1)

    def put(self, key, answer, depth: int):
        self._known[key] = (answer, depth)
        return answer
