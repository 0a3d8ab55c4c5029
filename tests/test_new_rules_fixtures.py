"""The example programs of DDP019-DDP024 (fixtures/DDP0NN/): each shows its own rule and no
other of the six, and the fixes, where offered, rewrite them as the rules promise."""

from pathlib import Path

import pytest

import ddplint

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
