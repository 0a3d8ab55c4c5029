"""`ddplint server` in a real editor: Neovim's built-in LSP client, headless."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ddplint_test_support import REPO, cli_env

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
        "def main(dataset, epochs):\n"
        "    sampler = DistributedSampler(dataset)\n"
        "    loader = DataLoader(dataset, sampler=sampler)\n"
        "    # one pass per epoch\n"
        "    for epoch in range(epochs):\n"
        "        for batch in loader:\n"
        "            step(batch)\n"
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    if not os.path.exists(f"/proc/{pid}/stat"):
        return True
    with open(f"/proc/{pid}/stat") as handle:  # a zombie waiting for its reaper is gone too
        return handle.read().split(") ")[-1][0] != "Z"
