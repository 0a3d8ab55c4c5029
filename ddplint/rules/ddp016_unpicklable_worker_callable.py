from __future__ import annotations

import ast

import libcst as cst

from ddplint.analyses.options import ParserOptions
from ddplint.model.context import own_nodes
from ddplint.analyses.pickling import SPAWN_LIKE, Definitions, is_process_start, picklable
from ddplint.semantic.edits import argument_for, keyword_argument
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.model import Scope, dotted_name
from ddplint.core.torch_api import DATALOADER, PROCESS, SPAWN
from ddplint.prefilter.project_facts import ProjectFact

# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn,
#            pin_memory, drop_last, timeout, worker_init_fn, ...)
_WORKER_CALLABLES = ("collate_fn", "worker_init_fn")


# Python 3.14 made forkserver the default start method on Linux; torch's DataLoader
# starts its workers with the default unless `multiprocessing_context` is given.
WORKERS_MESSAGE = (
    "a lambda or nested function cannot be pickled for the DataLoader's workers, which Python 3.14+ starts "
    "with forkserver on Linux (spawn on macOS and Windows); define it at module level (functools.partial for bound values)"
)


class UnpicklableWorkerCallable(Rule):
    """
    A DataLoader with workers sends its `collate_fn` and `worker_init_fn` to every worker
    process, and `mp.spawn` / `Process(target=...)` send their target function. Under the
    spawn start method (the default on macOS and Windows, always for `mp.spawn`, and whenever
    `multiprocessing_context="spawn"` is passed) that means pickling, and pickle stores a
    function by its module-level name: a lambda or a function defined inside another function
    fails with "Can't pickle local object 'main.<locals>.collate'". Since Python 3.14 the
    default start method on Linux is forkserver, which pickles a DataLoader worker's arguments
    as spawn does (torch 2.13's DataLoader names this when a worker fails to start); the code
    runs only where workers are forked: Linux on Python 3.13 or older, or
    `multiprocessing_context="fork"`.

    Fires when a lambda, a function defined inside another function, a `functools.partial`
    of one, or what a project function returns when every `return` of it gives a function
    defined inside it or a lambda (`collate_fn=get_collate_fn(keys)`, also through a name bound
    to that call) is passed as `collate_fn` or `worker_init_fn` to a DataLoader (or a DataLoader
    subclass of the project, or a class of the project whose `__init__` passes its
    `**kwargs` on to a DataLoader and names none of these arguments itself, as espnet's
    `ChainerDataLoader(**kwargs)`; to such a class, by keyword) whose `num_workers` is given
    and not a literal 0 (and whose `multiprocessing_context` is not "fork": forked workers get
    the callables without pickling), as the function of `torch.multiprocessing.spawn`/`start_processes`,
    or as `target=` of a `Process` (multiprocessing, torch.multiprocessing, or a context's
    `ctx.Process`). Not reported: module-level functions, methods, parameters, and
    same-named calls of other libraries.

    Not reported either where the workers fork: a DataLoader without `multiprocessing_context`
    and a `multiprocessing.Process` in a project that names only Pythons older than 3.14 for
    its runs (`conda create -n env python=3.9`, `FROM python:3.10`, `python_requires="<3.12"`)
    and a file that sets no start method (`mp.spawn` always pickles, and is still reported).

    Move the function to module level (bind extra values with `functools.partial` of that
    module-level function), or use a method of a module-level class. A DataLoader without
    workers (`num_workers` absent or 0, or an option of this file's parser whose default is 0
    and that no launch command of the project passes, or a parameter of the function whose
    default is 0 and that no call of it in the project passes) pickles nothing and is not reported. There is no
    automatic fix: moving a closure out of its function changes what it can see.
    """

    code = "DDP016"
    # the DataLoader may be a subclass from another module; reached as `module.Class`, the screen cannot see it
    opened_by = frozenset((ProjectFact.LOADER_CLASS, ProjectFact.LOADER_CLASS_MODULE))
    unscreened_by = frozenset((ProjectFact.LOADER_CLASS_MODULE,))
    name = "unpicklable-worker-callable"
    frameworks = (Framework.DDP,)
    message = (
        "a lambda or nested function cannot be pickled for a spawned worker or process; "
        "define it at module level (functools.partial for bound values)"
    )
    fix = None
    # `also`: the keyword or the call as the rule meets it written, narrower than the APIs' names.
    trigger = CallTrigger(
        DATALOADER | SPAWN_LIKE | PROCESS,
        methods=("Process",),
        shipped=(*_WORKER_CALLABLES, "fn", "target"),
        also=(("collate_fn", "worker_init_fn", "spawn(", "Process(", "start_processes("),),
    )

    analyses = (Definitions, ParserOptions)

    flagged_examples = (
        Flagged(
            # The helper's num_workers defaults to 0, but a call passes 4: the workers get it pickled.
            """
            from torch.utils.data import DataLoader

            def build_loader(dataset, workers=0):
                def init_worker(worker_id):
                    pass
                return DataLoader(dataset, num_workers=workers, worker_init_fn=init_worker)
                                                                               ^

            def main(dataset):
                return build_loader(dataset, workers=4)
            """,
            messages=(WORKERS_MESSAGE,),
        ),
        Flagged(
            """
            import argparse
            from torch.utils.data import DataLoader

            def main(dataset, args):
                def collate(batch):
                    return batch
                loader = DataLoader(dataset, num_workers=args.workers, collate_fn=collate)
                                                                                  ^

            parser = argparse.ArgumentParser()
            parser.add_argument("--workers", type=int, default=4)
            main(load(), parser.parse_args())
            """,
            messages=(WORKERS_MESSAGE,),
        ),
        Flagged(
            """
            import torch
            loader = torch.utils.data.DataLoader(
                dataset, batch_size=8, num_workers=4,
                collate_fn=lambda batch: batch,
                           ^
                worker_init_fn=lambda worker_id: None,
                               ^
            )
            """,
            messages=(WORKERS_MESSAGE,) * 2,
        ),
        Flagged(
            """
            import functools
            import torch.multiprocessing as mp

            def main():
                def train(rank, world_size):
                    pass
                mp.spawn(functools.partial(train), args=(2,), nprocs=2)
                         ^
            """
        ),
        Flagged(
            """
            from torch.multiprocessing import spawn
            spawn(lambda rank: print(rank), nprocs=2)
                  ^
            """
        ),
        Flagged(
            """
            import multiprocessing

            def launch(queue):
                work = lambda: queue.put(1)
                multiprocessing.Process(target=work).start()
                                               ^
            """
        ),
        Flagged(
            """
            import multiprocessing as mp
            ctx = mp.get_context("spawn")
            ctx.Process(target=lambda: None).start()
                               ^
            """
        ),
    )
    clean_examples = (
        Clean(
            # Workers forked explicitly when there are any: nothing is pickled.
            """
            import torch
            from torch.utils.data import DataLoader

            def loader(dataset, workers):
                def collate(batch):
                    return batch
                context = torch.multiprocessing.get_context("fork") if workers > 0 else None
                return DataLoader(dataset, num_workers=workers, collate_fn=collate, multiprocessing_context=context)
            """
        ),
        Clean(
            # The option's default is 0 and nothing launches the script with it: no worker.
            """
            import argparse
            from torch.utils.data import DataLoader

            parser = argparse.ArgumentParser()
            parser.add_argument("--num-workers", type=int, default=0)
            args = parser.parse_args()
            loader = DataLoader(dataset, num_workers=args.num_workers, collate_fn=lambda batch: batch)
            """
        ),
        Clean(
            # The helper's num_workers defaults to 0 and no call passes it: no worker.
            """
            from torch.utils.data import DataLoader

            def build_loader(dataset, batch_size=8, workers=0):
                def init_worker(worker_id):
                    pass
                return DataLoader(dataset, batch_size, num_workers=workers, worker_init_fn=init_worker)

            def main(dataset):
                return build_loader(dataset, batch_size=16)
            """
        ),
        Clean(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(dataset, collate_fn=lambda batch: batch)
            same = DataLoader(dataset, num_workers=0, collate_fn=lambda batch: batch)
            """
        ),
        Clean(
            """
            import functools
            import torch.multiprocessing as mp
            from torch.utils.data import DataLoader

            def collate(batch, pad):
                return batch

            class Trainer:
                def worker_init(self, worker_id):
                    pass

                def loader(self, dataset):
                    return DataLoader(dataset, num_workers=2, collate_fn=functools.partial(collate, pad=0),
                                      worker_init_fn=self.worker_init)

            def train(rank):
                pass

            mp.spawn(train, nprocs=2)
            """
        ),
        Clean(
            """
            from torch.utils.data import DataLoader

            def main(dataset, collate):
                return DataLoader(dataset, num_workers=4, collate_fn=collate)

            def later():
                return DataLoader(dataset, num_workers=4, collate_fn=module_level)

            def module_level(batch):
                return batch
            """
        ),
        Clean(
            """
            from mylib import DataLoader, spawn
            DataLoader(dataset, num_workers=4, collate_fn=lambda batch: batch)
            spawn(lambda rank: None)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self.definitions = model.get(Definitions)
        # (the callable, its scope, how another module's class ships it, the loader's num_workers)
        self._candidates: list[tuple[cst.BaseExpression, Scope, str | None, cst.BaseExpression | None]] = []
        self._loader_elsewhere: str | None = None  # how the called class of another module ships them
        self._workers: cst.BaseExpression | None = None  # the num_workers of the loader being read
        self.options = model.get(ParserOptions)

    def visit_Call(self, node: cst.Call) -> None:
        self._loader_elsewhere, self._workers = None, None
        for callable_arg in self._shipped_callables(node):
            self._candidates.append((callable_arg, self.model.scope, self._loader_elsewhere, self._workers))

    def _shipped_callables(self, call: cst.Call) -> list[cst.BaseExpression]:
        qualified = self.model.qualified(call.func)
        project = self.model.project
        forwarded = False
        if qualified is not None and qualified not in DATALOADER and project is not None:
            # A DataLoader subclass of another module of the project ships them the same way,
            # and so does a class whose `__init__` passes its keyword arguments to a DataLoader.
            subclass = project.subclass_of(qualified, DATALOADER.spellings)
            forwarder = project.loader_forwarder(qualified) if subclass is None else None
            forwarded = forwarder is not None
            if subclass is not None:
                self._loader_elsewhere = f"the DataLoader subclass is defined in {subclass}"
            elif forwarded:
                name = qualified.rpartition(".")[2]
                self._loader_elsewhere = f"{name} passes its keyword arguments to the DataLoader at {forwarder}"
        if qualified in DATALOADER or self._loader_elsewhere:
            workers = _loader_argument(call, "num_workers", forwarded)
            context = _loader_argument(call, "multiprocessing_context", forwarded)
            if workers is None or _is_zero(workers.value) or context is not None and self._forks(context.value):
                return []
            if context is None and self._forked_by_default():
                return []
            self._workers = workers.value
            found = (_loader_argument(call, name, forwarded) for name in _WORKER_CALLABLES)
            return [arg.value for arg in found if arg is not None]
        if qualified in SPAWN_LIKE:
            target = argument_for(call, SPAWN, "fn")
        elif is_process_start(call, self.model):
            if qualified in PROCESS and self._forked_by_default():
                return []  # the module's Process, of the default context
            target = argument_for(call, PROCESS, "target")
        else:
            return []
        return [target.value] if target is not None else []

    def _forked_by_default(self) -> bool:
        """Processes of the default start method fork: every Python the project names for its
        runs is older than 3.14 (Linux's default became forkserver there; CUDA training with
        NCCL runs on Linux), and this file chooses no start method (`set_start_method`)."""
        view = self.model.project
        return view is not None and view.runs_python_before(14) and "set_start_method" not in self.model.source

    def _forks(self, context: cst.BaseExpression) -> bool:
        """`multiprocessing_context="fork"` or `get_context("fork")` (also through a name bound
        once, or as the one context of `... if workers else None`): the workers are forked and
        receive the callables without pickling."""
        if isinstance(context, cst.Name) and self.model.constant(context.value) is not None:
            context = self.model.constant(context.value)  # type: ignore[assignment]
        if isinstance(context, cst.IfExp):
            given = [branch for branch in (context.body, context.orelse) if not (isinstance(branch, cst.Name) and branch.value == "None")]
            return len(given) == 1 and self._forks(given[0])
        if isinstance(context, cst.Call) and (dotted_name(context.func) or "").rpartition(".")[2] == "get_context" and context.args:
            context = context.args[0].value
        return self.model.string_value(context) == "fork"

    def leave_Module(self, original_node: cst.Module) -> None:
        module_scope = self.model.module_scope
        for value, scope, loader, workers in self._candidates:
            if self.options.default_for(workers, scope) == 0:
                continue  # an option no run passes, or a parameter no call passes, 0 by default: no workers
            verdict = picklable(value, scope, self.definitions, module_scope)
            factory = self._closure_factory(value, scope) if verdict is None else None
            message = self.message if workers is None else WORKERS_MESSAGE
            if verdict is False:
                self.report(value, f"{message} ({loader})" if loader else message)
            elif factory is not None:
                self.report(value, f"{message} ({factory}{'; ' + loader if loader else ''})")

    def _closure_factory(self, value: cst.BaseExpression, scope: Scope) -> str | None:
        """Where a project function that `value` calls (or that makes what a name bound once
        holds: `collate = get_collate_fn(modalities)`) returns a function it defines inside
        itself, or a lambda, for a message; None otherwise."""
        if isinstance(value, cst.Name):
            where = scope.owner(value.value)
            value = where.constants.get(value.value) if where is not None else None
        project = self.model.project
        callee = dotted_name(value.func) if isinstance(value, cst.Call) else None
        if project is None or callee is None:
            return None
        program = project.program
        target = program.resolve(project.module, callee, None)
        tree = program.tree(target.module) if target is not None and not target.bound else None
        function = _top_level_function(tree, target.key) if tree is not None else None
        if function is None:
            return None
        local = {node.name for node in function.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        returned = [node.value for node in own_nodes(function) if isinstance(node, ast.Return) and node.value is not None]
        if returned and all(isinstance(v, ast.Lambda) or isinstance(v, ast.Name) and v.id in local for v in returned):
            line = returned[0].lineno
            return f"{callee}() returns a function defined inside it at {program.place(target.module, line)}"
        return None


def _top_level_function(tree: ast.Module, key: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return next((node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == key), None)





def _loader_argument(call: cst.Call, name: str, forwarded: bool) -> cst.Arg | None:
    """What `call` passes for the DataLoader parameter `name`; to a class that forwards its
    keyword arguments to a DataLoader, only by keyword."""
    return keyword_argument(call, name) if forwarded else argument_for(call, DATALOADER, name)


def _is_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and expr.evaluated_value == 0
