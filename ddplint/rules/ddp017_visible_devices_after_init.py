from __future__ import annotations

import re

import libcst as cst

from ddplint.analyses.branches import Branches, exclusive
from ddplint.analyses.ranks import rank_mentions
from ddplint.analyses.devices import is_cuda_device
from ddplint.analyses.environ_writes import environ_writes
from ddplint.prefilter.triggers import MentionTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.core.torch_api import CUDA_INITIALISERS, TORCH_MULTIPROCESSING
from ddplint.model.project import Project

VARIABLE = "CUDA_VISIBLE_DEVICES"

# A process that sets the variable and then starts others hands it to them (they read it
# at their own start): a correct way to pick GPUs for children, so such files are spared.
PROCESS_LAUNCHERS = (
    "subprocess.", "multiprocessing.", TORCH_MULTIPROCESSING.prefix, "os.system", "os.exec", "os.spawn", "os.popen",
)
LAUNCHER_METHODS = frozenset({"spawn", "start_processes", "Popen", "Process"})


class VisibleDevicesAfterInit(Rule):
    """
    `CUDA_VISIBLE_DEVICES` is read once per process, when the CUDA driver is initialised
    (`cuInit`). Setting it afterwards changes nothing: the process keeps seeing every GPU, so
    a rank that meant to see only "its" GPU still uses device 0, all ranks pile onto one card,
    or `torch.device(0)` means a different GPU than intended. In the field (seed report 001)
    the line `os.environ["CUDA_VISIBLE_DEVICES"] = ...` came after the process group was set
    up; nothing reported that it was ignored.

    Fires when the variable is set (`os.environ[...]`, `setdefault`, `putenv`, `update`)
    after a CUDA-initialising call that can run before it in the same pass, in a file that
    starts no processes, to a value that shows which GPU a process ends up on instead: one
    naming the rank (`str(local_rank)`: each rank meant to see its own GPU alone as device 0)
    or a literal list that renumbers the GPUs (`"2,3"`: device 0 meant GPU 2).

    Flagged: setting the variable (`os.environ[...]`, `setdefault`, `putenv`, `update`) after,
    in the same function or at module level, a call that initialises CUDA:
    `torch.cuda.is_available()` (it calls `cudaGetDeviceCount`, which runs `cuInit`, as the
    comment in torch/cuda/__init__.py says), `torch.cuda.set_device`, `current_device`,
    `get_device_name`/`properties`/`capability`, `synchronize`, `mem_get_info`, `init`,
    `x.cuda()`, `x.to("cuda")`, `x.to(0)` (a bare index is a CUDA device). Not flagged: a
    value the file does not spell (`args.devices`, a parameter): which GPU it meant is unknown,
    and torchrun's ranks that bind `cuda:LOCAL_RANK` land on the GPUs `--devices 0,1` names
    anyway; a literal that lists GPUs 0, 1, ... in order, under which every index names the same
    GPU as without it; after `torch.cuda.device_count()` alone (it asks NVML and does not cache before CUDA is
    initialised), in a different function, after a CUDA call in the other branch of an `if`
    (the two never run in one pass), in the branch only a run without distribution takes
    (`else:` of `if args.distributed:`), and in files
    that start other processes (subprocess, multiprocessing, `mp.spawn`): children read the
    variable when they start, which is the right way to choose their GPUs. Nor in a test
    module that a test runner imports and that starts no processes (a conftest.py, a module of a
    tests/ folder: `_runs_in_test_runner`): its processes are pytest-xdist workers, no
    ranks, and a conftest that pins its worker with `set_device` sets the variable for the
    processes its tests launch. No fix: set the
    variable before anything touches CUDA, best in the launcher's environment.
    """

    code = "DDP017"
    name = "visible-devices-after-init"
    frameworks = (Framework.DDP,)
    message = "CUDA_VISIBLE_DEVICES set after CUDA was initialised is ignored; set it before any CUDA call or in the launcher"
    # `also`: a CUDA call, which every one names "cuda" but a move to a bare index.
    trigger = MentionTrigger(names=(VARIABLE,), also=(("cuda", re.compile(r"\.to\(\s*\d")),))

    flagged_examples = (
        Flagged(
            """
            import os
            import torch

            def main(local_rank):
                torch.cuda.set_device(local_rank)
                os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)
                ^
            """
        ),
        Flagged(
            """
            import os
            import torch as th
            if th.cuda.is_available():
                device = "cuda"
            os.environ.setdefault("CUDA_VISIBLE_DEVICES", "2,3")
            ^
            """
        ),
        Flagged(
            """
            from os import environ
            from torch.cuda import current_device

            def setup(model, rank):
                model = model.cuda()
                print(current_device())
                environ.update({"CUDA_VISIBLE_DEVICES": str(rank)})
                ^
                return model
            """
        ),
        Flagged(
            """
            import os, torch
            x = torch.zeros(3).to(torch.device("cuda:0"))
            os.environ["CUDA_VISIBLE_DEVICES"] = "1"
            ^
            """
        ),
        Flagged(
            # A move to a bare device index initialises CUDA like `.to("cuda:0")`.
            """
            import os

            def main(model, local_rank):
                model.to(0)
                os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)
                ^
            """
        ),
        Flagged(
            # The CUDA call and the write in the distributed branch, one after the other.
            """
            import os
            import torch

            def main(args):
                if args.distributed:
                    torch.cuda.set_device(args.local_rank)
                    os.environ["CUDA_VISIBLE_DEVICES"] = str(args.local_rank)
                    ^
                else:
                    model.cuda()
            """
        ),
        Flagged(
            # A CUDA call before the `if` runs on every path into either branch.
            """
            import os
            import torch

            def main(args):
                model = model.cuda()
                if args.second_gpu:
                    os.environ["CUDA_VISIBLE_DEVICES"] = "1"
                    ^
            """
        ),
    )
    clean_examples = (
        Clean(
            # Ignored, but no rank moves: which GPUs the option names is unknown, and each
            # torchrun rank binds cuda:LOCAL_RANK itself; "0,1" renumbers no GPU.
            """
            import os
            import torch

            def setup(args):
                args.use_gpu = torch.cuda.is_available()
                os.environ["CUDA_VISIBLE_DEVICES"] = args.devices
                os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0,1")
                local_rank = int(os.environ["LOCAL_RANK"])
                torch.cuda.set_device(local_rank)
            """
        ),
        Clean(
            # The `.cuda()` is in the other branch: the write runs before any CUDA call.
            """
            import os
            import torch

            def main(args, model):
                if args.cpu:
                    device = "cpu"
                elif args.single_gpu:
                    model = model.cuda()
                else:
                    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
                    torch.cuda.set_device(0)
            """
        ),
        Clean(
            # Only a run without distribution sets it late: no rank of a DDP job is affected.
            """
            import os
            import torch

            def main(args):
                torch.cuda.set_device(args.gpu)
                if args.distributed:
                    init_distributed(args)
                else:
                    os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)
            """
        ),
        Clean(
            """
            import os
            import torch
            os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
            torch.cuda.set_device(0)
            model = model.cuda()
            """
        ),
        Clean(
            """
            import os
            import torch

            n = torch.cuda.device_count()
            os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(n // 2))
            """
        ),
        Clean(
            """
            import os
            import torch
            import torch.multiprocessing as mp

            def main():
                world = torch.cuda.device_count() if torch.cuda.is_available() else 1
                os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
                mp.spawn(worker, nprocs=world)
            """
        ),
        Clean(
            """
            import os, subprocess, torch
            assert torch.cuda.is_available()
            for gpu in range(2):
                env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
                os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
                subprocess.Popen(["python", "train.py"], env=env)
            """
        ),
        Clean(
            """
            import os
            import torch

            def pick_gpus(gpus):
                os.environ["CUDA_VISIBLE_DEVICES"] = gpus

            def train(model):
                return model.cuda()
            """
        ),
        Clean(
            # The same move to index 0, after the variable is set: it is read in time.
            """
            import os

            def main(model, local_rank):
                os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)
                model.to(0)
            """
        ),
        Clean(
            """
            import os
            import torch
            model.to("cpu")
            x = torch.device("cuda")
            os.environ["CUDA_VISIBLE_DEVICES"] = "0"
            """
        ),
    )

    analyses = (Branches,)

    def __init__(self, model) -> None:
        super().__init__(model)
        self.branches = model.get(Branches)
        # Per function (None: module level), the branch paths of the CUDA initialisations so
        # far in its body.
        self._initialised: dict[cst.FunctionDef | None, list] = {}
        self._late_writes: list[cst.CSTNode] = []
        self._launches_processes = False

    @property
    def _function(self) -> cst.FunctionDef | None:
        frame = self.model.function
        return None if frame is None else frame.function

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check_write(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._check_write(node)
        if self._initialises_cuda(node):
            self._initialised.setdefault(self._function, []).append(self.branches.path)
        elif self._launches(node):
            self._launches_processes = True

    def _check_write(self, node: cst.Assign | cst.Call) -> None:
        if self.branches.not_distributed:
            return  # `else:` of `if args.distributed:`: no rank of a DDP job runs it
        path = self.branches.path
        paths = [*self._initialised.get(None, ()), *self._initialised.get(self._function, ())]
        if all(exclusive(path, other) for other in paths):
            return  # no CUDA call so far, or only in the other branch of an `if`
        if any(variable == VARIABLE and self._moves_a_process(value) for variable, value in environ_writes(self.model, node)):
            self._late_writes.append(node)

    def _moves_a_process(self, value: cst.BaseExpression) -> bool:
        """The value shows which GPU the process meant, other than the one it keeps without the
        mask: it names the rank (one GPU per rank, each its device 0), or it lists GPUs other
        than 0, 1, ... in order (the mask would renumber them)."""
        if rank_mentions(value):
            return True
        listed = self.model.string_value(value)
        return listed is not None and [gpu.strip() for gpu in listed.split(",")] != [str(i) for i in range(listed.count(",") + 1)]

    def _initialises_cuda(self, node: cst.Call) -> bool:
        qualified = self.model.qualified(node.func)
        if qualified in CUDA_INITIALISERS:
            return True
        if qualified is not None or not isinstance(node.func, cst.Attribute):
            return False
        method = node.func.attr.value
        if method == "cuda":
            return True
        return method == "to" and bool(node.args) and is_cuda_device(self.model, node.args[0].value)

    def _launches(self, node: cst.Call) -> bool:
        qualified = self.model.qualified(node.func)
        if qualified is not None and qualified.startswith(PROCESS_LAUNCHERS):
            return True
        method = node.func.attr.value if isinstance(node.func, cst.Attribute) else getattr(node.func, "value", None)
        return method in LAUNCHER_METHODS

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._launches_processes:
            return
        if self.model.project is not None and _runs_in_test_runner(self.model.project):
            return  # a conftest or test module: pytest's workers, no ranks; set for what its tests start
        for node in self._late_writes:
            self.report(node)


def _runs_in_test_runner(view) -> bool:
    """Whether the module of `view` runs only in a test runner's processes: a test module by its
    path (a conftest.py, a module of a tests/ folder, `test_*.py`) that runs as one process
    (`single_process`, which counts a `test_*.py` a launch command runs as the launcher's): pytest
    and its pytest-xdist workers, each one process, no rank of a training run. Settings it makes for
    the processes its tests start (the environment a child reads when it starts) are no rank's."""
    return Project.is_test_path(view.path.replace("\\", "/")) and view.single_process
