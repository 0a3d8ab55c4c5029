"""Command line: argument parsing and exit codes. The work happens in `ddplint.api`.

Exit codes: 0 nothing found, 1 findings, 2 usage error or a file that could not be linted.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Sequence

from ddplint import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
COMMANDS = ("check", "rule", "rules", "verify")
FORMATS = ("text", "concise", "json", "sarif", "github")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 too, but keep the wording short
        self.print_usage(sys.stderr)
        print(f"ddplint: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_ERROR)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ddplint",
        description="Find and fix the mistakes that break PyTorch DistributedDataParallel training.",
        epilog="Commands: check (default), rule CODE, rules, verify. `ddplint src/` is `ddplint check src/`.",
    )
    parser.add_argument("--version", action="version", version=f"ddplint {__version__}")
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)

    check = commands.add_parser("check", help="lint (and optionally fix) files and folders")
    check.add_argument("paths", nargs="*", help="files or folders; - reads standard input (default: .)")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, also apply unsafe fixes")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--select", action="append", metavar="CODES", help="rule codes or prefixes, comma separated")
    check.add_argument("--extend-select", action="append", metavar="CODES", help="codes to select on top of the configured ones")
    check.add_argument("--ignore", action="append", metavar="CODES", help="rule codes or prefixes to skip")
    check.add_argument("--stdin-filename", metavar="PATH", help="the name to report for source read from stdin")
    check.add_argument("--output-format", choices=FORMATS, default="text", help="how to print findings (default: text)")
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
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the results cache (.ddplint_cache)")
    check.add_argument(
        "--no-project", action="store_true", help="lint each file alone, without the index of its project's other modules"
    )
    check.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes for parsing (default: all cores)")

    rule = commands.add_parser("rule", help="explain one rule")
    rule.add_argument("code", help="a rule code (DDP004) or name (torch-load-without-map-location)")
    commands.add_parser("rules", help="list all rules")
    commands.add_parser("verify", help="prove each fix on a real multi-process DDP run", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "check")
    if argv[0] == "verify":
        return _verify(argv[1:])
    args = build_parser().parse_args(argv)
    try:
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
    from ddplint.config import ConfigError, resolve
    from ddplint.selection import parse_codes

    paths = args.paths or ["."]
    stdin_mode = paths == ["-"]
    if "-" in paths and not stdin_mode:
        return _usage_error("- (standard input) cannot be combined with other paths")
    if args.add_noqa and (args.fix or args.diff or stdin_mode):
        return _usage_error("--add-noqa cannot be combined with --fix, --diff or standard input")
    start = (args.stdin_filename or ".") if stdin_mode else paths[0]
    try:
        settings = resolve(args.config, args.isolated, start)
        rules = settings.choose_rules(
            parse_codes(args.select), parse_codes(args.extend_select), parse_codes(args.ignore)
        )
    except ConfigError as error:
        return _usage_error(str(error))
    if args.unsafe_fixes and not (args.fix or args.diff):
        _note(args, "warning: --unsafe-fixes has no effect without --fix or --diff")
    unsafe = args.unsafe_fixes or settings.unsafe_fixes
    mode = Mode(fix=args.fix or args.diff, unsafe_fixes=unsafe, write=args.fix and not args.diff)
    if stdin_mode:
        return _check_stdin(args, settings, rules, mode)
    if args.add_noqa:
        return _add_noqa(args, paths, settings, rules)
    return _check_paths(args, paths, settings, rules, mode)


def _usage_error(message: str) -> int:
    print(f"ddplint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def _note(args: argparse.Namespace, message: str) -> None:
    if not args.quiet:
        print(f"ddplint: {message}", file=sys.stderr)


def _check_stdin(args, settings, rules, mode) -> int:
    from ddplint.api import process_source

    source = sys.stdin.read()
    name = args.stdin_filename or "-"
    if args.force_exclude and args.stdin_filename and settings.exclusion().excludes_with_parents(name):
        if args.fix and not args.diff:
            sys.stdout.write(source)
        return EXIT_CLEAN
    report = _Report(args, rules=rules, fixed_to_stdout=args.fix and not args.diff)
    view = None
    if args.stdin_filename and not args.no_project:  # an editor buffer: its file's project
        from ddplint.project import for_file

        index = for_file(args.stdin_filename, cache=not args.no_cache)
        view = index.view(args.stdin_filename) if index is not None else None
    report.add(process_source(source, name, settings.rules_for(name, rules), mode, project=view))
    return report.finish()


def _check_paths(args, paths, settings, rules, mode) -> int:
    from ddplint.cache import CACHE_DIR, Cache
    from ddplint.files import discover
    from ddplint.output.progress import Progress
    from ddplint.runner import run

    targets = list(discover(paths, settings.exclusion(), force_exclude=args.force_exclude))
    cache = None if args.no_cache else Cache(os.environ.get("DDPLINT_CACHE_DIR", CACHE_DIR))
    progress = Progress(len(targets), sys.stderr)
    report = _Report(args, rules=rules)
    project = None
    if not args.no_project:
        from ddplint.api import project_of

        # Like the results cache, the index's cache is not written by --fix.
        folder = None if args.no_cache or args.fix else os.environ.get("DDPLINT_CACHE_DIR", CACHE_DIR)
        project = project_of(paths, folder)
    for result in run(
        targets, lambda path: settings.rules_for(path, rules), mode, jobs=args.jobs, cache=cache, project=project
    ):
        progress.advance()
        report.add(result)
    progress.close()
    return report.finish()


class _Report:
    """Prints each file's findings as they come, then what needs all of them (json, sarif,
    statistics, the summary), and decides the exit code."""

    def __init__(self, args: argparse.Namespace, *, rules=(), fixed_to_stdout: bool = False) -> None:
        from ddplint.output.text import use_colour

        self.args = args
        self.rules = rules
        self.fixed_to_stdout = fixed_to_stdout  # stdin --fix: stdout carries the fixed source, for editors
        self.out = sys.stderr if fixed_to_stdout else sys.stdout
        self.colour = args.output_format in ("text", "concise") and use_colour(self.out)
        self.streaming = args.output_format in ("text", "concise", "github") and not args.statistics and not args.diff
        self.diagnostics: list = []
        self.errors: list[tuple[str, str]] = []
        self.fixed: list = []  # results in which fixes were applied
        self.fixed_total = 0
        self.changed = False

    def add(self, result) -> None:
        from ddplint.output import github, text

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
            sys.stdout.writelines(
                difflib.unified_diff(
                    result.original_source.splitlines(keepends=True),
                    result.fixed_source.splitlines(keepends=True),
                    fromfile=_diff_name("a", result.path),
                    tofile=_diff_name("b", result.path),
                )
            )
        if self.fixed_to_stdout:
            sys.stdout.write(result.fixed_source or "")
        if self.streaming:
            for diagnostic in result.diagnostics:
                if self.args.output_format == "github":
                    print(github.format_diagnostic(diagnostic), file=self.out)
                else:
                    print(text.format_diagnostic(diagnostic, self.colour), file=self.out)
        self.diagnostics.extend(result.diagnostics)

    def finish(self) -> int:
        from ddplint.output import json as json_output
        from ddplint.output import sarif, text

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
            out.write(sarif.render(self.diagnostics, self.rules, self.errors))
        if args.show_fixes and not args.quiet and args.fix and not args.diff:
            names = {rule.code: rule.name for rule in self.rules}
            for result in self.fixed:
                for line in text.fixes_applied(result.path, result.fixed_codes, names):
                    print(line, file=out)
        if args.output_format == "text" and not args.quiet:
            stream = sys.stderr if (args.diff or self.fixed_to_stdout) else out
            summary = text.summary(self.diagnostics, fixed=self.fixed_total, diff=args.diff, errors=len(self.errors))
            print(summary, file=stream)
        if self.errors:
            return EXIT_ERROR
        if args.exit_zero:
            return EXIT_CLEAN
        if self.diagnostics or (args.diff and self.changed):
            return EXIT_FINDINGS
        if args.exit_non_zero_on_fix and args.fix and self.changed:
            return EXIT_FINDINGS
        return EXIT_CLEAN


def _add_noqa(args, paths, settings, rules) -> int:
    from ddplint.add_noqa import add_noqa
    from ddplint.engine import SourceError, analyse
    from ddplint.files import discover, read_source, write_atomically

    added = errors = 0
    for target in discover(paths, settings.exclusion(), force_exclude=args.force_exclude):
        try:
            if target.error is not None:
                raise SourceError(target.error)
            decoded, raw = read_source(target.path)
            diagnostics = analyse(decoded.text, target.path, settings.rules_for(target.path, rules)).diagnostics
            if not diagnostics:
                continue
            new_source, changed = add_noqa(decoded.text, diagnostics)
            if changed:
                write_atomically(target.path, new_source, decoded, raw)
                added += changed
        except SourceError as error:
            errors += 1
            print(f"{target.path}: {error}", file=sys.stderr)
    if not args.quiet:
        print(f"Added {added} noqa comment{'' if added == 1 else 's'}.")
    return EXIT_ERROR if errors else EXIT_CLEAN


def _diff_name(side: str, path: str) -> str:
    return path if path.startswith("/") else f"{side}/{path}"


def _list_rules() -> int:
    from ddplint.rules import all_rules

    for rule in all_rules():
        fix = rule.fix.value if rule.fix else "none"
        print(f"{rule.code}  {rule.name:<40} fix: {fix}")
    return EXIT_CLEAN


def _explain_rule(code: str) -> int:
    from ddplint.output.text import explain
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
