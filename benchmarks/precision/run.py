#!/usr/bin/env python3
"""Precision benchmark: lint the pinned corpus and score findings against labels.

    python benchmarks/precision/run.py                 # fetch if needed, lint, score
    python benchmarks/precision/run.py --json out.json # also write the figures
    python benchmarks/precision/run.py --only ultralytics,accelerate --rules DDP004
    python benchmarks/precision/run.py --kind github   # only the GitHub training repositories
    python benchmarks/precision/run.py --fixes         # review each finding's fix (diff)
    python benchmarks/precision/run.py --ddplint-root /work/main   # score another checkout
    python benchmarks/precision/run.py --batch github-4             # one batch of corpus.json
    python benchmarks/precision/run.py --via flake8                 # through `flake8 --select DDP`
    python benchmarks/precision/run.py --batch github-4 --record-first-contact github-4

Every finding is matched to a hand label in ``labels.csv`` (columns project,
path, line, rule, snippet, verdict, reason).  A label matches a finding with the
same project, path (relative to the unpacked project root), rule and snippet
(the flagged source line, stripped, whitespace collapsed, first 120
characters); among several, the nearest line wins.  Failing that, a label
with the same project, path, rule and line matches (the line was edited but
did not move).  So a rule change that shifts lines still matches, and a label
is consumed by at most one finding.

Output: a per-rule table (findings, TP, FP, unlabelled, precision =
TP/(TP+FP), known misses from ``misses.csv`` still unreported, recall =
TP/(TP+lost TP+misses)), the unlabelled findings (label them!), and the
labelled findings that no longer fire (for a TP that is lost recall; for an
FP, a fix).

First contact: every batch of projects (corpus.json's ``batch``) is labelled before any rule is
tuned on it, and ``--record-first-contact BATCH`` then freezes that batch's figures, with the
ddplint commit and every finding's verdict, in ``first_contact.json`` (it refuses while a
finding of the batch is unlabelled).  Each later run prints, for every recorded batch it
linted whole, the first-contact figures beside today's (tuned) ones.

Exit status is 0 unless the script itself fails.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import difflib
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LABELS_FILE = HERE / "labels.csv"
MISSES_FILE = HERE / "misses.csv"  # real bugs ddplint does not report (yet): a recall target
FIRST_CONTACT_FILE = HERE / "first_contact.json"  # each batch's figures before any tuning on it
LABEL_COLUMNS = ["project", "path", "line", "rule", "snippet", "verdict", "reason"]
VERDICTS = ("TP", "FP", "MISS")
SNIPPET_LEN = 120
MAX_MISMATCH_LINES = 30

sys.path.insert(0, str(HERE))
import fetch  # noqa: E402  (benchmarks/precision/ is the script's folder)


# --------------------------------------------------------------------------- data


@dataclass
class Finding:
    project: str
    path: str
    line: int
    rule: str
    snippet: str
    message: str = ""
    column: int = 0
    fix: dict | None = None
    steps: tuple[str, ...] = ()  # the kinds of the finding's chain ("runs", "reaches", "harm"); CLI only


@dataclass
class Label:
    project: str
    path: str
    line: int
    rule: str
    snippet: str
    verdict: str
    reason: str


@dataclass
class Match:
    finding: Finding
    label: Label | None


@dataclass
class Score:
    matches: list[Match] = field(default_factory=list)
    stale: list[Label] = field(default_factory=list)  # labels no finding matched


def normalize_snippet(text: str) -> str:
    """The flagged source line, stripped and whitespace-collapsed, capped."""
    return re.sub(r"\s+", " ", text.strip())[:SNIPPET_LEN]


def read_labels(path: Path = LABELS_FILE) -> list[Label]:
    if not path.exists():
        return []
    labels = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            verdict = row["verdict"].strip().upper()
            if verdict in ("", "?"):  # a row awaiting a verdict counts as unlabelled
                continue
            if verdict not in VERDICTS:
                raise ValueError(f"{path}: bad verdict {row['verdict']!r} in {row}")
            labels.append(Label(row["project"], row["path"], int(row["line"]), row["rule"],
                                normalize_snippet(row["snippet"]), verdict, row["reason"]))
    return labels


def write_labels(labels: list[Label], path: Path = LABELS_FILE) -> None:
    labels = sorted(labels, key=lambda l: (l.project, l.path, l.line, l.rule))
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(LABEL_COLUMNS)
        for l in labels:
            w.writerow([l.project, l.path, l.line, l.rule, l.snippet, l.verdict, l.reason])


# --------------------------------------------------------------------------- matching


def match(findings: list[Finding], labels: list[Label]) -> Score:
    """Pair findings with labels: the label on the finding's own line with its snippet first
    (so that a label whose line moved cannot take another finding's own label, such as a miss
    row on that line); then (project, path, rule, snippet), nearest line among those; then
    (project, path, rule, line).  Each label is used once."""
    by_snip: dict[tuple, list[Label]] = defaultdict(list)
    by_line: dict[tuple, list[Label]] = defaultdict(list)
    for l in labels:
        by_snip[(l.project, l.path, l.rule, l.snippet)].append(l)
        by_line[(l.project, l.path, l.rule, l.line)].append(l)
    used: set[int] = set()
    paired: dict[int, Label] = {}
    ordered = sorted(range(len(findings)), key=lambda i: (findings[i].project, findings[i].path,
                                                           findings[i].line, findings[i].rule))
    # Pass 0: the same line and snippet.
    for i in ordered:
        f = findings[i]
        cands = [l for l in by_line.get((f.project, f.path, f.rule, f.line), []) if l.snippet == f.snippet and id(l) not in used]
        if cands:
            used.add(id(cands[0]))
            paired[i] = cands[0]
    # Pass 1: snippet.  Exact-line candidates first, then the nearest.
    for i in ordered:
        if i in paired:
            continue
        f = findings[i]
        cands = [l for l in by_snip.get((f.project, f.path, f.rule, f.snippet), []) if id(l) not in used]
        if cands:
            best = min(cands, key=lambda l: (abs(l.line - f.line), l.line))
            used.add(id(best))
            paired[i] = best
    # Pass 2: same line, snippet changed.
    for i in ordered:
        if i in paired:
            continue
        f = findings[i]
        cands = [l for l in by_line.get((f.project, f.path, f.rule, f.line), []) if id(l) not in used]
        if cands:
            used.add(id(cands[0]))
            paired[i] = cands[0]
    score = Score()
    for i in ordered:
        score.matches.append(Match(findings[i], paired.get(i)))
    score.stale = [l for l in labels if id(l) not in used]
    return score


def table(score: Score, misses: list[Label] | None = None) -> dict[str, dict]:
    """Per-rule figures.  'missed_tp' counts TP labels that no longer fire; 'misses'
    counts the known misses (misses.csv rows) still not reported.  Recall is
    TP / (TP + missed_tp + misses): of the real instances known, the share reported."""
    rows: dict[str, dict] = {}
    counts = ("findings", "tp", "fp", "unlabelled", "missed_tp", "fixed_fp", "misses")

    def row(rule: str) -> dict:
        return rows.setdefault(rule, dict.fromkeys(counts, 0))

    for m in score.matches:
        r = row(m.finding.rule)
        r["findings"] += 1
        if m.label is None:
            r["unlabelled"] += 1
        elif m.label.verdict == "TP":
            r["tp"] += 1
        else:
            r["fp"] += 1
    for l in score.stale:
        r = row(l.rule)
        if l.verdict == "TP":
            r["missed_tp"] += 1
        else:
            r["fixed_fp"] += 1
    for l in misses or []:
        row(l.rule)["misses"] += 1
    total = dict.fromkeys(counts, 0)
    for r in rows.values():
        for k in counts:
            total[k] += r[k]
    for r in list(rows.values()) + [total]:
        judged = r["tp"] + r["fp"]
        real = r["tp"] + r["missed_tp"] + r["misses"]
        r["precision"] = round(r["tp"] / judged, 3) if judged else None
        r["recall"] = round(r["tp"] / real, 3) if real else None
    out = {k: rows[k] for k in sorted(rows)}
    out["ALL"] = total
    return out


def format_table(rows: dict[str, dict]) -> str:
    head = (f"{'rule':<7} {'findings':>8} {'TP':>4} {'FP':>4} {'unlab':>5} {'precision':>9} "
            f"{'lostTP':>6} {'goneFP':>6} {'misses':>6} {'recall':>6}")
    lines = [head, "-" * len(head)]

    def ratio(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}"

    for rule, r in rows.items():
        lines.append(f"{rule:<7} {r['findings']:>8} {r['tp']:>4} {r['fp']:>4} {r['unlabelled']:>5} "
                     f"{ratio(r['precision']):>9} {r['missed_tp']:>6} {r['fixed_fp']:>6} {r['misses']:>6} "
                     f"{ratio(r['recall']):>6}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- linting


def lint_targets(root: Path, project: dict) -> list[str]:
    if project.get("paths"):
        return list(project["paths"])
    return sorted(p.name for p in root.iterdir()
                  if not p.name.endswith((".dist-info", ".egg-info", ".data")) and p.name != fetch.MARKER
                  and (p.is_dir() or p.suffix == ".py"))


def run_ddplint(root: Path, targets: list[str], ddplint_root: Path, extra: list[str] | None = None,
                jobs: int = 1) -> list[dict]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ddplint_root) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "ddplint", "check", "--output-format", "json", "--isolated",
           "--no-cache", "--exit-zero", "--jobs", str(jobs)] + (extra or []) + targets
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    # rc 1 is also what an uncaught exception exits with: a traceback or an internal error is a
    # failure, never "no findings" (a crash in opacus once hid five labelled findings).
    if proc.returncode not in (0, 1, 2) or "Traceback (most recent call last)" in proc.stderr or "internal error" in proc.stderr:
        raise RuntimeError(f"ddplint failed in {root}: rc {proc.returncode}\n{proc.stderr[-2000:]}")
    try:
        return json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as e:
        raise RuntimeError(f"ddplint printed no JSON in {root}: {e}\n{proc.stderr[-2000:]}")


_FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>DDP\d+) (?P<message>.*)$")


def run_flake8(root: Path, targets: list[str], ddplint_root: Path, select: str = "DDP") -> list[dict]:
    """What `flake8 --select DDP` reports on the targets, in the JSON shape of `run_ddplint`
    (no fixes: flake8 has none). flake8 must find the plugin through its entry point."""
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", select, "--exit-zero", "--jobs", "1",
           "--format", "%(path)s:%(row)d:%(col)d: %(code)s %(text)s"]
    # no project cache in the linted tree, as the CLI's --no-cache (the corpus is read-only input)
    env = {**_ddplint_env(ddplint_root), "DDPLINT_NO_CACHE": "1"}
    proc = subprocess.run(cmd + targets, cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode != 0 or "Traceback (most recent call last)" in proc.stderr:
        raise RuntimeError(f"flake8 failed in {root}: rc {proc.returncode}\n{proc.stderr[-2000:]}")
    found = []
    for text in proc.stdout.splitlines():
        m = _FLAKE8_LINE.match(text)
        if m:
            found.append({"filename": m["path"], "line": int(m["line"]), "column": int(m["column"]),
                          "code": m["code"], "message": m["message"]})
    return found


def _rel(root: Path, filename: str) -> str:
    p = Path(filename)
    if p.is_absolute():
        try:
            p = p.relative_to(root)
        except ValueError:
            p = Path(os.path.relpath(p, root))
    return p.as_posix()


def source_line(root: Path, rel: str, line: int, cell: int | None = None, _cache: dict = {}) -> str:
    """The text of `line` of the file (of its notebook cell `cell`, numbered from 1 over all
    cells as ddplint numbers them, where the finding is in a notebook)."""
    key = (str(root), rel, cell)
    if key not in _cache:
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
            if cell is not None:
                source = json.loads(text)["cells"][cell - 1]["source"]
                text = source if isinstance(source, str) else "".join(source)
            _cache[key] = text.splitlines()
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            _cache[key] = []
    lines = _cache[key]
    return lines[line - 1] if 0 < line <= len(lines) else ""


def to_findings(project: dict, root: Path, raw: list[dict]) -> list[Finding]:
    out = []
    excludes = project.get("exclude", [])
    for d in raw:
        rel = _rel(root, d["filename"])
        if any(fnmatch.fnmatch(rel, pat) for pat in excludes):
            continue
        out.append(Finding(project["name"], rel, int(d["line"]), d["code"],
                           normalize_snippet(source_line(root, rel, int(d["line"]), d.get("cell"))),
                           d.get("message", ""), int(d.get("column", 0)), d.get("fix"),
                           tuple(step["kind"] for step in d.get("chain") or ())))
    return out


# --------------------------------------------------------------------------- fixes


def apply_edits(text: str, edits: list[dict], imports: list[str] | None = None) -> str:
    """Apply one finding's fix edits (1-based line/column, end exclusive) to text."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(line: int, col: int) -> int:
        return starts[min(line, len(lines) + 1) - 1] + col - 1

    for e in sorted(edits, key=lambda e: (e["line"], e["column"]), reverse=True):
        a, b = offset(e["line"], e["column"]), offset(e["end_line"], e["end_column"])
        text = text[:a] + e["content"] + text[b:]
    missing = [imp for imp in (imports or []) if imp not in text]
    if missing:
        text = "".join(f"{imp}  # (import added by the fix)\n" for imp in missing) + text
    return text


def _diff(path: str, old: str, new: str, n: int = 2) -> list[str]:
    return list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     f"a/{path}", f"b/{path}", n=n))


def hunks_for(diff_lines: list[str], first: int, last: int) -> str:
    """The hunks of a unified diff whose old-side range meets lines first..last."""
    out, hunk, keep = [], [], False
    for ln in diff_lines[2:]:
        m = re.match(r"@@ -(\d+)(?:,(\d+))? ", ln)
        if m:
            if keep:
                out += hunk
            start, count = int(m.group(1)), int(m.group(2) or 1)
            hunk, keep = [ln], start <= last and first <= start + max(count, 1) - 1
        else:
            hunk.append(ln)
    if keep:
        out += hunk
    return "".join(out)


def _strip_imports(text: str, imports: list[str]) -> str:
    drop = {imp.strip() for imp in imports}
    return "".join(l for l in text.splitlines(keepends=True)
                   if l.strip() not in drop and "(import added by the fix)" not in l)


def _ddplint_env(ddplint_root: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ddplint_root) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def cli_fixed_text(root: Path, rel: str, rule: str, ddplint_root: Path) -> str:
    """What `ddplint --fix --unsafe-fixes --select RULE` makes of one file (on a scratch copy)."""
    with tempfile.TemporaryDirectory(prefix="ddplint-precision-fix-") as tmp:
        dst = Path(tmp) / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, dst)
        subprocess.run([sys.executable, "-m", "ddplint", "check", "--isolated", "--no-cache", "--fix",
                        "--unsafe-fixes", "--exit-zero", "-q", "--jobs", "1", "--select", rule, rel],
                       cwd=tmp, env=_ddplint_env(ddplint_root), capture_output=True, text=True)
        return dst.read_text(encoding="utf-8", errors="replace")


def review_fixes(project: dict, root: Path, findings: list[Finding], ddplint_root: Path,
                 labels: dict[int, Label]) -> dict:
    """Print each finding's fix as the hunk(s) `--fix` makes around it, check that the
    finding's JSON fix edits produce the same file as `--fix` (when it is the only
    finding of its rule in the file), then run `--fix --unsafe-fixes` on a scratch copy
    of all flagged files and report whether they still compile and what is left."""
    stats = {"fixes": 0, "json_mismatch": 0, "broken_files": 0, "left": 0}
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, f in enumerate(findings):
        groups[(f.path, f.rule)].append(i)
    fixed_text: dict[tuple[str, str], str] = {}
    for key, idxs in groups.items():
        if any(findings[i].fix for i in idxs):
            fixed_text[key] = cli_fixed_text(root, key[0], key[1], ddplint_root)
    for i, f in enumerate(findings):
        lab = labels.get(i)
        verdict = f"{lab.verdict}: {lab.reason}" if lab else "unlabelled"
        appl = f.fix.get("applicability") if f.fix else "none"
        print(f"\n### {f.project} {f.path}:{f.line} {f.rule} [{appl} fix] ({verdict})")
        if not f.fix:
            print("(no fix)")
            continue
        stats["fixes"] += 1
        src = (root / f.path).read_text(encoding="utf-8", errors="replace")
        after = fixed_text[(f.path, f.rule)]
        last = max([f.line] + [e["end_line"] for e in f.fix.get("edits", [])])
        first = min([f.line] + [e["line"] for e in f.fix.get("edits", [])])
        hunk = hunks_for(_diff(f.path, src, after), first, last)
        if f.fix.get("imports"):
            print(f"(adds: {'; '.join(f.fix['imports'])})")
        print(hunk or "(--fix changed nothing here)\n", end="")
        if len(groups[(f.path, f.rule)]) == 1:
            via_json = apply_edits(src, f.fix.get("edits", []), f.fix.get("imports"))
            imps = f.fix.get("imports") or []
            if _strip_imports(via_json, imps) != _strip_imports(after, imps):
                stats["json_mismatch"] += 1
                print("!! the JSON fix edits give a different file than --fix; applying the JSON edits gives:")
                shown = (hunks_for(_diff(f.path, src, via_json), first, last) or "(no change)\n").splitlines(True)
                print("".join(shown[:MAX_MISMATCH_LINES]), end="")
                if len(shown) > MAX_MISMATCH_LINES:
                    print(f"... ({len(shown) - MAX_MISMATCH_LINES} more lines)")
    files = sorted({f.path for f in findings})
    with tempfile.TemporaryDirectory(prefix="ddplint-precision-fix-") as tmp:
        scratch = Path(tmp)
        for rel in files:
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, scratch / rel)
        subprocess.run([sys.executable, "-m", "ddplint", "check", "--isolated", "--no-cache", "--fix",
                        "--unsafe-fixes", "--exit-zero", "-q", "--jobs", "1"] + files,
                       cwd=scratch, env=_ddplint_env(ddplint_root), capture_output=True, text=True)
        broken = []
        for rel in files:
            try:
                compile((scratch / rel).read_text(encoding="utf-8"), rel, "exec")
            except SyntaxError as e:
                broken.append(f"{rel}: {e}")
        left = run_ddplint(scratch, files, ddplint_root)
        stats["broken_files"] += len(broken)
        stats["left"] += len(left)
        print(f"\n--- {project['name']}: --fix --unsafe-fixes on a scratch copy of {len(files)} file(s): "
              f"{len(broken)} no longer compile, {len(left)} finding(s) left")
        for b in broken:
            print(f"    BROKEN {b}")
        for d in left:
            print(f"    left: {_rel(scratch, d['filename'])}:{d['line']} {d['code']} {d['message'][:80]}")
    return stats


# --------------------------------------------------------------------------- first contact


def batch_names(corpus: dict, batches: set[str]) -> set[str]:
    return {p["name"] for p in corpus["projects"] if p.get("batch") in batches}


def read_first_contact(path: Path = FIRST_CONTACT_FILE) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def ddplint_commit(ddplint_root: Path) -> str:
    proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ddplint_root, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "ddplint"], cwd=ddplint_root,
                           capture_output=True, text=True).stdout.strip()
    return (proc.stdout.strip() or "unknown") + (" (with uncommitted changes to ddplint/)" if dirty else "")


def first_contact_entry(batch: str, names: set[str], score: Score, rows: dict, via: str, commit: str) -> dict:
    """The frozen record of a batch just labelled: refuses while one of its findings has no label."""
    mine = [m for m in score.matches if m.finding.project in names]
    unlabelled = [m.finding for m in mine if m.label is None]
    if unlabelled:
        raise SystemExit(f"run: {len(unlabelled)} finding(s) of batch {batch} are unlabelled; label them first")
    return {
        "recorded": datetime.date.today().isoformat(),
        "ddplint_commit": commit,
        "via": via,
        "projects": sorted(names),
        "rules": rows,
        "findings": [[m.finding.project, m.finding.path, m.finding.line, m.finding.rule, m.label.verdict]
                     for m in mine],
    }


def format_first_contact(batch: str, record: dict, now: dict) -> str:
    """A batch's first-contact figures beside today's, per rule."""
    def ratio(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}"

    def cells(r: dict | None) -> str:
        r = r or {"findings": 0, "tp": 0, "fp": 0, "precision": None, "recall": None}
        return f"{r['findings']:>4} {r['tp']:>4} {r['fp']:>4} {ratio(r['precision']):>5} {ratio(r['recall']):>6}"

    first = record["rules"]
    head = f"{'rule':<7} | first contact: {'n':>3} {'TP':>4} {'FP':>4} {'prec':>5} {'recall':>6} | now: {'n':>3} {'TP':>4} {'FP':>4} {'prec':>5} {'recall':>6}"
    lines = [f"batch {batch}: first contact {record['recorded']} at {record['ddplint_commit'].split()[0][:12]} "
             f"({len(record['projects'])} projects), against now", head, "-" * len(head)]
    for rule in sorted((set(first) | set(now)) - {"ALL"}) + ["ALL"]:
        lines.append(f"{rule:<7} | {' ' * 15}{cells(first.get(rule))} | {' ' * 5}{cells(now.get(rule))}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=None, help="corpus cache (default ~/.cache/ddplint-precision)")
    ap.add_argument("--ddplint-root", type=Path, default=REPO, help="checkout whose ddplint is run (default: this one)")
    ap.add_argument("--only", default="", help="comma-separated project names")
    ap.add_argument("--kind", choices=("github", "pypi"), default=None,
                    help="only the GitHub repositories, or only the PyPI packages")
    ap.add_argument("--rules", default="", help="comma-separated rule codes to score (default all)")
    ap.add_argument("--labels", type=Path, default=LABELS_FILE)
    ap.add_argument("--json", dest="json_out", type=Path, default=None, help="write the figures here")
    ap.add_argument("--fixes", action="store_true", help="print each finding's fix diff and test --fix on a scratch copy")
    ap.add_argument("--jobs", type=int, default=1, help="ddplint --jobs (default 1: the machine is shared)")
    ap.add_argument("--batch", default="", help="comma-separated batches of corpus.json (default all)")
    ap.add_argument("--via", choices=("cli", "flake8"), default="cli",
                    help="lint with `ddplint check` (default) or with `flake8 --select DDP`")
    ap.add_argument("--record-first-contact", metavar="BATCH", default="",
                    help="freeze this batch's figures in first_contact.json (every finding must be labelled)")
    ap.add_argument("--add-unlabelled", action="store_true",
                    help="append unlabelled findings to the labels file with verdict '?' for hand labelling")
    ap.add_argument("--rescore", metavar="JSON", type=Path, default=None,
                    help="score the findings a --json run wrote against today's labels, without linting again")
    args = ap.parse_args(argv)

    cache = (args.cache or fetch.default_cache()).expanduser()
    corpus = fetch.load_corpus()
    only = {s.strip() for s in args.only.split(",") if s.strip()} or None
    if args.kind:
        of_kind = {p["name"] for p in corpus["projects"] if (p["kind"] == "github") == (args.kind == "github")}
        only = only & of_kind if only else of_kind
        if not only:
            raise SystemExit(f"run: no {args.kind} project among --only {args.only}")
    batches = {s.strip() for s in args.batch.split(",") if s.strip()}
    if batches:
        in_batches = batch_names(corpus, batches)
        only = only & in_batches if only else in_batches
        if not only:
            raise SystemExit(f"run: no project in batch {args.batch}")
    rules = {s.strip().upper() for s in args.rules.split(",") if s.strip()} or None
    if args.record_first_contact and (rules or args.only):
        raise SystemExit("run: --record-first-contact scores a whole batch: drop --rules and --only")
    if args.rescore and (args.record_first_contact or args.fixes or args.add_unlabelled):
        raise SystemExit("run: --rescore only scores: drop --record-first-contact, --fixes and --add-unlabelled")
    roots = {} if args.rescore else fetch.fetch(cache, corpus, only)
    labels = [l for l in read_labels(args.labels)
              if (not only or l.project in only) and (not rules or l.rule in rules)]

    findings: list[Finding] = []
    per_project: dict[str, list[Finding]] = {}
    if args.rescore:
        earlier = json.loads(args.rescore.read_text(encoding="utf-8"))
        for project in earlier["projects"]:
            if not only or project["name"] in only:
                per_project[project["name"]] = []
        for row in earlier["findings"]:
            if row["project"] in per_project and (not rules or row["rule"] in rules):
                per_project[row["project"]].append(Finding(**row))
                findings.append(per_project[row["project"]][-1])
    for project in corpus["projects"]:
        if project["name"] not in roots:
            continue
        root = roots[project["name"]]
        targets = lint_targets(root, project)
        select = ",".join(sorted(rules)) if rules else None  # the other rules' work is not needed
        if args.via == "flake8":
            raw = run_flake8(root, targets, args.ddplint_root.resolve(), select or "DDP")
        else:
            raw = run_ddplint(root, targets, args.ddplint_root.resolve(), ["--select", select] if select else None,
                              jobs=args.jobs)
        fs = [f for f in to_findings(project, root, raw) if not rules or f.rule in rules]
        per_project[project["name"]] = fs
        findings.extend(fs)

    misses = [l for l in read_labels(MISSES_FILE)
              if (not only or l.project in only) and (not rules or l.rule in rules)]
    # Labels and known misses are matched together, so that a finding on a miss row's own line
    # is that miss caught, not a moved label of the same text elsewhere in the file.
    score = match(findings, labels + misses)
    caught_misses = []  # (the miss row, its finding)
    for m in score.matches:
        if m.label is not None and m.label.verdict == "MISS":  # a known miss now reported: a true positive
            caught_misses.append(Match(m.finding, m.label))
            m.label = Label(**{**asdict(m.label), "verdict": "TP", "reason": "(known miss, now caught) " + m.label.reason})
    caught_ids = {id(m.label) for m in caught_misses}
    left = [l for l in score.stale if l.verdict == "MISS"]
    score.stale = [l for l in score.stale if l.verdict != "MISS"]
    rows = table(score, left)
    print(f"precision benchmark: {len(per_project)} projects, {len(findings)} findings, {len(labels)} labels"
          f" (via {args.via})")
    print(format_table(rows))

    def rows_of(names: set[str]) -> dict:
        part = Score([m for m in score.matches if m.finding.project in names],
                     [l for l in score.stale if l.project in names])
        return table(part, [l for l in left if l.project in names])

    records = read_first_contact()
    if args.record_first_contact:
        batch = args.record_first_contact
        names = batch_names(corpus, {batch})
        if not names or not names <= set(per_project):
            raise SystemExit(f"run: batch {batch} was not linted whole in this run")
        records[batch] = first_contact_entry(batch, names, score, rows_of(names), args.via,
                                             ddplint_commit(args.ddplint_root.resolve()))
        FIRST_CONTACT_FILE.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
        print(f"\nrecorded batch {batch}'s first-contact figures in {FIRST_CONTACT_FILE.name}")
    for batch, record in records.items():
        if record.get("projects") and set(record["projects"]) <= set(per_project) and not rules:
            print("\n" + format_first_contact(batch, record, rows_of(set(record["projects"]))))

    if misses:
        print(f"\nknown misses (misses.csv): {len(caught_misses)} of {len(misses)} now reported")
        for l in misses:
            state = "CAUGHT" if id(l) in caught_ids else "missed"
            print(f"  [{state}] {l.project} {l.path}:{l.line} {l.rule}  {l.snippet}")
    unl = [m.finding for m in score.matches if m.label is None]
    if unl:
        print(f"\nunlabelled findings ({len(unl)}):")
        for f in unl:
            print(f"  {f.project} {f.path}:{f.line} {f.rule}  {f.snippet}")
    if score.stale:
        print(f"\nlabelled findings that no longer fire ({len(score.stale)}):")
        for l in score.stale:
            print(f"  [{l.verdict}] {l.project} {l.path}:{l.line} {l.rule}  {l.snippet}  -- {l.reason}")

    if args.add_unlabelled and unl:
        with open(args.labels, "a", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            if fh.tell() == 0:
                w.writerow(LABEL_COLUMNS)
            for f in unl:
                w.writerow([f.project, f.path, f.line, f.rule, f.snippet, "?", ""])
        print(f"\nappended {len(unl)} rows with verdict '?' to {args.labels}")

    if args.json_out:
        doc = {
            "ddplint_root": str(args.ddplint_root.resolve()),
            "projects": [{"name": p["name"], "version": p.get("version") or p["commit"], "kind": p["kind"],
                          "findings": len(per_project.get(p["name"], []))}
                         for p in corpus["projects"] if p["name"] in per_project],
            "rules": rows,
            "findings": [asdict(f) | {"fix": None} for f in findings],
            "unlabelled": [asdict(f) | {"fix": None} for f in unl],
            "no_longer_fire": [asdict(l) for l in score.stale],
            "known_misses": {"total": len(misses), "caught": [asdict(m.label) for m in caught_misses]},
        }
        args.json_out.write_text(json.dumps(doc, indent=2) + "\n")

    if args.fixes:
        print("\n================ fixes ================")
        total = defaultdict(int)
        idx = {id(m.finding): m.label for m in score.matches}
        for project in corpus["projects"]:
            fs = per_project.get(project["name"])
            if not fs:
                continue
            st = review_fixes(project, roots[project["name"]], fs, args.ddplint_root.resolve(),
                              {i: idx[id(f)] for i, f in enumerate(fs) if idx.get(id(f))})
            for k, n in st.items():
                total[k] += n
        print(f"\nfixes: {total['fixes']} findings with a fix, {total['json_mismatch']} whose JSON edits differ "
              f"from --fix, {total['broken_files']} files that no longer compile after --fix --unsafe-fixes, "
              f"{total['left']} findings left after it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
