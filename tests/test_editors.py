"""`ddplint server` in a real editor: Neovim's built-in LSP client, headless."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ddplint_test_support import REPO, cli_env

pytestmark = pytest.mark.slow  # CI runs this module on Python 3.11 only (see .ci/run)

pytest.importorskip("pygls", reason="the language server needs the `server` extra (pygls)")
NVIM = shutil.which("nvim")


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install neovim); the JSON-RPC session test covers the protocol")
def test_neovim_shows_ddp004_and_applies_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text('import torch.distributed\n\nmodel = torch.load("ckpt.pt")\n')
    env = dict(cli_env(), DDPLINT_PYTHON=sys.executable, DDPLINT_FILE=str(path), HOME=str(tmp_path))
    script = REPO / "tests" / "editors" / "nvim_check.lua"
    result = subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {script}"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180,
    )
    lines = result.stdout.splitlines()
    assert "diagnostic DDP004 3:9 ddplint" in lines, result.stdout + result.stderr
    assert "line 3 after the fix: model = torch.load(\"ckpt.pt\", map_location=\"cpu\")" in lines
    assert "stopped true" in lines
    pid = int(next(line for line in lines if line.startswith("server pid ")).split()[-1])
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the server outlived the editor"


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install neovim); the JSON-RPC session test covers the protocol")
def test_neovim_applies_a_fix_inside_a_function_with_its_indentation(tmp_path: Path) -> None:
    # The quick fix rewrites a whole loop nested in a function: every line must keep its
    # block's indentation, as `ddplint --fix` writes it.
    path = tmp_path / "train.py"
    source = (
        "from torch.utils.data import DataLoader, DistributedSampler\n\n\n"
        "def main(dataset, model, epochs):\n"
        "    sampler = DistributedSampler(dataset)\n"
        "    loader = DataLoader(dataset, sampler=sampler)\n"
        "    # one pass per epoch\n"
        "    for epoch in range(epochs):\n"
        "        for batch in loader:\n"
        "            model(batch).sum().backward()\n"
    )
    path.write_text(source)
    env = dict(cli_env(), DDPLINT_PYTHON=sys.executable, DDPLINT_FILE=str(path), DDPLINT_CODE="DDP003", HOME=str(tmp_path))
    script = REPO / "tests" / "editors" / "nvim_check.lua"
    result = subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {script}"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180,
    )
    buffer = [line[2:] for line in result.stdout.splitlines() if line.startswith("| ")]
    expected = source.replace("    for epoch in range(epochs):\n", "    for epoch in range(epochs):\n        sampler.set_epoch(epoch)\n")
    assert buffer == expected.splitlines(), result.stdout + result.stderr


def _readme_snippets() -> list[tuple[tuple[int, int], tuple[int, int] | None, str]]:
    """The README's Neovim configurations: (oldest version, newest or None, Lua)."""
    section = (REPO / "README.md").read_text(encoding="utf-8").split("**Neovim**", 1)[1].split("**Helix**", 1)[0]
    snippets = []
    for prose, lua in re.findall(r"((?:(?!```).)*)```lua\n(.*?)```", section, re.S):
        newer = re.search(r"(\d+)\.(\d+) or newer", prose)
        span = re.search(r"Neovim (\d+)\.(\d+) to (\d+)\.(\d+)", prose)
        if newer:
            snippets.append(((int(newer[1]), int(newer[2])), None, lua))
        elif span:
            snippets.append(((int(span[1]), int(span[2])), (int(span[3]), int(span[4])), lua))
    return snippets


def _nvim_version() -> tuple[int, int]:
    first = subprocess.run([NVIM, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    major, minor = re.match(r"NVIM v(\d+)\.(\d+)", first).groups()
    return int(major), int(minor)


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install neovim); the JSON-RPC session test covers the protocol")
def test_the_readmes_neovim_configuration_for_this_neovim_works_as_written(tmp_path: Path) -> None:
    """The README's snippet for the installed Neovim, as a user's init.lua, with `ddplint` on
    PATH as pip installs it: opening a file of a project starts the server and shows the finding."""
    snippets = _readme_snippets()
    assert len(snippets) == 2
    version = _nvim_version()
    [lua] = [lua for oldest, newest, lua in snippets if oldest <= version and (newest is None or version <= newest)]
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "ddplint").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ddplint "$@"\n')
    (bin_folder / "ddplint").chmod(0o755)
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    path = project / "src" / "train.py"
    path.write_text('import torch.distributed\n\nmodel = torch.load("ckpt.pt")\n')
    (tmp_path / "init.lua").write_text(lua)
    env = dict(cli_env(), DDPLINT_FILE=str(path), DDPLINT_USER_CONFIG="1", HOME=str(tmp_path))
    env["PATH"] = os.pathsep.join([str(bin_folder), env["PATH"]])
    script = REPO / "tests" / "editors" / "nvim_check.lua"
    result = subprocess.run(
        [NVIM, "--headless", "-u", str(tmp_path / "init.lua"), "-i", "NONE", str(path), "-c", f"luafile {script}"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180,
    )
    lines = result.stdout.splitlines()
    assert "attached by the configuration" in lines, result.stdout + result.stderr
    assert "diagnostic DDP004 3:9 ddplint" in lines
    assert 'line 3 after the fix: model = torch.load("ckpt.pt", map_location="cpu")' in lines


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    if not os.path.exists(f"/proc/{pid}/stat"):
        return True
    with open(f"/proc/{pid}/stat") as handle:  # a zombie waiting for its reaper is gone too
        return handle.read().split(") ")[-1][0] != "Z"
