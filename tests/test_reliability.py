"""Never crash, never lose a file, never run the user's code.

Bad input of every kind gives one line naming the file and the reason, exit 2, and the other
files are still checked; fixes are written atomically and never through a symlink that leaves
the linted tree; a bug in a rule is one line, not a traceback.
"""

import errno
import os
import random
import signal
import subprocess
import sys
import time
import tokenize
from pathlib import Path

import pytest

from ddplint_test_support import REPO, cli_env, time_scale
from ddplint import api
from ddplint.engine import files
from ddplint.api import Mode, lint_paths, process_file
from ddplint.rules import all_rules

BROKEN = "import torch.distributed\nmodel = torch.load('model.pt')\n"
FIXED = "import torch.distributed\nmodel = torch.load('model.pt', map_location=\"cpu\")\n"


def snapshot(folder: Path) -> dict[str, bytes]:
    """The user's files under `folder` (ddplint's own results cache is not one of them)."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink() and ".ddplint_cache" not in path.parts
    }


def bad_tree(folder: Path) -> None:
    (folder / "syntax.py").write_text("import torch.distributed\ndef broken(:\n    torch.load('x.pt')\n")
    (folder / "latin.py").write_bytes(b"import torch\nx = torch.load('\xff')\n")
    (folder / "klingon.py").write_bytes(b"# coding: klingon\nimport torch.distributed\nx = torch.load('a.pt')\n")
    (folder / "binary.py").write_bytes(b"import torch\x00\x01torch.load" + bytes(range(256)))
    (folder / "empty.py").write_bytes(b"")
    os.symlink(folder / "missing.py", folder / "dangling.py")
    os.symlink(folder / "loop_b.py", folder / "loop_a.py")
    os.symlink(folder / "loop_a.py", folder / "loop_b.py")
    os.mkfifo(folder / "fifo.py")
    (folder / "sub").mkdir()
    os.symlink("..", folder / "sub" / "up")  # a directory loop
    (folder / "good.py").write_text(BROKEN)


BAD_LINES = [
    "syntax.py: cannot parse: invalid syntax (line 2, column 12)",
    "latin.py: cannot decode: invalid utf-8 byte at offset 29",
    "klingon.py: cannot decode: unknown encoding: klingon",
    "binary.py: cannot read: binary file (contains NUL bytes)",
    "dangling.py: cannot read: broken symbolic link",
    "loop_a.py: cannot read: symbolic link loop",
    "loop_b.py: cannot read: symbolic link loop",
    "fifo.py: cannot read: not a regular file",
    "missing-dir: cannot read: no such file or directory",
]


@pytest.mark.parametrize("fix", [False, True], ids=["check", "fix"])
def test_bad_input_is_one_line_each_exit_2_and_good_files_still_processed(run, tmp_path, fix):
    bad_tree(tmp_path)
    before = snapshot(tmp_path)
    result = run(*(["--fix", "--unsafe-fixes"] if fix else []), ".", "missing-dir")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert sorted(result.stderr.splitlines()) == sorted(BAD_LINES)
    after = snapshot(tmp_path)
    if fix:
        assert after.pop("good.py") == FIXED.encode() and before.pop("good.py") == BROKEN.encode()
    else:
        assert "good.py:2:9: DDP004" in result.stdout
    assert after == before, "a file that could not be checked was written"
    assert result.stdout.splitlines()[-1].endswith(f"{len(BAD_LINES)} files could not be checked.")


def test_empty_file_is_clean_not_an_error(run, tmp_path):
    # An empty module is valid Python (`__init__.py`); it is checked and found clean.
    (tmp_path / "__init__.py").write_bytes(b"")
    result = run("__init__.py")
    assert (result.returncode, result.stderr) == (0, "")


def _ten_megabytes(needles: bool) -> str:
    line = "def f{0}(a, b=1):\n    return [a + b * k for k in range({0}) if k % 3]\n"
    parts = ["import torch.distributed\n" if needles else "import os\n"]
    size, index = 0, 0
    while size < 10 * 1024 * 1024:
        part = f"m{index} = torch.load('c{index}.pt')\n" if needles and index % 50 == 0 else line.format(index)
        parts.append(part)
        size += len(part)
        index += 1
    return "".join(parts)


def _run_measured(args: list[str], cwd: Path) -> tuple[int, float, int]:
    """Exit status, seconds, and peak RSS in MB of one ddplint subprocess."""
    start = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "ddplint", *args], cwd=cwd, env=cli_env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stderr.close()
    return process.returncode, time.monotonic() - start, usage.ru_maxrss // 1024


@pytest.mark.parametrize("needles", [True, False], ids=["parsed", "prefiltered"])
def test_ten_megabyte_file_finishes_with_bounded_memory(tmp_path, needles):
    (tmp_path / "huge.py").write_text(_ten_megabytes(needles))
    code, seconds, peak_mb = _run_measured(["--fix", "huge.py"], tmp_path)
    print(f"10 MB file ({'with' if needles else 'without'} needles): exit {code}, {seconds:.1f} s, peak RSS {peak_mb} MB")
    # With needles the file is over the parse limit: checked (and fixed) statement by
    # statement, every finding fixed, a warning that does not fail the run.
    assert code == 0
    # (ru_maxrss of a forked child starts at its parent's, a test worker's: hence the margin;
    # measured alone, 213 MB with needles, 70 MB without)
    assert peak_mb < 2048
    # a bound that catches a run gone quadratic, not a speed figure (benchmarks/ measures speed):
    # scaled by the load, as the hang tests' limits are (139 s beside a corpus run at load 5)
    assert seconds < 120 * time_scale()
    if needles:
        assert "map_location" in (tmp_path / "huge.py").read_text()


def test_huge_file_message(tmp_path):
    (tmp_path / "huge.py").write_text(_ten_megabytes(True))
    [result] = lint_paths([str(tmp_path / "huge.py")])
    assert result.error is None
    assert result.fix_problems[0].endswith(
        "checked in part: 10.5 million characters is over the 2 million parsed whole; 2850 of 142433 "
        "top-level statements (the imports and those a rule could flag) were parsed"
    )
    assert len(result.diagnostics) == 2849 and {d.code for d in result.diagnostics} == {"DDP004"}


def test_unreadable_file_and_folder_simulated(tmp_path, monkeypatch):
    """Root reads everything, so permissions are simulated in-process: `open` of one file and
    listing of one folder fail with EACCES the way they would for an ordinary user."""
    (tmp_path / "secret.py").write_text(BROKEN)
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "inner.py").write_text(BROKEN)
    (tmp_path / "good.py").write_text(BROKEN)
    real_open, real_scandir = os.open, os.scandir

    def deny_open(path, *args, **kwargs):
        if str(path).endswith("secret.py"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    def deny_scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "open", deny_open)
    monkeypatch.setattr(os, "scandir", deny_scandir)
    results = {Path(r.path).name: r for r in lint_paths([str(tmp_path)], fix=True)}
    assert results["secret.py"].error == "cannot read: Permission denied"
    assert results["locked"].error == "cannot read: Permission denied"
    assert results["good.py"].error is None and results["good.py"].fixed_count == 1
    assert (tmp_path / "secret.py").read_text() == BROKEN


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions; see the simulated test above")
def test_unreadable_file_and_folder_for_real(run, tmp_path):
    (tmp_path / "secret.py").write_text(BROKEN)
    (tmp_path / "locked").mkdir()
    os.chmod(tmp_path / "secret.py", 0)
    os.chmod(tmp_path / "locked", 0)
    try:
        result = run(".")
    finally:
        os.chmod(tmp_path / "locked", 0o755)
    assert result.returncode == 2
    assert "secret.py: cannot read: Permission denied" in result.stderr.splitlines()
    assert "locked: cannot read: Permission denied" in result.stderr.splitlines()


def test_file_changed_between_read_and_write_is_not_overwritten(tmp_path, monkeypatch):
    target = tmp_path / "train.py"
    target.write_text(BROKEN)
    newer = BROKEN + "# the user saved this while ddplint ran\n"
    real_fix = api.fix_text

    def fix_while_user_edits(*args, **kwargs):
        outcome = real_fix(*args, **kwargs)
        target.write_text(newer)
        return outcome

    monkeypatch.setattr(api, "fix_text", fix_while_user_edits)
    result = process_file(str(target), all_rules(), Mode(fix=True))
    assert result.error == "not fixed: the file changed while ddplint was fixing it"
    assert target.read_text() == newer
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]


def test_failed_rename_leaves_original_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "train.py"
    target.write_text(BROKEN)

    def refuse(*args):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "replace", refuse)
    result = process_file(str(target), all_rules(), Mode(fix=True))
    assert result.error == "cannot write: Invalid cross-device link"
    assert target.read_text() == BROKEN
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]


def test_fix_keeps_mode_encoding_bom_and_line_endings(run, tmp_path):
    cases = {
        "crlf.py": BROKEN.replace("\n", "\r\n").encode(),
        "bom_crlf.py": b"\xef\xbb\xbf" + BROKEN.replace("\n", "\r\n").encode(),
        "latin.py": ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + BROKEN).encode("latin-1"),
        "cp1252.py": ("# coding=cp1252\n# \u20ac\r\n" + BROKEN).encode("cp1252"),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        os.chmod(tmp_path / name, 0o741)
    assert run("--fix", ".").returncode == 0
    for name, data in cases.items():
        new = (tmp_path / name).read_bytes()
        assert new == data.replace(b"load('model.pt')", b"load('model.pt', map_location=\"cpu\")")
        assert os.stat(tmp_path / name).st_mode & 0o777 == 0o741
    assert sorted(os.listdir(tmp_path)) == sorted(cases)


def test_symlink_leaving_the_linted_tree_is_not_written_through(run, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.py").write_text(BROKEN)
    (tmp_path / "src" / "real.py").write_text(BROKEN)
    os.symlink(tmp_path / "elsewhere" / "x.py", tmp_path / "src" / "outside.py")
    os.symlink("real.py", tmp_path / "src" / "inside.py")
    result = run("--fix", "src")
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["src/outside.py: not fixed: symlink points outside the linted tree"]
    assert (tmp_path / "elsewhere" / "x.py").read_text() == BROKEN
    assert (tmp_path / "src" / "real.py").read_text() == FIXED
    assert os.readlink(tmp_path / "src" / "inside.py") == "real.py", "the symlink itself is kept"
    # Naming the link itself makes it the linted tree: the user asked for that file.
    assert run("--fix", "src/outside.py").returncode == 0
    assert (tmp_path / "elsewhere" / "x.py").read_text() == FIXED


def test_a_crashing_rule_is_one_line_naming_the_rule(tmp_path, monkeypatch):
    rule = next(r for r in all_rules() if r.code == "DDP004")
    visit = next(name for name in vars(rule) if name.startswith(("visit_", "leave_", "check")))

    def crash(self, node):
        raise ZeroDivisionError("rule bug")

    crash.__name__ = visit  # libcst finds visitor methods by their name
    monkeypatch.setattr(rule, visit, crash)
    (tmp_path / "a.py").write_text(BROKEN)
    (tmp_path / "b.py").write_text("import torch.multiprocessing as mp\nmp.set_sharing_strategy('file_system')\nmp.spawn(evaluate, nprocs=2)\n")
    results = list(lint_paths([str(tmp_path)], fix=True, unsafe_fixes=True))
    assert results[0].error == "internal error in DDP004: ZeroDivisionError: rule bug"
    assert results[0].diagnostics == [] and (tmp_path / "a.py").read_text() == BROKEN
    assert results[1].error is None and results[1].fixed_count == 1


def test_a_bug_outside_the_rules_is_one_line_too(tmp_path, monkeypatch):
    from ddplint.engine import lint as engine

    def broken_edit(*args):
        raise KeyError("position")

    monkeypatch.setattr(engine, "_edit", broken_edit)
    (tmp_path / "a.py").write_text(BROKEN)
    [result] = lint_paths([str(tmp_path / "a.py")])
    assert result.error == "internal error: KeyError: 'position'"


def _cli_after(setup: str, argv: list[str], cwd) -> subprocess.CompletedProcess:
    """`ddplint` run in a fresh interpreter after `setup` (Python that breaks something)."""
    script = f"import sys\n{setup}from ddplint.commands.cli import main\nsys.exit(main({argv!r}))\n"
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, env=cli_env(), capture_output=True, text=True)


def test_cli_reports_internal_error_without_traceback(tmp_path):
    (tmp_path / "a.py").write_text(BROKEN)
    (tmp_path / "b.py").write_text(BROKEN)
    setup = (
        "from ddplint.rules import all_rules\n"
        "rule = next(r for r in all_rules() if r.code == 'DDP004')\n"
        "count = []\n"
        "def crash_once(self, node):\n"
        "    if not count:\n"
        "        count.append(1)\n"
        "        raise ValueError('boom')\n"
        "name = next(n for n in vars(rule) if n.startswith(('visit_', 'check')))\n"
        "real = getattr(rule, name)\n"
        "def patched(self, node):\n"
        "    return crash_once(self, node) or real(self, node)\n"
        "patched.__name__ = name\n"
        "setattr(rule, name, patched)\n"
    )
    result = _cli_after(setup, ["a.py", "b.py"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["a.py: internal error in DDP004: ValueError: boom"]
    assert "b.py:2:9: DDP004" in result.stdout


def test_a_bug_in_the_project_index_is_one_line_and_exit_2_and_every_file_is_still_checked(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nimport torch.distributed\nm = torch.load('c.pt')\n")
    setup = "from ddplint.model import project\ndef broken(*args, **kwargs):\n    raise ValueError('index bug')\nproject.build = broken\n"
    result = _cli_after(setup, ["a.py"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "ddplint: internal error in the project index (ValueError: index bug); each file is checked alone"
    ]
    assert "a.py:3:5: DDP004" in result.stdout


def _write_tree(folder: Path, count: int) -> None:
    folder.mkdir()
    for index in range(count):
        body = "".join(f"m{i} = torch.load('c{index}_{i}.pt')\n" for i in range(2))
        (folder / f"f{index:03}.py").write_text(f"import torch.distributed\n{body}")


def test_sigkill_during_fix_leaves_every_file_old_or_new(tmp_path):
    """Kills `ddplint --fix` at random moments over 200 files. Each file must be exactly the old
    or exactly the new content. A kill between creating a temporary file and renaming it can
    leave that one `.NAME.*.ddplint` file (files are fixed one at a time); never more."""
    reference = tmp_path / "reference"
    _write_tree(reference, 200)
    old = snapshot(reference)
    started = time.monotonic()
    assert subprocess.run([sys.executable, "-m", "ddplint", "--fix", str(reference)], env=cli_env(),
                          capture_output=True).returncode == 0
    full_run = time.monotonic() - started
    new = snapshot(reference)
    assert all(old[name] != new[name] for name in old)
    chooser = random.Random(20240521)
    outcomes = []
    for attempt in range(10):
        tree = tmp_path / f"t{attempt}"
        _write_tree(tree, 200)
        process = subprocess.Popen([sys.executable, "-m", "ddplint", "--fix", str(tree)], env=cli_env(),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(chooser.uniform(0, full_run))  # spread over start-up, reading and writing
        process.send_signal(signal.SIGKILL)
        process.wait()
        after = snapshot(tree)
        leftovers = [name for name in after if name.endswith(files.TEMPORARY_SUFFIX)]
        assert len(leftovers) <= 1, leftovers
        for name in leftovers:  # `.f007.py.abc123.ddplint`: a prefix of f007.py's new content
            fixed_name = name[1:].split(".py.")[0] + ".py"
            assert new[fixed_name].startswith(after.pop(name))
        assert set(after) == set(old)
        for name, data in after.items():
            assert data in (old[name], new[name]), f"{name} is neither old nor new after the kill"
        outcomes.append(sum(after[name] == new[name] for name in after))
    print(f"full run {full_run:.2f} s; files fixed before each kill: {outcomes}")


def test_checked_code_is_never_imported_or_run(run, tmp_path):
    marker = tmp_path / "MARKER"
    payload = f"open({str(marker)!r}, 'w').write('ran')\nimport torch.distributed\nx = torch.load('a.pt')\n"
    package = tmp_path / "pkg"
    package.mkdir()
    for name in ("__init__.py", "conftest.py", "setup.py", "__main__.py", "sitecustomize.py"):
        (package / name).write_text(payload)
    (package / "ddplint.py").write_text(payload)  # shadows nothing: the checkout comes first
    (tmp_path / "noxfile.py").write_text(payload)
    (tmp_path / "pyproject.toml").write_text("[tool.ddplint]\nselect = ['DDP']\n")
    for args in (["pkg", "noxfile.py"], ["--diff", "pkg"], ["--fix", "--unsafe-fixes", "pkg"]):
        run(*args)
        assert not marker.exists(), f"ddplint {' '.join(args)} ran the checked code"
    run("--select", "DDP", "pkg", tool="flake8")
    assert not marker.exists(), "flake8 with the ddplint plugin ran the checked code"


def _python_sources():
    return sorted(path for path in (REPO / "ddplint").rglob("*.py"))


def test_package_never_runs_a_shell_or_evaluates_code():
    """No shell=True anywhere in the package; no eval/exec outside the runtime harness, which
    runs the user's programs on purpose and only when asked (`ddplint verify`)."""
    found = []
    for path in _python_sources():
        with open(path, "rb") as handle:
            tokens = list(tokenize.tokenize(handle.readline))
        harness = "harness" in path.relative_to(REPO).parts
        for before, token, after in zip(tokens, tokens[1:], tokens[2:]):
            if token.type != tokenize.NAME or before.string == ".":
                continue
            where = f"{path.relative_to(REPO)}:{token.start[0]}"
            if token.string == "shell" and after.string == "=" and tokens[tokens.index(after) + 1].string != "False":
                found.append(f"{where}: shell=")
            if not harness and token.string in ("eval", "exec") and after.string == "(":
                found.append(f"{where}: {token.string}(")
            if not harness and token.string in ("runpy", "pickle", "marshal") and before.string in ("import", "from"):
                found.append(f"{where}: import {token.string}")
    assert found == []


def test_config_is_read_with_tomllib_only():
    toml_readers = {"toml", "tomli", "tomlkit", "pytoml", "rtoml", "yaml"}
    for path in _python_sources():
        text = path.read_text()
        for reader in toml_readers:
            # tomli is the tomllib backport and is allowed only as the Python 3.10 fallback.
            if reader == "tomli" and "tomllib" in text:
                continue
            assert f"import {reader}\n" not in text and f"from {reader} import" not in text, path


def test_a_syntax_error_deep_in_a_file_over_the_parse_limit_is_found_with_its_line(tmp_path):
    """A file over the parse limit is checked for syntax a run of statements at a time (the
    ast of it whole would take gigabytes): an error far down is still reported, at its line."""
    lines = _ten_megabytes(False).splitlines(keepends=True)
    lines.insert(70000, "def broken(:\n")
    (tmp_path / "huge.py").write_text("".join(lines))
    [result] = lint_paths([str(tmp_path / "huge.py")])
    assert result.error == ("cannot parse: expected an indented block after function definition on line 70000 "
                            "(line 70001, column 1)")
