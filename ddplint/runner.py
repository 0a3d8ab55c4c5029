"""Run the engine over many files: cache, prefilter in this process, parse in a pool.

Reading a file and searching it for needles costs about a hundredth of parsing it, and most
files match no rule. So this process reads every file, answers from the cache or the
prefilter where it can, and sends only the files that must be parsed to worker processes.
Results come back in path order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor

from ddplint.api import Mode, process_file
from ddplint.cache import Cache
from ddplint.diagnostics import FileResult
from ddplint.engine import SourceError, decode, rules_for_text
from ddplint.files import Target
from ddplint.rule import Rule

# Below this many files to parse, a pool costs more than it saves.
MIN_FILES_FOR_POOL = 4


def run(
    targets: Iterable[Target],
    rules: Sequence[type[Rule]],
    mode: Mode,
    *,
    jobs: int | None = None,
    cache: Cache | None = None,
) -> Iterator[FileResult]:
    rules = list(rules)
    use_cache = cache is not None and not mode.fix
    slots: list[FileResult | None] = []
    work: list[tuple[int, str, os.stat_result | None, bytes | None]] = []
    for target in targets:
        if target.error is not None:
            slots.append(FileResult(target.path, error=target.error))
            continue
        result, needs_parse, info, data = _triage(target.path, rules, cache if use_cache else None)
        slots.append(result)
        if needs_parse:
            work.append((len(slots) - 1, target.path, info, data))

    for (index, path, info, data), result in zip(work, _parse_all([w[1] for w in work], rules, mode, jobs)):
        slots[index] = result
        if use_cache and info is not None and data is not None:
            cache.store(path, info, data, result)  # type: ignore[union-attr]
    if use_cache:
        cache.save()  # type: ignore[union-attr]
    yield from slots  # type: ignore[misc]


def _triage(path: str, rules: list[type[Rule]], cache: Cache | None):
    """(result so far, must it be parsed, stat, bytes) for one file, without parsing it."""
    try:
        info = os.stat(path)
        if cache is not None:
            hit = cache.lookup(path, info)
            if hit is not None:
                return hit, False, info, None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        return FileResult(path, error=f"cannot read: {error.strerror or error}"), False, None, None
    if cache is not None:
        hit = cache.lookup(path, info, data)
        if hit is not None:
            return hit, False, info, data
    try:
        text = decode(data).text
    except SourceError as error:
        result = FileResult(path, error=str(error))
        if cache is not None:
            cache.store(path, info, data, result)
        return result, False, info, data
    if not rules_for_text(text, rules):
        result = FileResult(path)
        if cache is not None:
            cache.store(path, info, data, result)
        return result, False, info, data
    return FileResult(path), True, info, data


def _parse_all(paths: list[str], rules: list[type[Rule]], mode: Mode, jobs: int | None) -> Iterator[FileResult]:
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(paths) < MIN_FILES_FOR_POOL:
        for path in paths:
            yield process_file(path, rules, mode)
        return
    # fork (where there is one) starts workers with libcst and the rules already imported.
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    chunk = max(1, len(paths) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=context) as pool:
        yield from pool.map(process_file, paths, [rules] * len(paths), [mode] * len(paths), chunksize=chunk)
