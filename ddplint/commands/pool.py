"""Run the engine over many files: cache, prefilter in this process, parse in a pool.

Reading a file and searching it for needles costs about a hundredth of parsing it, and most
files match no rule. So this process reads every file, answers from the cache or the
prefilter where it can, and sends only the files that must be parsed to worker processes.
Results come back in path order.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace

from ddplint.core.processes import die_with_parent
from ddplint.api import Mode, process_file, write_fixed
from ddplint.engine.cache import Cache
from ddplint.core.diagnostics import FileResult
from ddplint.engine.lint import MAX_PARSE_CHARS, SourceError, check_syntax, rules_for_text
from ddplint.engine.files import Target, read_source
from ddplint.rules.rule import Rule

# Below this many files to parse, a pool costs more than it saves.
MIN_FILES_FOR_POOL = 4


def run(
    targets: Iterable[Target],
    rules_for: Callable[[str], Sequence[type[Rule]]],
    mode: Mode,
    *,
    jobs: int | None = None,
    cache: Cache | None = None,
    project=None,
) -> Iterator[FileResult]:
    """One result per target, in the targets' order, streamed as soon as it is known.
    `rules_for(path)` gives the rules active for a file (configuration may vary them).

    Files are handed to the pool as soon as triage admits them, so parsing overlaps with
    reading the rest of the tree; a run with fewer files to parse than MIN_FILES_FOR_POOL
    (a pre-commit hook on a few files) parses them here and starts no pool.

    `project` (ddplint.model.project.Project) is the index of the files' project: each file is
    linted with its view of it, and cached results are used only with the same index."""
    threshold = gc.get_threshold()
    gc.set_threshold(*BATCH_GC_THRESHOLD)  # forked workers inherit it
    try:
        _set_project(project)
        if cache is not None and project is not None:
            cache.project = project.digest
        yield from _run(targets, rules_for, mode, jobs, cache)
    finally:
        gc.set_threshold(*threshold)
        _set_project(None)


# The project of the run, in this process and (through the pool's initializer) in workers.
_PROJECT = None


def _set_project(project) -> None:
    global _PROJECT
    _PROJECT = project


def _view(path: str):
    return _PROJECT.view(path) if _PROJECT is not None else None


def _cacheable(path: str) -> bool:
    """Whether the file's result may be cached: not for a file of a project nested under the
    run's root (Project.inner_project), whose index the digest a result is kept under leaves out."""
    return _PROJECT is None or _PROJECT.inner_project(path) is None


# A libcst tree is hundreds of thousands of small objects that reference counting frees; with
# the default thresholds the cyclic collector runs every 700 allocations and costs about 15% of
# linting the files the prefilters admit (measured on the pip corpus). Raised for a batch run.
BATCH_GC_THRESHOLD = (100_000, 50, 100)


def _run(targets, rules_for, mode, jobs, cache) -> Iterator[FileResult]:
    use_cache = cache is not None and not mode.fix
    jobs = jobs or os.cpu_count() or 1
    slots: list[FileResult | Future | None] = []
    waiting: list[tuple[int, Target, list[type[Rule]]]] = []  # admitted, not yet handed out
    stored: dict[int, tuple[str, list[type[Rule]], os.stat_result, bytes, tuple[str, ...]]] = {}
    targets_by_index: dict[int, Target] = {}
    pool: ProcessPoolExecutor | None = None
    try:
        for target in targets:
            if target.error is not None:
                slots.append(FileResult(target.path, error=target.error))
                continue
            rules = list(rules_for(target.path))
            cached = use_cache and _cacheable(target.path)
            result, admitted, info, data = _triage(target, rules, cache if cached else None, narrow=not mode.fix)
            slots.append(None if admitted else result)
            if not admitted:
                continue
            index = len(slots) - 1
            if cached and info is not None and data is not None:
                stored[index] = (target, rules, info, data, result.reads)
            waiting.append((index, target, admitted))
            targets_by_index[index] = target
            if pool is None and jobs > 1 and len(waiting) >= MIN_FILES_FOR_POOL:
                pool = _start_pool(jobs)
            if pool is not None:
                for index, target, rules in waiting:
                    slots[index] = pool.submit(_process_target, target, rules, mode, _hints(target.path))
                waiting.clear()

        for ready, slot in enumerate(slots):
            if slot is None:  # admitted, but too few files to be worth a pool
                _, target, rules = next(item for item in waiting if item[0] == ready)
                slot = _finish(_process_target(target, rules, mode), target, mode)
            elif isinstance(slot, Future):
                slot = _finish(slot.result(), targets_by_index[ready], mode)
            if use_cache and ready in stored and not (stored[ready][0].named and slot.error is not None):
                target, rules, info, data, hinted = stored[ready]
                slot.reads = tuple(sorted({*slot.reads, *hinted}))  # a worker did not see what the hints read here
                cache.store(target.path, rules, info, data, slot, syntax=target.named)  # type: ignore[union-attr]
            yield slot
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if use_cache:
        cache.save()  # type: ignore[union-attr]


def _start_pool(jobs: int) -> ProcessPoolExecutor:
    # fork (where there is one) starts workers with libcst and the rules already imported.
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    # Fork children inherit the project index; spawned ones are handed it.
    project = None if context.get_start_method() == "fork" else _PROJECT
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker,
                               initargs=(os.getpid(), project))


def _init_worker(parent: int, project) -> None:
    _die_with_parent(parent)
    if project is not None:
        _set_project(project)


def _die_with_parent(parent: int) -> None:
    """Pool workers only compute, so they may die at any moment; they must never outlive
    ddplint, whose pool shutdown does not run when it is SIGKILLed or SIGTERMed."""
    die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(1)


def _triage(target: Target, rules: list[type[Rule]], cache: Cache | None, narrow: bool = False):
    """(result so far, the rules to lint it with or [] when it need not be parsed, stat, bytes)
    for one file, without parsing it with libcst. A file named on the command line that no rule
    admits is still parsed by CPython: text that is not Python is an error there (a file found
    in a folder is not read so far). With `narrow` (not when fixing: a fix may add text that
    admits another rule) the rules are those whose needles the text passed, for a text that is
    linted whole: the engine's own needle filter gives the same list from them, without
    searching the text again, in vain, for the needles of all the others."""
    path = target.path
    try:
        info = os.stat(path)
    except OSError as error:
        return FileResult(path, error=f"cannot read: {error.strerror or error}"), [], None, None
    if cache is not None:
        hit = cache.lookup(path, rules, info, syntax=target.named)
        if hit is not None:
            return hit, [], info, None
    try:
        decoded, data = read_source(path)
    except SourceError as error:  # unreadable, not a regular file, or not decodable
        return FileResult(path, error=str(error)), [], None, None
    if cache is not None:
        hit = cache.lookup(path, rules, info, data, syntax=target.named)
        if hit is not None:
            return hit, [], info, data
    view = _view(path)
    hints, known = (view.hints(), _PROJECT.known_needles(path, info)) if view is not None else (None, None)
    # The hints may rest on modules the project's digest does not cover (a helper that
    # combines the results of a loader handed to it): which rules apply depends on them too.
    reads = view.project.consulted() if view is not None else ()
    admitted = rules_for_text(decoded.text, rules, hints, known)
    if admitted:
        whole = narrow and len(decoded.text) <= MAX_PARSE_CHARS  # (a larger text is linted in parts)
        return FileResult(path, reads=reads), admitted if whole else rules, info, data
    result = FileResult(path, reads=reads)
    if target.named:
        try:
            check_syntax(decoded.text)
        except SourceError as error:
            # Not stored: a run over the file's folder, which does not check it, must not see it.
            return FileResult(path, error=str(error)), [], None, None
    if cache is not None:
        cache.store(path, rules, info, data, result, syntax=target.named)
    return result, [], info, data


def _hints(path: str):
    """The file's project hints, computed once here and sent to the worker with the file."""
    view = _view(path)
    return view.hints() if view is not None else None


def _process_target(target: Target, rules: list[type[Rule]], mode: Mode, hints=None) -> FileResult:
    """Lint or fix one file without writing it (see _finish)."""
    view = _view(target.path)
    if view is not None and hints is not None:
        view._hints = hints
    collecting = gc.isenabled()
    gc.disable()
    try:
        result = process_file(target.path, rules, replace(mode, write=False), root=target.root, project=view, syntax=target.named)
    finally:
        if collecting:
            gc.enable()
    if view is not None:
        result.reads = view.project.consulted()
    return result


def _finish(result: FileResult, target: Target, mode: Mode) -> FileResult:
    """Writes happen here, in the main process, one at a time: workers only compute, so
    killing ddplint stops all writing and leaves at most one temporary file."""
    if mode.fix and mode.write:
        write_fixed(result, root=target.root)
    return result
