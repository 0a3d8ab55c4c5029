"""Does an expression name a CUDA device? Shared by the rules about CUDA work in a parameter
default (DDP001) and before CUDA_VISIBLE_DEVICES is set (DDP017)."""

from __future__ import annotations

import libcst as cst

from ddplint.core.torch_api import TORCH_DEVICE


def is_cuda_device(names, expr: cst.BaseExpression) -> bool:
    """`expr`, given where a device goes (`x.to(...)`, `device=...`), is a CUDA one: a string
    (or a module constant) starting with "cuda", a bare index (`.to(0)` is cuda:0), or
    `torch.device("cuda...")`. `torch.device(0)` does not count: torch 2.x reads it as the
    current accelerator's device 0, which need not be CUDA."""
    if isinstance(expr, cst.Integer):
        return True
    text = names.string_value(expr)
    if text is not None:
        return text.startswith("cuda")
    if isinstance(expr, cst.Call) and names.qualified(expr.func) in TORCH_DEVICE and expr.args:
        first = expr.args[0].value
        return not isinstance(first, cst.Integer) and is_cuda_device(names, first)
    return False
