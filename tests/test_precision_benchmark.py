"""The precision benchmark's own logic (benchmarks/precision/run.py), offline.

No download, no corpus: synthetic findings and labels exercise the matching
(snippet first, nearest line; then same line), the per-rule table, the labels
file round trip, and the fix helpers; one test lints a tiny synthetic project
end to end through run_ddplint/to_findings (and through flake8), and one unpacks a GitHub entry from a
bare git mirror made in a temporary folder.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
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


def test_a_notebook_findings_snippet_is_its_cells_line_not_the_json(tmp_path):
    cells = [{"cell_type": "markdown", "source": ["# title\n"]},
             {"cell_type": "code", "source": ["import torch\n", "state = torch.load(path)\n"]},
             {"cell_type": "code", "source": "x = 1\ny = torch.load(p)"}]
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": cells}, indent=1), encoding="utf-8")
    assert bench.source_line(tmp_path, "nb.ipynb", 2, 2) == "state = torch.load(path)"
    assert bench.source_line(tmp_path, "nb.ipynb", 2, 3) == "y = torch.load(p)"
    assert bench.source_line(tmp_path, "nb.ipynb", 2, 9) == ""
    assert bench.source_line(tmp_path, "nb.ipynb", 2) == ' "cells": ['  # without a cell: the file's own line


def test_match_tolerates_a_line_shift_and_prefers_the_nearest_label():
    labels = [_l(10, "a = torch.load(x)", "TP"), _l(50, "a = torch.load(x)", "FP")]
    # Both findings moved down by 3 lines; the same snippet occurs twice.
    score = bench.match([_f(53, "a = torch.load(x)"), _f(13, "a = torch.load(x)")], labels)
    got = {m.finding.line: m.label.verdict for m in score.matches}
    assert got == {13: "TP", 53: "FP"}
    assert score.stale == []


def test_a_label_on_the_findings_own_line_comes_before_a_moved_one_with_the_same_snippet():
    # The FP at line 78 no longer fires; the finding at 159 is the miss row written for 159.
    labels = [_l(78, "c = torch.load(p)", "FP"), _l(159, "c = torch.load(p)", "MISS")]
    score = bench.match([_f(159, "c = torch.load(p)")], labels)
    assert score.matches[0].label.verdict == "MISS"
    assert [label.line for label in score.stale] == [78]


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
    misses = [_l(20, "m", "MISS"), _l(30, "n", "MISS", rule="DDP021")]
    rows = bench.table(bench.match(findings, labels), misses)
    r = rows["DDP004"]
    assert (r["findings"], r["tp"], r["fp"], r["unlabelled"], r["missed_tp"], r["misses"]) == (5, 3, 1, 1, 1, 1)
    assert r["precision"] == 0.75 and r["recall"] == 0.6  # 3 reported of 3 + 1 lost + 1 known miss
    assert rows["DDP021"]["recall"] == 0.0 and rows["DDP021"]["precision"] is None
    assert rows["ALL"]["misses"] == 2 and rows["ALL"]["recall"] == 0.5
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
        if p["kind"] == "github":
            assert re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", p["repo"]) and p["name"] == p["repo"], p
            assert re.fullmatch(r"[0-9a-f]{40}", p["commit"]) and p["note"].strip(), p
        else:
            assert p["kind"] in ("wheel", "sdist") and len(p["sha256"]) == 64 and p["version"] in p["filename"]
    assert sum(p["kind"] == "github" for p in corpus["projects"]) == len({p["repo"] for p in corpus["projects"]
                                                                         if p["kind"] == "github"})
    labels = bench.read_labels()
    misses = bench.read_labels(bench.MISSES_FILE)
    assert labels and {l.project for l in labels + misses} <= set(names)
    assert {l.verdict for l in misses} <= {"MISS"}
    # Two findings of one rule on one line (two torch.load calls) need two labels with one
    # key; a label is consumed by one finding. They must agree, or the score depends on order.
    verdicts = {}
    for l in labels:
        assert verdicts.setdefault((l.project, l.path, l.line, l.rule), l.verdict) == l.verdict, l
    keys = [(l.project, l.path, l.line, l.rule) for l in misses]
    assert len(keys) == len(set(keys))
    assert all(l.reason.strip() for l in labels + misses)


def _bare_mirror(tmp_path, repo):
    """A bare git mirror of a one-commit repository holding train.py, laid out as the fetch tool does."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "train.py").write_text("import torch.distributed as dist\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for cmd in (["init", "-q"], ["add", "train.py"], ["commit", "-q", "-m", "one"]):
        subprocess.run(git + cmd, cwd=work, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, check=True, capture_output=True,
                            text=True).stdout.strip()
    mirror = tmp_path / "mirrors" / repo.replace("/", "+") / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirror)], check=True)
    return mirror, commit


def test_a_github_entry_is_unpacked_from_a_mirror_at_its_commit(tmp_path, monkeypatch):
    mirror, commit = _bare_mirror(tmp_path, "someone/trainer")
    monkeypatch.setenv("DDPLINT_GITHUB_MIRRORS", str(tmp_path / "mirrors"))
    assert fetch.find_mirror("someone/trainer") == mirror
    assert fetch.find_mirror("someone/other") is None
    assert fetch.missing_blobs(mirror, commit) == []
    project = {"name": "someone/trainer", "kind": "github", "repo": "someone/trainer", "commit": commit}
    cache = tmp_path / "cache"
    roots = fetch.fetch(cache, {"projects": [project]})
    root = roots["someone/trainer"]
    assert root == fetch.project_dir(cache, project) and root.name == f"someone+trainer-{commit[:12]}"
    assert (root / "train.py").read_text() == "import torch.distributed as dist\n"
    assert (root / fetch.MARKER).read_text().strip() == commit
    assert bench.lint_targets(root, project) == ["train.py"]
    assert list((cache / "dl").iterdir()) == []  # the archive is not kept
    # Unpacked once: a second fetch leaves the tree alone even when the mirror is gone.
    (root / "train.py").write_text("edited\n")
    shutil.rmtree(tmp_path / "mirrors")
    fetch.fetch(cache, {"projects": [project]})
    assert (root / "train.py").read_text() == "edited\n"


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
    through_flake8 = bench.to_findings(project, root, bench.run_flake8(root, ["pkg"], ROOT))
    assert [(f.path, f.line, f.rule) for f in through_flake8] == [(f.path, f.line, f.rule) for f in findings]


def test_the_shipped_misses_are_well_formed():
    misses = bench.read_labels(bench.MISSES_FILE)
    assert misses and all(l.verdict == "MISS" and l.reason.strip() for l in misses)


def test_kind_narrows_the_projects_and_refuses_an_empty_choice(tmp_path):
    pypi = next(p["name"] for p in fetch.load_corpus()["projects"] if p["kind"] != "github")
    with pytest.raises(SystemExit, match="no github project"):
        bench.main(["--kind", "github", "--only", pypi, "--cache", str(tmp_path)])
    assert not (tmp_path / "src").exists()  # refused before fetching anything


def test_a_batch_is_recorded_at_first_contact_only_when_every_finding_is_labelled():
    findings = [_f(3, "torch.load(a)"), _f(9, "torch.load(b)", project="q")]
    labels = [_l(3, "torch.load(a)", "FP")]
    score = bench.match(findings, labels)
    with pytest.raises(SystemExit, match="1 finding"):
        bench.first_contact_entry("b", {"p", "q"}, score, {}, "cli", "abc")
    entry = bench.first_contact_entry("b", {"p"}, score, bench.table(score), "flake8", "abc")
    assert entry["findings"] == [["p", "pkg/train.py", 3, "DDP004", "FP"]]
    assert (entry["via"], entry["ddplint_commit"], entry["projects"]) == ("flake8", "abc", ["p"])


def test_first_contact_figures_are_shown_beside_todays():
    first = bench.table(bench.match([_f(3, "torch.load(a)")], [_l(3, "torch.load(a)", "FP")]))
    now = bench.table(bench.match([], [_l(3, "torch.load(a)", "FP")]))
    text = bench.format_first_contact("b", {"recorded": "2026-12-02", "ddplint_commit": "abcdef1234567",
                                           "projects": ["p"], "rules": first}, now)
    row = next(line for line in text.splitlines() if line.startswith("DDP004"))
    first_cells, now_cells = row.split("|")[1].split(), row.split("|")[2].split()
    assert first_cells == ["1", "0", "1", "0.00", "-"]
    assert now_cells == ["0", "0", "0", "-", "-"]


def test_every_project_of_the_corpus_belongs_to_a_batch_and_recorded_batches_name_their_projects():
    corpus = fetch.load_corpus()
    assert all(p.get("batch") for p in corpus["projects"])
    for batch, record in bench.read_first_contact().items():
        assert set(record["projects"]) == bench.batch_names(corpus, {batch}), batch


def test_rescore_scores_an_earlier_runs_findings_against_todays_labels(tmp_path, capsys):
    """--rescore reads the findings a --json run wrote and matches them with the labels file as
    it is now (a finding labelled since the run counts), without fetching or linting."""
    project = next(p["name"] for p in fetch.load_corpus()["projects"])
    finding = {"project": project, "path": "train.py", "line": 3, "rule": "DDP004", "snippet": "torch.load(p)",
               "message": "", "column": 1, "fix": None}
    earlier = tmp_path / "run.json"
    earlier.write_text(json.dumps({"projects": [{"name": project}], "findings": [finding, {**finding, "line": 9}]}))
    labels = tmp_path / "labels.csv"
    bench.write_labels([_l(3, "torch.load(p)", "TP", path="train.py", project=project)], labels)
    out = tmp_path / "now.json"
    assert bench.main(["--rescore", str(earlier), "--labels", str(labels), "--only", project, "--cache",
                       str(tmp_path / "cache"), "--json", str(out)]) == 0
    row = json.loads(out.read_text())["rules"]["DDP004"]
    assert (row["findings"], row["tp"], row["unlabelled"]) == (2, 1, 1)
    assert not (tmp_path / "cache").exists()  # nothing fetched
    with pytest.raises(SystemExit, match="only scores"):
        bench.main(["--rescore", str(earlier), "--add-unlabelled"])
