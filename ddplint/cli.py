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
    check.add_argument("--ignore", action="append", metavar="CODES", help="rule codes or prefixes to skip")
    check.add_argument("--stdin-filename", metavar="PATH", help="the name to report for source read from stdin")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the results cache (.ddplint_cache)")
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
    from ddplint.api import Mode, process_source
    from ddplint.cache import CACHE_DIR, Cache
    from ddplint.files import discover
    from ddplint.runner import run
    from ddplint.output.text import format_diagnostic, summary
    from ddplint.rules import all_rules
    from ddplint.selection import SelectionError, choose_rules, parse_codes

    try:
        rules = choose_rules(all_rules(), parse_codes(args.select), parse_codes(args.ignore))
    except SelectionError as error:
        print(f"ddplint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    if args.unsafe_fixes and not (args.fix or args.diff):
        print("ddplint: warning: --unsafe-fixes has no effect without --fix or --diff", file=sys.stderr)
    mode = Mode(fix=args.fix or args.diff, unsafe_fixes=args.unsafe_fixes, write=args.fix and not args.diff)
    paths = args.paths or ["."]
    stdin_mode = paths == ["-"]
    if "-" in paths and not stdin_mode:
        print("ddplint: error: - (standard input) cannot be combined with other paths", file=sys.stderr)
        return EXIT_ERROR

    if stdin_mode:
        name = args.stdin_filename or "-"
        results = [process_source(sys.stdin.read(), name, rules, mode)]
    else:
        cache = None
        if not args.no_cache:
            cache = Cache(os.environ.get("DDPLINT_CACHE_DIR", CACHE_DIR), [rule.code for rule in rules])
        results = run(discover(paths), rules, mode, jobs=args.jobs, cache=cache)

    findings = out = sys.stdout
    if stdin_mode and args.fix and not args.diff:
        findings = sys.stderr  # stdout carries the fixed source, for editors
    errors = 0
    all_diagnostics = []
    fixed_total = 0
    would_change = False
    for result in results:
        if result.error is not None:
            errors += 1
            print(f"{result.path}: {result.error}", file=sys.stderr)
            continue
        for problem in result.fix_problems:
            print(problem, file=sys.stderr)
        fixed_total += result.fixed_count
        if args.diff and result.changed:
            would_change = True
            out.writelines(
                difflib.unified_diff(
                    result.original_source.splitlines(keepends=True),  # type: ignore[union-attr]
                    result.fixed_source.splitlines(keepends=True),  # type: ignore[union-attr]
                    fromfile=_diff_name("a", result.path),
                    tofile=_diff_name("b", result.path),
                )
            )
        if stdin_mode and args.fix and not args.diff:
            out.write(result.fixed_source or "")
        if not args.diff:
            for diagnostic in result.diagnostics:
                print(format_diagnostic(diagnostic), file=findings)
        all_diagnostics.extend(result.diagnostics)

    summary_stream = sys.stderr if (args.diff or findings is sys.stderr) else sys.stdout
    print(summary(all_diagnostics, fixed=fixed_total, diff=args.diff, errors=errors), file=summary_stream)
    if errors:
        return EXIT_ERROR
    if all_diagnostics or would_change:
        return EXIT_FINDINGS
    return EXIT_CLEAN


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
