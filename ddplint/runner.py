"""Run the engine over many files: cache, prefilter in this process, parse in a pool.

Reading a file and searching it for needles costs about a hundredth of parsing it, and most
files match no rule. So this process reads every file, answers from the cache or the
prefilter where it can, and sends only the files that must be parsed to worker processes.
Results come back in path order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor

from ddplint.api import Mode, process_file
from ddplint.cache import Cache
from ddplint.diagnostics import FileResult
from ddplint.engine import SourceError, rules_for_text
from ddplint.files import Target, read_source
from ddplint.rule import Rule

# Below this many files to parse, a pool costs more than it saves.
MIN_FILES_FOR_POOL = 4


def run(
    targets: Iterable[Target],
    rules_for: Callable[[str], Sequence[type[Rule]]],
    mode: Mode,
    *,
    jobs: int | None = None,
    cache: Cache | None = None,
) -> Iterator[FileResult]:
    """One result per target, in the targets' order, streamed as soon as it is known.
    `rules_for(path)` gives the rules active for a file (configuration may vary them)."""
    use_cache = cache is not None and not mode.fix
    slots: list[FileResult | None] = []
    work: list[tuple[int, Target, list[type[Rule]], os.stat_result | None, bytes | None]] = []
    for target in targets:
        if target.error is not None:
            slots.append(FileResult(target.path, error=target.error))
            continue
        rules = list(rules_for(target.path))
        result, needs_parse, info, data = _triage(target.path, rules, cache if use_cache else None)
        slots.append(None if needs_parse else result)
        if needs_parse:
            work.append((len(slots) - 1, target, rules, info, data))

    ready = 0
    parsed = _parse_all([(target, rules) for _, target, rules, _, _ in work], mode, jobs)
    for (index, target, rules, info, data), result in zip(work, parsed):
        slots[index] = result
        if use_cache and info is not None and data is not None:
            cache.store(target.path, rules, info, data, result)  # type: ignore[union-attr]
        while ready < len(slots) and slots[ready] is not None:
            yield slots[ready]  # type: ignore[misc]
            ready += 1
    yield from slots[ready:]  # type: ignore[misc]
    if use_cache:
        cache.save()  # type: ignore[union-attr]


def _triage(path: str, rules: list[type[Rule]], cache: Cache | None):
    """(result so far, must it be parsed, stat, bytes) for one file, without parsing it."""
    try:
        info = os.stat(path)
    except OSError as error:
        return FileResult(path, error=f"cannot read: {error.strerror or error}"), False, None, None
    if cache is not None:
        hit = cache.lookup(path, rules, info)
        if hit is not None:
            return hit, False, info, None
    try:
        decoded, data = read_source(path)
    except SourceError as error:  # unreadable, not a regular file, or not decodable
        return FileResult(path, error=str(error)), False, None, None
    if cache is not None:
        hit = cache.lookup(path, rules, info, data)
        if hit is not None:
            return hit, False, info, data
    if rules_for_text(decoded.text, rules):
        return FileResult(path), True, info, data
    result = FileResult(path)
    if cache is not None:
        cache.store(path, rules, info, data, result)
    return result, False, info, data


def _parse_all(work: list[tuple[Target, list[type[Rule]]]], mode: Mode, jobs: int | None) -> Iterator[FileResult]:
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(work) < MIN_FILES_FOR_POOL:
        for target, rules in work:
            yield _process_target(target, rules, mode)
        return
    # fork (where there is one) starts workers with libcst and the rules already imported.
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    chunk = max(1, len(work) // (jobs * 8))
    targets, rule_lists = zip(*work)
    with ProcessPoolExecutor(max_workers=min(jobs, len(work)), mp_context=context) as pool:
        yield from pool.map(_process_target, targets, rule_lists, [mode] * len(work), chunksize=chunk)


def _process_target(target: Target, rules: list[type[Rule]], mode: Mode) -> FileResult:
    return process_file(target.path, rules, mode, root=target.root)
