from __future__ import annotations

import libcst as cst

from ddplint.diagnostics import Applicability
from ddplint.analyses.ranks import WrappedModels
from ddplint.prefilter.screens import Calls
from ddplint.rule import Clean, Flagged, Rule
from ddplint.semantic import dotted_name
from ddplint.torch_api import CONSUME_PREFIX, TORCH_LOAD, TORCH_SAVE, argument

_IMPORT = "from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present"
_CODE = cst.Module([])


def _code(expr: cst.CSTNode) -> str:
    return _CODE.code_for_node(expr)


def _root_name(expr: cst.BaseExpression) -> str | None:
    """`checkpoint` for `checkpoint`, `checkpoint["model"]`, `checkpoint["a"]["b"]`."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


class DdpStateDictPrefix(Rule):
    """
    `DistributedDataParallel` keeps the user's model as its attribute `module`, so the
    wrapper's `state_dict()` names every tensor `module.<name>`. A checkpoint saved from the
    wrapper (`torch.save(ddp_model.state_dict(), path)`) no longer fits the plain model:
    loading it for evaluation, export or single-GPU fine-tuning fails with
    `Missing key(s) in state_dict: "encoder.weight" ... Unexpected key(s) in state_dict:
    "module.encoder.weight"` (seed report 000), and `strict=False` silently loads nothing.

    Flagged, on the load side: `model.load_state_dict(sd)` into a model that is not wrapped
    at that point (not bound to `DistributedDataParallel(...)`, or `ddp.module`), where `sd`
    comes from `torch.load` (`sd = torch.load(...)`, `checkpoint["model"]`), in a module
    that also saves the state dict of a DDP-wrapped model (bound to `DistributedDataParallel(...)`
    before the save: the analysis follows the order of bindings). Only then is the prefix
    known to be there; a loader in another file is not judged.

    Fix (safe): `consume_prefix_in_state_dict_if_present(sd, "module.")` (from
    `torch.nn.modules.utils`) before the load. It strips the prefix in place where present
    and changes nothing for a checkpoint without it, so old and new checkpoints both load.
    The better cure is on the save side, `torch.save(ddp_model.module.state_dict(), ...)`,
    but existing checkpoints still need the load-side fix.
    """

    code = "DDP009"
    name = "ddp-state-dict-prefix"
    message = (
        'state dict saved from the DDP wrapper has "module." keys and is loaded into an unwrapped model; '
        'strip them with consume_prefix_in_state_dict_if_present(sd, "module.") (or save model.module.state_dict())'
    )
    fix = Applicability.SAFE
    needles = ("load_state_dict", "DistributedDataParallel", "save")
    screen = Calls(targets=tuple(sorted(TORCH_SAVE)))

    flagged_examples = (
        Flagged(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net):
                model = DDP(net)
                torch.save(model.state_dict(), "model.pth")

            def evaluate(net):
                state = torch.load("model.pth", map_location="cpu")
                net.load_state_dict(state)
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

            def train(net):
                model = DDP(net)
                torch.save(model.state_dict(), "model.pth")

            def evaluate(net):
                state = torch.load("model.pth", map_location="cpu")
                consume_prefix_in_state_dict_if_present(state, "module.")
                net.load_state_dict(state)
            """,
        ),
        Flagged(
            """
            import torch as t
            import torch.nn as nn

            class Solver:
                def build(self):
                    self.model = nn.parallel.DistributedDataParallel(self.model)

                def save(self, path):
                    t.save({"model": self.model.state_dict(), "epoch": 3}, path)

                def load(self, path):
                    checkpoint = t.load(path, map_location="cpu")
                    # restore the weights
                    self.model.module.load_state_dict(checkpoint["model"])
            """,
            fixed="""
            import torch as t
            import torch.nn as nn
            from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

            class Solver:
                def build(self):
                    self.model = nn.parallel.DistributedDataParallel(self.model)

                def save(self, path):
                    t.save({"model": self.model.state_dict(), "epoch": 3}, path)

                def load(self, path):
                    checkpoint = t.load(path, map_location="cpu")
                    # restore the weights
                    consume_prefix_in_state_dict_if_present(checkpoint["model"], "module.")
                    self.model.module.load_state_dict(checkpoint["model"])
            """,
        ),
        Flagged(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel

            model = DistributedDataParallel(build())
            torch.save(model.state_dict(), "ddp.pt")
            model = build()
            model.load_state_dict(torch.load("ddp.pt", map_location="cpu"))
            """
        ),
    )
    clean_examples = (
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net):
                model = DDP(net)
                torch.save(model.module.state_dict(), "model.pth")
                net.load_state_dict(torch.load("model.pth", map_location="cpu"))
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net):
                model = DDP(net)
                torch.save(model.state_dict(), "model.pth")
                model.load_state_dict(torch.load("model.pth", map_location="cpu"))
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(net)
            torch.save(model.state_dict(), "model.pth")
            state = torch.load("model.pth", map_location="cpu")
            consume_prefix_in_state_dict_if_present(state, "module.")
            net.load_state_dict(state)
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            net.load_state_dict(torch.load("pretrained.pt", map_location="cpu"))
            torch.save(net.state_dict(), "net.pt")
            model = DDP(net)
            torch.save(model.state_dict(), "ddp.pt")
            """
        ),
    )

    analyses = (WrappedModels,)

    def __init__(self, model) -> None:
        super().__init__(model)
        self._wrapped = model.get(WrappedModels)
        # frame -> {name bound to torch.load(...): the path it loads, when a known string}
        self._loaded: dict[str | None, dict[str, str | None]] = {}
        self._wrapped_save_paths: list[str | None] = []
        self._consumed: dict[str | None, set[str]] = {}  # frame -> code of prefix-stripped dicts
        self._loads: list[tuple[cst.Call, cst.BaseExpression, str | None, cst.SimpleStatementLine | None]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        loads = isinstance(node.value, cst.Call) and self.model.qualified(node.value.func) in TORCH_LOAD
        loaded = self._loaded.setdefault(self.model.frame.key, {})
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                if loads:
                    loaded[target.target.value] = self._path(node.value)  # type: ignore[arg-type]
                else:
                    loaded.pop(target.target.value, None)

    def _path(self, call: cst.Call) -> str | None:
        path = argument(call, TORCH_LOAD, "f")
        return None if path is None else self.model.string_value(path.value)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        if qualified in TORCH_SAVE:
            saved = argument(node, TORCH_SAVE, "obj")
            if saved is not None and self._has_wrapped_state_dict(saved.value):
                path = argument(node, TORCH_SAVE, "f")
                self._wrapped_save_paths.append(None if path is None else self.model.string_value(path.value))
        elif qualified in CONSUME_PREFIX and node.args:
            self._consumed.setdefault(self.model.frame.key, set()).add(_code(node.args[0].value))
        elif (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "load_state_dict"
            and node.args
            and not self._wrapped.is_wrapped(node.func.value)
        ):
            state = node.args[0].value
            loaded = self._loaded.get(self.model.frame.key, {})
            if isinstance(state, cst.Call) and self.model.qualified(state.func) in TORCH_LOAD:
                path = self._path(state)
            elif _root_name(state) in loaded:
                path = loaded[_root_name(state)]  # type: ignore[index]
            else:
                return
            if _code(state) not in self._consumed.get(self.model.frame.key, ()):
                self._loads.append((node, state, path, self.model.statement))

    def _has_wrapped_state_dict(self, expr: cst.CSTNode) -> bool:
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "state_dict"
            and self._wrapped.is_wrapped(expr.func.value)
        ):
            return True
        return any(self._has_wrapped_state_dict(child) for child in expr.children)

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._wrapped_save_paths:
            self._loads_of_saves_elsewhere()
            return
        known = None if None in self._wrapped_save_paths else set(self._wrapped_save_paths)
        for call, state, path, line in self._loads:
            if known is not None and path is not None and path not in known:
                continue  # both paths are known and differ: another checkpoint
            self._report_load(call, state, line)

    def _loads_of_saves_elsewhere(self) -> None:
        """Loads of a checkpoint (by its literal path) that another module of the project
        saves from a DDP wrapper."""
        project = self.model.project
        if project is None:
            return
        for call, state, path, line in self._loads:
            where = project.saved_from_wrapper(path) if path is not None else None
            if where is not None:
                self._report_load(call, state, line, f"{self.message} (saved from the DDP wrapper in {where})")

    def _report_load(self, call, state, line, message: str | None = None) -> None:
        if line is None or isinstance(state, cst.Call) or dotted_name(call.func) is None:
            self.report(call, message)
            return
        strip = cst.parse_statement(f'consume_prefix_in_state_dict_if_present({_code(state)}, "module.")\n')
        strip = strip.with_changes(leading_lines=line.leading_lines)
        fixed_line = line.with_changes(leading_lines=())
        self.report(call, message, replace={line: cst.FlattenSentinel([strip, fixed_line])}, imports=(_IMPORT,))
