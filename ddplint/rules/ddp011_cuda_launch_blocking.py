from __future__ import annotations

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.analyses.environ_writes import environ_writes
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.prefilter.triggers import MentionTrigger

VARIABLE = "CUDA_LAUNCH_BLOCKING"


def _is_main_guard(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    left, right = test.left, test.comparisons[0].comparator
    names = {getattr(side, "value", None) for side in (left, right)}
    return "__name__" in names and any(
        isinstance(side, cst.SimpleString) and side.evaluated_value == "__main__" for side in (left, right)
    )


class CudaLaunchBlocking(Rule):
    """
    `CUDA_LAUNCH_BLOCKING=1` makes every CUDA kernel launch synchronous: the CPU waits for
    each kernel to finish before queueing the next. It is a debugging switch (it makes CUDA
    errors point at the line that caused them), and left in a training script it slows every
    step on every rank, and DDP's overlap of gradient all-reduce with the backward pass is
    lost. The field report that recommends it says to comment it out for real training; it is
    easy to forget.

    Fires when it is set to a literal other than "0" through `os.environ[...] = ...`,
    `os.environ.setdefault`, `os.putenv` or `os.environ.update`, at module level, in a
    function, or under `if __name__ == "__main__":`. Not flagged: "0", reading it, values
    computed at run time (a deliberate switch), settings under any other `if` (such as
    `if args.debug:`), and modules that are no part of a torch program (neither they, what
    they import, nor a module importing them imports torch: a TensorFlow evaluator). The fix removes the statement; it is unsafe because it changes how the
    program runs (set the variable in the shell when debugging). Statements that do more than
    this (an `update` with other variables, several statements on one line) are reported
    without a fix.
    """

    code = "DDP011"
    name = "cuda-launch-blocking"
    frameworks = (Framework.DDP,)
    message = "CUDA_LAUNCH_BLOCKING=1 serialises every kernel launch; remove it (set it in the shell to debug)"
    fix = Applicability.UNSAFE
    needs_torch = True  # a TensorFlow script that sets it slows no torch process
    trigger = MentionTrigger(names=(VARIABLE,))

    flagged_examples = (
        Flagged(
            """
            import os
            import torch

            if __name__ == "__main__":
                # debug
                os.environ['CUDA_LAUNCH_BLOCKING'] = '1'
                ^
                main()
            """,
            fixed="""
            import torch

            if __name__ == "__main__":
                main()
            """,
        ),
        Flagged(
            """
            import os
            os.environ.setdefault("CUDA_LAUNCH_BLOCKING", "1")
            ^
            import torch
            """,
            fixed="""
            import torch
            """,
        ),
        Flagged(
            """
            from os import environ, putenv
            import torch

            def setup():
                environ.update({"CUDA_LAUNCH_BLOCKING": "1"})
                ^
                putenv("CUDA_LAUNCH_BLOCKING", "1")
                ^
            """,
            fixed="""
            import torch

            def setup():
                pass
            """,
        ),
        Flagged(
            """
            import os
            import torch.distributed as dist
            os.environ.update(CUDA_LAUNCH_BLOCKING="1", NCCL_DEBUG="INFO")
            ^
            """,
        ),
        Flagged(
            """
            import os
            from torch import nn
            BLOCKING = "CUDA_LAUNCH_BLOCKING"
            os.environ[BLOCKING] = "1"; train()
            ^
            """,
        ),
    )
    clean_examples = (
        Clean(
            """
            import os
            os.environ["CUDA_LAUNCH_BLOCKING"] = "0"
            blocking = os.environ.get("CUDA_LAUNCH_BLOCKING", "0") == "1"
            print(os.environ["CUDA_LAUNCH_BLOCKING"])
            """
        ),
        Clean(
            """
            import os
            if args.debug:
                os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
            os.environ["CUDA_LAUNCH_BLOCKING"] = str(int(args.sync_cuda))
            """
        ),
        Clean(
            """
            import os, subprocess
            env = dict(os.environ)
            env["CUDA_LAUNCH_BLOCKING"] = "1"
            subprocess.run(["python", "repro.py"], env=env)
            """
        ),
        Clean(
            """
            import os
            import tensorflow.compat.v1 as tf
            os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
            graph = tf.Graph()
            """
        ),
        Clean(
            """
            environ = {}
            environ["CUDA_LAUNCH_BLOCKING"] = "1"
            # CUDA_LAUNCH_BLOCKING=1 python train.py  (how to debug)
            """
        ),
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._check(node)

    def _check(self, node: cst.Assign | cst.Call) -> None:
        writes = environ_writes(self.model, node)
        if any(variable == VARIABLE and self._turns_on(value) for variable, value in writes):
            only_this = len(writes) == 1 and not (isinstance(node, cst.Assign) and len(node.targets) > 1)
            self._flag(node, alone=only_this)

    def _turns_on(self, expr: cst.BaseExpression) -> bool:
        value = self.model.string_value(expr)
        return value is not None and value.strip() not in ("", "0")

    def _flag(self, node: cst.CSTNode, *, alone: bool = True) -> None:
        if any(not _is_main_guard(enclosing.test) for enclosing in self.model.ifs):
            return
        line = self.model.statement
        standalone = (
            alone
            and line is not None
            and len(line.body) == 1
            and (line.body[0] is node or isinstance(line.body[0], cst.Expr) and line.body[0].value is node)
        )
        if standalone:
            self.report(node, replace={line: cst.RemovalSentinel.REMOVE})
        else:
            self.report(node)
