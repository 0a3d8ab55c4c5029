"""The semantic model: import-alias resolution and the traversal's place, as rules rely on them."""

import textwrap

import libcst as cst
import pytest

from ddplint.semantic.model import SemanticModel


class _Calls(cst.CSTVisitor):
    """Collects `qualified(call.func)` for every call, tracking scopes as the engine does."""

    def __init__(self, names):
        super().__init__()
        self.names, self.found = names, []

    def on_visit(self, node):
        self.names.enter(node)
        if isinstance(node, cst.Call):
            self.found.append(self.names.qualified(node.func))
        return True

    def on_leave(self, node):
        self.names.leave(node)


def resolve_calls(source):
    module = cst.parse_module(textwrap.dedent(source))
    names = SemanticModel(module)
    visitor = _Calls(names)
    module.visit(visitor)
    return visitor.found


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import torch\ntorch.load(p)", "torch.load"),
        ("import torch as th\nth.load(p)", "torch.load"),
        ("from torch import load\nload(p)", "torch.load"),
        ("from torch import load as restore\nrestore(p)", "torch.load"),
        ("import torch.multiprocessing as mp\nmp.set_sharing_strategy(s)", "torch.multiprocessing.set_sharing_strategy"),
        ("import torch.multiprocessing\ntorch.multiprocessing.set_sharing_strategy(s)", "torch.multiprocessing.set_sharing_strategy"),
        ("from torch.utils.data.distributed import DistributedSampler as DS\nDS(d)", "torch.utils.data.distributed.DistributedSampler"),
        ("def f():\n    return torch.load(p)\nimport torch", "torch.load"),
        ("try:\n    import torch\nexcept ImportError:\n    torch = None\ntorch.load(p)", "torch.load"),
        ("def f():\n    import torch as T\n    T.load(p)", "torch.load"),
        ("class C:\n    import torch\n    def m(self):\n        torch.load(p)", None),
        ("from torch import load\ndef load(p): ...\nload(p)", None),
        ("import torch\ndef f(torch):\n    torch.load(p)", None),
        ("import torch\nfor torch in xs:\n    torch.load(p)", None),
        ("load(p)", None),
        ("from . import torch\ntorch.load(p)", ".torch.load"),
        ("from .utils import load\nload(p)", ".utils.load"),
        ("x = f()\nx.load(p)", None),
    ],
)
def test_qualified_names(source, expected):
    assert resolve_calls(source)[-1] == expected


def test_module_string_constant():
    module = cst.parse_module("S = 'file_system'\nT = 'a'\nT = 'b'\nf(S, T, 'lit')\n")
    names = SemanticModel(module)
    call = module.body[3].body[0].value
    values = [names.string_value(arg.value) for arg in call.args]
    assert values == ["file_system", None, "lit"]


def test_an_annotated_constant_is_a_constant():
    # `S: Final[str] = ...` binds as `S = ...`; annotated twice, or annotated without a value, it is not one.
    module = cst.parse_module("S: Final[str] = 'file_system'\nT: str = 'a'\nT: str = 'b'\nU: str\nf(S, T, U)\n")
    names = SemanticModel(module)
    call = module.body[4].body[0].value
    assert [names.string_value(arg.value) for arg in call.args] == ["file_system", None, None]
    assert names.assigned_values("T") is not None and len(names.assigned_values("T")) == 2


def test_a_name_bound_once_in_a_function_is_read_from_that_functions_scope():
    module = cst.parse_module("ACCUM = 4\ndef train():\n    k = 1\n    j = 1\n    j = 2\n    step(k, j)\n")
    names = SemanticModel(module)

    class _Scopes(cst.CSTVisitor):
        def on_visit(self, node):
            names.enter(node)
            if isinstance(node, cst.Call):
                self.inside = names.scope
            return True

        def on_leave(self, node):
            names.leave(node)

    visitor = _Scopes()
    module.visit(visitor)
    values = [names.constant(name, visitor.inside) for name in ("k", "j", "ACCUM")]
    assert [value.value if value is not None else None for value in values] == ["1", None, "4"]
    assert names.constant("k") is None  # the module's scope binds no `k`


def test_every_value_of_a_name_assigned_only_by_plain_assignments():
    module = cst.parse_module(
        "import os\nP = 'a/x.pt'\nif c:\n    P = 'b/y.pt'\nQ = 'q'\nfor Q in r:\n    pass\nos = None\nR, S = 1, 2\n"
    )
    names = SemanticModel(module)
    assert [value.value for value in names.assigned_values("P")] == ["'a/x.pt'", "'b/y.pt'"]
    assert names.assigned_values("Q") is None  # also a loop target
    assert names.assigned_values("os") is None  # also an import
    assert names.assigned_values("R") is None  # unpacked from a tuple
    assert names.assigned_values("missing") is None
