from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, replace

import libcst as cst

from ddplint.core.diagnostics import Applicability, StepKind
from ddplint.model.records import Place
from ddplint.analyses.environ_writes import environ_writes
from ddplint.analyses.options import UNKNOWN, ParserOptions
from ddplint.analyses.pickling import started_function
from ddplint.analyses.ranks import environment_key, last_name, strip_int
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule
from ddplint.semantic.edits import argument_for
from ddplint.semantic.model import dotted_name
from ddplint.semantic.walk import children, descendants
from ddplint.core.fixpoint import reachable
from ddplint.core.torch_api import DEVICE_COUNT, INIT_PROCESS_GROUP, LOCAL_RANK_VARIABLES, OLD_LAUNCHER_MODULE

_GLOBAL_RANK = 'int(os.environ["RANK"])'
_NO_FIX_MESSAGE = (
    "init_process_group(rank=...) gets LOCAL_RANK, which repeats on every node; pass the global rank "
    "(this launcher may not set RANK: node_rank * gpus_per_node + local_rank)"
)
_GLOBAL_RANK_NAMES = frozenset({"rank", "global_rank", "world_rank", "process_rank", "proc_rank", "ddp_rank", "my_rank", "rank_id"})
# Names of a node's rank or of the node count: the job may span several machines.
_NODE_NAMES = frozenset(
    {"node_rank", "nnodes", "num_nodes", "n_nodes", "nodes", "node_id", "node_idx", "machine_rank", "num_machines", "nr"}
)
_NODE_VARIABLES = frozenset({"NODE_RANK", "GROUP_RANK", "NNODES", "SLURM_NODEID", "SLURM_NNODES"})
# Variables that torchrun (and torch.distributed.launch) set along with RANK.
_LAUNCHER_VARIABLES = frozenset({"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"})
# The host of an init_method URL, where the text after it (a port or a path) is written too.
_URL_HOST = re.compile(r"\w+://(\[[^\]]*\]|[^:/\[]*)[:/]")


@dataclass(frozen=True)
class _Finding:
    """An init_process_group call's rank argument that is a local rank."""

    rank: cst.Arg  # reported: the argument, by keyword or by position
    parameter: tuple[str, int, str] | None  # the function's parameter it is: (function key, position, name)
    function: str | None  # the function it is in (None: module level)
    made: cst.CSTNode  # where the local rank is made: the assignment it comes from, or the argument
    unpacked: tuple[str, int] | None = None  # bound from a same-module function's result: (function, position)


# What a value read from the environment is: the launcher's local rank, or a global rank.
_LOCAL_VARIABLES = LOCAL_RANK_VARIABLES
_GLOBAL_VARIABLES = frozenset({"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})


class RankFromLocalRank(Rule):
    """
    `init_process_group(rank=...)` wants the global rank: 0 .. world_size-1 across all nodes.
    `LOCAL_RANK` (`args.local_rank`, `int(os.environ["LOCAL_RANK"])`) numbers the processes of
    one node only. On one node the two agree, which is why the mistake survives testing; on
    two nodes both node's first processes claim rank 0, both second ones rank 1, and the
    rendezvous either fails ("Address already in use", duplicate rank errors) or waits
    forever for ranks that never join (the field report in seed 001 passes
    `rank=args.local_rank`).

    Fires when `init_process_group` (any import form) gets a local rank as `rank`, in a job
    that can span several nodes. The finding is on that argument (`rank=args.local_rank`,
    or the local rank passed fifth, at `rank`'s position), where the local rank enters.

    Flagged: `rank=` is LOCAL_RANK (`os.environ["LOCAL_RANK"]`, a name or attribute
    `local_rank`), directly or through a variable or attribute of the same function assigned
    from it, also in a chained assignment (`args.device_id = args.gpus = args.local_rank`), or a
    parameter named otherwise (also through such an assignment: `args.rank = gpu`) for which the
    function's calls in this module pass the local rank (`main_worker(args.local_rank, args)`;
    a call passing a number, `main_worker(0, args)` where nothing is distributed, aside). Not
    flagged: a name or attribute called `local_rank` that the function assigns a global rank
    (or a number) on every way to the call, each branch of an `if` chain assigning it or
    leaving the function (DETR's `init_distributed_mode` with `args.local_rank =
    int(os.environ["RANK"])`): a global rank under a local name; a name unpacked from a
    same-module function's result where every value it returns
    there is known to be no local rank (`int(os.environ["SLURM_PROCID"])`, `dist.get_rank()`, a
    computed `node_id * gpus_per_node`, None): a global rank under a local name; a parameter called `local_rank` that every same-module caller passes the global
    rank (`rank`, `args.rank`, `dist.get_rank()`, `os.environ["RANK"]`, `node_rank * n + i`):
    it is misnamed, not wrong; and a function this file starts as its ranks (`mp.spawn(fn)`,
    `mp.Process(target=fn)`, `start_processes`, or called only from one), in a file that names
    no node rank or node count: all ranks are on one node, where the local rank is the
    global one; and a call that shows by itself that its job is one machine: it meets at a
    loopback address (`init_method="tcp://127.0.0.1:{}".format(port)`, `f"tcp://localhost:{port}"`),
    which no other machine can reach (with the default `env://` rendezvous: `MASTER_ADDR` set
    to a loopback address before the call, in its function or in module code), or its world is
    this machine's GPUs
    (`world_size=torch.cuda.device_count()`), also through a variable bound once; or an option
    every documented run sets to a loopback address (`--dist_url` defaulting to
    `tcp://127.0.0.1:23457`, also by a parser another module builds, and every launch command
    leaving it out or passing another loopback address; the file may append to it: `args.dist_url =
    args.dist_url + str(port)` after a default of `tcp://127.0.0.1:`). A function handed to another module's helper that starts it with
    `mp.spawn` (`start_dist_train(train, world_size)`) is started as the ranks too; and so, in
    a file that shows no launcher (no `env://`, `RANK`, `LOCAL_RANK`, `WORLD_SIZE`,
    `--local_rank`), is one handed first to a helper imported from a module beside the script
    that does not define it (its code is not there to read), whose first parameter is the rank
    passed: the spawn convention, process index first.
    Fix (unsafe): `rank=int(os.environ["RANK"])`, the global rank that torchrun and
    `torch.distributed.launch` set, offered only where the launcher sets `RANK`: a command of
    the project (a shell script or document) runs this file with `torch.distributed.launch`, or the file
    reads `LOCAL_RANK`, `RANK` or `WORLD_SIZE` from the environment, declares `--local_rank`
    for `torch.distributed.launch`, or passes `init_method="env://"`; the call is not in a
    function this file starts as a process; and the file does not set `MASTER_ADDR`
    without `RANK`. Elsewhere no fix: with a launcher that does not set
    `RANK` (`mp.spawn`, `mp.Process`, a hand-written one) it would raise `KeyError` on every
    rank; compute `node_rank * gpus_per_node + local_rank` there. Unsafe because a launcher
    may still set a `RANK` that means something else. With `init_method="env://"` you may
    also drop `rank=` altogether.
    """

    code = "DDP013"
    needs_ranks = True
    name = "rank-from-local-rank"
    frameworks = (Framework.DDP,)
    message = (
        "init_process_group(rank=...) gets LOCAL_RANK, which repeats on every node; "
        'pass the global rank: rank=int(os.environ["RANK"])'
    )
    fix = Applicability.UNSAFE
    trigger = CallTrigger(INIT_PROCESS_GROUP, also=(("local_rank", "LOCAL_RANK"),))  # the rank it flags
    analyses = (ParserOptions,)

    flagged_examples = (
        Flagged(
            # Only one way assigns SLURM's global rank; under torchrun the option's LOCAL_RANK reaches the call.
            """
            import os
            import torch

            def setup(args):
                if "SLURM_PROCID" in os.environ:
                    args.local_rank = int(os.environ["SLURM_PROCID"])
                torch.distributed.init_process_group("nccl", init_method="env://", world_size=args.world_size * args.nnodes, rank=args.local_rank)
                                                                                                                             ^
            """,
            fixed="""
            import os
            import torch

            def setup(args):
                if "SLURM_PROCID" in os.environ:
                    args.local_rank = int(os.environ["SLURM_PROCID"])
                torch.distributed.init_process_group("nccl", init_method="env://", world_size=args.world_size * args.nnodes, rank=int(os.environ["RANK"]))
            """,
        ),
        Flagged(
            # The local rank reaches the rank through a parameter named `gpu`.
            """
            import os
            import torch.distributed as dist

            def main_worker(gpu, args):
                args.rank = gpu
                dist.init_process_group("nccl", init_method="env://", rank=args.rank, world_size=args.world_size)
                                                                      ^

            if __name__ == "__main__":
                args = parse_args()
                args.local_rank = int(os.environ["LOCAL_RANK"])
                if args.distributed:
                    main_worker(args.local_rank, args)
                else:
                    main_worker(0, args)
            """,
            fixed="""
            import os
            import torch.distributed as dist

            def main_worker(gpu, args):
                args.rank = gpu
                dist.init_process_group("nccl", init_method="env://", rank=int(os.environ["RANK"]), world_size=args.world_size)

            if __name__ == "__main__":
                args = parse_args()
                args.local_rank = int(os.environ["LOCAL_RANK"])
                if args.distributed:
                    main_worker(args.local_rank, args)
                else:
                    main_worker(0, args)
            """,
        ),
        Flagged(
            """
            import torch.distributed as dist

            def main(args):
                dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size, rank=args.local_rank)
                                                                                                          ^
            """,
            fixed="""
            import os

            import torch.distributed as dist

            def main(args):
                dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size, rank=int(os.environ["RANK"]))
            """,
        ),
        Flagged(
            """
            import os
            import torch

            local_rank = int(os.environ["LOCAL_RANK"])
            torch.distributed.init_process_group("nccl", rank=local_rank, world_size=int(os.environ["WORLD_SIZE"]))
                                                         ^
            """,
            fixed="""
            import os
            import torch

            local_rank = int(os.environ["LOCAL_RANK"])
            torch.distributed.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
            """,
        ),
        Flagged(
            """
            import os
            from torch.distributed import init_process_group

            def setup():
                gpu = int(os.environ.get("LOCAL_RANK", 0))
                init_process_group(
                    backend="nccl",
                    rank=gpu,
                    ^
                )
            """,
            fixed="""
            import os
            from torch.distributed import init_process_group

            def setup():
                gpu = int(os.environ.get("LOCAL_RANK", 0))
                init_process_group(
                    backend="nccl",
                    rank=int(os.environ["RANK"]),
                )
            """,
        ),
        Flagged(
            # The callers pass the local rank to a parameter named so: the name is right.
            """
            import os
            import torch.distributed as dist

            def setup(local_rank):
                dist.init_process_group("nccl", init_method="env://", rank=local_rank)
                                                                      ^

            setup(int(os.environ["LOCAL_RANK"]))
            """,
            fixed="""
            import os
            import torch.distributed as dist

            def setup(local_rank):
                dist.init_process_group("nccl", init_method="env://", rank=int(os.environ["RANK"]))

            setup(int(os.environ["LOCAL_RANK"]))
            """,
        ),
        Flagged(
            # mp.spawn on several nodes: spawn sets no RANK, so no fix.
            """
            import torch.distributed as dist
            import torch.multiprocessing as mp

            def worker(local_rank, args):
                dist.init_process_group("nccl", init_method=args.dist_url, rank=local_rank, world_size=args.nodes * args.gpus)
                                                                           ^

            def main(args):
                mp.spawn(worker, nprocs=args.gpus, args=(args,))
            """,
            messages=_NO_FIX_MESSAGE,
        ),
        Flagged(
            # Processes started by hand, with env:// but no RANK in the environment: no fix
            # (int(os.environ["RANK"]) would raise KeyError on every rank).
            """
            import os
            import torch.distributed as dist
            from torch.multiprocessing import Process

            def run(local_rank, args):
                os.environ["MASTER_ADDR"] = args.master
                os.environ["MASTER_PORT"] = "29500"
                dist.init_process_group("gloo", init_method="env://", rank=local_rank, world_size=args.num_nodes * 2)
                                                                      ^

            def main(args):
                for local_rank in range(2):
                    Process(target=run, args=(local_rank, args)).start()
            """,
            messages=_NO_FIX_MESSAGE,
        ),
        Flagged(
            # torchrun starts the ranks; the file's own process is a helper, not a rank.
            """
            import os
            import torch.distributed as dist
            import torch.multiprocessing as mp

            def log_worker(queue):
                print(queue.get())

            def main(queue):
                local_rank = int(os.environ["LOCAL_RANK"])
                dist.init_process_group("nccl", rank=local_rank)
                                                ^
                mp.Process(target=log_worker, args=(queue,)).start()
            """,
            fixed="""
            import os
            import torch.distributed as dist
            import torch.multiprocessing as mp

            def log_worker(queue):
                print(queue.get())

            def main(queue):
                local_rank = int(os.environ["LOCAL_RANK"])
                dist.init_process_group("nccl", rank=int(os.environ["RANK"]))
                mp.Process(target=log_worker, args=(queue,)).start()
            """,
        ),
        Flagged(
            # Another machine can reach this address, and the world is larger than this
            # machine's GPUs: several nodes. No fix (nothing says which launcher sets RANK).
            """
            import torch
            import torch.distributed as dist

            def main(args):
                dist.init_process_group("nccl", init_method=f"tcp://{args.master}:23456", world_size=torch.cuda.device_count() * 2, rank=args.local_rank)
                                                                                                                                    ^
            """,
            messages=_NO_FIX_MESSAGE,
        ),
        Flagged(
            # Nothing says which launcher starts it: no fix. The rank passed by position too.
            """
            import torch.distributed as dist

            def setup(local_rank, world_size):
                dist.init_process_group("nccl", rank=local_rank, world_size=world_size)
                                                ^

            def connect(local_rank, world_size):
                dist.init_process_group("gloo", "tcp://10.0.0.1:23456", None, world_size, local_rank)
                                                                                          ^
            """,
            messages=_NO_FIX_MESSAGE,
        ),
        Flagged(
            # The local rank reaches the call through a chained assignment of attributes.
            """
            import argparse
            import torch.distributed as dist

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()
            args.device_id = args.gpus = args.local_rank
            dist.init_process_group("nccl", rank=args.device_id)
                                            ^
            """,
            fixed="""
            import argparse
            import os
            import torch.distributed as dist

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()
            args.device_id = args.gpus = args.local_rank
            dist.init_process_group("nccl", rank=int(os.environ["RANK"]))
            """,
        ),
        Flagged(
            # The option is extended before the call, and what it starts with names no host.
            """
            import argparse
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            parser.add_argument("--dist_url", type=str, default="tcp://")
            parser.add_argument("--master", type=str, default="node0:23456")
            args = parser.parse_args()
            args.dist_url = args.dist_url + args.master
            torch.distributed.init_process_group("nccl", init_method=args.dist_url, world_size=8, rank=args.local_rank)
                                                                                                  ^
            """,
            fix_edits=(("rank=args.local_rank", 'rank=int(os.environ["RANK"])'), ("import argparse\n", "import argparse\nimport os\n")),
        ),
    )
    clean_examples = (
        Clean(
            # The rendezvous option starts at a loopback address and the file only appends a
            # port to it (`args.dist_url = args.dist_url + str(port)`): one machine.
            """
            import argparse
            import torch

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            parser.add_argument("--dist_url", type=str, default="tcp://127.0.0.1:")
            args = parser.parse_args()
            args.dist_url = args.dist_url + str(8000 + args.local_rank)
            torch.distributed.init_process_group("nccl", init_method=args.dist_url, world_size=2, rank=args.local_rank)
            """
        ),
        Clean(
            # The rendezvous is an option every run leaves at a loopback address: one machine.
            """
            import argparse
            import os
            import torch.distributed as dist

            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            parser.add_argument("--dist_url", type=str, default="tcp://127.0.0.1:23457")
            args = parser.parse_args()

            def setup():
                dist_url = args.dist_url
                dist.init_process_group("nccl", init_method=dist_url, world_size=int(os.environ["WORLD_SIZE"]), rank=args.local_rank)
            """
        ),
        Clean(
            # DETR's init_distributed_mode with the global rank kept under a local name: every
            # way to the call assigns it from RANK or SLURM_PROCID, or leaves the function.
            """
            import os
            import torch

            def init_distributed_mode(args):
                if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
                    args.local_rank = int(os.environ["RANK"])
                    args.gpu = int(os.environ["LOCAL_RANK"])
                elif "SLURM_PROCID" in os.environ:
                    args.local_rank = int(os.environ["SLURM_PROCID"])
                else:
                    args.distributed = False
                    return
                torch.distributed.init_process_group("nccl", init_method=args.dist_url, world_size=args.world_size, rank=args.local_rank)
            """
        ),
        Clean(
            # The same parameter given the global rank by its caller.
            """
            import os
            import torch.distributed as dist

            def main_worker(gpu, args):
                args.rank = gpu
                dist.init_process_group("nccl", init_method="env://", rank=args.rank, world_size=args.world_size)

            if __name__ == "__main__":
                args = parse_args()
                main_worker(int(os.environ["RANK"]), args)
            """
        ),
        Clean(
            # A global rank under a local name: the helper returns SLURM's global rank, or one
            # it computes; and MASTER_ADDR set to this machine before an env:// rendezvous
            # (torchrun --standalone): one machine by construction.
            """
            import os
            import torch.distributed as dist

            def _infer_slurm_init(port):
                local_rank = None
                nodes = int(os.environ["SLURM_NNODES"])
                if int(os.environ["SLURM_NTASKS_PER_NODE"]) == 1:
                    local_rank = int(os.environ["SLURM_NODEID"]) * 8
                else:
                    proc_id = os.environ.get("SLURM_PROCID")
                    local_rank = int(proc_id)
                return f"tcp://{os.environ['MASTER']}:{port}", local_rank, nodes * 8

            def setup(cfg):
                init_method, local_rank, world_size = _infer_slurm_init(cfg.port)
                dist.init_process_group("nccl", init_method=init_method, world_size=world_size, rank=local_rank)

            def main():
                local_rank = int(os.environ["LOCAL_RANK"])
                os.environ["MASTER_ADDR"] = "127.0.0.1"
                os.environ["MASTER_PORT"] = "12345"
                dist.init_process_group("gloo", rank=local_rank, world_size=int(os.environ["WORLD_SIZE"]))
            """
        ),
        Clean(
            # A parameter called local_rank that every caller passes the global rank.
            """
            import os
            import torch.distributed as dist

            def setup(local_rank, world_size):
                dist.init_process_group("nccl", rank=local_rank, world_size=world_size)

            class Trainer:
                def init(self, local_rank):
                    dist.init_process_group("nccl", rank=local_rank, world_size=2)

                def run(self, args):
                    self.init(dist.get_rank())

            def main(args):
                setup(args.rank, args.world_size)
                setup(local_rank=int(os.environ["RANK"]), world_size=2)
                setup(args.node_rank * args.gpus + args.gpu, args.world_size)
            """
        ),
        Clean(
            # Ranks started by mp.spawn / mp.Process on one node: the index is the global rank.
            """
            import os
            import torch.distributed as dist
            import torch.multiprocessing as mp

            def worker(local_rank, world_size):
                dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", rank=local_rank, world_size=world_size)

            def run(local_rank, size):
                os.environ["MASTER_ADDR"] = "127.0.0.1"
                os.environ["MASTER_PORT"] = "29500"
                dist.init_process_group("gloo", rank=local_rank, world_size=size)

            if __name__ == "__main__":
                mp.spawn(worker, args=(4,), nprocs=4)
                processes = [mp.Process(target=run, args=(r, 2)) for r in range(2)]
            """
        ),
        Clean(
            # One machine by construction: a loopback rendezvous, or a world of this
            # machine's GPUs. The local rank is the global rank.
            """
            import torch
            import torch.distributed as dist

            def train(args):
                torch.cuda.set_device(args.local_rank)
                dist.init_process_group(
                    "nccl",
                    init_method="tcp://127.0.0.1:{}".format(args.port),
                    world_size=torch.cuda.device_count(),
                    rank=args.local_rank,
                )

            def evaluate(local_rank, port, world_size):
                dist.init_process_group("nccl", init_method=f"tcp://localhost:{port}", rank=local_rank, world_size=world_size)

            def finetune(args):
                dist.init_process_group("nccl", world_size=torch.cuda.device_count(), rank=args.local_rank)

            def test(args):
                n_gpus = torch.cuda.device_count()
                dist.init_process_group("nccl", init_method=args.dist_url, world_size=n_gpus, rank=args.local_rank)

            def demo(args):
                url = "tcp://localhost:%d" % args.port
                dist.init_process_group("nccl", init_method=url, world_size=args.world_size, rank=args.local_rank)
            """
        ),
        Clean(
            """
            import os
            import torch.distributed as dist

            local_rank = int(os.environ["LOCAL_RANK"])
            dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
            torch.cuda.set_device(local_rank)
            """
        ),
        Clean(
            """
            import torch.distributed as dist

            def worker(local_rank, args):
                rank = args.node_rank * args.gpus + local_rank
                dist.init_process_group("nccl", rank=rank, world_size=args.world_size)
                dist.init_process_group(backend="nccl", init_method="env://")
            """
        ),
        Clean(
            """
            def init_process_group(rank):
                pass

            init_process_group(rank=args.local_rank)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        # Per function (by id of its node; None: module level), names (`gpu`, `args.device_id`)
        # holding the local rank, each with the assignment that makes it so; names bound
        # by unpacking a same-module function's result: name -> (function, position, statement).
        self._local_rank_names: dict[int | None, dict[str, cst.CSTNode]] = {}
        self._unpacked: dict[int | None, dict[str, tuple[str, int, cst.CSTNode]]] = {}
        self._init_methods: dict[int, tuple] = {}  # by id of the rank argument: (init_method, scope)
        self._loopback_master: dict[int | None, bool] = {}  # MASTER_ADDR written: only to a loopback address
        self._findings: list[_Finding] = []
        # Names a function binds to one of its parameters (`args.rank = gpu`): name -> (key,
        # position, parameter); the ranks given by such a name, judged by what callers pass;
        # the arguments of same-module calls that are a local rank where the call is made.
        self._from_parameter: dict[int | None, dict[str, tuple[str, int, str]]] = {}
        self._parameter_ranks: list[tuple[_Finding, tuple[str, int, str]]] = []
        self._local_arguments: set[int] = set()
        self._callers: dict[str, set[str | None]] = {}  # same-module function -> functions calling it
        self._spawned: set[str] = set()  # functions started as processes: mp.spawn(fn), Process(target=fn)
        # functions handed first to a helper the project does not hold (`start_dist_train(train, n)`
        # imported from a module that lacks it): called as mp.spawn calls, index first
        self._handed: set[str] = set()
        self._calls: dict[str, list[tuple[cst.Call, bool]]] = {}  # same-module calls: (call, via self.)
        self._functions: dict[str, cst.FunctionDef] = {}
        self._several_nodes = False  # a node rank or node count is named
        self._launcher_sets_rank = False  # torchrun or torch.distributed.launch evidence
        self._writes_master = self._writes_rank = False

    @property
    def _frame_id(self) -> int | None:
        frame = self.model.function
        return None if frame is None else id(frame.node)

    @property
    def _names_here(self) -> dict[str, cst.CSTNode]:
        return self._local_rank_names.setdefault(self._frame_id, {})

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        key = self.model.frame.key
        if key is not None:
            self._functions.setdefault(key, node)

    def visit_Assign(self, node: cst.Assign) -> None:
        local = self._is_local_rank(node.value)
        made = self._names_here.get(dotted_name(strip_int(node.value)) or "", node)
        unpacked = self._unpacked.setdefault(self._frame_id, {})
        for target in node.targets:
            names = [target.target]
            if isinstance(target.target, (cst.Tuple, cst.List)):
                names = [element.value for element in target.target.elements]
            for index, bound in enumerate(names):
                name = dotted_name(bound) if isinstance(bound, (cst.Name, cst.Attribute)) else None
                if name is None:
                    continue
                self._names_here.pop(name, None)
                unpacked.pop(name, None)
                self._from_parameter.get(self._frame_id, {}).pop(name, None)
                parameter = self._parameter(strip_int(node.value)) if not local and len(names) == 1 else None
                if parameter is not None:  # `args.rank = gpu`: what the callers pass for `gpu`
                    self._from_parameter.setdefault(self._frame_id, {})[name] = parameter
                if local and len(names) == 1:  # `args.device_id = args.gpus = args.local_rank`
                    self._names_here[name] = made
                elif isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name) and isinstance(bound, cst.Name):
                    position = index if len(names) > 1 else -1
                    unpacked[name] = (node.value.func.value, position, node)
        self._environ(node)

    def _environ(self, node: cst.Assign | cst.Call) -> None:
        for variable, value in environ_writes(self.model, node):
            self._writes_master |= variable in ("MASTER_ADDR", "MASTER_PORT")
            self._writes_rank |= variable == "RANK"
            if variable == "MASTER_ADDR":
                loopback = _is_loopback(f"tcp://{self.model.string_value(value) or ''}:")
                self._loopback_master[self._frame_id] = self._loopback_master.get(self._frame_id, True) and loopback

    def visit_Name(self, node: cst.Name) -> None:
        if node.value.lower() in _NODE_NAMES:
            self._several_nodes = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value.lower() in _NODE_NAMES:
            self._several_nodes = True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        key = environment_key(node)
        self._launcher_sets_rank |= key in _LAUNCHER_VARIABLES
        self._several_nodes |= key in _NODE_VARIABLES

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        key = environment_key(node)
        self._launcher_sets_rank |= key in _LAUNCHER_VARIABLES
        self._several_nodes |= key in _NODE_VARIABLES
        self._environ(node)
        started = started_function(node, self.model)  # (also through a project helper: `start_dist_train(train, n)`)
        if started is not None:
            if isinstance(started, cst.Name):
                self._spawned.add(started.value)
            return self._record_call(node, qualified)
        handed = node.args[0].value if node.args and node.args[0].keyword is None and not node.args[0].star else None
        if isinstance(handed, cst.Name) and self._unheld_helper(node):
            self._handed.add(handed.value)
        self._record_call(node, qualified)

    def _record_call(self, node: cst.Call, qualified: str | None) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argument":
            options = {arg.value.evaluated_value for arg in node.args if isinstance(arg.value, cst.SimpleString)}
            self._launcher_sets_rank |= bool(options & {"--local_rank", "--local-rank"})
        callee = None
        if isinstance(node.func, cst.Name) and qualified is None:
            callee = node.func.value
            self._calls.setdefault(callee, []).append((node, False))
        elif isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) and node.func.value.value == "self":
            self_class = self.model.frame.self_class
            if self_class is not None:
                callee = f"{self_class.name.value}.{node.func.attr.value}"
                self._calls.setdefault(callee, []).append((node, True))
        if callee is not None:
            self._callers.setdefault(callee, set()).add(self.model.frame.key)
            self._local_arguments.update(id(arg.value) for arg in node.args if self._is_local_rank(arg.value))

    def _is_local_rank(self, expr: cst.BaseExpression) -> bool:
        expr = strip_int(expr)
        if isinstance(expr, (cst.Subscript, cst.Call)):
            return environment_key(expr) == "LOCAL_RANK"
        if dotted_name(expr) in self._names_here:
            return True
        return isinstance(expr, (cst.Name, cst.Attribute)) and (last_name(expr) or "").lower() == "local_rank"

    def check(self, node: cst.Call) -> None:
        rank = argument_for(node, INIT_PROCESS_GROUP, "rank")
        if rank is None or self._on_one_machine(node):
            return
        if not self._is_local_rank(rank.value):
            value = strip_int(rank.value)
            held = self._from_parameter.get(self._frame_id, {}).get(dotted_name(value) or "")
            parameter = self._parameter(value) or held
            if parameter is not None:  # `main_worker(args.local_rank, args)`, then `rank=gpu`
                function = self.model.function
                finding = _Finding(rank, None, function.key if function else None, rank, None)
                self._parameter_ranks.append((finding, parameter))
            return
        init_method = argument_for(node, INIT_PROCESS_GROUP, "init_method")
        if init_method is not None and self.model.string_value(init_method.value) == "env://":
            self._launcher_sets_rank = True
        function = self.model.function
        key = None if function is None else function.key
        value = strip_int(rank.value)
        named = dotted_name(value)
        if named is not None and named not in self._names_here and function is not None and isinstance(function.function, cst.FunctionDef):
            reaching = _reaching_values(function.function.body.body, named, node)
            if reaching and all(_made_other(held, {}, set()) or isinstance(strip_int(held), cst.Integer) for held in reaching):
                return  # `args.local_rank = int(os.environ["RANK"])` on every way here: a global rank under a local name
        made = self._names_here.get(named or "", rank)
        unpacked = self._unpacked.get(self._frame_id, {}).get(dotted_name(value) or "")
        if unpacked is not None:
            made = unpacked[2]
        origin = unpacked[:2] if unpacked is not None else None
        self._findings.append(_Finding(rank, self._parameter(value), key, made, origin))

    def _loopback_option(self, rank: cst.Arg) -> bool:
        """The call's init_method is an option every documented run sets to a loopback
        address (`--dist_url` defaulting to `tcp://127.0.0.1:23456`, and each launch command
        passing it `tcp://127.0.0.1:23343` or leaving it out): one machine."""
        init_method, scope = self._init_methods.get(id(rank), (None, None))
        values = self.model.get(ParserOptions).documented_values(init_method, scope, starts=True) if init_method is not None else UNKNOWN
        return values is not UNKNOWN and all(isinstance(value, str) and _is_loopback(value) for value in values)

    def _on_one_machine(self, call: cst.Call) -> bool:
        """The call says its job is one machine: a loopback init_method (or, with the default
        `env://` one, MASTER_ADDR set to a loopback address here before it), or a world size of
        `torch.cuda.device_count()`."""
        init_method = argument_for(call, INIT_PROCESS_GROUP, "init_method")
        if init_method is not None and _is_loopback(self.model.string_prefix(init_method.value)):
            return True
        if init_method is not None:  # judged at the end, when the file's options are all read
            self._init_methods[id(argument_for(call, INIT_PROCESS_GROUP, "rank"))] = (init_method.value, self.model.scope)
        env = init_method is None or self.model.string_value(init_method.value) == "env://"
        if env and (self._loopback_master.get(self._frame_id) or self._loopback_master.get(None)):
            return True
        world_size = argument_for(call, INIT_PROCESS_GROUP, "world_size")
        world = world_size.value if world_size is not None else None
        if isinstance(world, cst.Name):  # `n_gpus = torch.cuda.device_count()`, bound once
            world = self.model.constant(world.value) if self.model.qualified(world) is None else None
        return isinstance(world, cst.Call) and self.model.qualified(world.func) in DEVICE_COUNT

    def _parameter(self, expr: cst.BaseExpression) -> tuple[str, int, str] | None:
        """(function key, position, name) when `expr` is a parameter of the enclosing function."""
        frame = self.model.function
        if frame is None or frame.key is None or not isinstance(expr, cst.Name):
            return None
        node = frame.function
        params = [*node.params.posonly_params, *node.params.params]  # type: ignore[union-attr]
        names = [param.name.value for param in params]
        if expr.value not in names or self.model.binding_scope(expr.value) is not frame.scope:
            return None
        return frame.key, names.index(expr.value), expr.value

    def leave_Module(self, original_node: cst.Module) -> None:
        project = self.model.project
        launch = project.launch_line(OLD_LAUNCHER_MODULE) if project is not None else None
        self._launcher_sets_rank |= launch is not None
        sets_rank = self._launcher_sets_rank and not (self._writes_master and not self._writes_rank)
        for finding, parameter in self._parameter_ranks:
            passed = self._local_rank_passed(*parameter)
            if passed is not None:
                self._findings.append(replace(finding, made=passed))
        for finding in self._findings:
            if self._loopback_option(finding.rank):
                continue
            passed = self._passed(*finding.parameter) if finding.parameter is not None else None
            if passed and all(_is_global_rank(value) for value in passed):
                continue
            if finding.unpacked is not None and self._returns_other(*finding.unpacked):
                continue  # a global rank (or a computed one) under a local name
            spawned = self._runs_in_spawned(finding.function)
            handed = not self._launcher_sets_rank and finding.parameter is not None and finding.parameter[1] == 0
            if (spawned or handed and self._runs_in_spawned(finding.function, self._handed)) and not self._several_nodes:
                continue  # every rank is a child of this process, on one node: local rank == rank
            if spawned or not sets_rank:
                self.report(finding.rank, _NO_FIX_MESSAGE, chain=self._chain(finding, _NO_FIX_MESSAGE, launch))
                continue
            fixed = finding.rank.with_changes(value=cst.parse_expression(_GLOBAL_RANK))
            chain = self._chain(finding, self.message, launch)
            self.report(finding.rank, replace={finding.rank: fixed}, imports=("import os",), chain=chain)

    def _chain(self, finding: _Finding, message: str, launch: Place | None) -> list[Link]:
        """Where the local rank is made, who starts the ranks (a documented launch command,
        else what this file shows), and the harm at the argument."""
        if finding.made is finding.rank:
            made = Link(StepKind.MADE, f"`{_code(strip_int(finding.rank.value))}` is the launcher's local rank, numbered per node", finding.rank)
        elif isinstance(finding.made, cst.BaseExpression):  # an argument: `main_worker(args.local_rank, args)`
            made = Link(StepKind.MADE, "the local rank, numbered per node, is passed here for the rank's parameter", finding.made)
        else:
            made = Link(StepKind.MADE, "the local rank, numbered per node, is bound here", finding.made)
        runs = Link(StepKind.RUNS, "this command launches it with torch.distributed.launch", launch) if launch else self.runs_link()
        harm = Link(StepKind.HARM, message.partition("; ")[0], finding.rank)
        return [made, *([runs] if runs is not None else []), harm]

    def _returns_other(self, function: str, position: int) -> bool:
        """Whether every value the same-module `function` returns at `position` (-1: the whole
        result) is known to be no local rank: a global rank (`int(os.environ["SLURM_PROCID"])`,
        `dist.get_rank()`), a computed one (`node_id * gpus_per_node`) or None, followed through
        the function's own assignments."""
        node = self._functions.get(function)
        if node is None:
            return False
        values = []
        for returned in _returns(node):
            if position >= 0:
                if not isinstance(returned, (cst.Tuple, cst.List)) or position >= len(returned.elements):
                    return False
                returned = returned.elements[position].value
            values.append(returned)
        return bool(values) and all(_made_other(value, _assignments(node), set()) for value in values)

    def _runs_in_spawned(self, function: str | None, started: set[str] | None = None) -> bool:
        """`function` is started by mp.spawn/Process here (or, given, by a call of `started`),
        or called only from such functions."""
        started = self._spawned if started is None else started

        def callers(current: str | None) -> set[str | None]:
            return set() if current in started else self._callers.get(current, set())  # type: ignore[arg-type]

        return all(current in started or callers(current) for current in reachable([function], callers))

    def _unheld_helper(self, call: cst.Call) -> bool:
        """`call` calls a name imported from a module beside this script that the project does
        not resolve it in (`from utils import start_dist_train`, where `utils.py` has no such
        function): a helper of the project whose code is not there to read."""
        view, qualified = self.model.project, self.model.qualified(call.func)
        if view is None or not isinstance(call.func, cst.Name) or qualified is None or qualified.startswith("."):
            return False
        home = qualified.rpartition(".")[0]
        if not home or view.resolve(qualified) is not None:
            return False
        folder = os.path.dirname(view.path.replace(os.sep, "/"))
        return view.document(f"{folder}/{home.replace('.', '/')}.py".lstrip("/")) is not None

    def _local_rank_passed(self, key: str, index: int, name: str) -> cst.BaseExpression | None:
        """Where a parameter named otherwise (`gpu`) is given the local rank, when the calls of
        its function in this module pass the local rank for it, or a number
        (`main_worker(0, args)` where nothing is distributed), and one at least the local rank."""
        passed = self._passed(key, index, name) or []
        if not all(id(value) in self._local_arguments or isinstance(value, cst.Integer) for value in passed):
            return None
        return next((value for value in passed if id(value) in self._local_arguments), None)

    def _passed(self, key: str, index: int, name: str) -> list[cst.BaseExpression] | None:
        """What every call of the same-module function `key` passes for its parameter `name`
        (at `index`); None where it is not called here, or a call's value is not known."""
        calls = self._calls.get(key, [])
        if not calls:
            return None
        found = []
        for call, via_self in calls:
            position = index - 1 if via_self else index
            passed = next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)
            positional = [arg for arg in call.args if arg.keyword is None]
            if passed is None and any(arg.star for arg in positional[: position + 1]):
                return None
            if passed is None and 0 <= position < len(positional):
                passed = positional[position]
            if passed is None:
                return None
            found.append(passed.value)
        return found

def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _returns(function: cst.FunctionDef) -> list[cst.BaseExpression]:
    """The values `function`'s own `return` statements give (not those of nested functions)."""
    found, pending = [], [function.body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Return) and node.value is not None:
            found.append(node.value)
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(children(node))
    return found


def _assignments(function: cst.FunctionDef) -> dict[str, list[cst.BaseExpression]]:
    """Every value `function` assigns to each plain name; `...` where it is bound otherwise (a
    parameter, an unpacking, `+=`, a loop or `with` target)."""
    found: dict[str, list[cst.BaseExpression]] = {}

    def note(target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            found.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                note(element.value, cst.Ellipsis())

    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        note(param.name, cst.Ellipsis())
    pending: list[cst.CSTNode] = [function.body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Assign):
            for target in node.targets:
                note(target.target, node.value)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            note(node.target, node.value if isinstance(node, cst.AnnAssign) and node.value is not None else cst.Ellipsis())
        elif isinstance(node, cst.For):
            note(node.target, cst.Ellipsis())
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            note(node.asname.name, cst.Ellipsis())  # type: ignore[arg-type]
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(children(node))
    return found


def _reaching_values(body, name: str, call: cst.Call) -> list[cst.BaseExpression] | None:
    """The values the dotted `name` (`args.local_rank`) can hold at `call`, where the function
    whose statements are `body` assigns it on every way to the statement that holds the call:
    a plain assignment, or an `if` chain each of whose branches assigns it or leaves the
    function (`return`, `raise`); None where a way leaves it as it came in, or the function
    binds it otherwise (in a loop, `with`, `try`)."""
    held: list[cst.BaseExpression] | None = None
    for statement in body:
        if any(node is call for node in descendants(statement)):
            return held
        if _assigns(statement, name):
            held = _after(statement, name, held)
    return None


def _after(statement: cst.CSTNode, name: str, held: list[cst.BaseExpression] | None) -> list[cst.BaseExpression] | None:
    """What `name` may hold after `statement`, which assigns it somewhere (`held`: before it)."""
    if isinstance(statement, cst.SimpleStatementLine):
        values = [
            small.value for small in statement.body if isinstance(small, cst.Assign)
            and any(dotted_name(target.target) == name for target in small.targets)
        ]
        return values[-1:] if values and not any(isinstance(small, (cst.AugAssign, cst.AnnAssign)) for small in statement.body) else None
    if not isinstance(statement, cst.If):
        return None
    found: list[cst.BaseExpression] = []
    branch: cst.If | cst.Else | None = statement
    while branch is not None:
        lines = list(branch.body.body)
        after = held
        for line in lines:
            if _assigns(line, name):
                after = _after(line, name, after)
        leaves = bool(lines) and isinstance(lines[-1], cst.SimpleStatementLine) and isinstance(lines[-1].body[-1], (cst.Return, cst.Raise))
        if not leaves:
            if after is None:
                return None
            found.extend(after)
        if isinstance(branch, cst.If) and branch.orelse is None:  # no `else`: a way that takes no branch
            if held is None:
                return None
            found.extend(held)
        branch = branch.orelse if isinstance(branch, cst.If) else None
    return found


def _assigns(statement: cst.CSTNode, name: str) -> bool:
    return any(
        isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and dotted_name(node.target) == name
        for node in descendants(statement)
    )


def _made_other(expr: cst.BaseExpression, assigned: dict[str, list[cst.BaseExpression]], seen: set[str]) -> bool:
    """`expr` is known to be no local rank: None, a global rank read from the environment or
    torch.distributed, or a value computed from others (`node_id * gpus_per_node`); a name,
    when every value assigned to it in the function is."""
    expr = strip_int(expr)
    if isinstance(expr, cst.Name) and expr.value == "None":
        return True
    key = environment_key(expr)
    if key is not None:
        return key in _GLOBAL_VARIABLES
    if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.Modulo):
        return True
    if isinstance(expr, cst.Call):
        return last_name(expr) in ("get_rank", "get_global_rank")
    if isinstance(expr, cst.Name) and expr.value in assigned and expr.value not in seen:
        values = assigned[expr.value]
        return all(_made_other(value, assigned, seen | {expr.value}) for value in values)
    return False


def _is_global_rank(expr: cst.BaseExpression) -> bool:
    expr = strip_int(expr)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return True  # `node_rank * gpus_per_node + local_rank`
    if isinstance(expr, (cst.Subscript, cst.Call)) and environment_key(expr) is not None:
        return environment_key(expr) == "RANK"
    if isinstance(expr, cst.Call):
        return last_name(expr) in ("get_rank", "get_global_rank")
    return isinstance(expr, (cst.Name, cst.Attribute)) and (last_name(expr) or "").lower() in _GLOBAL_RANK_NAMES


def _is_loopback(url: str | None) -> bool:
    """`tcp://127.0.0.1:23456`, `tcp://localhost:{port}`, `tcp://[::1]:...`: only this machine
    can connect."""
    match = _URL_HOST.match(url or "")
    if match is None:
        return False
    host = match.group(1).strip("[]")
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
