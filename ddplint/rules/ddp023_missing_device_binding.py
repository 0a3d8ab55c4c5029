from __future__ import annotations

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.model import dotted_name
from ddplint.semantic.edits import argument_for
from ddplint.core.torch_api import DDP, DEVICE_BINDINGS, INIT_PROCESS_GROUP, TORCH, TORCH_DEVICE

_RANK_WORDS = ("rank", "gpu", "device_id", "dev_id")


class MissingDeviceBinding(Rule):
    """
    Under DDP each process must work on its own GPU. The DistributedDataParallel docstring:
    "To use DistributedDataParallel on a host with N GPUs, you should spawn up N processes,
    ensuring that each process exclusively works on a single GPU from 0 to N-1. This can be
    done by either setting CUDA_VISIBLE_DEVICES for every process or by calling
    torch.cuda.set_device(i)". A program that does neither, passes no `device_ids` to DDP and
    no `device_id=` to `init_process_group`, and moves its model with a bare `.cuda()` or
    `.to("cuda")` puts every rank on the current device, GPU 0. With NCCL the communicator
    then fails at its first collective: NCCL's init checks that no two ranks share a device
    ("Duplicate GPU detected : rank 1 and rank 0 both on CUDA device ...", ncclInvalidUsage,
    in NCCL's init.cc); otherwise the job hangs or GPU 0 runs out of memory while the others
    idle.

    Not shown here: this needs several GPUs and NCCL, and this project's CI has neither; the
    rule rests on PyTorch's documentation and NCCL's source quoted above.

    Fires (at `init_process_group`) when a file creates an NCCL process group (a literal
    `"nccl"` backend) without `device_id=`, wraps a model in DDP without `device_ids`, moves
    to CUDA only with bare `.cuda()`/`.to("cuda")`/`torch.device("cuda")`, and binds no device
    anywhere (`torch.cuda.set_device`, `torch.cuda.device(...)`,
    `torch.accelerator.set_device_index`, `CUDA_VISIBLE_DEVICES`). Across modules, through the
    program model: where this file wraps and moves like that and creates no group itself, but
    calls a project helper that does (`utils.init_distributed_mode(args)`), the finding is at
    that call, when neither the helper's modules nor any other project helper this file calls
    binds a device (the binding may live in either module). The bare move may also be a
    project helper's of another module (`model = build_model(args)` calling `model.cuda()`),
    when every move that helper makes is bare and its module binds no device. Any project
    helper this file calls whose module binds a device (`utils.init_distributed_mode(args)`
    calling `torch.cuda.set_device(args.gpu)`, a `setup_gpu(local_rank)`) counts as the
    binding, wherever the group is created. Not flagged: any of those
    bindings, any move that names a device index or a rank (`.cuda(local_rank)`,
    `.to(f"cuda:{rank}")`, `.to(local_rank)`), gloo, a backend chosen at run time. What the
    rule cannot see: a launcher that already gives each process a single GPU (SLURM's
    `--gpus-per-task=1`, `CUDA_VISIBLE_DEVICES` set per process outside the program, one GPU
    per node) makes bare `.cuda()` correct; there the binding only makes the program portable.

    Fix (safe): where a `local_rank` variable is bound before the `init_process_group`
    statement, insert `torch.cuda.set_device(local_rank)` right after it; bare `.cuda()`
    then means this rank's GPU.
    """

    code = "DDP023"
    needs_ranks = True
    name = "missing-device-binding"
    frameworks = (Framework.DDP,)
    message = (
        "NCCL process group, but no rank is bound to its GPU (no torch.cuda.set_device, device_ids "
        "or device_id=): every bare .cuda() lands on GPU 0 (NCCL 'Duplicate GPU detected', a hang "
        "or an OOM) unless the launcher gives each process one GPU; call "
        "torch.cuda.set_device(local_rank) after init_process_group"
    )
    fix = Applicability.SAFE
    # `also`: the CUDA device the model is moved to.
    trigger = CallTrigger(DDP, also=("cuda",))
    # The bare move may be another module's (`model = build_model(args)` calling `.cuda()`).
    opened_by = frozenset((ProjectFact.CUDA_HELPER,))

    flagged_examples = (
        Flagged(
            """
            import os
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main():
                local_rank = int(os.environ["LOCAL_RANK"])
                dist.init_process_group("nccl")
                ^
                model = DDP(Net().cuda())
                for x, y in loader:
                    loss = criterion(model(x.cuda()), y.cuda())
            """,
            fixed="""
            import os
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main():
                local_rank = int(os.environ["LOCAL_RANK"])
                dist.init_process_group("nccl")
                torch.cuda.set_device(local_rank)
                model = DDP(Net().cuda())
                for x, y in loader:
                    loss = criterion(model(x.cuda()), y.cuda())
            """,
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist
            import torch.nn as nn

            def worker(rank, world_size):
                dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)
                ^
                device = torch.device("cuda")
                model = nn.parallel.DistributedDataParallel(build().to(device))
            """
        ),
    )
    clean_examples = (
        Clean(
            """
            import os
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main():
                local_rank = int(os.environ["LOCAL_RANK"])
                dist.init_process_group("nccl")
                torch.cuda.set_device(local_rank)
                model = DDP(Net().cuda())
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            def a(local_rank):
                dist.init_process_group("nccl")
                model = DDP(Net().cuda(local_rank), device_ids=[local_rank])

            def b(rank):
                dist.init_process_group("nccl", device_id=torch.device("cuda", rank))
                model = DDP(Net().cuda())

            def c(rank, backend):
                dist.init_process_group(backend)
                model = DDP(Net().cuda())
            """
        ),
        Clean(
            """
            import os
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            def init_distributed_mode(args):
                args.gpu = int(os.environ["LOCAL_RANK"])
                torch.cuda.set_device(args.gpu)
                dist.init_process_group(backend="nccl")

            def build_model(args):
                model = Net(args.dim)
                model.cuda()
                return model

            def main(args):
                init_distributed_mode(args)
                model = DDP(build_model(args))
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(args):
                dist.init_process_group("nccl")
                device = torch.device(f"cuda:{args.local_rank}")
                model = DDP(Net().to(device))
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._inits: list[tuple[cst.Call, cst.SimpleStatementLine | None, bool]] = []
        self._bound = False  # the file binds a device somehow
        self._bare = False  # a bare move to CUDA
        self._wraps = False  # a DDP wrap without device_ids
        self._local_rank: set[int | None] = set()  # functions (node ids, None: module) where local_rank is bound so far
        self._helpers: list[tuple[cst.Call, str, str | None, str | None]] = []  # (call, callee, function key, class)

    def _function(self) -> int | None:
        frame = self.model.function
        return id(frame.node) if frame is not None else None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params
        if any(p.name.value == "local_rank" for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
            self._local_rank.add(self._function())

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name) and target.target.value == "local_rank":
                self._local_rank.add(self._function())

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if "CUDA_VISIBLE_DEVICES" in node.value:
            self._bound = True

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        if qualified in DEVICE_BINDINGS:  # any of them in the file: the author bound the device
            self._bound = True
        elif qualified in INIT_PROCESS_GROUP:
            backend = argument_for(node, INIT_PROCESS_GROUP, "backend")
            if argument_for(node, INIT_PROCESS_GROUP, "device_id") is not None:
                self._bound = True
            elif backend is not None and self.model.string_value(backend.value) == "nccl":
                self._inits.append((node, self.model.statement, self._function() in self._local_rank))
        elif qualified in DDP:
            if argument_for(node, DDP, "device_ids") is not None or any(a.star for a in node.args):
                self._bound = True
            else:
                self._wraps = True
        elif qualified in TORCH_DEVICE:
            self._device(node.args)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "cuda":
            if node.args:
                self._bound = True  # .cuda(local_rank): a device chosen per rank
            else:
                self._bare = True
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "to" and node.args:
            self._target(node.args[0].value)
        elif qualified not in TORCH:
            callee = dotted_name(node.func)
            if callee is not None and self.model.project is not None:
                self_class = self.model.frame.self_class
                self._helpers.append((node, callee, self.model.frame.key, self_class.name.value if self_class else None))
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "device":
                self._target(arg.value)

    def _device(self, args) -> None:
        if len(args) > 1:
            self._bound = True
        elif args:
            self._target(args[0].value)

    def _target(self, value: cst.BaseExpression) -> None:
        """A device argument: bare "cuda", one naming an index or a rank, or neither."""
        if isinstance(value, cst.FormattedString):
            self._bound = True
            return
        if isinstance(value, cst.Integer):
            self._bound = True
            return
        text = self.model.string_value(value)
        if text is not None:
            if text == "cuda":
                self._bare = True
            elif text.startswith("cuda:"):
                self._bound = True
            return
        name = (dotted_name(value) or "").lower()
        if any(word in name for word in _RANK_WORDS) or isinstance(value, (cst.BinaryOperation, cst.Subscript)):
            self._bound = True

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._bound or not self._wraps or self._helper_binds():
            return
        placed = None if self._bare else self._bare_in_helper()
        if not self._bare and placed is None:
            return
        note = f" (the bare move to CUDA is at {placed}, reached from this file)" if placed else ""
        for call, statement, rank_in_scope in self._inits:
            self.report(call, self.message + note, **self._fix(call, statement, rank_in_scope))
        if not self._inits:
            self._through_helpers(note)

    def _helper_binds(self) -> bool:
        """Whether a project helper this file calls lives in a module that binds a device
        (`setup_gpu(args)` calling `torch.cuda.set_device` in another module)."""
        project = self.model.project
        return project is not None and any(binds_device(project.program, project.module, key, cls, callee) for _, callee, key, cls in self._helpers)

    def _bare_in_helper(self) -> str | None:
        """Where a project helper of another module this file calls moves to the current CUDA
        device only (`model = build_model(args)` calling `model.cuda()`), or None."""
        project = self.model.project
        for _, callee, key, cls in self._helpers:
            placed = bare_placement(project.program, project.module, key, cls, callee)
            if placed is not None:
                return placed
        return None

    def _through_helpers(self, note: str) -> None:
        """The program's entry script wraps here, and a project helper it calls creates the
        NCCL group (`utils.init_distributed_mode(args)`): report at that call (no helper it
        calls binds a device, `leave_Module` checked)."""
        project = self.model.project
        if project is None:
            return
        for call, callee, key, cls in self._helpers:
            where = nccl_group(project.program, project.module, key, cls, callee)
            if where is not None:
                self.report(call, f"{self.message} (the NCCL process group is created at {where}, reached by this call){note}")

    def _fix(self, call: cst.Call, statement: cst.SimpleStatementLine | None, rank_in_scope: bool) -> dict:
        if not rank_in_scope or statement is None or len(statement.body) != 1:
            return {}
        small = statement.body[0]
        if not (isinstance(small, cst.Expr) and small.value is call):
            return {}
        torch_bound = self.model.module_scope.bindings.get("torch", "missing")
        if torch_bound not in ("torch", "missing"):
            return {}
        added = cst.parse_statement("torch.cuda.set_device(local_rank)\n")
        replacement = cst.FlattenSentinel([statement, added])
        imports = ("import torch",) if torch_bound == "missing" else ()
        return {"replace": {statement: replacement}, "imports": imports}


# -- questions only this rule asks of the program model -------------------------------------

MAX_DEPTH = 3  # project helpers followed below the call asked about; deeper is unknown


def nccl_group(program, module: str, key: str | None, cls: str | None, callee: str, depth: int = 0):
    """Where calling `callee` in function `key` of `module` creates an NCCL process group
    without `device_id=` through project helpers (a Place), no module on the way binding a
    device; None otherwise. The module's own calls are the rule's own to judge."""
    target = program.target(module, key, cls, callee) if depth <= MAX_DEPTH else None
    if target is None or target.module == module and depth == 0:
        return None
    summary = program.summary(target.module)
    if summary is None or summary.binds_device:
        return None
    record = summary.functions[target.key]
    if any(binds_device(program, target.module, target.key, record.cls, call.callee, depth + 1) for call in record.invocations):
        return None  # a helper beside the group binds (`setup_gpu()` in another module)
    for group in record.process_groups:
        if program.qualify(target.module, group.callee) in INIT_PROCESS_GROUP and group.backend == "nccl" and not group.bound:
            return program.place(target.module, group.line)
    for call in record.invocations:
        found = nccl_group(program, target.module, target.key, record.cls, call.callee, depth + 1)
        if found is not None:
            return found
    return None


def binds_device(program, module: str, key: str | None, cls: str | None, callee: str, depth: int = 0) -> bool:
    """Whether calling `callee` in function `key` reaches a project function of another module
    whose module may bind the process to a device, itself or through the helpers it calls."""
    target = program.target(module, key, cls, callee) if depth <= MAX_DEPTH else None
    if target is None or target.module == module:
        return False
    summary = program.summary(target.module)
    if summary is None:
        return False
    if summary.binds_device:
        return True
    record = summary.functions[target.key]
    return any(binds_device(program, target.module, target.key, record.cls, call.callee, depth + 1) for call in record.invocations)


def bare_placement(program, module: str, key: str | None, cls: str | None, callee: str):
    """Where the project function of another module that calling `callee` in function `key`
    reaches moves to the current CUDA device (a Place), when each of its moves is such a move
    (`.cuda()`, `.to("cuda")`; none names an index, a rank or a device variable) and its module
    binds no device; None otherwise. The function itself only: a helper it calls in turn may
    choose the device."""
    target = program.target(module, key, cls, callee)
    if target is None or target.module == module:
        return None  # the module's own moves are the rule's own to read
    summary = program.summary(target.module)
    if summary is None or summary.binds_device:
        return None
    record = summary.functions[target.key]
    if record.bare_cuda is None or record.device_moves:
        return None
    return program.place(target.module, record.bare_cuda)
