from __future__ import annotations

import re

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.analyses.environ_writes import environ_writes
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.prefilter.triggers import MentionTrigger
from ddplint.semantic.edits import argument_for
from ddplint.core.torch_api import LIGHTNING_TRAINER, TORCH_CUDA

VARIABLE = "CUDA_LAUNCH_BLOCKING"
# Lightning's command-line options (`Trainer.add_argparse_args`): the last `--accelerator` given
# wins; `--gpus N` asks for GPUs whatever the accelerator says.
_ACCELERATOR_OPTION = re.compile(r"(?<![\w-])--accelerator(?:=|[ \t]+)['\"]?([\w$.{}-]+)")
_GPUS_OPTION = re.compile(r"(?<![\w-])--gpus(?:=|[ \t]+)['\"]?([^\s'\"]+)")
# What the Trainer takes from the options unless the call that builds it sets it itself.
_DEVICE_SETTINGS = ("accelerator", "gpus", "devices")
# Queries of torch.cuda that launch no kernel.
_CUDA_QUERIES = ("is_available", "device_count")


def _keeps_to_the_cpu(command: str) -> bool:
    """Whether a documented command gives a Lightning script `--accelerator cpu` for good: the
    last `--accelerator` it passes is `cpu`, no shell variable after it may pass another
    (`$EXTRA`), and it asks for no GPUs (`--gpus N`, N not 0)."""
    found = list(_ACCELERATOR_OPTION.finditer(command))
    if not found or found[-1].group(1) != "cpu" or "$" in command[found[-1].end():]:
        return False
    return all(gpus.group(1) == "0" for gpus in _GPUS_OPTION.finditer(command))

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
    they import, nor a module importing them imports torch: a TensorFlow evaluator), and a
    Lightning script that launches no CUDA kernel in any documented run: it builds its Trainer
    from its parsed options alone (`Trainer.from_argparse_args(args)`), places nothing on CUDA
    itself, and every command of the project that runs it passes `--accelerator cpu` (and no
    `--gpus N`). The fix removes the statement; it is unsafe because it changes how the
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

    def __init__(self, model) -> None:
        super().__init__(model)
        self._found: list[tuple[cst.CSTNode, dict | None]] = []  # each finding, with its fix
        self._trainers: list[bool] = []  # per Lightning Trainer built here: whether from the options alone
        self._cuda = False  # the file places or runs something on CUDA itself

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._check(node)
        qualified = self.model.qualified(node.func) or ""
        builder, _, method = qualified.rpartition(".")
        if qualified in LIGHTNING_TRAINER:
            self._trainers.append(self._from_options(node))
        elif method == "from_argparse_args" and builder in LIGHTNING_TRAINER:
            self._trainers.append(not any(argument_for(node, LIGHTNING_TRAINER, name) for name in _DEVICE_SETTINGS))
        elif qualified in TORCH_CUDA and method not in _CUDA_QUERIES or isinstance(node.func, cst.Attribute) and node.func.attr.value == "cuda":
            self._cuda = True

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if isinstance(value, str) and value.startswith("cuda"):
            self._cuda = True  # a device: `torch.device("cuda:0")`, `.to("cuda")`

    def _from_options(self, node: cst.Call) -> bool:
        """`Trainer(accelerator=args.accelerator, ...)`: the accelerator the command line gives,
        and no GPU count of the call's own."""
        accelerator = argument_for(node, LIGHTNING_TRAINER, "accelerator")
        return (
            accelerator is not None and isinstance(accelerator.value, cst.Attribute) and accelerator.value.attr.value == "accelerator"
            and argument_for(node, LIGHTNING_TRAINER, "gpus") is None
        )

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._found and self._never_on_cuda():
            return
        for node, replace in self._found:
            self.report(node, replace=replace)

    def _never_on_cuda(self) -> bool:
        """Whether every documented run of this script launches no CUDA kernel, for which the
        variable would matter: the file builds its Lightning Trainers from the parsed options
        alone (`Trainer.from_argparse_args(args)` that sets no accelerator, GPU count or devices
        of its own (a strategy, `DDPStrategy`, runs on the accelerator it is given); `Trainer(accelerator=args.accelerator)`), places nothing on CUDA
        itself (`.cuda()`, a "cuda" device, a torch.cuda call other than a query), and the
        project documents runs of it (ProjectView.runs, this file's own), every one of which
        gives it `--accelerator cpu` (`_keeps_to_the_cpu`). A project module it imports is taken
        at the Trainer's word: the Trainer runs the model on the CPU."""
        view = self.model.project
        if view is None or self._cuda or not self._trainers or not all(self._trainers):
            return False
        runs = view.runs(own=True)
        return bool(runs) and all(_keeps_to_the_cpu(command.command) for command in runs)

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
        self._found.append((node, {line: cst.RemovalSentinel.REMOVE} if standalone else None))
