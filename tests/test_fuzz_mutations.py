"""Mutation fuzzing: every rule's flagged examples and the bundled fixtures, rewritten in ways
real code is written (import aliases, wrapped in functions/classes, decorators, comments,
unicode names, tabs, line continuations, CRLF), must never crash ddplint, must report
positions inside the file, must find with the rules' screens what it finds without them, and
`--fix --unsafe-fixes` must give code that parses, is idempotent, and leaves every line
outside the fixes' edit ranges byte-identical.

Reuses test_properties' Hypothesis profiles: HYPOTHESIS_PROFILE=long runs many more examples.
"""

import difflib
import re
from collections import Counter
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import example, given, strategies as st

import test_properties  # noqa: F401  (registers and loads the "ci"/"long" profiles)
from ddplint.engine import lint as engine
from ddplint.engine.lint import SourceError, analyse
from ddplint.fixing.fixer import MAX_PASSES, fix_text
from ddplint.rules import all_rules
from ddplint.prefilter.screens import facts_of

pytestmark = pytest.mark.slow  # CI runs this module on Python 3.11 only (see .ci/run)

REPO = Path(__file__).resolve().parent.parent
SEEDS = [example.code for rule in all_rules() for example in rule.flagged_examples] + [
    path.read_text() for path in sorted((REPO / "fixtures").glob("*/*.py"))
]


def alias_torch(source: str) -> str:
    """`import torch` -> `import torch as th`, and every `torch.` use with it. Import statements
    keep their module paths: `import th.distributed` would import a module named `th`, not the
    alias, so the mutant would no longer be the same program (and could not be imported)."""
    if not re.search(r"^import torch$", source, re.M):
        return source
    source = re.sub(r"^import torch$", "import torch as th", source, flags=re.M)
    return "".join(
        line if re.match(r"\s*(?:import|from)\s", line) else re.sub(r"(?<![\w.])torch\.", "th.", line)
        for line in source.splitlines(keepends=True)
    )


def wrap_in_function(source: str) -> str:
    body = "".join(f"    {line}" if line.strip() else line for line in source.splitlines(keepends=True))
    return f"def main():\n{body or '    pass'}\n"


def wrap_in_class(source: str) -> str:
    body = "".join(f"    {line}" if line.strip() else line for line in source.splitlines(keepends=True))
    return f"class Trainer:\n{body or '    pass'}\n"


def decorate(source: str) -> str:
    return re.sub(r"^(\s*)(def |class )", r"\1@functools.lru_cache()\n\1\2", source, flags=re.M)


def add_comments(source: str) -> str:
    return "".join(
        line.rstrip("\n") + "  # ünïcode çomment: torch.load\n" if line.strip() and not line.rstrip().endswith("\\") else line
        for line in source.splitlines(keepends=True)
    )


def unicode_names(source: str) -> str:
    return re.sub(r"\b(model|state|x|loader|sampler)\b", r"\1_ñ", source)


def tabs(source: str) -> str:
    # Every indentation level of four spaces becomes one tab; consistent, so still valid.
    return re.sub(r"^((?:    )+)", lambda m: "\t" * (len(m.group(1)) // 4), source, flags=re.M)


def continue_lines(source: str) -> str:
    return re.sub(r"^([ \t]*)(\w+) = ", r"\1\2 = \\\n\1    ", source, count=2, flags=re.M)


def crlf(source: str) -> str:
    return source.replace("\r\n", "\n").replace("\n", "\r\n")


def blank_noise(source: str) -> str:
    return "\n\n# leading comment\n" + source + "\n\n"


MUTATIONS = [alias_torch, wrap_in_function, wrap_in_class, decorate, add_comments, unicode_names, tabs,
             continue_lines, crlf, blank_noise]


def python_lines(text: str) -> list[str]:
    """Lines as Python counts them (\\n, \\r\\n, \\r), ends kept; str.splitlines also splits
    at form feeds and other Unicode separators, which Python keeps inside a line."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def _without_added(new_lines: list[str], imports: set[str], old_lines: list[str]) -> list[str]:
    """`new_lines` without the lines of the imports and helper definitions the fixes added
    (a `def` with the blank lines that set it off)."""
    kept: list[str] = []
    skipping = False
    for line in new_lines:
        text = line.strip()
        if text in imports and line not in old_lines:
            if line.startswith(("def ", "class ")):
                while kept and not kept[-1].strip():
                    kept.pop()
                skipping = True
            continue
        if skipping and not text:
            continue
        skipping = False
        kept.append(line)
    return kept


def _outside_edits_unchanged(source: str, fixed: str, analysis, imports: set[str]) -> None:
    """Every original line outside all fix edit ranges is kept as it was, in order; added
    lines are the fixes' import statements or sit next to an edit range."""
    old_lines = python_lines(source)
    covered: set[int] = set()
    for diagnostic in analysis.diagnostics:
        if diagnostic.fix is None:
            continue
        for edit in diagnostic.fix.edits:
            first = edit.line - 1
            if edit.content == "":
                # A removed statement takes its leading comment lines along (libcst keeps
                # them on the statement's node).
                while first > 0 and old_lines[first - 1].lstrip().startswith("#"):
                    first -= 1
            # A node added after the edited one (a new method) starts on the next line.
            covered.update(range(first, edit.end_line + 1))
    new_lines = python_lines(fixed)
    # Imports a fix orphaned are removed and those it needs are added (the fixer's import
    # handling): set both aside before matching, so they cannot throw the alignment off.
    removed = Counter(line for line in old_lines if re.match(r"(import|from) \S", line))
    removed.subtract(Counter(new_lines))
    kept_index = []
    for index, line in enumerate(old_lines):
        if removed.get(line, 0) > 0:
            removed[line] -= 1
        else:
            kept_index.append(index)
    # Lines with text only: the blank lines that set off a definition a fix adds (after the
    # imports) can be aligned with either side of it, and difflib then reports an unchanged
    # class after it as moved (blank_noise on DDP002's factory fix).
    kept_index = [i for i in kept_index if old_lines[i].strip()]
    covered = {position for position, i in enumerate(kept_index) if i in covered}
    old_lines = [old_lines[i] for i in kept_index]
    new_lines = [line for line in _without_added(new_lines, imports, old_lines) if line.strip()]
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    opcodes = matcher.get_opcodes()
    # With repeated code difflib may report an unchanged block as deleted in one place and
    # inserted in another: such a pure move is not a change.
    deleted = Counter(line for tag, i1, i2, _, _ in opcodes if tag == "delete" for line in old_lines[i1:i2] if line.strip())
    inserted = Counter(line for tag, _, _, j1, j2 in opcodes if tag == "insert" for line in new_lines[j1:j2] if line.strip())
    moved = deleted & inserted
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        if tag == "insert" and moved and all(not line.strip() or moved[line] > 0 for line in new_lines[j1:j2]):
            continue
        # difflib may align a repeated block (`def setup():` twice, each emptied to `pass` by
        # its fix) against the other copy: an insert of lines the file had, and the `pass` the
        # fixer writes where a removal empties a block, changed nothing else.
        if tag == "insert" and all(
            not line.strip() or line.strip() == "pass" or line in old_lines for line in new_lines[j1:j2]
        ) and any(line.strip() == "pass" for line in new_lines[j1:j2]):
            continue
        if tag == "delete" and moved:
            rest = {i for i in range(i1, i2) if old_lines[i].strip() and moved[old_lines[i]] <= 0}
            if not rest <= covered:
                raise AssertionError(f"lines {i1 + 1}-{i2} deleted outside the fixes' edit ranges: {old_lines[i1:i2]!r}")
            continue
        # Lines the fixes' imports added are allowed anywhere (an import the file already had
        # stays in place and is matched as equal).
        added = [line for line in new_lines[j1:j2] if line.strip() not in imports]
        if added == old_lines[i1:i2]:
            continue
        # An import a fix left unused is removed (the fixer's clean-up), and the blank lines
        # that set off what a fix added may move with it.
        kept = [line for line in old_lines[i1:i2] if not re.match(r"\s*(import|from) \S", line)]
        if [line for line in added if line.strip()] == [line for line in kept if line.strip()]:
            continue
        # The lines with text are the ones to account for (blank lines around an edit may
        # be aligned with either side).
        changed = {i for i in range(i1, i2) if old_lines[i].strip()} if i2 > i1 else {i1 - 1, i1}
        if i2 > i1 and not changed:
            continue
        if i2 > i1 and not any(line.strip() for line in added):
            # Removed lines: the edited ones, and imports (and blank lines) besides.
            changed = {i for i in range(i1, i2) if old_lines[i].strip() and old_lines[i] in kept}
            if not changed:
                continue
        if i2 == i1 and not "".join(new_lines[j1:j2]).strip():
            # difflib may align a blank line added after a node anywhere in the run of blank
            # lines that follows it (a file ending in several): it belongs to that node.
            before = i1 - 1
            while before >= 0 and not old_lines[before].strip():
                changed.add(before)
                before -= 1
            changed.add(before)
        assert changed & covered if i2 == i1 else changed <= covered, (
            f"lines {i1 + 1}-{i2} changed outside the fixes' edit ranges:\n"
            f"{''.join(old_lines[i1:i2])!r} -> {''.join(new_lines[j1:j2])!r}"
        )


def _compiles(source: str) -> bool:
    try:
        compile(source, "mutant.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _screens_admit_every_finding(source: str, rules) -> None:
    """Run without screens, every rule that reports must have a screen that holds here."""
    facts = facts_of(source)
    if facts is None:
        return
    with pytest.MonkeyPatch.context() as unscreened:
        unscreened.setattr(engine, "facts_of", lambda source: None)
        diagnostics = analyse(source, "mutant.py", rules).diagnostics
    for code in {d.code for d in diagnostics}:
        rule = next(rule for rule in rules if rule.code == code)
        assert rule.screen.holds(facts), f"{code}'s screen rejects a file it flags"


def check_properties(source: str) -> None:
    rules = all_rules()
    try:
        analysis = analyse(source, "mutant.py", rules)
    except SourceError:
        return
    _screens_admit_every_finding(source, rules)
    lines = [line.rstrip("\r\n") for line in python_lines(source)] or [""]
    for diagnostic in analysis.diagnostics:
        assert 1 <= diagnostic.line <= diagnostic.end_line <= len(lines)
        assert 1 <= diagnostic.col <= len(lines[diagnostic.line - 1]) + 1
        assert 1 <= diagnostic.end_col <= len(lines[diagnostic.end_line - 1]) + 1
    outcome = fix_text(source, "mutant.py", rules, unsafe_fixes=True)
    cst.parse_module(outcome.source)
    if _compiles(source):  # libcst accepts some code CPython rejects; only then compare
        compile(outcome.source, "mutant.py", "exec", dont_inherit=True)
    assert fix_text(outcome.source, "mutant.py", rules, unsafe_fixes=True).source == outcome.source
    # A fix can enable another (DDP007 passes the sampler, then DDP003 sees it), so the text
    # outside the edits is checked pass by pass, each against that pass's own findings.
    current = source
    for _ in range(MAX_PASSES):
        step = fix_text(current, "mutant.py", rules, unsafe_fixes=True, max_passes=1)
        if step.source == current:
            break
        pass_analysis = analyse(current, "mutant.py", rules)
        imports = {
            line.strip() for d in pass_analysis.diagnostics if d.fix for statement in d.fix.imports
            for line in statement.splitlines()
        }
        _outside_edits_unchanged(current, step.source, pass_analysis, imports)
        current = step.source
    assert current == outcome.source


mutants = st.tuples(st.sampled_from(SEEDS), st.lists(st.sampled_from(MUTATIONS), max_size=4))


@given(mutants)
def test_mutated_examples_and_fixtures(case):
    source, mutations = case
    for mutation in mutations:
        source = mutation(source)
    check_properties(source)


# Distinct examples: the same one twice makes difflib's alignment of the result ambiguous
# (each copy's emptied block matched against the other), which the edit-range check cannot
# tell from a change outside the edits.
@given(st.lists(st.sampled_from(SEEDS), min_size=2, max_size=4, unique=True), st.sampled_from(MUTATIONS))
@example(  # found by the fuzzer: `from torch.nn.parallel` was once rewritten to `from th.nn...`
    sources=['# A device index is a CUDA device: the file need not say "cuda" anywhere.\nimport torch\n\ndef scale(x, factor=torch.ones(1).to(0)):\n    return x * factor\n',
     'import torch\nimport torch.distributed as dist\nimport torch.multiprocessing as mp\n\ndef main_worker(gpu, ngpus, args):\n    if args.distributed:\n        dist.init_process_group("nccl", rank=gpu, world_size=ngpus)\n    model = build(args).cuda(gpu)\n    if args.resume:\n        model.load_state_dict(torch.load(args.resume)["model"])\n\ndef main(args):\n    if args.distributed:\n        mp.spawn(main_worker, nprocs=args.ngpus, args=(args.ngpus, args))\n    else:\n        main_worker(0, 1, args)\n',
     'import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\ndef resume(model, path):\n    checkpoint = torch.load(path, map_location="cpu")\n    if "model_state_dict" in checkpoint:\n        model.load_state_dict(checkpoint["model_state_dict"])\n    else:\n        model.load_state_dict(checkpoint)\n\ndef main(model, args):\n    resume(model, args.resume)\n    model = DDP(model)\n    checkpoint = {"epoch": 0, "model_state_dict": model.state_dict()}\n    checkpoint["optimizer_state_dict"] = optimizer.state_dict()\n    torch.save(checkpoint, args.out)\n'],
    mutation=alias_torch,
)
def test_several_examples_in_one_file(sources, mutation):
    check_properties(mutation("\n".join(sources)))


@given(hypothesmith.from_node(), st.sampled_from(SEEDS), st.sampled_from([wrap_in_function, wrap_in_class, str]))
def test_examples_inside_generated_code(program, seed, wrap):
    check_properties(program.rstrip("\n") + "\n" + wrap(seed) + "\n" + program)


def test_every_mutation_keeps_every_seed_valid_python():
    """The mutations themselves must not turn examples into syntax errors, or the properties
    above would quietly test nothing."""
    for seed in SEEDS:
        for mutation in MUTATIONS:
            compile(mutation(seed), "mutant.py", "exec", dont_inherit=True)


def test_outside_edit_check_catches_a_stray_change():
    source = "import torch.distributed\n# keep me\nx = torch.load('a.pt')\n"
    analysis = analyse(source, "x.py", all_rules())
    fixed = fix_text(source, "x.py", all_rules()).source
    _outside_edits_unchanged(source, fixed, analysis, set())
    try:
        _outside_edits_unchanged(source, fixed.replace("# keep me", "# kept"), analysis, set())
    except AssertionError:
        return
    raise AssertionError("a change outside the edit ranges went unnoticed")


def test_file_libcst_cannot_reproduce_is_not_fixed():
    """Found by this fuzzer: libcst drops a comment line after a lone \\r at the end of a
    file. Fixing it would delete that line, so the file is left alone and the user told."""
    source = "import torch.distributed\nstate = torch.load(1)\r  # c1\n  # c2\n"
    outcome = fix_text(source, "x.py", all_rules())
    assert outcome.source == source and outcome.fixed_count == 0
    assert outcome.problems == ["x.py: not fixed: the file's layout cannot be reproduced exactly (mixed line endings?)"]
    assert [d.code for d in outcome.remaining.diagnostics] == ["DDP004"]
