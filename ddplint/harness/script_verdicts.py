"""The verdict on each finding of ``verify --script``, from what the two runs showed.

Each verdict says one thing, and its reason says what was seen, on which rank, in which file:

- CONFIRMED: the symptom was shown before the fix and is gone after it, and the fixed script
  completed;
- FAILED: the symptom is still there after the fix (or ddplint's fix changed nothing, or the
  fixed script failed at a line the fix changed);
- SYMPTOM GONE, RUN INCOMPLETE: gone after the fix, but the fixed script ended early for
  another reason, which the reason names;
- SYMPTOM SHOWN, FIX UNTESTED: shown before the fix; the fixed script stopped before the code
  could show the symptom or its absence (where it stopped is named);
- SYMPTOM SHOWN, NO FIX: shown, and ddplint has no automatic fix for this finding;
- NO SYMPTOM: the finding's code ran and showed no symptom: the run argues against the
  finding;
- NOT REACHED: the finding's code never ran; the reason says where the run stopped;
- NOT IMPORTED: no run imported the finding's file (nothing about the run is its reason);
- NOT OBSERVED: the code ran, but what the probes saw cannot tell (one epoch where two are
  needed), or no script run can show this rule's symptom;
- NEEDS GPU: the symptom shows only on GPUs, or the script stopped for want of one.

Nothing here imports torch.
"""

from __future__ import annotations

import re

from .runner import CONFIRMED, FAILED, NEEDS_GPU, SHOWN_NO_FIX

INCOMPLETE = "SYMPTOM GONE, RUN INCOMPLETE"
UNTESTED = "SYMPTOM SHOWN, FIX UNTESTED"
NO_SYMPTOM = "NO SYMPTOM"
NOT_REACHED = "NOT REACHED"
NOT_IMPORTED = "NOT IMPORTED"
NOT_OBSERVED = "NOT OBSERVED"


def ran(run, f, fixed_copy: bool = False) -> str:
    """What the run did with the finding's line, per rank: "train.py:40 ran on rank 0 (3
    times) and rank 1 (3 times)"; "" when the run did not count it. ``fixed_copy``: ask the
    fixed run about the finding's line where the fix put it."""
    moved = f.in_fixed_copy() if fixed_copy else f
    counts = run.reached(moved) if run is not None else None
    if counts is None:
        return ""
    where = f"{f.path}:{moved.line}" + (" (its line in the fixed copy)" if moved.line != f.line else "")
    if not any(counts.values()):
        return f"{where} never ran on any rank"
    silent = run.silent_ranks()

    def times(rank: int, n: int) -> str:
        heard = ", as far as it reported" if rank in silent else ""
        return f"rank {rank} ({n} time{'s' if n != 1 else ''}{heard})" if n else f"not on rank {rank}{heard}"

    parts = [times(rank, n) for rank, n in sorted(counts.items())]
    return f"{where} ran on " + ", ".join(parts)


def _never_ran(run, f) -> bool:
    counts = run.reached(f)
    return counts is not None and not any(counts.values())


def _with(text: str, observed: str) -> str:
    return f"{text} ({observed})" if observed else text


def _caused_by_fix(run, changed: dict[str, set[int]]) -> str | None:
    """The place where the fixed run ended, if it is a line the fix wrote."""
    for rank, path, line in run.end_places():
        if line in changed.get(path, ()):
            return f"rank {rank} at {path}:{line}"
    return None


def _shown(f, before, after, changed) -> tuple[str, str]:
    """The symptom was shown before the fix: what the fixed run says of it."""
    if not f.fixable:
        return SHOWN_NO_FIX, _with("symptom observed; ddplint has no automatic fix for this finding",
                                   ran(before, f))
    if f.after is None or after is None:
        return FAILED, "symptom observed; ddplint's fix changed nothing, so it stays"
    if not after.completed:
        culprit = _caused_by_fix(after, changed)
        if culprit:
            return FAILED, (f"the fixed script failed at a line the fix changed ({culprit}): "
                            f"{after.ending()}")
    if f.after.symptom:
        return FAILED, _with("symptom still present after the fix", ran(after, f, fixed_copy=True))
    if f.after.symptom is None:
        return UNTESTED, _with(f"the fixed script stopped before its run could show the symptom or "
                               f"its absence: it {after.ending(before)}", ran(after, f, fixed_copy=True))
    if after.completed:
        return CONFIRMED, _with("symptom observed before the fix, absent after; the fixed script "
                                "completed", ran(after, f, fixed_copy=True))
    return INCOMPLETE, _with(f"symptom observed before the fix, absent after; the fixed script then "
                             f"{after.ending(before)}", ran(after, f, fixed_copy=True))


def _not_shown(f, before, after, blocker) -> tuple[str, str]:
    """The run before the fix did not show the symptom: because the code did not run, because
    it ran and showed none, or because the probes cannot tell."""
    if f.before.needs_gpu or (f.after is not None and f.after.needs_gpu):
        return NEEDS_GPU, _with("the symptom shows only on a GPU and none is present", ran(before, f))
    never = _never_ran(before, f)
    if never or (before.reached(f) is None and f.before.symptom is None):
        if blocker is not None and blocker is not f:
            return NOT_REACHED, (f"{f.path}:{f.line} never ran: the run before the fix ended earlier, "
                                 f"in {blocker.code} ({blocker.path}:{blocker.line}): "
                                 f"{blocker.before.data['fatal']}")
        if before.gpu_missing:
            return NEEDS_GPU, (f"the script stopped for want of a GPU ({before.gpu_missing}) before "
                               f"{f.path}:{f.line} ran")
        if never:
            return NOT_REACHED, f"{f.path}:{f.line} never ran: the script {before.ending()}"
    if f.before.symptom is False:
        return NO_SYMPTOM, (f"{_with('the code ran and showed no symptom', ran(before, f))}: this run "
                            "argues against the finding")
    if before.gpu_missing:
        return NEEDS_GPU, _with(f"the script stopped for want of a GPU: {before.gpu_missing}", ran(before, f))
    code_ran = ran(before, f) or "the code may have run"
    if blocker is not None and blocker is not f:
        return NOT_OBSERVED, (f"{code_ran}; the run before the fix then ended earlier, in {blocker.code} "
                              f"({blocker.path}:{blocker.line}): {blocker.before.data['fatal']}, before "
                              "the symptom could show")
    if not before.completed:
        return NOT_OBSERVED, f"{code_ran}; the script then {before.ending()} before the symptom could show"
    return NOT_OBSERVED, f"{code_ran}, and the run showed neither the symptom nor its absence"


def judge(f, before, after, blocker=None, changed: dict[str, set[int]] | None = None) -> tuple[str, str]:
    """The verdict on one finding whose ``before`` and ``after`` measurements are set, with
    its reason. ``blocker``: the finding whose symptom ended the run before the fix;
    ``changed``: the lines the fix wrote, per file (as they are in the fixed copy)."""
    runs = [r for r in (before, after) if r is not None and r.ranks]
    if runs and not any(r.imported(f.path) for r in runs):
        return NOT_IMPORTED, f"{f.path} was never imported: neither run loaded it"
    if f.before.symptom is True:
        if _never_ran(before, f):
            return NOT_REACHED, (f"{f.path}:{f.line} never ran, so what the run showed ({f.before.text}) "
                                 "came from other code")
        return _shown(f, before, after, changed or {})
    return _not_shown(f, before, after, blocker)


def blocker(findings: list) -> object | None:
    """The finding whose symptom ended the run (a crash at import, a pickling error, a hang)."""
    return next((f for f in findings if f.before.symptom and f.before.data.get("fatal")), None)


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def changed_lines(diffs: dict[str, str]) -> dict[str, set[int]]:
    """The lines each file's fix added or rewrote, numbered as in the fixed copy."""
    out: dict[str, set[int]] = {}
    for path, diff in diffs.items():
        line = 0
        for text in diff.splitlines():
            m = _HUNK.match(text)
            if m:
                line = int(m.group(1))
            elif text.startswith("+") and not text.startswith("+++"):
                out.setdefault(path, set()).add(line)
                line += 1
            elif text.startswith(" "):
                line += 1
    return out
