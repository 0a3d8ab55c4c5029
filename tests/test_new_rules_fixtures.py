"""The example programs of DDP019-DDP028 (fixtures/DDP0NN/): each shows its own rule (DDP019-
DDP024: and no other of the six; DDP025-DDP028: and no other rule at all), the fixes, where
offered, rewrite them as the rules promise, and the README's first command, `ddplint fixtures/`,
reports every folder's rule."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import ddplint
from ddplint_test_support import REPO, cli_env

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SCENARIOS = ROOT / "ddplint" / "harness" / "scenarios"
NEW_RULES = ("DDP019", "DDP020", "DDP021", "DDP022", "DDP023", "DDP024")
PROGRAMS = sorted(
    [p for code in NEW_RULES for p in (FIXTURES / code).glob("*.py") if p.name != "measure.py"]
    + [p for code in NEW_RULES for p in (SCENARIOS / code.lower()).glob("program.py")]
)
EXPECTED = {}


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_shows_its_rule(path):
    code = path.parent.name.upper()
    found = [d.code for d in ddplint.lint_source(path.read_text(), str(path), select=list(NEW_RULES))]
    assert found == [code] * EXPECTED.get(f"{code}/{path.name}", 1)


def _fixed(code: str, unsafe: bool = False) -> str:
    path = next(p for p in PROGRAMS if p.parent.name.upper() == code)
    return ddplint.fix_source(path.read_text(), select=[code], unsafe_fixes=unsafe)


def test_ddp019_fix_calls_the_wrapper():
    fixed = _fixed("DDP019")
    assert "out = model(x)" in fixed and "out = model.module(x)" not in fixed


def test_ddp020_fix_moves_before_the_wrap():
    fixed = _fixed("DDP020", unsafe=True)
    assert "model = DDP(model.cuda(local_rank), device_ids=[local_rank], output_device=local_rank)" in fixed
    assert "model = model.cuda(local_rank)" not in fixed
    assert not ddplint.lint_source(fixed, "x.py", select=["DDP020"])


def test_ddp023_fix_binds_the_device_after_init():
    fixed = _fixed("DDP023")
    assert 'dist.init_process_group(backend="nccl")\n    torch.cuda.set_device(local_rank)\n' in fixed
    assert not ddplint.lint_source(fixed, "x.py", select=["DDP023"])


def test_ddp024_fix_removes_the_flag():
    fixed = _fixed("DDP024", unsafe=True)
    assert "model = DDP(model, device_ids=[local_rank])" in fixed


# -- DDP025-DDP028: one program each, which no other rule flags -----------------------------

FSDP_SEED_AND_METRIC_RULES = ("DDP025", "DDP026", "DDP027", "DDP028")


def _program(code: str) -> Path:
    (path,) = sorted((FIXTURES / code).glob("*.py"))
    return path


@pytest.mark.parametrize("code", FSDP_SEED_AND_METRIC_RULES)
def test_fixture_shows_its_rule_and_no_other(code):
    path = _program(code)
    assert [d.code for d in ddplint.lint_source(path.read_text(), str(path))] == [code]


def _fixed_clean(code: str) -> str:
    """The program after its rule's fix, which leaves no finding of any rule."""
    path = _program(code)
    fixed = ddplint.fix_source(path.read_text(), str(path), select=[code])
    assert not ddplint.lint_source(fixed, str(path)), fixed
    return fixed


def test_ddp025_fix_builds_the_optimizer_after_the_wrap():
    lines = _fixed_clean("DDP025").splitlines()
    wrap = next(i for i, line in enumerate(lines) if line.startswith("    model = FSDP(model, auto_wrap_policy="))
    assert lines[wrap + 1] == "    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)"
    assert lines.count(lines[wrap + 1]) == 1


def test_ddp026_fix_clips_by_the_global_norm():
    fixed = _fixed_clean("DDP026")
    assert "            grad_norm = model.clip_grad_norm_(max_norm=MAX_GRAD_NORM)\n" in fixed
    assert "from torch.nn.utils import clip_grad_norm_" not in fixed  # no longer used


def test_ddp027_offers_no_fix():
    path = _program("DDP027")
    source = path.read_text()
    assert ddplint.fix_source(source, str(path), select=["DDP027"], unsafe_fixes=True) == source


def test_ddp028_fix_syncs_the_monitored_metric():
    fixed = _fixed_clean("DDP028")
    assert '        self.log("val_acc", accuracy, on_epoch=True, prog_bar=True, sync_dist=True)\n' in fixed
    assert 'self.log("train_loss", loss)\n' in fixed  # not monitored: left as it was


# -- the README's first command --------------------------------------------------------------

def test_the_readme_command_reports_every_fixture_folder_rule():
    """`ddplint fixtures/` lints the folder as a project (an entry point must reach the code), so
    a program whose pitfall no script of the project runs would be missing from its output."""
    # --no-cache: the command as the README gives it, without leaving a cache in the checkout
    result = subprocess.run([sys.executable, "-m", "ddplint", "--no-cache", "fixtures/"], cwd=REPO,
                            env=cli_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    reported = set(re.findall(r"^fixtures/(DDP\d{3})/[^:]+:\d+:\d+: (DDP\d{3}) ", result.stdout, re.MULTILINE))
    folders = sorted(folder.name for folder in FIXTURES.iterdir() if folder.is_dir())
    assert [folder for folder in folders if (folder, folder) not in reported] == []
