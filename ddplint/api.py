"""The public Python API: lint or fix a string, or lint paths.

    >>> import ddplint
    >>> [d.code for d in ddplint.lint_source("import torch\\nm = torch.load('x.pt')\\n")]
    ['DDP004']
    >>> ddplint.fix_source("import torch\\nm = torch.load('x.pt')\\n")
    'import torch\\nm = torch.load(\\'x.pt\\', map_location="cpu")\\n'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ddplint.engine.config import ConfigError, resolve
from ddplint.core.diagnostics import Diagnostic, FileResult
from ddplint.engine.lint import RuleCrash, SourceError, analyse, check_syntax, using_project
from ddplint.engine.files import discover, read_source, write_atomically
from ddplint.fixing.fixer import fix_text
from ddplint.rules.rule import Rule
from ddplint.rules import all_rules
from ddplint.engine.selection import choose_rules

__all__ = ["ConfigError", "Diagnostic", "FileResult", "SourceError", "fix_source", "lint_paths", "lint_source"]


def _rules(select: Sequence[str] | None, ignore: Sequence[str]) -> list[type[Rule]]:
    return choose_rules(all_rules(), select, ignore)


def lint_source(
    source: str, path: str = "<string>", *, select: Sequence[str] | None = None, ignore: Sequence[str] = ()
) -> list[Diagnostic]:
    """Findings in `source`, sorted by position. Raises SourceError if it does not parse."""
    return analyse(source, path, _rules(select, ignore)).diagnostics


def fix_source(
    source: str,
    path: str = "<string>",
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    unsafe_fixes: bool = False,
) -> str:
    """`source` with every allowed fix applied, to a fixed point."""
    return fix_text(source, path, _rules(select, ignore), unsafe_fixes=unsafe_fixes).source


@dataclass(frozen=True)
class Mode:
    """What to do with each file: report only, fix in place, or compute fixes without writing."""

    fix: bool = False
    unsafe_fixes: bool = False
    write: bool = True


def process_source(
    source: str, path: str, rules: Sequence[type[Rule]], mode: Mode, *, project=None, syntax: bool = False
) -> FileResult:
    """Lint or fix one text. Never raises for a bad file or a bug in a rule: either becomes
    `result.error`, one line, and the other files are still processed. `project`: the file's
    view of its project index (ddplint.model.project), or None to lint it alone. With `syntax`
    (a file named on the command line, a buffer), text that is not Python is an error even
    where no rule would parse it."""
    result = FileResult(path)
    try:
        if syntax:
            check_syntax(source)
        with using_project(project):
            if mode.fix:
                outcome = fix_text(source, path, rules, unsafe_fixes=mode.unsafe_fixes)
                result.original_source = source
                result.fixed_source = outcome.source
                result.fixed_count = outcome.fixed_count
                result.fixed_codes = outcome.fixed_codes
                result.fix_problems = outcome.problems
                result.diagnostics = outcome.remaining.diagnostics
            else:
                analysis = analyse(source, path, rules)
                result.diagnostics = analysis.diagnostics
                result.fix_problems = analysis.notes  # warnings: a large file checked in part
    except (SourceError, RuleCrash) as error:
        result.error = str(error)
    except Exception as error:  # a bug in ddplint outside any rule: report it, go on
        result.error = f"internal error: {type(error).__name__}: {error}"
    if result.error is not None:
        result.diagnostics, result.fixed_source, result.fixed_count = [], None, 0
    return result


def process_file(
    path: str, rules: Sequence[type[Rule]], mode: Mode, *, root: str | None = None, project=None, syntax: bool = False
) -> FileResult:
    """`root` is the path argument that led to `path`: a fix is never written through a
    symbolic link that leaves it. `syntax`: see process_source."""
    try:
        decoded, _ = read_source(path)
    except SourceError as error:
        return FileResult(path, error=str(error))
    result = process_source(decoded.text, path, rules, mode, project=project, syntax=syntax)
    if mode.fix and mode.write:
        write_fixed(result, root=root)
    return result


def write_fixed(result: FileResult, *, root: str | None = None) -> None:
    """Write a fixed file, if fixing changed it, after checking it still holds the text the
    fixes were computed from (else nothing is written and the result says why). The runner
    calls this from the main process only, so a killed ddplint stops writing at once."""
    if result.error is not None or not result.changed:
        return
    try:
        decoded, raw = read_source(result.path)
        if decoded.text != result.original_source:
            raise SourceError("not fixed: the file changed while ddplint was fixing it")
        write_atomically(result.path, result.fixed_source, decoded, raw, root=root)  # type: ignore[arg-type]
    except SourceError as error:
        result.error = str(error)
        result.fixed_count = 0
        result.fixed_codes = {}


def lint_paths(
    paths: Sequence[str],
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    fix: bool = False,
    unsafe_fixes: bool = False,
    config: bool | str = False,
    project: bool = True,
) -> Iterator[FileResult]:
    """Lint (or fix in place) every Python file under `paths`, one result per file in path order
    (the paths of each project in turn, ddplint.model.project.paths_by_project).

    With `config=True` the `[tool.ddplint]` table nearest to the first path applies as on the
    command line (`config="path/to/pyproject.toml"` names one); `select` then replaces its
    selection and `ignore` adds to it. Raises ConfigError for an unusable configuration.
    With `project=False` every file is linted alone, without the project index
    (ddplint.model.project) of the folder the paths are in.
    """
    if config:
        settings = resolve(config if isinstance(config, str) else None, start=paths[0] if paths else ".")
    else:
        settings = resolve(isolated=True)
    rules = settings.choose_rules(select, (), ignore)
    mode = Mode(fix=fix, unsafe_fixes=unsafe_fixes or settings.unsafe_fixes)
    from ddplint.model.project import paths_by_project

    for group in paths_by_project(paths):
        index = project_of(group) if project else None
        for target in discover(group, settings.exclusion()):
            if target.error is not None:
                yield FileResult(target.path, error=target.error)
            else:
                view = index.view(target.path) if index is not None else None
                rules_here = settings.rules_for(target.path, rules)
                yield process_file(target.path, rules_here, mode, root=target.root, project=view, syntax=target.named)


def project_of(paths: Sequence[str], cache_folder: str | None = None):
    """The project index (ddplint.model.project.Project) of the folder `paths` are in, or None."""
    from ddplint.model import project

    root = project.common_root(paths or ["."])
    return project.build(root, cache_folder) if root is not None else None
