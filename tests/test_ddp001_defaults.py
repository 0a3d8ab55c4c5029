"""DDP001: findings in one function carry one fix, so the fixed code does not depend on which
finding is applied first."""

from ddplint.engine.lint import analyse
from ddplint.fixing.fixer import _Replace
from ddplint.rules.ddp001_cuda_tensor_in_default_argument import CudaTensorInDefaultArgument as DDP001

SOURCE = """\
import torch

def loss(x, a=torch.zeros(1).cuda(), *, b=torch.ones(1, device="cuda"), c=torch.cuda.FloatTensor([2.0])):
    return x + a + b + c
"""
EXPECTED = """\
import torch

def loss(x, a=None, *, b=None, c=None):
    if a is None:
        a = torch.zeros(1).cuda()
    if b is None:
        b = torch.ones(1, device="cuda")
    if c is None:
        c = torch.cuda.FloatTensor([2.0])
    return x + a + b + c
"""


def test_each_finding_alone_fixes_every_parameter_of_its_function():
    analysis = analyse(SOURCE, "loss.py", [DDP001])
    assert len(analysis.reports) == 3
    for report in analysis.reports:
        replacements = {id(node): new for node, new in report.replacements.items()}
        assert analysis.module.visit(_Replace(replacements)).code == EXPECTED


def test_rebound_names_keep_the_default_where_it_is():
    source = """\
import torch

def f(x=torch.zeros(1).cuda()):
    torch = None
    return x
"""
    analysis = analyse(source, "f.py", [DDP001])
    assert [d.code for d in analysis.diagnostics] == ["DDP001"]
    assert analysis.diagnostics[0].fix is None


def test_helper_imported_from_another_module_is_not_followed():
    # Only same-module helpers are known; an imported one is not read (nothing is imported).
    source = """\
import torch
from .utils import to_var

def f(mu=to_var(torch.zeros(1))):
    return mu
"""
    assert analyse(source, "f.py", [DDP001]).diagnostics == []
