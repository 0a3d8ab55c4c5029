"""ddplint on real code: torch's own installed package (and any other trees named in
DDPLINT_REAL_CODE_EXTRA, os.pathsep-separated, e.g. an unpacked transformers wheel).

Zero internal errors; only files CPython itself rejects (or files over the parse limit) may be
reported as not checkable; `--fix --unsafe-fixes` on a copy gives files that parse and
compile, and a second fix changes nothing. CI checks every 10th file (about 230) through the
API in one process; DDPLINT_REAL_CODE=all checks every file.
"""

import os
import shutil
from pathlib import Path

import libcst as cst
import pytest

from ddplint.api import Mode, process_source
from ddplint.engine.lint import MAX_PARSE_CHARS, SourceError, decode
from ddplint.rules import all_rules

pytestmark = pytest.mark.slow

ALL = os.environ.get("DDPLINT_REAL_CODE") == "all"


def _trees() -> list[Path]:
    torch = pytest.importorskip("torch")
    extra = [Path(p) for p in os.environ.get("DDPLINT_REAL_CODE_EXTRA", "").split(os.pathsep) if p]
    return [Path(torch.__file__).parent, *extra]


def _corpus() -> list[Path]:
    found = []
    for tree in _trees():
        paths = sorted(p for p in tree.rglob("*.py") if p.is_file())
        found.extend(paths if ALL else paths[::10])
    return found


def _cpython_rejects(source: str) -> bool:
    try:
        compile(source, "real.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return True
    return False


def test_real_code_lints_and_fixes_without_internal_errors(tmp_path):
    rules = all_rules()
    corpus = _corpus()
    assert len(corpus) > 100
    problems, fixed_files, findings = [], 0, 0
    for path in corpus:
        data = path.read_bytes()
        try:
            source = decode(data).text
        except SourceError as error:
            problems.append(f"{path}: {error}")
            continue
        result = process_source(source, str(path), rules, Mode(fix=True, unsafe_fixes=True, write=False))
        if result.error is not None:
            acceptable = not result.error.startswith("internal error") and (
                _cpython_rejects(source) or len(source) > MAX_PARSE_CHARS
            )
            if not acceptable:
                problems.append(f"{path}: {result.error}")
            continue
        findings += len(result.diagnostics) + result.fixed_count
        if not result.changed:
            continue
        fixed_files += 1
        copy = tmp_path / f"{fixed_files}_{path.name}"
        shutil.copyfile(path, copy)
        copy.write_text(result.fixed_source, encoding="utf-8")
        fixed = copy.read_text(encoding="utf-8")
        try:
            cst.parse_module(fixed)
            compile(fixed, str(copy), "exec", dont_inherit=True)
        except Exception as error:  # noqa: BLE001  (collect every failure, report all at once)
            problems.append(f"{path}: fixed code does not compile: {error}")
            continue
        again = process_source(fixed, str(copy), rules, Mode(fix=True, unsafe_fixes=True, write=False))
        if again.error is not None or again.changed:
            problems.append(f"{path}: a second --fix changed the file again ({again.error})")
    print(f"real code: {len(corpus)} files, {findings} findings, {fixed_files} files changed by --fix")
    assert problems == []


def test_screens_never_hide_a_finding_in_real_code(monkeypatch):
    """A rule's screen must hold on every file where the rule, run without screens, reports."""
    from ddplint.engine import lint as engine
    from ddplint.prefilter.screens import facts_of

    rules = all_rules()
    hidden, checked = [], 0
    for path in _corpus():
        try:
            source = decode(path.read_bytes()).text
        except SourceError:
            continue
        with monkeypatch.context() as unscreened:
            unscreened.setattr(engine, "facts_of", lambda source: None)
            try:
                diagnostics = engine.analyse(source, str(path), rules, honour_noqa=False).diagnostics
            except SourceError:
                continue
        facts = facts_of(source)
        if facts is None:
            continue
        checked += 1
        for code in sorted({d.code for d in diagnostics}):
            rule = next(rule for rule in rules if rule.code == code)
            if not rule.screen.holds(facts):
                hidden.append(f"{path}: {code}")
    print(f"screens: {checked} files checked")
    assert checked > 100
    assert hidden == []


def test_needles_never_hide_a_finding_in_real_code():
    """A rule's needles must occur in every file where the rule reports. Screens are checked
    above, so only files whose screen holds for a rule but whose text the rule's needles turn
    away are run again with the needles ignored: none of them may give that rule a finding."""
    from ddplint.prefilter.screens import facts_of

    rules = all_rules()
    hidden, rerun = [], 0
    for path in _corpus():
        try:
            source = decode(path.read_bytes()).text
        except SourceError:
            continue
        facts = facts_of(source)
        if facts is None or len(source) > MAX_PARSE_CHARS:
            continue
        turned_away = [rule for rule in rules if rule.screen.holds(facts) and not rule.matches_text(source)]
        if not turned_away:
            continue
        rerun += 1
        unneedled = [type(rule.__name__, (rule,), {"needles": ()}) for rule in turned_away]
        try:
            diagnostics = engine_analyse(source, str(path), unneedled)
        except SourceError:
            continue
        hidden += [f"{path}: {code}" for code in sorted({d.code for d in diagnostics})]
    print(f"needles: {rerun} files run again without needles")
    assert hidden == []


def engine_analyse(source, path, rules):
    from ddplint.engine.lint import analyse

    return analyse(source, path, rules, honour_noqa=False).diagnostics
