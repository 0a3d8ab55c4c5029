from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.semantic.model import Scope, dotted_name
from ddplint.semantic.edits import argument_for
from ddplint.core.torch_api import DATALOADER, DATASET, DEFAULTDICT
from ddplint.analyses.pickling import (
    Definitions,
    contained_values,
    crosses_process_boundary,
    is_builtin,
    picklable,
)
from ddplint.model.records import CallResult, FunctionSummary, Param
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.prefilter.triggers import CallTrigger

_NO_FIX = "; no picklable equivalent found: use a module-level function as the factory"


# Methods that make a class pickle differently: it may leave the dict out or rebuild it.
PICKLE_HOOKS = frozenset({"__getstate__", "__reduce__", "__reduce_ex__"})


# Names under which training code keeps what DataLoader workers and spawned ranks receive:
# vocabularies, tokenizers, datasets. A dict reached only through other names (a trainer's
# metrics, a helper's statistics) stays in its process in practice.
DATA_NAME = re.compile(r"vocab|tokenizer|dictionar|dataset|corpus|lexicon|alphabet|word2|2id|stoi|itos", re.IGNORECASE)
# A sampler stays in the main process: the DataLoader sends workers indices, not the sampler.
STAYS_HOME = re.compile(r"sampler", re.IGNORECASE)


@dataclass
class _Candidate:
    call: cst.Call
    factory: cst.Lambda
    scope: Scope
    in_function: bool
    owner: str | None  # the class whose method builds it
    function: str | None  # the function around it
    sent_by_caller: str | None = None  # where a caller it is returned to sends it
    held_by: str | None = None  # where the program sends the objects of its class


@dataclass
class _Exits:
    """How a value leaves the function that makes it: a dict's call, or a local name bound to one."""

    escapes: bool = False  # stored, passed on or returned (a call stored on `self` only: on_self)
    on_self: bool = False  # a call stored on `self.x` only: it travels with self
    sent: bool = False  # passed to a process boundary
    returned: bool = False  # by `return`
    stored: bool = False  # some way other than `return`


@dataclass
class _Classes:
    """What the module says about its classes, by name."""

    pickle_safe: set[str] = field(default_factory=set)  # with __getstate__/__reduce__, or patched
    bases: dict[str, list[str]] = field(default_factory=dict)  # same-module base names
    datasets: set[str] = field(default_factory=set)  # torch Datasets, or classes with __getitem__
    sent: set[str] = field(default_factory=set)  # classes whose instances are passed to a process boundary


def _is_main_guard(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    if not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = [side.value for side in sides if isinstance(side, cst.Name)]
    strings = [side.evaluated_value for side in sides if isinstance(side, cst.SimpleString)]
    return names == ["__name__"] and strings == ["__main__"]


class LambdaDefaultFactory(Rule):
    """
    `defaultdict(lambda: UNK_ID)` cannot be pickled: pickle stores functions by their
    module-level name and a lambda has none. Nothing fails until the dict has to reach
    another process. Under the spawn start method (the default on macOS and Windows, always
    for `mp.spawn`, and with `multiprocessing_context="spawn"`) a Dataset or vocabulary that
    holds one is pickled for every DataLoader worker and every spawned rank, and training
    stops with "Can't pickle local object 'Vocab.load.<locals>.<lambda>'". Linux forks by
    default, which hides the error until the code runs elsewhere.

    Fires when there is evidence that such a dict reaches another process: it is passed
    (alone, in a literal container, or through a local name) to a DataLoader with workers,
    Process, mp.spawn, a queue's put, pickle.dump(s) or torch.save; or it is stored on `self`
    of a class that travels to workers and ranks (a torch Dataset or a class with
    `__getitem__`, a vocabulary, tokenizer, dictionary or corpus by its name, a class this
    module passes to one of those calls, or a subclass of such); or it leaves its function
    (returned, yielded, assigned at module level or on an attribute) under a name of that
    kind (`vocab`, `word2id`, `build_vocab`, ...). A dict that leaves only by `return` is
    judged by what the program's callers do with it: a caller that passes it (or returns it
    to one that passes it) to spawn, Process, pickle or a queue is named in the finding,
    whatever the names, and so is one that hands it to a project Dataset whose `__init__` keeps
    it on `self` (`TranslationDataset(pairs, token_index)`); when every caller in the project only
    reads it in place (indexes, logs, copies its items), the name alone does not report it. A
    dict on `self` of any other class is reported when the program sends that class's objects
    (`mp.spawn(worker, args=(metric,))`) or keeps them on a Dataset (`self.charmap =
    CharMap(chars)` in a Dataset's `__init__`, in another module too); the message names where.

    Not reported: a dict that travels only as part of a dataset or vocabulary where the code
    that uses its module starts no DataLoader workers (in it and in the modules importing it,
    three imports up, every `num_workers` or `dataloader_num_workers` passed is a literal 0, or
    none is): then no worker and no rank receives it; nor where the workers fork (the project
    names only Pythons older than 3.14 for its runs, `conda create -n env python=3.9`, and the
    module chooses no start method or `multiprocessing_context`): they inherit it unpickled; a dict on a trainer, metric, logger or sampler object that nothing sends, statistics a helper
    returns, a module-level cache (spawned processes import the module and build their own),
    a local temporary, even one handed to an ordinary function, and a temporary of the
    `if __name__ == "__main__":` block; anything in a script (a module with that block) in
    which nothing crosses a process boundary; a dict stored on `self` of a class that controls
    its own pickling (`__getstate__`, `__reduce__` or `__reduce_ex__` on the class or a
    same-module base, patched on as `Vocab.__getstate__ = ...`, or registered with
    `copyreg.pickle`).

    The fix (safe) swaps the lambda for a picklable factory that returns the same value on
    every call: `lambda: 0` -> `int`, `lambda: []` -> `list`, `lambda: ""` -> `str` and the
    like; `lambda: f(args)` -> `functools.partial(f, args)` when `f` is importable and the
    arguments are immutable; another constant (`lambda: "<unk>"`, `lambda: UNK_ID`) -> a
    module-level function the fix adds once per file after the imports, `def _default_unk():
    return "<unk>"` (a new name if that one is taken). Names are only used that cannot
    change after the dict is built (module constants bound once, imports) and only inside
    functions, where they are already bound. A lambda that reads `self`, a local variable or
    a container (`word2id["<unk>"]`, which is read at every call) is reported without a fix.
    """

    code = "DDP002"
    name = "lambda-default-factory"
    frameworks = (Framework.DDP,)
    message = (
        "defaultdict with a lambda factory cannot be pickled for spawned workers or ranks; "
        "use a module-level or builtin factory"
    )
    fix = Applicability.SAFE
    trigger = CallTrigger(DEFAULTDICT, lambda_first=True)

    analyses = (Definitions,)

    flagged_examples = (
        Flagged(
            """
            import pickle
            from collections import defaultdict

            UNK_ID = 1

            class Vocab:
                def load(self, word2id_path):
                    with open(word2id_path, "rb") as f:
                        word2id = pickle.load(f)
                    self.word2id = defaultdict(lambda: UNK_ID)
                                   ^
                    self.word2id.update(word2id)
            """,
            fixed="""
            import pickle
            from collections import defaultdict


            def _default_unk_id():
                return UNK_ID


            UNK_ID = 1

            class Vocab:
                def load(self, word2id_path):
                    with open(word2id_path, "rb") as f:
                        word2id = pickle.load(f)
                    self.word2id = defaultdict(_default_unk_id)
                    self.word2id.update(word2id)
            """,
        ),
        Flagged(
            """
            import collections

            class VocabCounts:
                def __init__(self):
                    self.counts = collections.defaultdict(lambda: 0)
                                  ^
                    self.weights = collections.defaultdict(lambda : 0.0)
                                   ^
            """,
            fixed="""
            import collections

            class VocabCounts:
                def __init__(self):
                    self.counts = collections.defaultdict(int)
                    self.weights = collections.defaultdict(float)
            """,
        ),
        Flagged(
            """
            from collections import defaultdict as dd
            VOCAB_INDEX = dd(lambda: [])
                          ^
            VOCAB_NAMES: dict = dd(lambda: "")
                                ^
            """,
            fixed="""
            from collections import defaultdict as dd
            VOCAB_INDEX = dd(list)
            VOCAB_NAMES: dict = dd(str)
            """,
        ),
        Flagged(
            """
            from collections import defaultdict

            def build_vocab_index(pairs):
                index = defaultdict(lambda: defaultdict(list))
                        ^
                for key, sub, value in pairs:
                    index[key][sub].append(value)
                return index
            """,
            fixed="""
            import functools
            from collections import defaultdict

            def build_vocab_index(pairs):
                index = defaultdict(functools.partial(defaultdict, list))
                for key, sub, value in pairs:
                    index[key][sub].append(value)
                return index
            """,
        ),
        Flagged(
            """
            from collections import defaultdict

            class RuntimeDataset:
                def __init__(self):
                    self.per_module = defaultdict(
                                      ^
                        lambda: defaultdict(lambda: 0.0)
                    )
            """,
            fixed="""
            import functools
            from collections import defaultdict

            class RuntimeDataset:
                def __init__(self):
                    self.per_module = defaultdict(
                        functools.partial(defaultdict, float)
                    )
            """,
        ),
        Flagged(
            """
            import torch
            from collections import defaultdict

            def save(path, queue):
                torch.save({"vocab": defaultdict(lambda: set())}, path)
                                     ^
                queue.put(defaultdict(lambda: {}))
                          ^
            """,
            fixed="""
            import torch
            from collections import defaultdict

            def save(path, queue):
                torch.save({"vocab": defaultdict(set)}, path)
                queue.put(defaultdict(dict))
            """,
        ),
        Flagged(
            """
            from collections import defaultdict

            def vocab_shards():
                yield defaultdict(lambda: False)
                      ^
                yield defaultdict(lambda: ())
                      ^
            """,
            fixed="""
            from collections import defaultdict

            def vocab_shards():
                yield defaultdict(bool)
                yield defaultdict(tuple)
            """,
        ),
        Flagged(
            """
            from collections import defaultdict

            def make_entry(kind, size):
                return [kind] * size

            class Lexicon:
                def __init__(self):
                    self.entries = defaultdict(lambda: make_entry("pad", 2))
                                   ^
                    self.limits = defaultdict(lambda: 7)
                                  ^
                    self.labels = defaultdict(lambda: -1)
                                  ^
            """,
            fixed="""
            import functools
            from collections import defaultdict


            def _default_7():
                return 7


            def _default_minus_1():
                return -1


            def make_entry(kind, size):
                return [kind] * size

            class Lexicon:
                def __init__(self):
                    self.entries = defaultdict(functools.partial(make_entry, "pad", 2))
                    self.limits = defaultdict(_default_7)
                    self.labels = defaultdict(_default_minus_1)
            """,
        ),
        Flagged(
            """
            from collections import defaultdict
            from torch.utils.data import DataLoader

            def loader(dataset):
                return DataLoader([defaultdict(lambda: None)], num_workers=2)
                                   ^
            """,
            fixed="""
            from collections import defaultdict
            from torch.utils.data import DataLoader


            def _default_none():
                return None


            def loader(dataset):
                return DataLoader([defaultdict(_default_none)], num_workers=2)
            """,
        ),
        Flagged(
            """
            from collections import defaultdict

            class Vocab:
                def __init__(self, word2id, unk_id):
                    self.word2id = defaultdict(lambda: word2id["<unk>"])
                                   ^
                    self.by_self = defaultdict(lambda: self.unk)
                                   ^
                    self.by_param = defaultdict(lambda: unk_id)
                                    ^
                    self.with_args = defaultdict(lambda key=0: key)
                                     ^
            """,
            messages=(
                "defaultdict with a lambda factory cannot be pickled for spawned workers or ranks; use a "
                "module-level or builtin factory; no picklable equivalent found: use a module-level function as "
                "the factory"
            ),
        ),
        Flagged(
            """
            from collections import defaultdict
            MISSING_VOCAB = defaultdict(lambda: UNK)
                            ^
            UNK = 3
            """,
            messages=(
                "defaultdict with a lambda factory cannot be pickled for spawned workers or ranks; use a "
                "module-level or builtin factory; no picklable equivalent found: use a module-level function as "
                "the factory"
            ),
        ),
        Flagged(
            # A `__main__` temporary handed to DataLoader workers leaves the process.
            """
            from collections import defaultdict
            from torch.utils.data import DataLoader

            if __name__ == "__main__":
                counts = defaultdict(lambda: 0)
                         ^
                loader = DataLoader([counts], num_workers=2)
            """,
            fixed="""
            from collections import defaultdict
            from torch.utils.data import DataLoader

            if __name__ == "__main__":
                counts = defaultdict(int)
                loader = DataLoader([counts], num_workers=2)
            """,
        ),
        Flagged(
            # A script that saves with torch.save: the object holding the dict may be saved.
            # The owner's __getstate__ does not cover a dict put on a queue directly.
            """
            import torch
            from collections import defaultdict

            class Stats:
                def __init__(self):
                    self.per_class = defaultdict(lambda: 0)
                                     ^

            class Vocab:
                def __getstate__(self):
                    return dict(self.__dict__, word2id=dict(self.word2id))

                def share(self, queue):
                    queue.put(defaultdict(lambda: 0))
                              ^

            if __name__ == "__main__":
                torch.save(Stats(), "stats.pt")
            """,
            fixed="""
            import torch
            from collections import defaultdict

            class Stats:
                def __init__(self):
                    self.per_class = defaultdict(int)

            class Vocab:
                def __getstate__(self):
                    return dict(self.__dict__, word2id=dict(self.word2id))

                def share(self, queue):
                    queue.put(defaultdict(int))

            if __name__ == "__main__":
                torch.save(Stats(), "stats.pt")
            """,
        ),
        Flagged(
            # A constant: one named factory per file, shared by every lambda returning it.
            """
            from collections import defaultdict


            class Tokenizer:
                def __init__(self):
                    self.by_word = defaultdict(lambda: "<unk>")
                                   ^
                    self.by_id = defaultdict(lambda: "<unk>")
                                 ^
            """,
            fixed="""
            from collections import defaultdict


            def _default_unk():
                return "<unk>"


            class Tokenizer:
                def __init__(self):
                    self.by_word = defaultdict(_default_unk)
                    self.by_id = defaultdict(_default_unk)
            """,
        ),
        Flagged(
            # The name is taken by something else: the factory gets another.
            """
            from collections import defaultdict

            _default_unk = "<unk>"
            UNK_VOCAB = defaultdict(lambda: "<unk>")
                        ^
            """,
            fixed="""
            from collections import defaultdict


            def _default_unk_2():
                return "<unk>"


            _default_unk = "<unk>"
            UNK_VOCAB = defaultdict(_default_unk_2)
            """,
        ),
    )
    clean_examples = (
        Clean(
            # Objects that stay in their process: a trainer's metric buffers, a sampler (the
            # DataLoader keeps it in the main process), statistics a helper returns, a cache.
            """
            from collections import defaultdict, deque
            from torch.utils.data import DataLoader, Sampler

            CACHE = defaultdict(lambda: None)

            class Trainer:
                def __init__(self, dataset):
                    self._metrics = defaultdict(lambda: deque(maxlen=100))
                    self.loader = DataLoader(dataset, num_workers=4)

            class BucketSampler(Sampler):
                def __init__(self, lengths):
                    self.buckets = defaultdict(lambda: [])

            def label_statistics(sentences):
                counts = defaultdict(lambda: 0)
                for sentence in sentences:
                    counts[sentence.label] += 1
                return counts
            """
        ),
        Clean(
            # Temporaries of the `__main__` block are the script's locals, not module state.
            """
            from collections import defaultdict
            from torch.utils.data import DataLoader

            if __name__ == "__main__":
                stats = defaultdict(lambda: 0)
                loader = DataLoader(dataset, num_workers=4)
                for batch in loader:
                    stats[len(batch)] += 1
                print(stats)
            """
        ),
        Clean(
            # A plain script: no DataLoader workers, no spawn, nothing pickled.
            """
            import collections
            from torch.utils.data import DataLoader

            class Tracker:
                def __init__(self):
                    self.counts = collections.defaultdict(lambda: 0)

            def main():
                tracker = Tracker()
                for batch in DataLoader(dataset, batch_size=8, num_workers=0):
                    tracker.counts[len(batch)] += 1

            if __name__ == "__main__":
                main()
            """
        ),
        Clean(
            # The owner pickles the dict its own way (also inherited, patched, registered).
            """
            import copyreg
            from collections import defaultdict

            class Vocab:
                def __init__(self):
                    self.word2id = defaultdict(lambda: 1)

                def __getstate__(self):
                    state = self.__dict__.copy()
                    state["word2id"] = dict(self.word2id)
                    return state

            class SubwordVocab(Vocab):
                def __init__(self):
                    self.pieces = defaultdict(lambda: 1)

            class Patched:
                def __init__(self):
                    self.table = defaultdict(lambda: 1)

            class Registered:
                def __init__(self):
                    self.table = defaultdict(lambda: 1)

            Patched.__reduce__ = reduce_patched
            copyreg.pickle(Registered, reduce_registered)
            """
        ),
        Clean(
            """
            from collections import defaultdict

            def count_words(words):
                counts = defaultdict(lambda: 0)
                for word in words:
                    counts[word] += 1
                summarize(counts)
                report(defaultdict(lambda: []))
                return sorted(counts.items())
            """
        ),
        Clean(
            """
            import collections

            class Vocab:
                def __init__(self):
                    self.word2id = collections.defaultdict(int)
                    self.lookup = make_lookup(lambda: 0)
            """
        ),
        Clean(
            """
            from mylib import defaultdict

            class Vocab:
                def __init__(self):
                    self.word2id = defaultdict(lambda: 0)
            """
        ),
        Clean(
            """
            from collections import defaultdict

            def main(defaultdict):
                return defaultdict(lambda: 0)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self.definitions = model.get(Definitions)
        self._candidates: list[_Candidate] = []
        # How values leave their function: a call by its id, a name as (id of its scope, name).
        self._exits: dict[int | tuple[int, str], _Exits] = {}
        self._targets: dict[int, str] = {}  # a dict's call -> the name it is assigned to
        self._local_of: dict[int, tuple[int, str]] = {}  # a lambda defaultdict's call -> the local bound to it
        self._classes = _Classes()
        # Factories this run's fixes define: name -> the code they return.
        self._factories: dict[str, str] = {}
        self._is_script = False  # the module has an `if __name__ == "__main__":` block
        self._boundary = False  # something in the module crosses a process boundary

    # -- what makes a module or a class safe -----------------------------------------

    def visit_If(self, node: cst.If) -> None:
        if self.model.at_module_level and _is_main_guard(node.test):
            self._is_script = True

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.bases[node.name.value] = [arg.value.value for arg in node.bases if isinstance(arg.value, cst.Name)]
        if any(self.model.qualified(arg.value) in DATASET for arg in node.bases):
            self._classes.datasets.add(node.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent = self.model.frame.parent
        if node.name.value in PICKLE_HOOKS and parent is not None and parent.is_class:
            self._classes.pickle_safe.add(parent.node.name.value)  # type: ignore[union-attr]
        if node.name.value == "__getitem__" and parent is not None and parent.is_class:
            self._classes.datasets.add(parent.node.name.value)  # type: ignore[union-attr]

    def _in_main_guard(self) -> bool:
        return self.model.scope is self.model.module_scope and any(_is_main_guard(node.test) for node in self.model.ifs)

    def _crosses(self, node: cst.Call) -> bool:
        """A call that sends objects to another process: a DataLoader only with workers."""
        if self.model.qualified(node.func) in DATALOADER:
            workers = argument_for(node, DATALOADER, "num_workers")
            started = workers is not None and not (isinstance(workers.value, cst.Integer) and workers.value.value == "0")
            return started and not self._workers_fork()
        return crosses_process_boundary(node, self.model)

    # -- the defaultdicts, and where values leave their function ------------------------

    def visit_Call(self, node: cst.Call) -> None:
        factory = self._lambda_factory(node)
        if factory is not None:
            self_class = self.model.frame.self_class
            owner = self_class.name.value if self_class is not None else None
            frame = self.model.function
            function = frame.node.name.value if frame is not None else None  # type: ignore[union-attr]
            self._candidates.append(
                _Candidate(node, factory, self.model.scope, self.definitions.in_function, owner, function)
            )
        if crosses_process_boundary(node, self.model):
            for arg in node.args:
                self._escapes(arg.value, sent=True)
        if not self._boundary and self._crosses(node):
            self._boundary = True
        qualified = self.model.qualified(node.func)
        if qualified in ("copyreg.pickle", "copy_reg.pickle") and node.args and isinstance(node.args[0].value, cst.Name):
            self._classes.pickle_safe.add(node.args[0].value.value)  # `copyreg.pickle(Vocab, reduce_vocab)`

    def visit_Assign(self, node: cst.Assign) -> None:
        targets = [target.target for target in node.targets]
        self._assigned(targets, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assigned([node.target], node.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._escapes(node.value, returned=True)
            if isinstance(node.value, cst.Call):
                self._exit(id(node.value)).returned = True
            elif isinstance(node.value, cst.Name) and self.model.scope.owner(node.value.value) is not None:
                self._exit((id(self.model.scope.owner(node.value.value)), node.value.value)).returned = True

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self._escapes(node.value)

    def _assigned(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> None:
        for target in targets:  # a patch: `Vocab.__getstate__ = ...`, `Vocab.__reduce__ = ...`
            if isinstance(target, cst.Attribute) and target.attr.value in PICKLE_HOOKS and isinstance(target.value, cst.Name):
                self._classes.pickle_safe.add(target.value.value)
        if isinstance(value, cst.Call) and targets:
            self._targets[id(value)] = dotted_name(targets[0]) or ""
        self_name = self.model.frame.self_name
        if self_name is not None and targets and all(_stores_on_self(t, self_name) for t in targets):
            self._escapes(value, on_self=True)
        elif len(targets) == 1 and isinstance(targets[0], cst.Name) and (self.definitions.in_function or self._in_main_guard()):
            # A local, or a temporary of the script's `__main__` block: it leaves only if passed on.
            if isinstance(value, cst.Call) and self._lambda_factory(value) is not None:
                self._local_of[id(value)] = (id(self.model.scope), targets[0].value)
        elif self.model.scope is self.model.module_scope or any(_stores_on_attribute(t) for t in targets):
            self._escapes(value)

    def _escapes(self, expr: cst.BaseExpression, *, on_self: bool = False, sent: bool = False, returned: bool = False) -> None:
        for value in contained_values(expr):
            if isinstance(value, cst.Call):
                exits = self._exit(id(value))
                if on_self:
                    exits.on_self = True
                else:
                    exits.escapes = True
                if sent and isinstance(value.func, cst.Name):
                    self._classes.sent.add(value.func.value)  # `torch.save(Stats(), ...)`
            elif isinstance(value, cst.Name) and self.model.scope.owner(value.value) is not None:
                exits = self._exit((id(self.model.scope.owner(value.value)), value.value))
                exits.escapes = True
            else:
                continue
            exits.sent = exits.sent or sent
            exits.stored = exits.stored or not returned

    def _exit(self, key: int | tuple[int, str]) -> _Exits:
        exits = self._exits.get(key)
        if exits is None:
            exits = self._exits[key] = _Exits()
        return exits

    def _exits_of(self, candidate: _Candidate) -> _Exits:
        """How the dict leaves its function: by its call, or through the local name bound to it."""
        call = self._exits.get(id(candidate.call), _Exits())
        local = self._local_of.get(id(candidate.call))
        name = self._exits.get(local, _Exits()) if local is not None else _Exits()
        return _Exits(
            escapes=call.escapes or name.escapes,
            on_self=call.on_self,
            sent=call.sent or name.sent,
            returned=call.returned or (name.returned and not name.stored),
            stored=call.stored,
        )

    def _lambda_factory(self, call: cst.Call) -> cst.Lambda | None:
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        factory = call.args[0].value
        if not isinstance(factory, cst.Lambda) or self.model.qualified(call.func) not in DEFAULTDICT:
            return None
        return factory

    # -- named factories ------------------------------------------------------------

    def named_factory(self, value: cst.BaseExpression, scope: Scope) -> tuple[cst.BaseExpression, tuple[str, ...]]:
        """A module-level `def _default_<value>(): return <value>` (added once per file by
        the fixer, or one the file already has) and its name."""
        body = _code(value)
        statement = f"def {{name}}():\n    return {body}\n"
        base = f"_default_{_slug(value)}"
        name, number = base, 1
        while True:
            existing = self._factories.get(name)
            if existing is None:
                existing = _returned_code(self.model.module, name)
            if existing == body:
                break
            if existing is None and scope.owner(name) is None:
                self._factories[name] = body
                break
            number += 1
            name = f"{base}_{number}"
        return cst.Name(name), (statement.format(name=name),)

    # -- decisions ------------------------------------------------------------------

    def _safe_class(self, name: str | None, seen: frozenset[str] = frozenset()) -> bool:
        """The class (or a same-module base) controls its own pickling."""
        if name is None or name in seen:
            return False
        classes = self._classes
        return name in classes.pickle_safe or any(self._safe_class(base, seen | {name}) for base in classes.bases.get(name, ()))

    def _carries_data(self, name: str | None, seen: frozenset[str] = frozenset()) -> bool:
        """The class is what workers or ranks receive: a Dataset (or has `__getitem__`), a
        vocabulary-like name, an instance this module sends, or a same-module base of such."""
        if name is None or name in seen or STAYS_HOME.search(name):
            return False
        if name in self._classes.datasets or name in self._classes.sent or DATA_NAME.search(name):
            return True
        return any(self._carries_data(base, seen | {name}) for base in self._classes.bases.get(name, ()))

    def _travels(self, candidate: _Candidate) -> bool:
        """Evidence that the dict reaches another process: it is passed to a process boundary;
        or it is stored on an object that travels; or it leaves its function under a name
        that says it is data workers receive."""
        exits = self._exits_of(candidate)
        if exits.sent:
            return True
        if exits.on_self:
            if self._safe_class(candidate.owner):
                return False
            if candidate.owner in self._classes.sent or self._objects_sent(candidate):
                return True
            return self._carries_data(candidate.owner) and self._workers_may_start()
        fate = self._fate(candidate, exits) if exits.escapes else None
        if fate is not None:
            if fate.sent:
                candidate.sent_by_caller = fate.where
            return fate.sent and (not fate.dataset or self._workers_may_start())
        names = (candidate.function or "", self._targets.get(id(candidate.call), ""))
        return exits.escapes and any(DATA_NAME.search(name) for name in names) and self._workers_may_start()

    def _workers_may_start(self) -> bool:
        """A dataset or vocabulary reaches DataLoader workers only where the code that uses it
        starts some: False when this module and every module importing it (three imports up)
        are read and none passes `num_workers` (or `dataloader_num_workers`) anything but a
        literal 0, nor hands a DataLoader `**` options or its workers by position. A text
        linted alone knows nothing of that."""
        project = self.model.project
        if project is None:
            return True
        program = project.program
        return not self._workers_fork() and any(_module_starts_workers(program, module) for module in project.users)

    def _workers_fork(self) -> bool:
        """DataLoader workers fork and receive the dataset without pickling: every Python the
        project names for its runs is older than 3.14 (Linux's default start method became
        forkserver there) and this module chooses no start method or context."""
        project = self.model.project
        source = self.model.source
        return (
            project is not None and project.runs_python_before(14)
            and "set_start_method" not in source and "multiprocessing_context" not in source
        )

    def _objects_sent(self, candidate: _Candidate) -> bool:
        """The program's callers send the objects of the dict's class to another process
        (`mp.spawn(worker, args=(metric,))`) or store them on a Dataset (`self.charmap =
        CharMap(chars)` in a Dataset's `__init__`)."""
        project = self.model.project
        if project is None or candidate.owner is None or STAYS_HOME.search(candidate.owner):
            return False
        fate = Fates(project.program).result_fate(project.module, f"{candidate.owner}.__init__")
        if fate is None or not fate.sent or fate.dataset and not self._workers_may_start():
            return False
        candidate.held_by = f"its {candidate.owner} objects go to {fate.where}"
        return True

    def _fate(self, candidate: _Candidate, exits: _Exits):
        """For a dict that leaves its function only by `return`: what the program's callers do
        with it (ddplint.model.values.Values.result_fate), or None when unknown."""
        project = self.model.project
        returned_only = exits.returned and not exits.on_self and not exits.stored
        if project is None or candidate.function is None or not returned_only:
            return None
        key = f"{candidate.owner}.{candidate.function}" if candidate.owner else candidate.function
        return Fates(project.program).result_fate(project.module, key)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._is_script and not self._boundary:
            return  # a script that starts no process and pickles nothing: the dict never travels
        for candidate in self._candidates:
            if not self._travels(candidate):
                continue
            fixed = _Factories(self, candidate).replacement()
            where = candidate.sent_by_caller
            message = f"{self.message} (returned to a caller that passes it to {where})" if where else None
            if candidate.held_by:
                message = f"{self.message} ({candidate.held_by})"
            if fixed is None:
                self.report(candidate.call, (message or self.message) + _NO_FIX)
            else:
                expression, imports = fixed
                self.report(candidate.call, message, replace={candidate.factory: expression}, imports=imports)


def _stores_on_self(target: cst.BaseExpression, self_name: str) -> bool:
    while isinstance(target, cst.Subscript):
        target = target.value
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == self_name


def _stores_on_attribute(target: cst.BaseExpression) -> bool:
    while isinstance(target, cst.Subscript):
        target = target.value
    return isinstance(target, cst.Attribute)


# Literals whose builtin type called without arguments returns an equal value.
def _empty_literal_type(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Integer) and expr.evaluated_value == 0:
        return "int"
    if isinstance(expr, cst.Float) and expr.evaluated_value == 0.0:
        return "float"
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)) and expr.evaluated_value in ("", b""):
        return "str" if expr.evaluated_value == "" else "bytes"
    if isinstance(expr, cst.Name) and expr.value == "False":
        return "bool"
    if isinstance(expr, (cst.List, cst.Tuple, cst.Dict)) and not expr.elements:
        return {cst.List: "list", cst.Tuple: "tuple", cst.Dict: "dict"}[type(expr)]
    return None


class _Factories:
    """The picklable equivalent of one lambda factory, or None."""

    def __init__(self, rule: LambdaDefaultFactory, candidate: _Candidate) -> None:
        self.rule = rule
        self.candidate = candidate
        self.scope = candidate.scope

    def replacement(self) -> tuple[cst.BaseExpression, tuple[str, ...]] | None:
        return self._replace(self.candidate.factory)

    def _replace(self, factory: cst.Lambda) -> tuple[cst.BaseExpression, tuple[str, ...]] | None:
        params = factory.params
        if params.params or params.posonly_params or params.kwonly_params or isinstance(
            params.star_arg, cst.Param
        ) or params.star_kwarg is not None:
            return None
        body = factory.body
        builtin = _empty_literal_type(body)
        if builtin is not None and is_builtin(self.scope, builtin):
            return cst.Name(builtin), ()
        if isinstance(body, cst.Call) and self._is_importable(body.func):
            return self._partial(body)
        if self._is_stable(body):
            return self.rule.named_factory(body.with_changes(lpar=(), rpar=()), self.scope)
        return None

    def _partial(self, call: cst.Call) -> tuple[cst.BaseExpression, tuple[str, ...]] | None:
        """`f(args)` called anew each time: `functools.partial(f, args)` when every argument
        is stable, or is itself a lambda factory with a replacement (`defaultdict(lambda: 0)`)."""
        if not call.args:
            return call.func.with_changes(lpar=(), rpar=()), ()
        if not self._imports_usable("functools"):
            return None
        arguments: list[str] = []
        imports = ["import functools"]
        for arg in call.args:
            if arg.star:
                return None
            value = arg.value
            if isinstance(value, cst.Lambda):
                inner = self._replace(value)
                if inner is None:
                    return None
                value = inner[0]
                imports.extend(i for i in inner[1] if i not in imports)
            elif not self._is_stable(value):
                return None
            arguments.append(_code(arg.with_changes(value=value, comma=cst.MaybeSentinel.DEFAULT)))
        return cst.parse_expression(f"functools.partial({_code(call.func)}, {', '.join(arguments)})"), tuple(imports)

    def _imports_usable(self, *modules: str) -> bool:
        for module in modules:
            where = self.scope.owner(module)
            if where is not None and where.bindings[module] != module:
                return False
        return True

    def _is_importable(self, func: cst.BaseExpression) -> bool:
        definitions, module_scope = self.rule.definitions, self.rule.model.module_scope
        return picklable(func, self.scope, definitions, module_scope) is True and self._bound_before(func)

    def _bound_before(self, expr: cst.BaseExpression) -> bool:
        """At module level a name may be bound after the dict is built, which the lambda
        tolerates (it reads the name at call time) and the replacement would not."""
        if self.candidate.in_function:
            return True
        head = expr
        while isinstance(head, cst.Attribute):
            head = head.value
        if not isinstance(head, cst.Name):
            return False
        outer = self.candidate.call.func
        while isinstance(outer, cst.Attribute):
            outer = outer.value
        return is_builtin(self.scope, head.value) or (isinstance(outer, cst.Name) and outer.value == head.value)

    def _is_stable(self, expr: cst.BaseExpression) -> bool:
        """An immutable value, or a name that refers to the same object whenever it is read."""
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
            return True
        if isinstance(expr, cst.ConcatenatedString):
            return isinstance(expr.evaluated_value, (str, bytes))
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return isinstance(expr.expression, (cst.Integer, cst.Float, cst.Imaginary))
        if isinstance(expr, cst.Tuple):
            return all(
                isinstance(element, cst.Element) and self._is_stable(element.value) for element in expr.elements
            )
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return True
            where = self.scope.owner(expr.value)
            if where is None:
                return is_builtin(self.scope, expr.value)
            module_scope = self.rule.model.module_scope
            if where is not module_scope or not self._bound_before(expr):
                return False
            bound_once = where.bindings[expr.value] is not None or where.constants.get(expr.value) is not None
            return bound_once or expr.value in self.rule.definitions.module_level
        if isinstance(expr, cst.Attribute):
            return self._is_importable(expr)
        return False


def _slug(value: cst.BaseExpression) -> str:
    """A name for what a factory returns: "<unk>" -> unk, UNK_ID -> unk_id, -1 -> minus_1."""
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)) and isinstance(value.evaluated_value, str):
        text = value.evaluated_value
    else:
        text = _code(value).replace("-", " minus ")
    slug = re.sub(r"\W+", "_", text, flags=re.ASCII).strip("_").lower()[:32].rstrip("_")
    return slug or "value"


def _returned_code(module: cst.Module, name: str) -> str | None:
    """What a module-level `def name(): return <expr>` returns, as code; "" for another
    binding of `name` at module level; None when the module does not define it."""
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            body = statement.body.body
            if (
                not statement.params.params
                and len(body) == 1
                and isinstance(body[0], cst.SimpleStatementLine)
                and isinstance(body[0].body[0], cst.Return)
                and body[0].body[0].value is not None
            ):
                return _code(body[0].body[0].value)
            return ""
    return None


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=()).code_for_node(node)


# -- questions only this rule asks of the program model -------------------------------------

_WORKER_KEYWORDS = frozenset(("num_workers", "dataloader_num_workers"))
_WORKERS_POSITION = 5  # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)


def _module_starts_workers(program, module: str) -> bool:
    """Whether some call in `module` may start DataLoader workers (see _workers_may_start); read
    once per program (the texts a program reads do not change while it lives)."""
    key = ("starts workers", module)
    if key not in program.memos.read:
        text = None if program.is_text(module) else program.read(module)
        if text is None:
            found = True  # a module not read (or a text alone) may start them
        elif "workers" not in text and "DataLoader" not in text:
            found = False
        else:
            tree = program.tree(module, text)
            found = tree is None or any(_may_start_workers(node) for node in ast.walk(tree) if isinstance(node, ast.Call))
        program.memos.read[key] = found
    return program.memos.read[key]


def _may_start_workers(call: ast.Call) -> bool:
    for keyword in call.keywords:
        if keyword.arg in _WORKER_KEYWORDS:
            return not (isinstance(keyword.value, ast.Constant) and keyword.value.value in (0, None))
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name != "DataLoader":
        return False
    return any(keyword.arg is None for keyword in call.keywords) or len(call.args) > _WORKERS_POSITION

# Calls that read a value in place (log it, measure it, copy its items): the object, and the
# factory a defaultdict holds, stay where they are.
_READING_CALLS = frozenset((
    "print", "len", "sorted", "list", "dict", "set", "tuple", "str", "repr", "format", "sum", "max", "min",
    "info", "debug", "warning", "error", "log", "update", "items", "keys", "values",
))
_MAX_CALLERS_DEPTH = 3  # returns followed up through callers; deeper is unknown


@dataclass(frozen=True)
class Fate:
    """Where a function's result goes: `sent` to another process (pickled) by `where` ("spawn at
    train.py:12"), or kept in place (`where` the call that keeps it)."""

    sent: bool
    where: str
    dataset: bool = False  # sent only as part of a Dataset: pickled where DataLoader workers start


class Fates:
    """What the callers of a project function do with its result, over the solved program."""

    def __init__(self, program) -> None:
        self.program = program

    def result_fate(self, module: str, key: str, depth: int = 0) -> Fate | None:
        """What the callers of function `key` of `module` do with what it returns: sent, when
        one passes it (or returns it to a caller that passes it) to a call that pickles it;
        kept, when every call in the project is found and each only reads it in place; None
        when unknown (no caller found, or one hands it on, stores it, or returns it further
        than followed)."""
        program, kept = self.program, []
        if depth > _MAX_CALLERS_DEPTH or program.summary(module) is None:
            return None
        for caller in [module, *program.importers_of(module)]:
            summary = program.summary(caller)
            if summary is None:
                return None
            for name, function in summary.functions.items():
                for call in function.invocations:
                    found = program.resolve(caller, call.callee, function.cls)
                    if found is None or found.function != (module, key):
                        continue
                    fate = self._fate_at(caller, name, function, CallResult(call.callee, call.line), depth)
                    if fate is None or fate.sent:
                        return fate
                    kept.append(fate.where)
        if all(program.is_text(name) for name in program.modules()):
            return None  # a text linted alone: its callers elsewhere are unknown
        return Fate(False, kept[0]) if kept else None

    def _fate_at(self, module: str, key: str, function: FunctionSummary, result: CallResult, depth: int) -> Fate | None:
        """What function `key` does with `result` (a call's result as its summary writes it)."""
        program = self.program
        for send in function.escapes.sends:
            if result in send.sent:
                where = program.values.sent_at(module, send.callee)
                if where is not None:
                    return Fate(True, f"{where} at {program.place(module, send.line)}")
        if result in function.returns:
            return self.result_fate(module, key, depth + 1)
        if result in function.sets.values() and function.cls and self.dataset(module, function.cls):
            return Fate(True, f"the Dataset {function.cls} (stored at {program.place(module, result.line)})", dataset=True)
        if result in function.sets.values() or result in function.escapes.stores:
            return None
        for call in function.calls:
            if (result in call.args or result in call.keywords.values()) and call.callee.rpartition(".")[2] not in _READING_CALLS:
                made = program.resolve(module, call.callee, function.cls)
                if made is not None and made.bound and self._kept_by_dataset(made, call.args, call.keywords, result):
                    return Fate(True, f"the Dataset {made.key.rpartition('.')[0]} at {program.place(module, call.line)}", dataset=True)
                return None
        return Fate(False, str(program.place(module, result.line)))

    def _kept_by_dataset(self, made, args: tuple, keywords: dict, result: CallResult) -> bool:
        """The `__init__` `made` reaches is a Dataset's, and stores on `self` the parameter that
        gets `result` (`TranslationDataset(pairs, src_index)` keeping `self.src_index = src_index`)."""
        cls, _, method = made.key.rpartition(".")
        init = self.program.function(made.module, made.key)
        if method != "__init__" or init is None or not self.dataset(made.module, cls):
            return False
        params = init.params[1:]
        given = [params[i] for i, arg in enumerate(args) if arg == result and i < len(params)]
        given += [name for name, arg in keywords.items() if arg == result]
        return any(Param(name) in init.sets.values() for name in given)

    def dataset(self, module: str, cls: str) -> bool:
        """Class `cls` of `module` is a Dataset: a base named `Dataset` or `IterableDataset`, or
        a `__getitem__`. DataLoader workers receive it."""
        summary = self.program.summary(module)
        record = summary.classes.get(cls) if summary is not None else None
        if record is None:
            return False
        bases = {base.rpartition(".")[2] for base in record.bases}
        return bool(bases & {"Dataset", "IterableDataset"}) or f"{cls}.__getitem__" in summary.functions  # type: ignore[union-attr]
