import functools

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.edits import argument_for
from ddplint.core.torch_api import SET_SHARING_STRATEGY, STORAGE_REDUCTIONS
from ddplint.semantic.walk import descendants

_RAISE_OPEN_FILE_LIMIT = (
    "_, nofile_hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (nofile_hard, nofile_hard))\n"
)


@functools.cache
def _raise_open_file_limit() -> tuple[cst.SimpleStatementLine, ...]:
    return tuple(cst.parse_module(_RAISE_OPEN_FILE_LIMIT).body)  # type: ignore[arg-type]


_COMMENT = "# DDP005: raise the open-file limit instead of sharing tensors through /dev/shm files"


class FileSystemSharingStrategy(Rule):
    """
    `torch.multiprocessing.set_sharing_strategy("file_system")` is the usual answer to
    "Too many open files" from DataLoader workers. It trades that error for worse ones: each
    shared tensor becomes a named file in `/dev/shm` kept alive by a `torch_shm_manager`
    process, and when a worker or the whole job is killed (an OOM, a container stop, a
    timeout) those files stay behind and fill shared memory for every later job on the node.
    In the field it also left a main process that never exited after training.

    Fires when `set_sharing_strategy` of `torch.multiprocessing` (any import form, also as
    `torch.multiprocessing.set_sharing_strategy`) is called with `"file_system"`, given
    positionally or as `new_strategy=`, literally or through a module constant bound to it,
    in a program that may pass tensors between processes: the module, a module importing it (at
    any depth, a notebook too) or a module one of those imports names a DataLoader or a count
    of workers, or starts torch.multiprocessing processes, pools or queues (`spawn(`,
    `Process(`, `Pool(`, `Queue(`), in code that may run: not in functions that only an import
    or a function that never runs names. No distributed evidence is needed. Not reported: a
    program with none of these (inference helpers that run a model on one image in the main
    process: the strategy is never used), nor one whose DataLoaders have no workers
    (`num_workers` left out or a literal 0: batches load in the process itself; a count from a
    variable counts), other strategies, a
    function of the same name from another library, a strategy passed in as a parameter (its
    value is unknown), and
    a function (or module code) that shares tensors by hand with torch's storage reducers
    (`torch.multiprocessing.reductions.reduce_storage` registered on a pickler, its bytes
    broadcast to the other ranks): a handle that unrelated processes open exists only under
    `file_system`, so the strategy is chosen on purpose and the fix would break the share.

    The default `file_descriptor` strategy is right; the open-file limit is what needs
    raising. The fix replaces the call with raising the soft `RLIMIT_NOFILE` to the hard
    limit (`import resource` is added). It is unsafe: it changes process-wide settings, and
    the `resource` module does not exist on Windows. A call that is not a statement of its
    own is reported without a fix: it is never deleted silently.
    """

    code = "DDP005"
    name = "file-system-sharing-strategy"
    frameworks = (Framework.DDP,)
    message = (
        "set_sharing_strategy('file_system') leaks /dev/shm files when workers die; "
        "keep file_descriptor and raise RLIMIT_NOFILE"
    )
    fix = Applicability.UNSAFE
    trigger = CallTrigger(SET_SHARING_STRATEGY, also=("file_system",))  # the strategy it flags, a literal

    flagged_examples = (
        Flagged(
            """
            import torch.multiprocessing as mp

            mp.set_sharing_strategy("file_system")
            ^
            mp.spawn(train, nprocs=4)
            """,
            fixed="""
            import resource

            import torch.multiprocessing as mp

            # DDP005: raise the open-file limit instead of sharing tensors through /dev/shm files
            _, nofile_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile_hard, nofile_hard))
            mp.spawn(train, nprocs=4)
            """,
        ),
        Flagged(
            """
            import torch
            SHARING = "file_system"

            def setup():
                torch.multiprocessing.set_sharing_strategy(SHARING)
                ^

            def loader(dataset, args):
                return torch.utils.data.DataLoader(dataset, num_workers=args.workers)

            setup()
            batches = loader(dataset, args)
            """,
            fixed="""
            import resource

            import torch
            SHARING = "file_system"

            def setup():
                # DDP005: raise the open-file limit instead of sharing tensors through /dev/shm files
                _, nofile_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile_hard, nofile_hard))

            def loader(dataset, args):
                return torch.utils.data.DataLoader(dataset, num_workers=args.workers)

            setup()
            batches = loader(dataset, args)
            """,
        ),
        Flagged(
            # `mp` is still used: kept; `resource` goes into the standard-library block.
            """
            import os
            import sys

            import torch.multiprocessing as mp

            mp.set_sharing_strategy("file_system")
            ^
            mp.spawn(main, nprocs=int(os.environ["NPROC"]))
            """,
            fixed="""
            import os
            import resource
            import sys

            import torch.multiprocessing as mp

            # DDP005: raise the open-file limit instead of sharing tensors through /dev/shm files
            _, nofile_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile_hard, nofile_hard))
            mp.spawn(main, nprocs=int(os.environ["NPROC"]))
            """,
        ),
        Flagged(
            """
            from torch.multiprocessing import set_sharing_strategy as share
            if args.many_workers: share(new_strategy='file_system')
                                  ^
            """,
        ),
    )
    clean_examples = (
        Clean(
            """
            import torch.multiprocessing as mp
            mp.set_sharing_strategy("file_descriptor")
            """
        ),
        Clean(
            # No DataLoader worker, process, pool or queue in the program: no tensor crosses
            # processes, so the strategy is never used.
            """
            import torch
            import torch.multiprocessing as mp

            mp.set_sharing_strategy("file_system")

            def embed(model, image):
                with torch.no_grad():
                    return model(image.unsqueeze(0))
            """
        ),
        Clean(
            # Rank 0 pickles the storage as a shared-memory handle and broadcasts the bytes:
            # only file_system gives a handle the other processes can open.
            """
            import copyreg
            import io
            import pickle

            import torch
            import torch.distributed as dist
            from torch.multiprocessing.reductions import reduce_storage

            def share_table(table):
                torch.multiprocessing.set_sharing_strategy("file_system")
                if dist.get_rank() == 0:
                    buf = io.BytesIO()
                    pickler = pickle.Pickler(buf)
                    pickler.dispatch_table = copyreg.dispatch_table.copy()
                    pickler.dispatch_table[torch.UntypedStorage] = reduce_storage
                    table.share_memory_()
                    pickler.dump(table)
                    payload = [buf.getvalue()]
                else:
                    payload = [None]
                dist.broadcast_object_list(payload, src=0)
                return table if dist.get_rank() == 0 else pickle.loads(payload[0])
            """
        ),
        Clean(
            """
            from mylib.workers import set_sharing_strategy
            set_sharing_strategy("file_system")
            """
        ),
        Clean(
            """
            import torch.multiprocessing as mp

            def configure(mp, strategy="file_system"):
                mp.set_sharing_strategy(strategy)
            """
        ),
    )

    def check(self, node: cst.Call) -> None:
        strategy = argument_for(node, SET_SHARING_STRATEGY, "new_strategy")
        if strategy is None or self.model.string_value(strategy.value) != "file_system":
            return
        if self._shares_by_hand():
            return  # a hand-made share of storages with other processes needs file_system
        if self.model.project.starts_no_processes(tensors=True):
            return  # no tensor crosses processes in the programs this code runs in: the strategy is unused
        line = self.model.statement
        statement = line.body[0] if line is not None and len(line.body) == 1 else None
        if not (isinstance(statement, cst.Expr) and statement.value is node):
            self.report(node)
            return
        replacement = _raise_open_file_limit()
        first = replacement[0].with_changes(
            leading_lines=[*line.leading_lines, cst.EmptyLine(comment=cst.Comment(_COMMENT))]
        )
        self.report(
            node,
            replace={line: cst.FlattenSentinel([first, *replacement[1:]])},
            imports=("import resource",),
        )

    def _shares_by_hand(self) -> bool:
        """The function around the call (or the module, for module code) names one of torch's
        storage reducers: it pickles storages as shared-memory handles for other processes."""
        function = self.model.function
        scope = function.node if function is not None else self.model.module
        return any(
            isinstance(found, (cst.Name, cst.Attribute)) and self.model.qualified(found) in STORAGE_REDUCTIONS
            for found in descendants(scope)
        )
