"""The precision benchmark's own logic (benchmarks/precision/run.py), offline.

No download, no corpus: synthetic findings and labels exercise the matching
(snippet first, nearest line; then same line), the per-rule table, the labels
file round trip, and the fix helpers; one test lints a tiny synthetic project
end to end through run_ddplint/to_findings.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRECISION = ROOT / "benchmarks" / "precision"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"precision_{name}", PRECISION / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up here
    sys.path.insert(0, str(PRECISION))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(PRECISION))
    return mod


bench = _load("run")
fetch = _load("fetch")
F, L = bench.Finding, bench.Label


def _f(line, snippet, rule="DDP004", path="pkg/train.py", project="p"):
    return F(project, path, line, rule, bench.normalize_snippet(snippet))


def _l(line, snippet, verdict, rule="DDP004", path="pkg/train.py", project="p"):
    return L(project, path, line, rule, bench.normalize_snippet(snippet), verdict, "why")


def test_snippet_is_stripped_and_whitespace_collapsed():
    assert bench.normalize_snippet("    x =  torch.load(p)\t# c\n") == "x = torch.load(p) # c"
    assert len(bench.normalize_snippet("a" * 500)) == bench.SNIPPET_LEN


def test_match_tolerates_a_line_shift_and_prefers_the_nearest_label():
    labels = [_l(10, "a = torch.load(x)", "TP"), _l(50, "a = torch.load(x)", "FP")]
    # Both findings moved down by 3 lines; the same snippet occurs twice.
    score = bench.match([_f(53, "a = torch.load(x)"), _f(13, "a = torch.load(x)")], labels)
    got = {m.finding.line: m.label.verdict for m in score.matches}
    assert got == {13: "TP", 53: "FP"}
    assert score.stale == []


def test_match_falls_back_to_the_line_when_the_snippet_changed():
    score = bench.match([_f(7, "a = torch.load(x, weights_only=True)")], [_l(7, "a = torch.load(x)", "FP")])
    assert score.matches[0].label is not None and score.matches[0].label.verdict == "FP"


def test_match_keys_on_project_path_and_rule():
    labels = [_l(5, "torch.save(m, p)", "TP", rule="DDP014")]
    findings = [_f(5, "torch.save(m, p)", rule="DDP004"),
                _f(5, "torch.save(m, p)", rule="DDP014", path="other.py"),
                _f(5, "torch.save(m, p)", rule="DDP014", project="q")]
    score = bench.match(findings, labels)
    assert all(m.label is None for m in score.matches)
    assert score.stale == labels


def test_each_label_is_used_once():
    score = bench.match([_f(1, "x"), _f(2, "x")], [_l(1, "x", "TP")])
    assert sum(m.label is not None for m in score.matches) == 1
    assert [m.finding.line for m in score.matches if m.label is None] == [2]


def test_table_counts_precision_unlabelled_and_lost_findings():
    labels = [_l(1, "a", "TP"), _l(2, "b", "FP"), _l(3, "c", "TP"), _l(4, "d", "TP"),
              _l(9, "gone", "TP"), _l(9, "fixed", "FP", rule="DDP014")]
    findings = [_f(1, "a"), _f(2, "b"), _f(3, "c"), _f(4, "d"), _f(5, "new")]
    rows = bench.table(bench.match(findings, labels))
    r = rows["DDP004"]
    assert (r["findings"], r["tp"], r["fp"], r["unlabelled"], r["missed_tp"]) == (5, 3, 1, 1, 1)
    assert r["precision"] == 0.75
    assert rows["DDP014"]["findings"] == 0 and rows["DDP014"]["fixed_fp"] == 1
    assert rows["DDP014"]["precision"] is None
    assert rows["ALL"]["tp"] == 3 and rows["ALL"]["precision"] == 0.75
    text = bench.format_table(rows)
    assert "DDP004" in text and "0.75" in text


def test_labels_round_trip_and_pending_rows_are_skipped(tmp_path):
    path = tmp_path / "labels.csv"
    bench.write_labels([_l(3, "  torch.load( p )", "FP"), _l(1, "x", "TP")], path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("p,pkg/train.py,8,DDP004,y,?,\n")
    back = bench.read_labels(path)
    assert [(l.line, l.verdict, l.snippet) for l in back] == [(1, "TP", "x"), (3, "FP", "torch.load( p )")]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("p,pkg/train.py,9,DDP004,z,MAYBE,\n")
    with pytest.raises(ValueError):
        bench.read_labels(path)


def test_apply_edits_and_hunks_for():
    src = "import torch\n\ndef f(p):\n    return torch.load(p)\n"
    edits = [{"line": 4, "column": 12, "end_line": 4, "end_column": 25, "content": 'torch.load(p, map_location="cpu")'}]
    new = bench.apply_edits(src, edits, ["import os"])
    assert 'return torch.load(p, map_location="cpu")' in new and new.startswith("import os")
    diff = bench._diff("f.py", src, new)
    assert "map_location" in bench.hunks_for(diff, 4, 4)
    assert bench.hunks_for(diff, 40, 41) == ""


def test_the_shipped_labels_and_corpus_are_well_formed():
    corpus = fetch.load_corpus()
    names = [p["name"] for p in corpus["projects"]]
    assert len(names) == len(set(names)) >= 20
    for p in corpus["projects"]:
        assert p["kind"] in ("wheel", "sdist") and len(p["sha256"]) == 64 and p["version"] in p["filename"]
    labels = bench.read_labels()
    assert labels and {l.project for l in labels} <= set(names)
    keys = [(l.project, l.path, l.line, l.rule) for l in labels]
    assert len(keys) == len(set(keys))
    assert all(l.reason.strip() for l in labels)


def test_end_to_end_on_a_synthetic_project(tmp_path):
    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "train.py").write_text("import torch.distributed\n\nsd = torch.load('ckpt.pt')\n")
    (tmp_path / "proj" / "pkg-1.0.dist-info").mkdir()
    root = tmp_path / "proj"
    project = {"name": "proj", "version": "1.0"}
    assert bench.lint_targets(root, project) == ["pkg"]
    raw = bench.run_ddplint(root, bench.lint_targets(root, project), ROOT)
    findings = bench.to_findings(project, root, raw)
    assert [(f.path, f.line, f.rule, f.snippet) for f in findings] == [
        ("pkg/train.py", 3, "DDP004", "sd = torch.load('ckpt.pt')")]
    label = L("proj", "pkg/train.py", 1, "DDP004", "sd = torch.load('ckpt.pt')", "FP", "cache")
    score = bench.match(findings, [label])
    assert score.matches[0].label is label
    assert bench.to_findings({**project, "exclude": ["pkg/*"]}, root, raw) == []
    json.dumps(bench.table(score))  # the --json figures serialize


def test_the_shipped_misses_are_well_formed():
    misses = bench.read_labels(bench.MISSES_FILE)
    assert misses and all(l.verdict == "MISS" and l.reason.strip() for l in misses)
