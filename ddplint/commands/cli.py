"""Command line: argument parsing and exit codes. The work happens in `ddplint.api`.

Exit codes: 0 nothing found, 1 findings, 2 usage error or a file that could not be linted.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import os
import sys
import time
from collections.abc import Sequence

from ddplint import __version__
from ddplint.core.lines import split_lines

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
COMMANDS = ("check", "doctor", "rule", "rules", "server", "verify")
FORMATS = ("text", "concise", "full", "json", "sarif", "github", "gitlab", "junit")
COMMANDS_HELP = """commands:
  check (default)  lint, and optionally fix, files and folders: `ddplint src/` is `ddplint check src/`
  doctor [LAUNCH]  check the machine, its software and environment, and a launch command, before a run
  rule CODE        explain one rule
  rules            list all rules
  server           run the language server on stdin and stdout (for editors)
  verify           prove each fix on a real multi-process DDP run"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 too, but keep the wording short
        self.print_usage(sys.stderr)
        print(f"ddplint: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_ERROR)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ddplint",
        description="Find and fix the mistakes that break PyTorch DistributedDataParallel training.",
        epilog="Commands: check (default), doctor, rule CODE, rules, server, verify. `ddplint src/` is `ddplint check src/`.",
    )
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    check = commands.add_parser(
        "check",
        help="lint (and optionally fix) files and folders",
        description=parser.description,
        epilog=COMMANDS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.check_parser = check  # type: ignore[attr-defined]  # `ddplint --help` shows its options
    check.add_argument("paths", nargs="*", help="files or folders; - reads standard input (default: .)")
    # On `check`, whose options `ddplint --help` prints: `ddplint --version` is `ddplint check --version`.
    check.add_argument("--version", action="version", version=f"ddplint {__version__}", help="print the version and exit")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    check.add_argument(
        "--unsafe-fixes", action="store_true", default=None, help="with --fix or --diff, also apply unsafe fixes"
    )
    check.add_argument(
        "--no-unsafe-fixes", dest="unsafe_fixes", action="store_false", help="do not apply unsafe fixes (overrides the configuration)"
    )
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--select", action="append", metavar="CODES", help="rule codes or prefixes, comma separated")
    check.add_argument("--extend-select", action="append", metavar="CODES", help="codes to select on top of the configured ones")
    check.add_argument("--ignore", action="append", metavar="CODES", help="rule codes or prefixes to skip")
    check.add_argument("--stdin-filename", metavar="PATH", help="the name to report for source read from stdin")
    check.add_argument("--output-format", choices=FORMATS, default="text", help="how to print findings (default: text)")
    check.add_argument("-o", "--output-file", metavar="PATH", help="write the findings to this file instead of stdout")
    check.add_argument("--exclude", action="append", metavar="PATTERNS", help="gitignore-style patterns to skip, comma separated; replaces the default and configured list")
    check.add_argument("--extend-exclude", action="append", metavar="PATTERNS", help="patterns to skip on top of the configured ones")
    check.add_argument("--show-settings", action="store_true", help="print the settings that apply, and exit")
    check.add_argument("-v", "--verbose", action="store_true", help="say which configuration applies, how many files were checked and how long it took")
    check.add_argument("--statistics", action="store_true", help="print a count per rule instead of each finding")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument(
        "--exit-non-zero-on-fix", action="store_true", help="with --fix, exit 1 if any file was changed"
    )
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only: no summary, no notes")
    check.add_argument("--show-fixes", action="store_true", help="with --fix, list what was fixed in each file")
    check.add_argument("--add-noqa", action="store_true", help="add `# noqa: CODE` to every reported line")
    check.add_argument("--config", metavar="PATH", help="the pyproject.toml to read [tool.ddplint] from")
    check.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    check.add_argument(
        "--force-exclude", action="store_true", help="apply exclusions to files named on the command line too"
    )
    check.add_argument(
        "--no-notebooks", action="store_true", help="folders yield .py and .pyi files only, not .ipynb notebooks"
    )
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the results cache (.ddplint_cache)")
    check.add_argument(
        "--no-project", action="store_true", help="lint each file alone, without the index of its project's other modules"
    )
    check.add_argument("--jobs", "-j", type=_positive, metavar="N", help="worker processes for parsing (default: all cores)")

    rule = commands.add_parser("rule", help="explain one rule")
    rule.add_argument("code", help="a rule's code or name, as `ddplint rules` lists them")
    commands.add_parser("rules", help="list all rules")
    commands.add_parser("server", help="run the language server on stdin and stdout (for editors)", add_help=False)
    commands.add_parser("verify", help="prove each fix on a real multi-process DDP run", add_help=False)
    commands.add_parser(
        "doctor", help="check the machine, its software and environment, and a launch command, before a run", add_help=False
    )
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["-h"], ["--help"]):
        build_parser().check_parser.print_help()  # type: ignore[attr-defined]
        return EXIT_CLEAN
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help")):
        argv.insert(0, "check")
    if argv[0] == "verify":
        return _verify(argv[1:])
    if argv[0] == "server":
        from ddplint.server import main as server_main

        return server_main(argv[1:])
    try:
        if argv[0] == "doctor":
            from ddplint.doctor.cli import main as doctor_main

            return doctor_main(argv[1:])
        args = build_parser().parse_args(argv)
        if args.command == "rules":
            return _list_rules()
        if args.command == "rule":
            return _explain_rule(args.code)
        return _check(args)
    except BrokenPipeError:
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("ddplint: interrupted", file=sys.stderr)
        return 130


def _check(args: argparse.Namespace) -> int:
    from ddplint.api import Mode
    from ddplint.core.switches import SwitchError, env_switch
    from ddplint.engine.config import ConfigError, resolve
    from ddplint.engine.selection import parse_codes

    paths = args.paths or ["."]
    stdin_mode = paths == ["-"]
    if "-" in paths and not stdin_mode:
        return _usage_error("- (standard input) cannot be combined with other paths")
    if args.add_noqa and (args.fix or args.diff or stdin_mode):
        return _usage_error("--add-noqa cannot be combined with --fix, --diff or standard input")
    start = (args.stdin_filename or ".") if stdin_mode else paths[0]
    try:
        args.no_cache = args.no_cache or env_switch("DDPLINT_NO_CACHE")
        args.no_project = args.no_project or env_switch("DDPLINT_NO_PROJECT")
        settings = resolve(args.config, args.isolated, start)
        rules = settings.choose_rules(
            parse_codes(args.select), parse_codes(args.extend_select), parse_codes(args.ignore)
        )
    except (ConfigError, SwitchError) as error:
        return _usage_error(str(error))
    if args.unsafe_fixes and not (args.fix or args.diff):
        _note(args, "warning: --unsafe-fixes has no effect without --fix or --diff")
    unsafe = settings.unsafe_fixes if args.unsafe_fixes is None else args.unsafe_fixes
    mode = Mode(fix=args.fix or args.diff, unsafe_fixes=unsafe, write=args.fix and not args.diff)
    exclusion = _exclusion(args, settings)
    if args.show_settings:
        return _show_settings(settings, rules, exclusion, unsafe)
    if args.verbose:
        print(f"ddplint: configuration: {settings.source or 'none (defaults)'}", file=sys.stderr)
    try:
        args.out = open(args.output_file, "w", encoding="utf-8") if args.output_file else None  # noqa: SIM115
    except OSError as error:
        return _usage_error(f"{args.output_file}: cannot write: {error.strerror or error}")
    try:
        if stdin_mode:
            return _check_stdin(args, settings, rules, mode)
        if args.add_noqa:
            return _add_noqa(args, paths, exclusion, settings, rules)
        return _check_paths(args, paths, exclusion, settings, rules, mode)
    finally:
        if args.out is not None:
            args.out.close()


def _exclusion(args: argparse.Namespace, settings):
    """The configured exclusions, with --exclude (replacing the default and configured
    `exclude` list) and --extend-exclude applied; their patterns are relative to the current folder."""
    from ddplint.engine.files import parse_ignore_lines

    exclusion = settings.exclusion()
    if args.exclude:
        exclusion.patterns = parse_ignore_lines(settings.extend_exclude, settings.root)
    added = [*_patterns(args.exclude), *_patterns(args.extend_exclude)]
    if added:
        exclusion.patterns = [*exclusion.patterns, *parse_ignore_lines(added, os.getcwd())]
    return exclusion


def _patterns(values: list[str] | None) -> list[str]:
    return [item.strip() for value in values or () for item in value.split(",") if item.strip()]


def _show_settings(settings, rules, exclusion, unsafe: bool) -> int:
    print(f"configuration: {settings.source or 'none (defaults)'}")
    print(f"root: {settings.root}")
    print(f"rules: {', '.join(rule.code for rule in rules) or 'none'}")
    for pattern, codes in settings.per_file_ignores:
        print(f"per-file-ignores: {pattern.text} = {', '.join(codes)}")
    print(f"exclude: {', '.join(pattern.text for pattern in exclusion.patterns) or 'nothing'}")
    print(f"respect-gitignore: {str(settings.respect_gitignore).lower()}")
    print(f"include-notebooks: {str(settings.include_notebooks).lower()}")
    print(f"unsafe-fixes: {str(unsafe).lower()}")
    return EXIT_CLEAN


def _usage_error(message: str) -> int:
    print(f"ddplint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def _note(args: argparse.Namespace, message: str) -> None:
    if not args.quiet:
        print(f"ddplint: {message}", file=sys.stderr)


def _check_stdin(args, settings, rules, mode) -> int:
    """An editor's buffer: with --fix, stdout is the buffer's new content, so whatever goes
    wrong (bytes that do not decode, code that does not parse) it gets the input unchanged."""
    from ddplint.api import process_source
    from ddplint.core.diagnostics import FileResult
    from ddplint.engine.lint import SourceError, decode

    data = sys.stdin.buffer.read()
    name = args.stdin_filename or "-"
    fixed_to_stdout = args.fix and not args.diff
    if args.force_exclude and args.stdin_filename and settings.exclusion().excludes_with_parents(name):
        if fixed_to_stdout:
            sys.stdout.buffer.write(data)
        return EXIT_CLEAN
    from ddplint.commands.notebook import is_notebook, process_notebook_text

    report = _Report(args, rules=rules, fixed_to_stdout=fixed_to_stdout)
    notebook = is_notebook(name)
    view = None
    if args.stdin_filename and not args.no_project and not notebook:  # an editor buffer: its file's project
        from ddplint.model.project import for_file

        index = for_file(args.stdin_filename, cache=not args.no_cache)
        view = index.view(args.stdin_filename) if index is not None else None
    try:
        report.sources[name] = decode(data).text
        if notebook:
            result = process_notebook_text(report.sources[name], name, settings.rules_for(name, rules), mode, syntax=True)
        else:
            rules_here = settings.rules_for(name, rules)
            result = process_source(report.sources[name], name, rules_here, mode, project=view, syntax=True)
    except SourceError as error:
        result = FileResult(name, error=str(error))
    report.add(result)
    if fixed_to_stdout and result.error is not None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
    return report.finish()


def _check_paths(args, paths, exclusion, settings, rules, mode) -> int:
    started = time.perf_counter()
    report = _Report(args, rules=rules)
    count = 0
    for result in _results(args, paths, exclusion, settings, rules, mode, report):
        report.add(result)
        count += 1
    if args.verbose:
        seconds = time.perf_counter() - started
        print(f"ddplint: checked {count} file{'' if count == 1 else 's'} with {len(rules)} rules in {seconds:.2f} s", file=sys.stderr)
    return report.finish()


def _results(args, paths, exclusion, settings, rules, mode, report):
    """Each file's result: the paths of each project in turn (ddplint.model.project.paths_by_project)."""
    from ddplint.model.project import paths_by_project

    for group in paths_by_project(paths):
        yield from _project_results(args, group, exclusion, settings, rules, mode, report)


def _project_results(args, paths, exclusion, settings, rules, mode, report):
    """Each file's result, in path order: the files under `paths`, linted (or fixed, as `mode`
    says) with the project index of their folder, through the results cache and the pool."""
    from ddplint.engine.cache import CACHE_DIR, Cache
    from ddplint.engine.files import discover
    from ddplint.commands.notebook import is_notebook, process_notebook
    from ddplint.commands.output.progress import Progress
    from ddplint.commands.pool import run

    notebooks = settings.include_notebooks and not args.no_notebooks
    targets = list(discover(paths, exclusion, force_exclude=args.force_exclude, notebooks=notebooks))
    if not targets:
        print("ddplint: warning: no Python files found under the given paths", file=sys.stderr)
    cache = None if args.no_cache else Cache(os.environ.get("DDPLINT_CACHE_DIR", CACHE_DIR))
    progress = Progress(len(targets), sys.stderr)
    project = _project(args, paths, report, cache)
    rules_for = lambda path: settings.rules_for(path, rules)  # noqa: E731
    in_notebook = [target.error is None and is_notebook(target.path) for target in targets]
    python = run(
        [t for t, nb in zip(targets, in_notebook) if not nb], rules_for, mode, jobs=args.jobs, cache=cache, project=project
    )
    try:
        for target, notebook in zip(targets, in_notebook):
            # Notebooks are read, linted and fixed here; the runner keeps the .py files' order.
            yield process_notebook(target.path, rules_for(target.path), mode, syntax=target.named) if notebook else next(python)
            progress.advance()
        next(python, None)  # let the runner finish: it saves the cache after its last result
    finally:
        gc.unfreeze()  # what the run froze is collectable again (main may be called again)
    progress.close()


def _project(args, paths, report, cache):
    """The project index of the paths' folder, its program built; None with --no-project, or
    when building it failed (said once, and the run then exits 2)."""
    if args.no_project:
        return None
    from ddplint.api import project_of
    from ddplint.engine.cache import CACHE_DIR

    # Like the results cache, the index's cache is not written by --fix.
    folder = None if args.no_cache or args.fix else os.environ.get("DDPLINT_CACHE_DIR", CACHE_DIR)
    try:
        # The index and the program are built without the cyclic collector (they make no
        # garbage cycles to speak of) and frozen out of its later scans until the run ends:
        # their collections cost 0.3 s of CPU on the pip corpus (0.65 s -> 0.37 s in all).
        gc.disable()
        try:
            project = project_of(paths, folder)
            if project is not None:
                # Built here, so that a bug in it degrades the run as one in the index does;
                # with the results cache, its digest alone, which a warm run takes from the
                # saved solution without building the program (ddplint.model.solution).
                project.digest if cache is not None and not args.fix else project.program
        finally:
            gc.freeze()
            gc.enable()
    except Exception as error:  # a bug in the index: each file is still checked alone
        report.degraded = True
        print(
            f"ddplint: internal error in the project index ({type(error).__name__}: {error}); "
            "each file is checked alone",
            file=sys.stderr,
        )
        return None
    return project


class _Report:
    """Prints each file's findings as they come, then what needs all of them (json, sarif,
    statistics, the summary), and decides the exit code."""

    def __init__(self, args: argparse.Namespace, *, rules=(), fixed_to_stdout: bool = False) -> None:
        from ddplint.commands.output.text import use_colour

        self.args = args
        self.rules = rules
        self.fixed_to_stdout = fixed_to_stdout  # stdin --fix: stdout carries the fixed source, for editors
        self.out = getattr(args, "out", None) or (sys.stderr if fixed_to_stdout else sys.stdout)
        self.colour = args.output_format in ("text", "concise", "full") and use_colour(self.out)
        self.streaming = args.output_format in ("text", "concise", "full", "github") and not args.statistics and not args.diff
        self.sources: dict[str, str] = {}  # stdin's text, for the formats that show source
        self.diagnostics: list = []
        self.errors: list[tuple[str, str]] = []
        self.fixed: list = []  # results in which fixes were applied
        self.fixed_total = 0
        self.changed = False
        self.degraded = False  # an internal error outside any file (the project index)

    def add(self, result) -> None:
        from ddplint.commands.output import full, github, text

        if result.error is not None:
            self.errors.append((result.path, result.error))
            print(f"{result.path}: {result.error}", file=sys.stderr)
            if self.args.output_format == "github":
                print(github.format_error(result.path, result.error), file=self.out)
            return
        for problem in result.fix_problems:
            print(problem, file=sys.stderr)
        self.fixed_total += result.fixed_count
        if result.fixed_count:
            self.fixed.append(result)
        self.changed = self.changed or result.changed
        if self.args.diff and result.changed:
            (getattr(self.args, "out", None) or sys.stdout).writelines(
                difflib.unified_diff(
                    split_lines(result.original_source, keepends=True),
                    split_lines(result.fixed_source, keepends=True),
                    fromfile=_diff_name("a", result.path),
                    tofile=_diff_name("b", result.path),
                )
            )
        if self.fixed_to_stdout:
            sys.stdout.write(result.fixed_source or "")
        if self.streaming:
            source = self._source(result) if self.args.output_format == "full" else None
            for diagnostic in result.diagnostics:
                if self.args.output_format == "github":
                    print(github.format_diagnostic(diagnostic), file=self.out)
                elif self.args.output_format == "full":
                    print(full.format_full(diagnostic, source, self.colour), file=self.out)
                else:
                    print(text.format_diagnostic(diagnostic, self.colour), file=self.out)
        self.diagnostics.extend(result.diagnostics)

    def _source(self, result) -> str | None:
        """The text a file's findings refer to: the original when fixing, else the file's."""
        from ddplint.engine.lint import SourceError
        from ddplint.engine.files import read_source

        if not result.diagnostics or (result.diagnostics[0].cell is not None):
            return None
        if result.path in self.sources:
            return self.sources[result.path]
        if result.fixed_source is not None:
            return result.fixed_source  # the findings left are positions in the fixed text
        try:
            return read_source(result.path)[0].text
        except SourceError:
            return None

    def finish(self) -> int:
        from ddplint.commands.output import full, gitlab, junit, sarif, text
        from ddplint.commands.output import json as json_output

        args, out = self.args, self.out
        if args.statistics and not args.diff:
            if args.output_format == "json":
                out.write(json_output.render_statistics(self.diagnostics))
            else:
                for line in text.statistics(self.diagnostics):
                    print(line, file=out)
        elif args.output_format == "json" and not args.diff:
            out.write(json_output.render(self.diagnostics))
        elif args.output_format == "sarif" and not args.diff:
            out.write(sarif.render(self.diagnostics, self.rules, self.errors, source=self._text_of))
        elif args.output_format == "gitlab" and not args.diff:
            out.write(gitlab.render(self.diagnostics))
        elif args.output_format == "junit" and not args.diff:
            out.write(junit.render(self.diagnostics, self.errors))
        if args.output_format == "full" and self.diagnostics and not args.quiet and self.streaming:
            print(full.hint(sorted({d.code for d in self.diagnostics})), file=out)
        if args.show_fixes and not args.quiet and args.fix and not args.diff:
            names = {rule.code: rule.name for rule in self.rules}
            for result in self.fixed:
                for line in text.fixes_applied(result.path, result.fixed_codes, names):
                    print(line, file=out)
        if args.output_format in ("text", "full") and not args.quiet:
            stream = sys.stderr if (args.diff or self.fixed_to_stdout) else out
            summary = text.summary(self.diagnostics, fixed=self.fixed_total, diff=args.diff, errors=len(self.errors))
            print(summary, file=stream)
        if self.errors or self.degraded:
            return EXIT_ERROR
        if args.diff:  # as ruff: 1 only if something would change
            return EXIT_FINDINGS if self.changed and not args.exit_zero else EXIT_CLEAN
        if args.exit_non_zero_on_fix and args.fix and self.changed:
            return EXIT_FINDINGS  # even with --exit-zero: the pre-commit fix hook relies on it
        if args.exit_zero:
            return EXIT_CLEAN
        return EXIT_FINDINGS if self.diagnostics else EXIT_CLEAN

    def _text_of(self, path: str) -> str | None:
        if path in self.sources:
            return self.sources[path]
        from ddplint.engine.lint import SourceError
        from ddplint.engine.files import read_source

        try:
            return read_source(path)[0].text
        except SourceError:
            return None


def _add_noqa(args, paths, exclusion, settings, rules) -> int:
    """Write `# noqa: CODE` for every finding `check` reports (cross-module ones and those in
    notebook cells included), say which findings are left without one and why, and exit 1
    while any is left."""
    from ddplint.api import Mode
    from ddplint.commands.output.text import location
    from ddplint.engine.lint import SourceError

    report = _Report(args, rules=rules)
    added = 0
    left = []
    for result in _results(args, paths, exclusion, settings, rules, Mode(), report):
        if result.error is None and result.diagnostics:
            try:
                changed, unplaced = _write_noqa(result.path, result.diagnostics)
            except SourceError as error:
                result.error = str(error)
            else:
                added += changed
                left += unplaced
        if result.error is not None:
            report.add(result)  # one line on stderr
    for miss in left:
        print(f"{location(miss.diagnostic)}: {miss.diagnostic.code} left without a noqa comment: {miss.reason}", file=args.out or sys.stdout)
    if not args.quiet:
        summary = f"Added {added} noqa comment{'' if added == 1 else 's'}."
        if left:
            summary += f" {len(left)} finding{' was' if len(left) == 1 else 's were'} left without one (listed above)."
        print(summary, file=args.out or sys.stdout)
    if report.errors or report.degraded:
        return EXIT_ERROR
    return EXIT_FINDINGS if left and not args.exit_zero else EXIT_CLEAN


def _write_noqa(path: str, diagnostics) -> tuple[int, list]:
    """Add the comments to one file (a notebook's cells, or a Python file); (lines changed,
    the findings left without a comment). Raises SourceError where the file cannot be written."""
    from ddplint.commands.notebook import add_noqa_to_notebook, is_notebook
    from ddplint.engine.files import read_source, write_atomically
    from ddplint.fixing.add_noqa import add_noqa

    decoded, raw = read_source(path)
    if is_notebook(path):
        new_text, placed = add_noqa_to_notebook(decoded.text, diagnostics)
    else:
        placed = add_noqa(decoded.text, diagnostics)
        new_text = placed.source
    if new_text != decoded.text:
        write_atomically(path, new_text, decoded, raw)
    return placed.changed, placed.unplaced


def _diff_name(side: str, path: str) -> str:
    return path if path.startswith("/") else f"{side}/{path}"


def _list_rules() -> int:
    from ddplint.commands.docs import frameworks_text
    from ddplint.rules import all_rules

    for rule in all_rules():
        fix = rule.fix.value if rule.fix else "none"
        print(f"{rule.code}  {rule.name:<40} fix: {fix:<7} frameworks: {frameworks_text(rule)}")
    return EXIT_CLEAN


def _explain_rule(code: str) -> int:
    from ddplint.commands.output.text import explain
    from ddplint.rules import rule_by_code

    rule = rule_by_code(code)
    if rule is None:
        print(f"ddplint: error: unknown rule {code!r} (see `ddplint rules`)", file=sys.stderr)
        return EXIT_ERROR
    print(explain(rule))
    return EXIT_CLEAN


def _verify(argv: list[str]) -> int:
    try:
        from ddplint.harness.cli import main as verify_main
    except ImportError as error:
        print(f"ddplint: error: the runtime harness is not available: {error}", file=sys.stderr)
        return EXIT_ERROR
    return verify_main(argv)
