from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import libcst as cst

from ddplint.analyses.devices import is_cuda_device
from ddplint.core.diagnostics import Applicability
from ddplint.semantic.edits import is_docstring
from ddplint.core.fixpoint import fixed_point, reachable
from ddplint.model.records import Place
from ddplint.prefilter.triggers import DefaultCallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.model import Scope, SemanticModel
from ddplint.core.torch_api import TORCH, TORCH_CUDA, TORCH_DEVICE
from ddplint.semantic.walk import children
from ddplint.prefilter.project_facts import ProjectFact


@dataclass
class _Function:
    node: cst.FunctionDef | cst.Lambda
    scope: Scope | None
    module_level: bool
    # Parameters whose default puts something on CUDA directly, and those whose default
    # calls same-module functions (decided once all functions are known).
    direct: list[cst.Param] = field(default_factory=list)
    # Parameters whose default calls a CUDA helper of another module, with where it is.
    elsewhere: dict[int, str] = field(default_factory=dict)
    via_helpers: dict[int, set[str]] = field(default_factory=dict)
    params: list[cst.Param] = field(default_factory=list)
    # For use as a helper: does the body itself touch CUDA, which functions does it call.
    touches_cuda: bool = False
    calls: set[str] = field(default_factory=set)


class CudaTensorInDefaultArgument(Rule):
    """
    A default value is evaluated once, when the `def` statement runs: at import. A default
    such as `mu=torch.zeros(1).cuda()` or `mu=to_var(torch.FloatTensor([0.0]))` (a helper
    that calls `.cuda()`) therefore creates a CUDA context on the current device (GPU 0) and
    allocates there in every process that imports the module: each DDP rank, each spawned
    DataLoader worker, each `mp.spawn` child. In the field this showed up as one process per
    worker on GPU 0, hundreds of MB each, until it ran out of memory; on a CPU-only machine the
    module cannot even be imported ("Torch not compiled with CUDA enabled").

    Fires when a default (positional, keyword-only, in methods and nested functions) calls
    `.cuda()`, `.to("cuda...")`, `.to(torch.device("cuda"))`, a torch factory with
    `device="cuda..."`, `torch.cuda.*Tensor(...)`, or a function of the same module that does
    one of those. A device (`device=torch.device("cuda")`, `"cuda"`) is not a tensor and is
    fine; so is a lambda in a default, whose body runs only when called.

    The fix (safe) makes the default `None` and creates the value at the top of the body
    (after the docstring): `if mu is None: mu = <the original expression>`, so it is made when
    the function is called, on the device current at that time. One difference: each call
    gets a fresh tensor instead of one shared by all calls, and an explicit `None` argument now
    means the default. An annotation is made to admit None: `x: Tensor = t.cuda()` becomes
    `x: Tensor | None = None` (PEP 604, Python 3.10 or `from __future__ import annotations`,
    as every supported PyTorch needs), `Optional[Tensor]` in a file that imports `Optional`,
    `"Tensor | None"` inside a string annotation. Defaults of lambdas, and defaults whose expression reads a name the
    function rebinds, are reported without a fix.
    """

    code = "DDP001"
    # a default may call another module's helper that places tensors on CUDA
    opened_by = frozenset((ProjectFact.CUDA_HELPER,))
    name = "cuda-tensor-in-default-argument"
    frameworks = (Framework.DDP,)
    message = (
        "default argument puts a tensor on CUDA when the module is imported (in every worker "
        "and rank); default to None and create it in the body"
    )
    fix = Applicability.SAFE
    # A default that calls something that may place a tensor (the call may be a same-module
    # helper that moves to CUDA, so the device need not be in the signature). `also`: the rule
    # needs a CUDA device somewhere in the file ("cuda", or by index: `.to(0)`, `device=0`),
    # which the default itself need not show; the plain strings first, as a cheap test.
    trigger = DefaultCallTrigger(
        methods=("cuda", "to"),
        keywords=("device",),
        suffixes=("Tensor",),
        also=(
            ("cuda", ".to", "device"),
            ("cuda", re.compile(r"\.to\s*\([^)]*?\b\d"), re.compile(r"device\s*=\s*\d")),
        ),
    )

    flagged_examples = (
        Flagged(
            """
            # A device index is a CUDA device: the file need not say "cuda" anywhere.
            import torch

            def scale(x, factor=torch.ones(1).to(0)):
                         ^
                return x * factor
            """,
            fixed="""
            # A device index is a CUDA device: the file need not say "cuda" anywhere.
            import torch

            def scale(x, factor=None):
                if factor is None:
                    factor = torch.ones(1).to(0)
                return x * factor
            """,
        ),
        Flagged(
            '''
            import torch

            def to_var(x, on_cpu=False, gpu_id=None):
                """Tensor => Variable"""
                if torch.cuda.is_available() and not on_cpu:
                    x = x.cuda(gpu_id, non_blocking=True)
                return x

            def normal_kl_div(mu1, var1,
                              mu2=to_var(torch.FloatTensor([0.0])),
                              ^
                              var2=to_var(torch.FloatTensor([1.0]))):
                              ^
                """KL divergence of two normal distributions."""
                one = to_var(torch.FloatTensor([1.0]))
                return torch.sum(0.5 * (torch.log(var2) - torch.log(var1)))
            ''',
            fixed='''
            import torch

            def to_var(x, on_cpu=False, gpu_id=None):
                """Tensor => Variable"""
                if torch.cuda.is_available() and not on_cpu:
                    x = x.cuda(gpu_id, non_blocking=True)
                return x

            def normal_kl_div(mu1, var1,
                              mu2=None,
                              var2=None):
                """KL divergence of two normal distributions."""
                if mu2 is None:
                    mu2 = to_var(torch.FloatTensor([0.0]))
                if var2 is None:
                    var2 = to_var(torch.FloatTensor([1.0]))
                one = to_var(torch.FloatTensor([1.0]))
                return torch.sum(0.5 * (torch.log(var2) - torch.log(var1)))
            ''',
        ),
        Flagged(
            """
            import torch as th
            from torch import nn

            class Loss(nn.Module):
                def forward(self, x, *, weight=th.ones(3, device="cuda:0"), head=nn.Linear(3, 1).cuda()):
                                        ^                                   ^
                    return head(x * weight)
            """,
            fixed="""
            import torch as th
            from torch import nn

            class Loss(nn.Module):
                def forward(self, x, *, weight=None, head=None):
                    if weight is None:
                        weight = th.ones(3, device="cuda:0")
                    if head is None:
                        head = nn.Linear(3, 1).cuda()
                    return head(x * weight)
            """,
        ),
        Flagged(
            """
            import torch
            def scale(x, factor=torch.tensor(2.0).to("cuda")): return x * factor
                         ^
            """,
            fixed="""
            import torch
            def scale(x, factor=None):
                if factor is None:
                    factor = torch.tensor(2.0).to("cuda")
                return x * factor
            """,
        ),
        Flagged(
            """
            import torch

            def outer():
                def inner(x, bias=torch.zeros(4).to(torch.device("cuda", 1)), table=torch.cuda.FloatTensor([1.0])):
                             ^                                                ^
                    # add the bias
                    return x + bias
                return inner
            """,
            fixed="""
            import torch

            def outer():
                def inner(x, bias=None, table=None):
                    if bias is None:
                        bias = torch.zeros(4).to(torch.device("cuda", 1))
                    if table is None:
                        table = torch.cuda.FloatTensor([1.0])
                    # add the bias
                    return x + bias
                return inner
            """,
        ),
        Flagged(
            """
            import torch

            def embed(tokens, table=gpu_table(100)):
                              ^
                return table[tokens]

            def gpu_table(size):
                return place(torch.randn(size, 8))

            def place(x):
                return x.to(device="cuda")
            """,
            fixed="""
            import torch

            def embed(tokens, table=None):
                if table is None:
                    table = gpu_table(100)
                return table[tokens]

            def gpu_table(size):
                return place(torch.randn(size, 8))

            def place(x):
                return x.to(device="cuda")
            """,
        ),
        Flagged(
            """
            import torch
            shift = lambda x, offset=torch.ones(1).cuda(): x + offset
                              ^

            def run(x, torch=None, offset=torch.ones(1).cuda()):
                                   ^
                return x + offset
            """,
        ),
        Flagged(
            # An annotated parameter: its annotation admits the new None default.
            """
            import torch
            from torch import Tensor


            def scale(x: Tensor, factor: Tensor = torch.ones(1).cuda(), bias: "Tensor" = torch.zeros(1).cuda()):
                                 ^                                      ^
                return x * factor + bias
            """,
            fixed="""
            import torch
            from torch import Tensor


            def scale(x: Tensor, factor: Tensor | None = None, bias: "Tensor | None" = None):
                if factor is None:
                    factor = torch.ones(1).cuda()
                if bias is None:
                    bias = torch.zeros(1).cuda()
                return x * factor + bias
            """,
        ),
        Flagged(
            # A file that writes Optional gets Optional; one that admits None already is kept.
            """
            from typing import Optional

            import torch


            def shift(x, offset: torch.Tensor = torch.ones(1).cuda(), scale: Optional[torch.Tensor] = torch.ones(1).cuda()):
                         ^                                            ^
                return x * scale + offset
            """,
            fixed="""
            from typing import Optional

            import torch


            def shift(x, offset: Optional[torch.Tensor] = None, scale: Optional[torch.Tensor] = None):
                if offset is None:
                    offset = torch.ones(1).cuda()
                if scale is None:
                    scale = torch.ones(1).cuda()
                return x * scale + offset
            """,
        ),
    )
    clean_examples = (
        Clean(
            """
            import torch

            def train(model, device=torch.device("cuda"), name="cuda", rank=None):
                return model.to(device)

            def make(x=torch.zeros(3), y=torch.ones(2, device="cpu"), z=None):
                return x.cuda() + y.to("cuda") + z
            """
        ),
        Clean(
            """
            import torch

            def apply(x, move=lambda t: t.cuda(), pick=lambda t, d=None: t):
                return move(x)

            def on_cpu(x):
                return x.cpu()

            def f(x=on_cpu(torch.zeros(2)), y=torch.zeros(2).to("cpu")):
                return x
            """
        ),
        Clean(
            """
            from mylib import cuda_tensor

            class Model:
                def cuda(self):
                    return self

                def forward(self, x, buffer=cuda_tensor, device="cuda:1"):
                    return x
            """
        ),
    )

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self._functions: list[_Function] = []
        self._records: dict[int, _Function] = {}  # by id of the `def` node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        frame = self.model.frame  # the model has entered the function already
        function = _Function(node, frame.scope, module_level=frame.parent.parent is None)  # type: ignore[union-attr]
        self._check_defaults(function)
        self._functions.append(function)
        self._records[id(node)] = function

    def visit_Lambda(self, node: cst.Lambda) -> None:
        function = _Function(node, None, module_level=False)
        self._check_defaults(function)
        if function.direct or function.via_helpers:
            self._functions.append(function)

    def visit_Call(self, node: cst.Call) -> None:
        # Calls in a function's body make it a helper; calls in parameter defaults run
        # in the enclosing code, not when the function is called.
        frame = self.model.frame
        if self.model.in_parameters or not frame.is_function:
            return
        function = self._records[id(frame.node)]
        if _is_cuda_call(node, self.model) or self._imported_cuda_helper(node):
            function.touches_cuda = True
        elif isinstance(node.func, cst.Name):
            function.calls.add(node.func.value)

    def _check_defaults(self, function: _Function) -> None:
        params = function.node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.default is None:
                continue
            function.params.append(param)
            calls = list(_calls_run_by(param.default))
            if any(_is_cuda_call(call, self.model) for call in calls):
                function.direct.append(param)
            elif where := next(filter(None, map(self._imported_cuda_helper, calls)), None):
                function.direct.append(param)
                function.elsewhere[id(param)] = where
            else:
                helpers = {call.func.value for call in calls if isinstance(call.func, cst.Name)}
                if helpers:
                    function.via_helpers[id(param)] = helpers

    def _imported_cuda_helper(self, call: cst.Call) -> str | None:
        """Where the function of another project module that `call` calls touches CUDA."""
        project = self.model.project
        return cuda_function(project, self.model.qualified(call.func)) if project is not None else None

    def leave_Module(self, original_node: cst.Module) -> None:
        cuda_helpers = self._cuda_helpers()
        for function in self._functions:
            flagged = [
                param
                for param in function.params
                if param in function.direct or function.via_helpers.get(id(param), set()) & cuda_helpers
            ]
            if not flagged:
                continue
            fixable = [param for param in flagged if _can_move_into_body(param, function)]
            fixed = (
                _with_defaults_in_body(function.node, fixable, self._optional, self.model.module.default_indent)
                if fixable
                else None
            )
            for param in flagged:
                where = function.elsewhere.get(id(param))
                message = f"{self.message} (the helper it calls moves to CUDA in {where})" if where else None
                if param in fixable:
                    self.report(param, message, replace={function.node: fixed})
                else:
                    self.report(param, message)

    def _optional(self, annotation: cst.Annotation) -> cst.Annotation:
        """The annotation of a parameter whose default becomes None, admitting None:
        `Tensor` -> `Tensor | None` (`Optional[Tensor]` where the file writes `Optional`;
        inside the quotes of a string annotation); unchanged where it admits None already."""
        expr = annotation.annotation
        if self._admits_none(expr):
            return annotation
        if isinstance(expr, cst.SimpleString):
            if expr.prefix or len(expr.quote) != 1:
                return annotation
            return annotation.with_changes(annotation=expr.with_changes(value=expr.value[:-1] + " | None" + expr.value[-1]))
        if self.model.module_scope.bindings.get("Optional") == "typing.Optional":
            inner = expr.with_changes(lpar=(), rpar=())
            return annotation.with_changes(
                annotation=cst.Subscript(cst.Name("Optional"), [cst.SubscriptElement(cst.Index(inner))])
            )
        if isinstance(expr, (cst.Lambda, cst.IfExp, cst.NamedExpr)) and not expr.lpar:
            expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return annotation.with_changes(
            annotation=cst.BinaryOperation(
                expr, cst.BitOr(cst.SimpleWhitespace(" "), cst.SimpleWhitespace(" ")), cst.Name("None")
            )
        )

    def _admits_none(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name) and expr.value == "None":
            return True
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
            return self._admits_none(expr.left) or self._admits_none(expr.right)
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
            value = expr.evaluated_value
            return not isinstance(value, str) or bool(re.search(r"\b(None|Optional|Any|object)\b", value))
        qualified = self.model.qualified(expr.value if isinstance(expr, cst.Subscript) else expr)
        if qualified in ("typing.Optional", "typing.Any", "typing_extensions.Any") or (
            isinstance(expr, cst.Name) and expr.value == "object"
        ):
            return True
        if qualified == "typing.Union" and isinstance(expr, cst.Subscript):
            return any(
                isinstance(element.slice, cst.Index) and self._admits_none(element.slice.value)
                for element in expr.slice
            )
        return False

    def _cuda_helpers(self) -> set[str]:
        """Module-level functions that touch CUDA themselves or through one another."""
        helpers = {f.node.name.value: f for f in self._functions if f.module_level}  # type: ignore[union-attr]
        module_scope = self.model.module_scope
        # A module-level def the file rebinds (an import of the same name, say) is not followed.
        helpers = {name: f for name, f in helpers.items() if module_scope.bindings.get(name, 0) is None}

        def and_callers(cuda: set[str]) -> set[str]:
            return cuda | {name for name, f in helpers.items() if f.calls & cuda}

        return fixed_point(and_callers, {name for name, f in helpers.items() if f.touches_cuda})


def _calls_run_by(expr: cst.CSTNode) -> Iterator[cst.Call]:
    """Calls evaluated with `expr`; a lambda's body (and its defaults, checked on their own)
    are not run by evaluating the lambda."""
    if isinstance(expr, cst.Lambda):
        return
    if isinstance(expr, cst.Call):
        yield expr
    for child in children(expr):
        yield from _calls_run_by(child)


def _is_cuda_call(call: cst.Call, names: SemanticModel) -> bool:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
        return True
    if isinstance(func, cst.Attribute) and func.attr.value == "to":
        return any(
            is_cuda_device(names, arg.value)
            for arg in call.args
            if arg.keyword is None or arg.keyword.value == "device"
        )
    qualified = names.qualified(func) or ""
    if qualified in TORCH_CUDA and qualified.endswith("Tensor"):
        return True
    if qualified in TORCH and qualified not in TORCH_DEVICE:
        return any(
            arg.keyword is not None and arg.keyword.value == "device" and is_cuda_device(names, arg.value)
            for arg in call.args
        )
    return False


def _names_read(expr: cst.CSTNode) -> Iterator[str]:
    if isinstance(expr, cst.Name):
        yield expr.value
    elif isinstance(expr, cst.Attribute):
        yield from _names_read(expr.value)
    elif isinstance(expr, cst.Arg):
        yield from _names_read(expr.value)
    else:
        for child in children(expr):
            yield from _names_read(child)


def _can_move_into_body(param: cst.Param, function: _Function) -> bool:
    """In the body the expression must still mean what it meant at the `def`: none of its
    names may be a parameter or a local of the function."""
    if function.scope is None:  # a lambda has no body to move it into
        return False
    assert param.default is not None
    return not any(name in function.scope.bindings for name in _names_read(param.default))


def _with_defaults_in_body(
    function: cst.FunctionDef | cst.Lambda,
    params: list[cst.Param],
    optional: Callable[[cst.Annotation], cst.Annotation],
    default_indent: str = "    ",
) -> cst.FunctionDef:
    assert isinstance(function, cst.FunctionDef)
    moved = {id(param) for param in params}
    # A module whose first indented line starts with a form feed has that as its default
    # indent, which cannot be nested; the new `if` bodies then indent with spaces.
    indent = None if default_indent.strip(" \t") == "" else "    "
    creations = [_create_if_none(param, indent) for param in params]

    def without_default(param: cst.Param) -> cst.Param:
        if id(param) not in moved:
            return param
        annotation = optional(param.annotation) if param.annotation is not None else None
        return param.with_changes(default=cst.Name("None"), annotation=annotation)

    parameters = function.params.with_changes(
        posonly_params=[without_default(p) for p in function.params.posonly_params],
        params=[without_default(p) for p in function.params.params],
        kwonly_params=[without_default(p) for p in function.params.kwonly_params],
    )
    body = function.body
    if isinstance(body, cst.SimpleStatementSuite):
        statements = [cst.SimpleStatementLine(body=body.body)]
        block = cst.IndentedBlock(body=[*creations, *statements], header=body.trailing_whitespace)
    else:
        assert isinstance(body, cst.IndentedBlock)
        statements = list(body.body)
        start = 1 if statements and is_docstring(statements[0]) else 0
        block = body.with_changes(body=[*statements[:start], *creations, *statements[start:]])
    return function.with_changes(params=parameters, body=block)


def _create_if_none(param: cst.Param, indent: str | None = None) -> cst.If:
    assert param.default is not None
    name = param.name.value
    assign = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=param.default)
    return cst.If(
        test=cst.Comparison(cst.Name(name), [cst.ComparisonTarget(cst.Is(), cst.Name("None"))]),
        body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[assign])], indent=indent),
    )


# -- questions only this rule asks of the program model -------------------------------------


def cuda_function(view, qualified: str | None):
    """Where the project function `qualified` names is defined (a Place) if it places tensors or
    modules on CUDA, itself or through the project functions it calls, or None: a parameter
    default calling such a function runs CUDA at import time. Asked only of the functions the
    index's text admits (`may_use_cuda`), which is what the prefilter hint
    (ProjectFact.CUDA_HELPER) rests on: the hint admits every module this can flag, and works
    out without parsing a module."""
    found = view.may_use_cuda(qualified)
    if found is None:
        return None
    module, name, defined = found
    return defined if cuda_placement(view.program, module, name) is not None else None


def cuda_placement(program, module: str, key: str) -> Place | None:
    """Where function `key` of `module`, or a project function it calls at any depth and across
    modules, puts a tensor or module on CUDA (its summary's `cuda`): the place of that call, or
    None. Each function reached is read once, so recursion ends; what the program cannot read
    (past its bounds, a module that does not parse) places nothing."""

    def called(function: tuple[str, str]) -> list[tuple[str, str]]:
        found = program.function(*function)
        targets = (program.resolve(function[0], call.callee, found.cls) for call in found.invocations) if found else ()
        return [target.function for target in targets if target is not None]

    for function in reachable([(module, key)], called):
        found = program.function(*function)
        if found is not None and found.cuda:
            return program.place(function[0], found.cuda)
    return None
