import builtins
import functools
import sys

import libcst as cst

from ddplint.analyses.distribution import is_main_guard
from ddplint.core.diagnostics import Applicability
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.edits import argument_for
from ddplint.core.torch_api import (
    PLAIN_QUERIES, SET_SHARING_STRATEGY, SPAWN, START_PROCESSES, STORAGE_REDUCTIONS, TENSOR_CROSSINGS,
)
from ddplint.semantic.walk import descendants

_RAISE_OPEN_FILE_LIMIT = (
    "_, nofile_hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (nofile_hard, nofile_hard))\n"
)


_ENVIRONMENT_READS = frozenset({"os.environ.get", "os.getenv"})


@functools.cache
def _raise_open_file_limit() -> tuple[cst.SimpleStatementLine, ...]:
    return tuple(cst.parse_module(_RAISE_OPEN_FILE_LIMIT).body)  # type: ignore[arg-type]


# Start methods whose child is a new interpreter that imports the script as `__mp_main__`: it
# runs none of the script's `if __name__ == "__main__":` block, so none of what that block set.
_FRESH_START_METHODS = ("spawn", "forkserver")
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)

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
    positionally or as `new_strategy=`, literally or through a module constant bound to it
    (annotated too), or as the default of an environment read (`os.environ.get(KEY,
    "file_system")`, what runs unless KEY is exported),
    in a program that may pass tensors between processes: the module, a module importing it (at
    any depth, a notebook too) or a module one of those imports names a DataLoader or a count
    of workers, or starts torch.multiprocessing processes, pools or queues (`spawn(`,
    `Process(`, `Pool(`, `Queue(`), in code that may run: not in functions that only an import
    or a function that never runs names. No distributed evidence is needed. Not reported: a
    program with none of these (inference helpers that run a model on one image in the main
    process: the strategy is never used), nor one whose DataLoaders have no workers
    (`num_workers` left out or a literal 0: batches load in the process itself; a count from a
    variable counts; an option that declares one, `parser.add_argument("--num_workers")`,
    starts none), nor a data module's `if __name__ == "__main__":` self-test where the program
    only imports that module (the block runs only where it is the script), other strategies, a
    function of the same name from another library, a strategy passed in as a parameter (its
    value is unknown), and
    a function (or module code) that shares tensors by hand with torch's storage reducers
    (`torch.multiprocessing.reductions.reduce_storage` registered on a pickler, its bytes
    broadcast to the other ranks): a handle that unrelated processes open exists only under
    `file_system`, so the strategy is chosen on purpose and the fix would break the share.
    Nor is a strategy set in the script's `if __name__ == "__main__":` block that starts its
    ranks with `mp.spawn` (or `start_processes` with the spawn or forkserver method): each rank
    is a new interpreter that imports the script as `__mp_main__`, where that block does not
    run, so the ranks and the loader workers they start keep `file_descriptor` (measured on
    torch 2.13). That holds only while the launcher itself shares no tensor: it is reported when
    the block hands the ranks anything but plain data (a tensor in the spawn's `args` is shared
    under `file_system`: a `torch_shm_manager` starts), runs a rank itself
    (`main_worker(0, config)`), or calls anything else not shown to start no loader, process,
    pool or queue; and when the children are forked (`start_method="fork"`: they inherit it).

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
        Flagged(
            # An annotated constant whose value is an environment read: what runs, unless the
            # user exports the variable, is its default.
            """
            import os
            from typing import Final

            import torch

            STRATEGY: Final[str] = os.environ.get("PROJECT_SHARING_STRATEGY", "file_system")

            def setup(dataset):
                torch.multiprocessing.set_sharing_strategy(STRATEGY)
                ^
                return torch.utils.data.DataLoader(dataset, num_workers=4)
            """,
            fixed="""
            import os
            import resource
            from typing import Final

            import torch

            STRATEGY: Final[str] = os.environ.get("PROJECT_SHARING_STRATEGY", "file_system")

            def setup(dataset):
                # DDP005: raise the open-file limit instead of sharing tensors through /dev/shm files
                _, nofile_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile_hard, nofile_hard))
                return torch.utils.data.DataLoader(dataset, num_workers=4)
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
            # The environment's default is the safe strategy: file_system only if a user asks.
            """
            import os

            import torch

            STRATEGY = os.getenv("PROJECT_SHARING_STRATEGY", "file_descriptor")
            torch.multiprocessing.set_sharing_strategy(STRATEGY)
            loader = torch.utils.data.DataLoader(dataset, num_workers=4)
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
            # Set in the launcher only: each spawned rank imports the script as __mp_main__,
            # where this block does not run, and keeps file_descriptor.
            """
            import json
            import torch
            import torch.multiprocessing as mp

            def main_worker(rank, config):
                loader = torch.utils.data.DataLoader(config["data"], num_workers=8)

            if __name__ == "__main__":
                mp.set_sharing_strategy("file_system")
                config = json.load(open("train.json"))
                config["world_size"] = torch.cuda.device_count()
                mp.spawn(main_worker, nprocs=config["world_size"], args=(config,))
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
        if strategy is None or self._default_strategy(strategy.value) != "file_system":
            return
        if self._shares_by_hand():
            return  # a hand-made share of storages with other processes needs file_system
        if self.model.project.starts_no_processes(tensors=True):
            return  # no tensor crosses processes in the programs this code runs in: the strategy is unused
        if self._set_in_launcher_only(node):
            return  # the ranks it spawns start afresh without it, and it hands them no tensor
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

    def _default_strategy(self, expr: cst.BaseExpression) -> str | None:
        """The strategy `expr` names when nothing overrides it: a string (or a module constant
        bound to one), or the default of an environment read (`os.environ.get(KEY, "file_system")`,
        `os.getenv`), written there or bound to the constant: a run that does not export KEY gets it."""
        value = self.model.string_value(expr)
        if value is None and isinstance(expr, cst.Name) and self.model.qualified(expr) is None:
            expr = self.model.constant(expr.value) or expr
        if value is None and isinstance(expr, cst.Call) and len(expr.args) == 2 and not expr.args[1].keyword:
            if self.model.qualified(expr.func) in _ENVIRONMENT_READS:
                value = self.model.string_value(expr.args[1].value)
        return value

    def _shares_by_hand(self) -> bool:
        """The function around the call (or the module, for module code) names one of torch's
        storage reducers: it pickles storages as shared-memory handles for other processes."""
        function = self.model.function
        scope = function.node if function is not None else self.model.module
        return any(
            isinstance(found, (cst.Name, cst.Attribute)) and self.model.qualified(found) in STORAGE_REDUCTIONS
            for found in descendants(scope)
        )

    # -- a launcher that spawns its ranks afresh --------------------------------------------

    def _set_in_launcher_only(self, node: cst.Call) -> bool:
        """Whether the call runs only in a launcher whose ranks never see the setting: it lies in
        the script's `if __name__ == "__main__":` block, which starts its ranks as new
        interpreters (`mp.spawn`, `start_processes` with the spawn or forkserver method: each
        imports the script as `__mp_main__`, where the block does not run, so the ranks and
        the loader workers they start keep file_descriptor), hands them plain data only (a
        tensor in the spawn's `args` is shared by the launcher, under file_system), and calls
        nothing else that may start a process tensors cross (a rank it runs itself)."""
        if self.model.function is not None:
            return False
        block = next((branch for branch in self.model.ifs if is_main_guard(branch.test)), None)
        if block is None or not any(found is node for found in descendants(block.body)):
            return False  # an `else:` of the guard runs where the script is imported: in every rank
        calls = [found for found in descendants(block.body) if isinstance(found, cst.Call) and found is not node]
        starts = [call for call in calls if self._starts_afresh(call)]
        handed = [argument_for(call, SPAWN, "args") for call in starts]
        return (
            bool(starts)
            and all(arg is None or self._plain(arg.value) for arg in handed)
            and all(call in starts or self._starts_no_crossing(call) for call in calls)
        )

    def _starts_afresh(self, call: cst.Call) -> bool:
        """`mp.spawn(...)`, or `start_processes(...)` whose start method is spawn (its default)
        or forkserver: each child is a new interpreter."""
        name = self.model.qualified(call.func)
        if name in SPAWN:
            return True
        method = argument_for(call, START_PROCESSES, "start_method") if name in START_PROCESSES else None
        return name in START_PROCESSES and (method is None or self.model.string_value(method.value) in _FRESH_START_METHODS)

    def _starts_no_crossing(self, call: cst.Call) -> bool:
        """Whether `call` in the launcher is shown to start no process that tensors cross: one
        of torch's plain queries (`torch.cuda.device_count()`), a builtin, a method of a plain
        value, a function of the standard library that is no process, pool or queue, or a
        project function whose module (and what it imports) starts none, given literals only
        (it cannot put a tensor into what the launcher hands on). A function of this module
        (the rank's own entry, run in the launcher) or of another library is not."""
        name = self.model.qualified(call.func)
        if name in PLAIN_QUERIES:
            return True
        if name is None:
            return self._plain_call(call)
        if any(needle.rstrip("(") in name for needle in TENSOR_CROSSINGS):
            return False
        if name.partition(".")[0] in sys.stdlib_module_names:
            return True
        literal = all(isinstance(arg.value, _LITERALS) for arg in call.args)
        return literal and self.model.project.starts_no_processes(calling=name)

    def _plain_call(self, call: cst.Call) -> bool:
        """A builtin (`open(path)`) or a method of a plain value (`parser.parse_args()`), or a
        function of the standard library (`json.load(...)`), given plain values: it returns none
        of torch's tensors (`copy.deepcopy(x)` of a plain `x` is plain)."""
        func = call.func
        if not all(self._plain(arg.value) for arg in call.args):
            return False
        name = self.model.qualified(func)
        if name is not None:
            return name in PLAIN_QUERIES or name.partition(".")[0] in sys.stdlib_module_names
        if isinstance(func, cst.Name):
            return self._builtin(func)
        return isinstance(func, cst.Attribute) and self._plain(func.value)

    def _plain(self, expr: cst.BaseExpression, seen: frozenset[str] = frozenset()) -> bool:
        """Whether `expr` (in module code) is shown to hold no tensor: a literal or string, a
        container, test or arithmetic of plain values, what a plain call returns, an item or
        attribute of a plain value, or a name the module binds only to plain values and whose
        items and attributes it sets only to plain values (`config["world_size"] =
        torch.cuda.device_count()` after `config = json.load(f)`)."""
        if isinstance(expr, _LITERALS):
            return True
        if isinstance(expr, cst.Name):
            return self._builtin(expr) or self._plain_name(expr, seen)  # `True`, `str`: no tensor
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return all(self._plain(element.value, seen) for element in expr.elements)
        if isinstance(expr, cst.Dict):
            return all(self._plain(part, seen) for element in expr.elements for part in _dict_parts(element))
        if isinstance(expr, cst.Call):
            return self._plain_call(expr)
        if isinstance(expr, (cst.Subscript, cst.Attribute)):
            return self._plain(expr.value, seen)
        if isinstance(expr, cst.IfExp):
            return self._plain(expr.body, seen) and self._plain(expr.orelse, seen)
        if isinstance(expr, (cst.BinaryOperation, cst.BooleanOperation)):
            return self._plain(expr.left, seen) and self._plain(expr.right, seen)
        if isinstance(expr, cst.UnaryOperation):
            return self._plain(expr.expression, seen)
        if isinstance(expr, cst.Comparison):
            return self._plain(expr.left, seen) and all(self._plain(part.comparator, seen) for part in expr.comparisons)
        return False

    def _builtin(self, name: cst.Name) -> bool:
        return hasattr(builtins, name.value) and not self.model.module_scope.lookup(name.value)[0]

    def _plain_name(self, expr: cst.Name, seen: frozenset[str]) -> bool:
        name = expr.value
        if name in seen:
            return True
        found, origin = self.model.module_scope.lookup(name)
        values = self.model.assigned_values(name, self.model.module_scope) if found and origin is None else None
        if values is None:
            return False  # imported, or bound otherwise (a loop, a def)
        seen = seen | {name}
        return all(self._plain(value, seen) for value in values) and all(
            self._plain(value, seen) for value in self._stored_into(name)
        )

    def _stored_into(self, name: str) -> list[cst.BaseExpression]:
        """What module code puts into the value `name` holds: `name[...] = value`,
        `name.attr = value`, and the arguments of its methods (`name.update(other)`)."""
        found: list[cst.BaseExpression] = []
        code = [statement for statement in self.model.module.body if not isinstance(statement, (cst.FunctionDef, cst.ClassDef))]
        for inner in (node for statement in code for node in descendants(statement)):
            if isinstance(inner, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and inner.value is not None:
                targets = [t.target for t in inner.targets] if isinstance(inner, cst.Assign) else [inner.target]
                if any(isinstance(t, (cst.Subscript, cst.Attribute)) and _root(t) == name for t in targets):
                    found.append(inner.value)
            elif isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and _root(inner.func.value) == name:
                found += [arg.value for arg in inner.args]
        return found


def _dict_parts(element: cst.BaseDictElement) -> tuple[cst.BaseExpression, ...]:
    return (element.key, element.value) if isinstance(element, cst.DictElement) else (element.value,)


def _root(expr: cst.BaseExpression) -> str | None:
    """The name an item or attribute chain starts from (`config` of `config["a"].b`)."""
    while isinstance(expr, (cst.Subscript, cst.Attribute)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None
