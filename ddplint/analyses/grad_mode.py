"""Where gradients are off: inside `with torch.no_grad():`/`torch.inference_mode()` (any
import form), or in a function decorated with either. Code there builds no autograd graph, so
nothing it computes can reach a `backward()`."""

from __future__ import annotations

import libcst as cst

from ddplint.semantic.model import Analysis, SemanticModel
from ddplint.core.torch_api import NO_GRAD


class GradientMode(Analysis):
    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self._depth: dict[int, int] = {}  # per open frame: no_grad blocks (or decorators) around

    def _no_grad(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            expr = expr.func
        return self.model.qualified(expr) in NO_GRAD

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth[id(self.model.frame)] = int(any(self._no_grad(d.decorator) for d in node.decorators))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._depth.pop(id(self.model.frame), None)

    def is_no_grad_block(self, node: cst.With) -> bool:
        """`with torch.no_grad():`, `with torch.inference_mode():` (any import form)."""
        return any(self._no_grad(item.item) for item in node.items if isinstance(item.item, cst.Call))

    def visit_With(self, node: cst.With) -> None:
        if self.is_no_grad_block(node):
            frame = id(self.model.frame)
            self._depth[frame] = self._depth.get(frame, 0) + 1

    def leave_With(self, original_node: cst.With) -> None:
        if self.is_no_grad_block(original_node):
            self._depth[id(self.model.frame)] -= 1

    @property
    def gradients_off(self) -> bool:
        """True where the walk is inside a no_grad/inference_mode block or function."""
        return self._depth.get(id(self.model.frame), 0) > 0
