"""Editor-facing edges: stdin buffers, configuration errors, and noqa that flake8 and the CLI
read alike."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ddplint_test_support import cli_env

pytestmark = pytest.mark.slow  # CI runs this module on Python 3.11 only (see .ci/run)

MULTILINE = 'import torch.distributed\n\nmodel = torch.load(\n    "ckpt.pt",\n)\n'


def _stdin(tmp_path: Path, data: bytes, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ddplint", *args, "-", "--stdin-filename", "buffer.py"],
        input=data, capture_output=True, env=cli_env(), cwd=tmp_path, timeout=120,
    )


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"import torch.distributed\nm = torch.load(p\n", "buffer.py: cannot parse: '(' was never closed (line 2, column 15)"),
        (b'import torch.distributed\nm = torch.load("\xff")\n', "buffer.py: cannot decode: invalid utf-8 byte at offset 41"),
        (b"import torch\x00torch.load", "buffer.py: cannot read: binary file (contains NUL bytes)"),
    ],
)
def test_fix_on_a_buffer_that_cannot_be_checked_echoes_it(tmp_path: Path, data: bytes, error: str) -> None:
    fixed = _stdin(tmp_path, data, "--fix")
    assert fixed.returncode == 2
    assert fixed.stdout == data  # the editor keeps the user's text
    assert fixed.stderr.decode().splitlines()[0] == error
    linted = _stdin(tmp_path, data)
    assert linted.returncode == 2 and b"DDP" not in linted.stdout
    assert error in linted.stderr.decode().splitlines()  # the same one line as for a file
    assert "Traceback" not in linted.stderr.decode()


def test_a_good_buffer_is_still_fixed_to_stdout(tmp_path: Path) -> None:
    fixed = _stdin(tmp_path, MULTILINE.encode(), "--fix")
    assert fixed.returncode == 0
    assert fixed.stdout.decode() == MULTILINE.replace('"ckpt.pt",\n', '"ckpt.pt",\n    map_location="cpu",\n')


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"# \xff\n[tool.ddplint]\n", "pyproject.toml: cannot decode: invalid utf-8 byte at offset 2 (TOML is UTF-8)"),
        (b"tool = 1\n", "pyproject.toml: tool must be a table ([tool.ddplint]), not int"),
        (b'tool = "x"\n', "pyproject.toml: tool must be a table ([tool.ddplint]), not str"),
    ],
)
def test_config_errors_are_one_line(run, tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "pyproject.toml").write_bytes(content)
    (tmp_path / "a.py").write_text(MULTILINE)
    result = run("a.py")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"ddplint: error: {tmp_path / 'pyproject.toml'}: {message.split(': ', 1)[1]}"]


def test_noqa_at_the_end_of_a_statement_works_through_flake8_too(run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(MULTILINE.replace('\n)\n', '\n)  # noqa: DDP004\n'))
    assert run("a.py").returncode == 0
    assert run("--select", "DDP", "a.py", tool="flake8").stdout == ""
    disabled = run("--select", "DDP", "--disable-noqa", "a.py", tool="flake8")
    assert disabled.stdout.startswith("a.py:3:9: DDP004 ")


def test_a_file_level_noqa_exempts_the_file_or_its_codes_through_the_cli_and_flake8(run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("# flake8: noqa\n" + MULTILINE)
    assert run("a.py").returncode == 0
    assert run("--select", "DDP", "a.py", tool="flake8").stdout == ""
    (tmp_path / "a.py").write_text("# ddplint: noqa: DDP004\n" + MULTILINE)
    assert run("a.py").returncode == 0
    assert run("--select", "DDP", "a.py", tool="flake8").stdout == ""
    # Codes of other tools leave ddplint's findings to the CLI; flake8 skips the whole file there.
    (tmp_path / "a.py").write_text("# flake8: noqa: C901\n" + MULTILINE)
    assert run("a.py").stdout.startswith("a.py:4:9: DDP004 ")
    assert run("--select", "DDP", "a.py", tool="flake8").stdout == ""


def test_add_noqa_writes_where_flake8_and_the_cli_both_honour_it(run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(MULTILINE)
    assert run("a.py", tool="flake8").stdout.startswith("a.py:3:9: DDP004 ")
    assert run("--add-noqa", "a.py").stdout == "Added 1 noqa comment.\n"
    assert (tmp_path / "a.py").read_text().endswith(")  # noqa: DDP004\n")
    assert run("a.py").returncode == 0
    assert run("--select", "DDP", "a.py", tool="flake8").returncode == 0
