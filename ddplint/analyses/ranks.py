"""Which code runs on which ranks: rank tests, rank-0-only regions, same-module call sites.

Shared by the rules about ranks (DDP008 collectives only rank 0 reaches, DDP014 saves every
rank reaches). Names are matched by convention (`rank`, `local_rank`, `is_main_process()`,
`accelerator.is_main_process`, `trainer.is_global_zero`): these are the spellings real
training scripts use, and no import tells them apart from other values.

A test is described by what its outcome says about the rank, in a distributed run:
`true_only_zero` (true implies rank 0), `true_never_zero` (true implies rank != 0) and the same
for false. `not args.distributed` is false in every distributed run, so both of its "true"
facts hold vacuously: a region can be both "only rank 0" and "never rank 0", which means no
rank of a distributed run reaches it.

With model parallelism (Megatron's `mpu`, fairscale) a process has a rank in each dimension of
the job: its data-parallel rank says which copy of the model it trains, its tensor- and
pipeline-parallel ranks which part of that copy it holds. `mpu.get_data_parallel_rank() == 0`
is true on one process of each copy's position, the first replica: a test's
`true_first_replica` (and `false_first_replica`) fact, which every rank-0 test implies. It is
what a save needs (one writer among the copies of the same part), not what a collective needs
(the other replicas still wait), so only the rules that ask for it read it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst

from ddplint.semantic.edits import argument_at, argument_for
from ddplint.semantic.model import Analysis, SemanticModel, dotted_name
from ddplint.semantic.walk import NodeMemo, children, descendants, nodes_under
from ddplint.core.fixpoint import fixed_point
from ddplint.prefilter.screens import RankZeroCalls
from ddplint.core.torch_api import (
    ACCELERATOR, ACCELERATOR_SHARDING_PLUGINS, COLLECTIVES, CURRENT_DEVICE, DDP, DISTRIBUTED_IS_AVAILABLE, DISTRIBUTED_SAMPLER, distributed_flag, GET_RANK, GROUP_STARTS,
    INIT_PROCESS_GROUP, PROCESS, RANK_ENVIRONMENT, STATE_GATHERING,
    SAME_VALUE_METHODS, SPAWN, START_PROCESSES, TRAINING_ARGS_NAMES, TRAINING_ARGS_SHOULD_SAVE,
)


RANK_NAMES = frozenset(
    {
        "rank", "local_rank", "global_rank", "rank_id", "world_rank", "process_rank", "proc_rank",
        "my_rank", "ddp_rank", "ddp_local_rank", "process_index", "local_process_index", "dist_rank",
        "distributed_rank",
    }
)
# Calls that only a distributed run makes (without a process group they raise; a state dict's
# gathering from an FSDP model or a DCP helper runs in one process too)
_NEEDS_GROUP = frozenset((*DISTRIBUTED_SAMPLER, *DDP, *GET_RANK, *COLLECTIVES.keys() - STATE_GATHERING.keys()))
# The global rank as the job schedulers and MPI launchers that start one process per task name
# it (`int(os.environ["SLURM_PROCID"])` under srun): a rank's value, unlike RANK_ENVIRONMENT no
# sign that a launcher of torch started the process (a one-task srun job sets it too).
SCHEDULER_RANKS = frozenset({"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})
RANK_FUNCTIONS = frozenset({"get_rank", "get_local_rank", "get_global_rank", "get_world_rank", "get_ordinal", "Get_rank"})
# The dimensions of a rank the rules tell apart (`rank_dimension`): the rank in the whole job,
# the data-parallel rank (which copy of the model), and a rank inside one copy (tensor,
# pipeline, expert, context or sequence parallel), by the words real code names them with:
# `mpu.get_data_parallel_rank()`, `dp_rank`, `get_pipeline_model_parallel_rank()`, `mp_rank`.
GLOBAL, DATA, MODEL = "global", "data", "model"
REPLICA_DIMENSIONS = frozenset({GLOBAL, DATA})  # a rank of one of these tells the model's copies apart
_DATA_WORDS = frozenset({"data", "dp", "replica"})
_MODEL_WORDS = frozenset(
    {"tensor", "tp", "pipeline", "pipe", "pp", "model", "mp", "expert", "ep", "context", "cp", "sequence", "sp"}
)
# Megatron's dist-checkpointing test of a replica id: true on the first data-parallel replica.
REPLICA_PREDICATES = frozenset({"is_main_replica"})
REPLICA_IDS = frozenset({"replica_id", "replica_rank"})
MAIN_PROCESS_NAMES = frozenset(
    {
        "is_main_process", "is_local_main_process", "main_process", "is_main", "is_main_rank",
        "is_master", "is_master_process", "master_process", "is_local_master", "is_rank_zero",
        "is_rank_0", "rank_zero", "is_global_zero", "is_world_process_zero", "is_local_process_zero",
        "is_primary", "is_chief", "rank0_only", "is_rank0", "is_master_ordinal",
    }
)
# Text that every rank test above contains. Plain substrings (a case-insensitive regex cost
# 3.7 s over the 5,000-file benchmark corpus; these cost milliseconds). Not "main" or "zero"
# alone: `__main__` and `torch.zeros` are everywhere.
RANK_GUARD_NEEDLE = (
    "rank", "Rank", "RANK", "is_main", "main_process", "master", "Master", "MASTER",
    "global_zero", "process_zero", "is_primary", "is_chief", "get_ordinal", "process_index", TRAINING_ARGS_SHOULD_SAVE,
)
RANK_ZERO_DECORATORS = frozenset(
    {"rank_zero_only", "rank0_only", "main_process_only", "master_only", "on_main_process", "main_process", "master_process_only"}
)
WORLD_SIZE_NAMES = frozenset({"world_size", "num_replicas", "num_processes", "get_world_size"})
_SECTION_SWITCHES = frozenset({"data_parallel", "enabled", "enable", "use", "on", "active"})
DISTRIBUTED_PREDICATES = frozenset({"is_initialized", "is_dist_avail_and_initialized", "is_distributed"})
# `is_available` alone is torch.cuda's as often as torch.distributed's.
DISTRIBUTED_AVAILABLE = frozenset({"dist.is_available", "distributed.is_available", *DISTRIBUTED_IS_AVAILABLE})


def rank_zero_calls(targets: Iterable[str], wrappers: Iterable[str], methods: Iterable[str] = ()) -> RankZeroCalls:
    """The `ast` screen (ddplint.prefilter.screens.RankZeroCalls) for calls of `targets` or of
    `methods` (or of the forward of a model of `wrappers`) that rank 0 alone may reach, with the
    words of the rank tests `classify` reads."""
    return RankZeroCalls(
        targets=tuple(sorted(targets)), wrappers=tuple(sorted(wrappers)), names=tuple(sorted(RANK_NAMES)),
        predicates=tuple(sorted(MAIN_PROCESS_NAMES | {TRAINING_ARGS_SHOULD_SAVE})), functions=tuple(sorted(RANK_FUNCTIONS)),
        keys=tuple(sorted(RANK_ENVIRONMENT)), decorators=tuple(sorted(RANK_ZERO_DECORATORS)),
        methods=tuple(sorted(methods)), starts=tuple(sorted(INIT_PROCESS_GROUP)),
    )

@dataclass(frozen=True)
class RankTest:
    true_only_zero: bool = False
    false_only_zero: bool = False
    true_never_zero: bool = False
    false_never_zero: bool = False
    # true (false) implies the first data-parallel replica; implied by the "only zero" facts
    true_first_replica: bool = False
    false_first_replica: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "true_first_replica", self.true_first_replica or self.true_only_zero)
        object.__setattr__(self, "false_first_replica", self.false_first_replica or self.false_only_zero)

    def negated(self) -> RankTest:
        return RankTest(
            self.false_only_zero, self.true_only_zero, self.false_never_zero, self.true_never_zero,
            self.false_first_replica, self.true_first_replica,
        )

    @property
    def is_rank_test(self) -> bool:
        return self != UNKNOWN


@dataclass(frozen=True)
class RankValue:
    """What a name or call holds when it is a rank itself (`r = dist.get_rank()`, a helper
    `def rank(): return dist.get_rank() if initialized() else 0`), not a test: `dimension` is
    GLOBAL, DATA or MODEL. A resolver (`Resolver`) answers it; `classify` compares it."""

    dimension: str


UNKNOWN = RankTest()
ZERO = RankTest(true_only_zero=True, false_never_zero=True)  # rank == 0
NONZERO = ZERO.negated()  # rank != 0
POSITIVE = RankTest(true_never_zero=True)  # rank == 3: true only off rank 0, false says nothing
NOT_DISTRIBUTED = RankTest(true_only_zero=True, true_never_zero=True)  # false in a distributed run
DISTRIBUTED = NOT_DISTRIBUTED.negated()
FIRST_REPLICA = RankTest(true_first_replica=True)  # dp_rank == 0


def last_name(expr: cst.BaseExpression) -> str | None:
    """`b` for `a.b`, `a.b()`, `b`; None for anything else."""
    # These helpers are asked of nearly every expression: `type(...) is`, as in dotted_name (no
    # concrete libcst node class has subclasses; `isinstance` goes through ABCMeta's check).
    if type(expr) is cst.Call:
        expr = expr.func  # type: ignore[attr-defined]
    kind = type(expr)
    if kind is cst.Attribute:
        return expr.attr.value  # type: ignore[attr-defined]
    if kind is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    return None


def _int_value(expr: cst.BaseExpression) -> int | None:
    """An integer literal, negated or not, or a string of one: the launcher's variables are
    strings (`os.environ.get("RANK", "0") == "0"`)."""
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.SimpleString) and isinstance(expr.evaluated_value, str) and expr.evaluated_value.lstrip("-").isdigit():
        return int(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _int_value(expr.expression)
        return None if inner is None else -inner
    return None


def environment_key(expr: cst.BaseExpression) -> str | None:
    """`"RANK"` for `os.environ["RANK"]`, `os.environ.get("RANK", 0)`, `os.getenv("RANK")`."""
    if type(expr) is cst.Subscript and dotted_name(expr.value) in ("os.environ", "environ"):  # type: ignore[attr-defined]
        index = expr.slice[0].slice if len(expr.slice) == 1 else None
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return index.value.evaluated_value  # type: ignore[return-value]
    if type(expr) is cst.Call and expr.args and dotted_name(expr.func) in ("os.environ.get", "os.getenv", "environ.get", "getenv"):  # type: ignore[attr-defined]
        first = expr.args[0].value
        if isinstance(first, cst.SimpleString):
            return first.evaluated_value  # type: ignore[return-value]
    return None


def _launcher_variable_set(left: cst.BaseExpression, operator: cst.BaseCompOp, right: cst.BaseExpression) -> bool:
    """`"RANK" in os.environ` (or `not in`; LOCAL_RANK, WORLD_SIZE): the variables torchrun and
    torch.distributed.launch set in every process they start, and nothing sets in a plain run."""
    return (
        isinstance(operator, (cst.In, cst.NotIn)) and isinstance(left, cst.SimpleString)
        and left.evaluated_value in (*RANK_ENVIRONMENT, "WORLD_SIZE") and dotted_name(right) in ("os.environ", "environ")
    )


def strip_int(expr: cst.BaseExpression) -> cst.BaseExpression:
    while type(expr) is cst.Call and dotted_name(expr.func) == "int" and len(expr.args) == 1:  # type: ignore[attr-defined]
        expr = expr.args[0].value
    return expr


def is_rank_expression(expr: cst.BaseExpression) -> bool:
    """`expr` reads the process's rank in the job (GLOBAL), by its name."""
    return rank_dimension(expr) == GLOBAL


def rank_dimension(expr: cst.BaseExpression) -> str | None:
    """Which rank `expr` reads, by its name: GLOBAL (`rank`, `args.local_rank`, `get_rank()`,
    `rank()`, `os.environ["RANK"]` or `["SLURM_PROCID"]`, a configuration's `opt["rank"]`, `rank % gpus_per_node`),
    DATA (`mpu.get_data_parallel_rank()`, `dp_rank`, `replica_id`) or MODEL
    (`get_tensor_model_parallel_rank()`, `pp_rank`, `mp_rank`); None for anything else."""
    expr = strip_int(expr)
    kind = type(expr)
    if kind is cst.BinaryOperation and type(expr.operator) is cst.Modulo:  # type: ignore[attr-defined]
        return GLOBAL if rank_dimension(expr.left) == GLOBAL else None  # the local rank
    if kind is cst.Call:
        name = last_name(expr) or ""
        if name in RANK_FUNCTIONS or name in RANK_NAMES or environment_key(expr) in (*RANK_ENVIRONMENT, *SCHEDULER_RANKS):
            return GLOBAL
        return _parallel_dimension(name)
    if kind is cst.Subscript:
        if environment_key(expr) in (*RANK_ENVIRONMENT, *SCHEDULER_RANKS):
            return GLOBAL
        key = (_string_key(expr) or "").lower()  # type: ignore[arg-type]
        return GLOBAL if key in RANK_NAMES else _parallel_dimension(key)
    if kind is cst.Name or kind is cst.Attribute:
        name = last_name(expr) or ""
        return GLOBAL if name.lower() in RANK_NAMES else _parallel_dimension(name)
    return None


@functools.lru_cache(maxsize=4096)
def _parallel_dimension(name: str) -> str | None:
    """DATA or MODEL for the name of a model-parallel job's rank (`get_data_parallel_rank`,
    `pprank`), by the words before "rank"; None for other names, or one with words of both."""
    lowered = name.lower()
    if lowered in REPLICA_IDS:
        return DATA
    head, found, _ = lowered.removeprefix("get_").partition("rank")
    words = set(re.split(r"[^a-z]+", head)) if found else set()
    data, model = bool(words & _DATA_WORDS), bool(words & _MODEL_WORDS)
    return DATA if data and not model else MODEL if model and not data else None


def _string_key(expr: cst.Subscript) -> str | None:
    index = expr.slice[0].slice if len(expr.slice) == 1 else None
    value = index.value if isinstance(index, cst.Index) else None
    return value.evaluated_value if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str) else None


def mentions_rank(expr: cst.CSTNode, per_rank: set[str] | frozenset[str] = frozenset()) -> bool:
    """The expression names a rank somewhere (`f"ckpt_{rank}.pt"`, `path_for(current_rank)`,
    a variable in `per_rank`, assigned from such an expression): one file per rank."""
    names: frozenset = _names_in.get(expr, None, lambda: _dotted_names(expr))  # type: ignore[assignment]
    read = names & per_rank if per_rank else frozenset()
    return _mentions.get(expr, read, lambda: _mentions_rank(expr, read))  # type: ignore[return-value]


def _mentions_rank(expr: cst.CSTNode, per_rank: frozenset[str]) -> bool:
    pending = [expr]
    while pending:  # asked of every assigned value by DDP004 and DDP014: kept cheap
        node = pending.pop()
        kind = type(node)
        if kind is cst.Name or kind is cst.Attribute:
            name = dotted_name(node)  # type: ignore[arg-type]
            last = (last_name(node) or "").lower()  # type: ignore[arg-type]
            if name in per_rank or "rank" in last or last in RANK_NAMES:
                return True
        elif (kind is cst.Call or kind is cst.Subscript) and is_rank_expression(node):  # type: ignore[arg-type]
            return True
        pending.extend(children(node))
    return False


# rank_mentions' and mentions_rank's answers, by the expression and what `per_rank` says of
# the names in it (DDP004 and DDP014 ask of every assigned value on every lint), and the names
# each expression holds
_mentioned = NodeMemo()
_mentions = NodeMemo()
_names_in = NodeMemo()


def rank_mentions(expr: cst.CSTNode, per_rank: dict[str, frozenset[str]] | None = None) -> frozenset[str]:
    """The dimensions (`rank_dimension`) of the ranks `expr` names, and of the names in
    `per_rank` it reads (each bound to a value naming such ranks): `f"ckpt_{rank}.pt"` names a
    GLOBAL rank, `f"model_pp{mpu.get_pipeline_model_parallel_rank()}.pt"` only a MODEL one.
    A name holding "rank" of no known dimension (`args.node_rank`) counts as GLOBAL."""
    names: frozenset = _names_in.get(expr, None, lambda: _dotted_names(expr))  # type: ignore[assignment]
    read = frozenset((name, per_rank[name]) for name in names if name in per_rank) if per_rank else frozenset()
    return _mentioned.get(expr, read, lambda: _rank_mentions(expr, dict(read)))  # type: ignore[return-value]


def ranked_attribute_names(model: SemanticModel, name: str, value: cst.BaseExpression | None = None) -> frozenset[str]:
    """The dotted names `<name>.<attribute>` that hold a value made from the process's rank, as
    the program model follows them (ProjectView.ranked_attributes): of `self` in a method of a
    project class (`value` None: `self.checkpoint_fpath`, built from the rank in `__init__`), or
    of a name bound to `value`, a call that builds an object of a project class (`cmanager =
    ClusterManager(rank=args.rank, ...)`: `cmanager.checkpoint_fpath`). A path so named is a
    file of each rank's own. Empty without the program model."""
    project = model.project
    if project is None:
        return frozenset()
    if value is None:
        written = model.frame.self_class.name.value if model.frame.self_class is not None else None
    else:
        written = dotted_name(value.func) if isinstance(value, cst.Call) else None
    held = project.ranked_attributes(written) if written is not None else {}
    return frozenset(f"{name}.{attribute}" for attribute in held)


def _dotted_names(expr: cst.CSTNode) -> frozenset[str]:
    """The dotted names of every name and attribute in `expr`: all that rank_mentions may look up."""
    return frozenset(dotted_name(node) for node in descendants(expr) if type(node) is cst.Name or type(node) is cst.Attribute) - {None}  # type: ignore[arg-type]


def _rank_mentions(expr: cst.CSTNode, per_rank: dict[str, frozenset[str]]) -> frozenset[str]:
    found: set[str] = set()
    pending = [expr]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.Name or kind is cst.Attribute:
            name = dotted_name(node)  # type: ignore[arg-type]
            if per_rank and name in per_rank:
                found |= per_rank[name]
                continue
            dimension = rank_dimension(node)  # type: ignore[arg-type]
            if dimension is None and "rank" in (last_name(node) or "").lower():  # type: ignore[arg-type]
                dimension = GLOBAL
            if dimension is not None:
                found.add(dimension)
                continue
            if kind is cst.Attribute:  # `os.path.join`: the `path` after a dot is no variable
                pending.append(node.value)  # type: ignore[attr-defined]
                continue
        elif kind is cst.Call or kind is cst.Subscript:
            dimension = rank_dimension(node)  # type: ignore[arg-type]
            if dimension is not None:
                found.add(dimension)
                continue
        pending.extend(children(node))
    return frozenset(found)


def _is_world_size(expr: cst.BaseExpression) -> bool:
    expr = strip_int(expr)
    if isinstance(expr, cst.Call) and expr.args:
        return environment_key(expr) == "WORLD_SIZE"
    if isinstance(expr, cst.Subscript):
        return environment_key(expr) == "WORLD_SIZE"
    return isinstance(expr, (cst.Name, cst.Attribute, cst.Call)) and last_name(expr) in WORLD_SIZE_NAMES


_FLIPPED = {
    cst.LessThan: cst.GreaterThan,
    cst.GreaterThan: cst.LessThan,
    cst.LessThanEqual: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThanEqual,
}


def _never_a_rank(expr: cst.BaseExpression) -> bool:
    """`None`, `"cpu"`: a value no rank of a distributed run holds (a rank is a number, or the
    launcher's string of one), which a membership test may list beside the ranks (`gpu_id in
    {"cpu", 0}`, for a trainer also run on the CPU)."""
    if isinstance(expr, cst.Name):
        return expr.value == "None"
    return isinstance(expr, cst.SimpleString) and _int_value(expr) is None


def _compare_rank(operator: cst.BaseCompOp, value: cst.BaseExpression) -> RankTest:
    if isinstance(operator, (cst.In, cst.NotIn)):
        if not isinstance(value, (cst.Tuple, cst.List, cst.Set)):
            return UNKNOWN
        members = [_int_value(element.value) for element in value.elements if not _never_a_rank(element.value)]
        if None in members:
            return UNKNOWN
        if not members:  # `rank in ("cpu",)`: true in no distributed run
            test = NOT_DISTRIBUTED
        elif 0 in members:
            test = ZERO if all(member <= 0 for member in members) else UNKNOWN  # type: ignore[operator]
        else:
            test = NOT_DISTRIBUTED if all(member < 0 for member in members) else POSITIVE  # type: ignore[operator]
        return test.negated() if isinstance(operator, cst.NotIn) else test
    if isinstance(value, cst.Name) and value.value == "None":  # a rank of a distributed run is a number
        if isinstance(operator, (cst.Is, cst.Equal)):
            return NOT_DISTRIBUTED
        return NOT_DISTRIBUTED.negated() if isinstance(operator, (cst.IsNot, cst.NotEqual)) else UNKNOWN
    number = _int_value(value)
    if number is None:
        return UNKNOWN
    if isinstance(operator, (cst.Equal, cst.Is)):
        return ZERO if number == 0 else NOT_DISTRIBUTED if number < 0 else POSITIVE
    if isinstance(operator, (cst.NotEqual, cst.IsNot)):
        return (ZERO if number == 0 else NOT_DISTRIBUTED if number < 0 else POSITIVE).negated()
    # Ranks of a distributed run are >= 0; -1 means "not distributed".
    if isinstance(operator, cst.LessThan):
        number -= 1
    elif isinstance(operator, cst.GreaterThan):
        number += 1
    if isinstance(operator, (cst.LessThan, cst.LessThanEqual)):  # rank <= number
        return NOT_DISTRIBUTED if number < 0 else ZERO if number == 0 else UNKNOWN
    if isinstance(operator, (cst.GreaterThan, cst.GreaterThanEqual)):  # rank >= number
        return DISTRIBUTED if number <= 0 else NONZERO if number == 1 else POSITIVE
    return UNKNOWN


def _compare_world_size(operator: cst.BaseCompOp, value: cst.BaseExpression) -> RankTest:
    number = _int_value(value)
    if number is None:
        return UNKNOWN
    single = {cst.Equal: number == 1, cst.LessThanEqual: number == 1, cst.LessThan: number == 2}
    several = {cst.NotEqual: number == 1, cst.GreaterThan: number == 1, cst.GreaterThanEqual: number == 2}
    if single.get(type(operator)):
        return NOT_DISTRIBUTED
    if several.get(type(operator)):
        return DISTRIBUTED
    return UNKNOWN


# What a variable, attribute or call holds as a rank test, or None when nothing is known about
# it (then its name decides). A RankTest, UNKNOWN included, is the answer: a same-module
# function whose body tests nothing about the rank is no guard, whatever its name. A RankValue:
# it holds a rank itself (compared, it makes a test).
Resolver = Callable[[cst.BaseExpression], "RankTest | RankValue | None"]


_FACTS = ("only_zero", "never_zero", "first_replica")


def _combined(first: RankTest, second: RankTest, true_facts, false_facts) -> RankTest:
    """A test whose each `true_*` fact is `true_facts` (`any` or `all`) of the two tests' and
    each `false_*` fact `false_facts` of theirs."""
    facts = {}
    for fact in _FACTS:
        for outcome, combine in (("true", true_facts), ("false", false_facts)):
            name = f"{outcome}_{fact}"
            facts[name] = combine((getattr(first, name), getattr(second, name)))
    return RankTest(**facts)


def _conjunction(left: RankTest, right: RankTest) -> RankTest:
    """What `left and right` says: true, whatever either being true says; false, only what
    both being false say."""
    return _combined(left, right, any, all)


def _disjunction(left: RankTest, right: RankTest) -> RankTest:
    return _conjunction(left.negated(), right.negated()).negated()


def _dimension(expr: cst.BaseExpression, resolve: Resolver | None) -> str | None:
    """Which rank `expr` holds: by its name (`rank_dimension`), else by what `resolve` says
    a name or call holds (`r = dist.get_rank()`, a helper that returns the rank)."""
    found = rank_dimension(expr)
    if found is None and resolve is not None and isinstance(expr, (cst.Name, cst.Attribute, cst.Call)):
        held = resolve(expr)
        if isinstance(held, RankValue):
            return held.dimension
    return found


def _of_replicas(test: RankTest) -> RankTest:
    """What `test`, asked of the data-parallel rank instead of the rank, says: its facts
    about rank 0 become facts about the first replica (`dp_rank == 0`); a test true in no
    distributed run (`dp_rank == -1`) stays so."""
    vacuous_true = test.true_only_zero and test.true_never_zero
    vacuous_false = test.false_only_zero and test.false_never_zero
    return RankTest(
        vacuous_true, vacuous_false, vacuous_true, vacuous_false, test.true_only_zero, test.false_only_zero
    )


# classify's answers without a resolver: then the answer is the test's words alone, and the
# rank analysis and the branch analysis each ask of every `if` on every lint.
_classified = NodeMemo()


def classify(test: cst.BaseExpression, resolve: Resolver | None = None) -> RankTest:
    """What the outcome of `test` says about the rank of the process evaluating it.
    `resolve` gives what a variable or attribute holds (`verbose` after `verbose = rank == 0`),
    what a same-module predicate returns, and that a function named without a call is always
    true: see RankFacts."""
    if resolve is not None:
        return _classify(test, resolve)
    return _classified.get(test, None, lambda: _classify(test, None))  # type: ignore[return-value]


def _classify(test: cst.BaseExpression, resolve: Resolver | None) -> RankTest:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return classify(test.expression, resolve).negated()
    if isinstance(test, cst.BooleanOperation):
        left, right = classify(test.left, resolve), classify(test.right, resolve)
        return _conjunction(left, right) if isinstance(test.operator, cst.And) else _disjunction(left, right)
    if isinstance(test, cst.IfExp):  # `is_local_main if local_disk else is_main`: what both say
        return _meet(classify(test.body, resolve), classify(test.orelse, resolve))
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        left, operator, right = test.left, test.comparisons[0].operator, test.comparisons[0].comparator
        if _launcher_variable_set(left, operator, right):  # `"RANK" in os.environ`: a launcher started it
            return DISTRIBUTED if isinstance(operator, cst.In) else NOT_DISTRIBUTED
        truth = _compared_with_truth(operator, right)
        if truth is not None:  # `if args.use_ddp is True:` is `if args.use_ddp:`
            said = classify(left, resolve)
            return said if truth else said.negated()
        if _holds_launcher(left) and isinstance(right, cst.Name) and right.value == "None" and isinstance(operator, (cst.Is, cst.IsNot)):
            return DISTRIBUTED if isinstance(operator, cst.IsNot) else NOT_DISTRIBUTED
        dimension = _dimension(left, resolve)
        if dimension is None and not _is_world_size(left) and type(operator) in _FLIPPED | {
            cst.Equal: None,
            cst.NotEqual: None,
        }:
            left, right = right, left
            operator = _FLIPPED.get(type(operator), type(operator))()
            dimension = _dimension(left, resolve)
        if dimension == GLOBAL:
            return _compare_rank(operator, right)
        if dimension == DATA:
            return _of_replicas(_compare_rank(operator, right))
        if dimension is None and _is_world_size(left):
            return _compare_world_size(operator, right)
        if dimension is None and resolve is not None:
            held = resolve(test)  # `args.dist == "OFF"` where `if args.dist == "ON":` starts the group
            return held if isinstance(held, RankTest) else UNKNOWN
        return UNKNOWN  # a tensor- or pipeline-parallel rank tells no replica apart
    if _instance_of_no_rank_type(test, resolve):  # `isinstance(device, torch.device)`, device a rank
        return NOT_DISTRIBUTED
    if resolve is not None and isinstance(test, (cst.Name, cst.Attribute, cst.Call)):
        held = resolve(test)
        if isinstance(held, RankValue):
            return NONZERO if held.dimension == GLOBAL else UNKNOWN  # `if rank:`
        if held is not None:
            return held
    name = last_name(test) if isinstance(test, (cst.Name, cst.Attribute, cst.Call)) else None
    if type(test) is cst.Subscript:  # `env["master_process"]`: the flag a set-up helper returned in a dict
        name = _string_key(test)
    if name in MAIN_PROCESS_NAMES or _training_args_should_save(test):
        return ZERO
    if name in REPLICA_PREDICATES and isinstance(test, cst.Call):
        return FIRST_REPLICA
    if environment_key(test) in (*RANK_ENVIRONMENT, "WORLD_SIZE"):
        return DISTRIBUTED  # `if os.environ.get("LOCAL_RANK"):` a string, "0" included: set by a launcher
    if is_rank_expression(test):
        return NONZERO  # `if rank:` is true on every rank but 0
    if (distributed_flag(name) or _section_switch(test) or _holds_launcher(test)) and not isinstance(test, cst.Call):
        return DISTRIBUTED
    if isinstance(test, cst.Call) and (
        name in DISTRIBUTED_PREDICATES or dotted_name(test.func) in DISTRIBUTED_AVAILABLE
    ):
        return DISTRIBUTED
    return UNKNOWN


# Types whose instances hold no rank, as `isinstance` names them: builtins by their name (a rank
# is an int, or the launcher's string of one), and the device, tensor and module classes of torch
# and the array of numpy by an attribute (`torch.device`, `nn.Module`; a bare name may be a
# variable holding a tuple of types, `int` among them).
_NO_RANK_BUILTINS = frozenset({"list", "tuple", "dict", "set", "frozenset", "float", "complex", "bytes"})
_NO_RANK_CLASSES = frozenset({"device", "Tensor", "Module", "ndarray"})


def _instance_of_no_rank_type(test: cst.BaseExpression, resolve: Resolver | None) -> bool:
    """`isinstance(x, T)` where `x` holds a rank and no type of `T` holds one: false in every
    distributed run (DenseTNT's `isinstance(device, torch.device) or device == 0`, `device` the
    spawn index in a distributed run and a torch.device in a run of one process)."""
    if type(test) is not cst.Call or dotted_name(test.func) != "isinstance" or len(test.args) != 2:  # type: ignore[attr-defined]
        return False
    subject, types = test.args[0].value, test.args[1].value  # type: ignore[attr-defined]
    named = [element.value for element in types.elements] if isinstance(types, cst.Tuple) else [types]
    for kind in named:
        if isinstance(kind, cst.Name) and kind.value in _NO_RANK_BUILTINS:
            continue
        if isinstance(kind, cst.Attribute) and kind.attr.value in _NO_RANK_CLASSES:
            continue
        return False
    return _dimension(subject, resolve) is not None


def _compared_with_truth(operator: cst.BaseCompOp, right: cst.BaseExpression) -> bool | None:
    """`is True`, `== True` (True), `is False`, `== False`, `is not True` (False): what a
    comparison with a boolean literal says of its left side; None for any other comparison."""
    if not isinstance(right, cst.Name) or right.value not in ("True", "False"):
        return None
    if isinstance(operator, (cst.Is, cst.Equal)):
        return right.value == "True"
    if isinstance(operator, (cst.IsNot, cst.NotEqual)):
        return right.value == "False"
    return None


def _holds_launcher(expr: cst.BaseExpression) -> bool:
    """`accelerator`, `self.accelerator`: the object a run that Accelerate distributes always
    has (a trainer built without one runs as one process), so `if self.accelerator is not
    None and not self.accelerator.is_main_process: return` leaves rank 0 alone in such a run."""
    return isinstance(expr, (cst.Name, cst.Attribute)) and (last_name(expr) or "").lstrip("_").lower() == "accelerator"


def _section_switch(expr: cst.BaseExpression) -> bool:
    """The switch of a config section for distributed training: `config.distributed.data_parallel`,
    `cfg.ddp.enabled` (a section named as a distributed flag, and a switch word in it)."""
    path = dotted_name(expr) if isinstance(expr, cst.Attribute) else None
    if path is None:
        return False
    *sections, last = path.split(".")
    return last.lower() in _SECTION_SWITCHES and any(distributed_flag(section) for section in sections[1:])


def _training_args_should_save(test: cst.BaseExpression) -> bool:
    """`self.args.should_save`: Hugging Face's TrainingArguments say which process writes
    checkpoints (process 0), read on the object the Trainer keeps them as (`args`,
    `training_args`), not a TrainerControl's `should_save` (when to save)."""
    return (
        isinstance(test, cst.Attribute)
        and test.attr.value == TRAINING_ARGS_SHOULD_SAVE
        and last_name(test.value) in TRAINING_ARGS_NAMES
    )


# What a condition that is a constant says: `if False:` is reached by no rank, so both of its
# "true" facts hold vacuously (and `True`'s "false" facts).
_ALWAYS_FALSE = RankTest(true_only_zero=True, true_never_zero=True)
ALWAYS_TRUE = _ALWAYS_FALSE.negated()
_EVERY_FACT = RankTest(True, True, True, True)


def _meet(first: RankTest, second: RankTest) -> RankTest:
    """The facts that hold whichever of two values a variable holds."""
    return _combined(first, second, all, all)


def _constant_truth(expr: cst.BaseExpression) -> bool | None:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return expr.value == "True"
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0) != 0
    return None


@functools.lru_cache(maxsize=4096)
def _passed_expression(text: str) -> cst.BaseExpression:
    """An argument's text as a call passes it, parsed once (read by its words alone: the rank
    analysis asks on every lint, and a libcst node never changes)."""
    return cst.parse_expression(text)


def _held_rank(values: list, resolve: Resolver | None, unknown: tuple) -> RankValue | None:
    """The rank a variable holds when every value it is assigned is a rank of one dimension
    (`data_parallel_rank = mpu.get_data_parallel_rank()`), or 0 where no process group runs;
    `unknown`: the markers of a binding whose value is not known (then None), or that no rank
    of a distributed run makes (left out)."""
    dimensions = set()
    for value in values:
        if value is unknown[0]:
            return None
        if value is unknown[1]:
            continue
        value, resolved_by = value if isinstance(value, tuple) else (value, resolve)
        if _is_zero(value):
            continue
        dimension = _dimension(value, resolved_by)
        if dimension is None:
            return None
        dimensions.add(dimension)
    return RankValue(dimensions.pop()) if len(dimensions) == 1 else None


def _is_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and _int_value(expr) == 0


def returned_rank(function: cst.FunctionDef, resolve: Resolver | None = None) -> RankValue | None:
    """The rank a call of `function` gives when every `return` of its body gives a rank of one
    dimension, or 0 where no process group runs: `def rank(): return dist.get_rank() if
    initialized() else 0`, `return self._rank`; None otherwise."""
    branches = _returned_branches.get(function.body, None, lambda: _returned_values(function.body))
    return _held_rank(list(branches), resolve, (object(), object())) if branches else None  # type: ignore[arg-type]


# the values each function body returns, kept across lints (the rank analysis judges a
# function of the file tested through what it returns on every lint: Megatron-DeepSpeed's
# 178-line train())
_returned_branches = NodeMemo()


def _returned_values(body: cst.BaseSuite) -> tuple[cst.BaseExpression, ...] | None:
    """The values the returns of `body` give (each branch of a conditional expression apart),
    outside nested definitions; None where one returns nothing."""
    values: list = []
    pending: list[cst.CSTNode] = [body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Return):
            if node.value is None:
                return None
            values.append(node.value)
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(children(node))
    branches: list = []
    while values:
        value = values.pop()
        if isinstance(value, cst.IfExp):
            values += [value.body, value.orelse]
        else:
            branches.append(value)
    return tuple(branches)


def judge_function(function: cst.FunctionDef, resolve: Resolver | None) -> RankTest | RankValue | None:
    """What a call of `function` gives, from its body: the rank it returns (`returned_rank`),
    else what its result says as a test (`predicate_test`); None when the body mentions a rank
    but says less than a guard (then the function's name decides)."""
    rank = returned_rank(function, resolve)
    if rank is not None:
        return rank
    verdict = predicate_test(function, resolve)
    decisive = verdict.true_only_zero or verdict.true_never_zero or verdict.true_first_replica or verdict == DISTRIBUTED
    return None if not decisive and (mentions_rank(function.body) or _reads_current_device(function.body)) else verdict


def _reads_current_device(body: cst.BaseSuite) -> bool:
    """The body reads the index of the current CUDA device (`torch.cuda.current_device() == 0`),
    which the usual set-up (`torch.cuda.set_device(local_rank)`) makes the local rank: it says
    no less than a test of the local rank, so the function's name decides (`is_local_master`
    is a rank-0 test, as `local_rank == 0` is), not the body's silence."""
    called = (dotted_name(node.func) for node in descendants(body) if isinstance(node, cst.Call))
    return any(name is not None and ("." + spelling).endswith("." + name) for name in called for spelling in CURRENT_DEVICE)


def predicate_test(function: cst.FunctionDef, resolve: Resolver | None = None, presence: bool = False) -> RankTest:
    """What a call of `function` being true or false says about the rank, from its body:
    `return dist.get_rank() == 0`, `return not dist.is_initialized() or get_rank() == 0`,
    `if not dist.is_initialized(): return True` then `return rank == 0`, a call of another
    such predicate (through `resolve`). Each `return` counts under the tests that lead to it:
    the function is true only on rank 0 when every way of returning a true value is rank 0's
    (or no rank of a distributed run takes it). UNKNOWN when the body says nothing, or holds
    statements this reading does not follow (`match`). With `presence`, what the result being
    other than None says (`if measures is not None:`): a `return None` (or none at all) is
    false, any other value true (an evaluation that returns its measures only `if not
    distributed or gpu == 0` and None after it gives a value on rank 0 alone)."""
    outcomes: list[RankTest] = []
    try:
        end = _follow(function.body, _NO_FACTS, outcomes, resolve, presence)
    except _Unfollowed:
        return UNKNOWN
    if end is not None:  # falling off the end returns None
        outcomes.append(_outcome(end, _ALWAYS_FALSE))
    if not outcomes:
        return UNKNOWN
    facts = _EVERY_FACT
    for outcome in outcomes:
        facts = _meet(facts, outcome)
    return facts


_NO_FACTS = UNKNOWN  # the condition of code every rank reaches


class _Unfollowed(Exception):
    pass


def _outcome(condition: RankTest, returned: RankTest) -> RankTest:
    """What returning a value with the facts `returned`, where `condition` holds, says about a
    true or a false result: that path's result is true exactly when `condition and value` is."""
    return RankTest(
        condition.true_only_zero or returned.true_only_zero,
        condition.true_only_zero or returned.false_only_zero,
        condition.true_never_zero or returned.true_never_zero,
        condition.true_never_zero or returned.false_never_zero,
        condition.true_first_replica or returned.true_first_replica,
        condition.true_first_replica or returned.false_first_replica,
    )


def _returned(value: cst.BaseExpression | None, condition: RankTest, outcomes: list[RankTest], resolve, presence: bool) -> None:
    if isinstance(value, cst.IfExp):
        test = classify(value.test, resolve)
        _returned(value.body, _conjunction(condition, test), outcomes, resolve, presence)
        _returned(value.orelse, _conjunction(condition, test.negated()), outcomes, resolve, presence)
        return
    if presence:  # `is not None`: only a None is false
        truth: bool | None = not (value is None or isinstance(value, cst.Name) and value.value == "None")
    else:
        truth = False if value is None else _constant_truth(value)
    if truth is not None:
        outcomes.append(_outcome(condition, ALWAYS_TRUE if truth else _ALWAYS_FALSE))
    else:
        outcomes.append(_outcome(condition, classify(value, resolve)))  # type: ignore[arg-type]


def _follow(suite: cst.BaseSuite, condition: RankTest, outcomes: list[RankTest], resolve, presence: bool = False) -> RankTest | None:
    """Walk a block in order, recording its returns; the condition that holds where the block
    ends, or None when it never ends there (every path returns or raises)."""
    statements = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
    for statement in statements:
        if condition is None:
            return None
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in statement.body:
                if isinstance(small, cst.Return):
                    _returned(small.value, condition, outcomes, resolve, presence)
                    return None
                if isinstance(small, cst.Raise):
                    return None
        elif isinstance(statement, cst.If):
            condition = _follow_if(statement, condition, outcomes, resolve, presence)
        elif isinstance(statement, (cst.With, cst.For, cst.While)):
            _follow(statement.body, condition, outcomes, resolve, presence)  # a loop may run no time
            if getattr(statement, "orelse", None) is not None:
                _follow(statement.orelse.body, condition, outcomes, resolve, presence)  # type: ignore[union-attr]
        elif isinstance(statement, cst.Try):
            # A handler runs after part of the body: only what held before the body holds there.
            ends = [_follow(statement.body, condition, outcomes, resolve, presence)]
            ends += [_follow(handler.body, condition, outcomes, resolve, presence) for handler in statement.handlers]
            if statement.orelse is not None and ends[0] is not None:
                ends[0] = _follow(statement.orelse.body, ends[0], outcomes, resolve, presence)
            if statement.finalbody is not None:
                _follow(statement.finalbody.body, condition, outcomes, resolve, presence)
            condition = _join(ends)
        elif not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            raise _Unfollowed
    return condition


def _follow_if(statement: cst.If, condition: RankTest, outcomes: list[RankTest], resolve, presence: bool) -> RankTest | None:
    test = classify(statement.test, resolve)
    ends = [_follow(statement.body, _conjunction(condition, test), outcomes, resolve, presence)]
    otherwise = _conjunction(condition, test.negated())
    if isinstance(statement.orelse, cst.If):
        ends.append(_follow_if(statement.orelse, otherwise, outcomes, resolve, presence))
    elif isinstance(statement.orelse, cst.Else):
        ends.append(_follow(statement.orelse.body, otherwise, outcomes, resolve, presence))
    else:
        ends.append(otherwise)
    return _join(ends)


def _join(ends: list[RankTest | None]) -> RankTest | None:
    """The condition where paths meet: what holds on every path that gets there."""
    reached = [end for end in ends if end is not None]
    if not reached:
        return None
    joined = reached[0]
    for end in reached[1:]:
        joined = _meet(joined, end)
    return joined


@dataclass(frozen=True)
class _Passed:
    """The value a parameter of function `function` (a key: `train`, `Trainer.__init__`) is
    bound to: what its callers pass."""

    function: str
    name: str


@dataclass(frozen=True)
class _Switched:
    """A constant (`False`) assigned under rank tests (`if dist.get_rank() != 0:`, all of the
    `if`s around it combined): `test`."""

    value: cst.BaseExpression
    test: RankTest


def _switched_flag(values: list, unreached: object) -> RankTest | None:
    """What a flag says that is given a constant first (`self.verbose = True`) and then the
    other constant only under rank tests (`if dist.get_rank() != 0: self.verbose = False`): it
    keeps the first value exactly where none of those tests holds. A value assigned where no
    rank of a distributed run gets (`unreached`: DeVLBert's `default_gpu = True` in the `else:`
    of `if args.local_rank != -1:`) says nothing of the ranks of one. A flag given each constant
    only under rank tests (`if rank % ngpus == 0: opt.log = True` / `else: opt.log = False`)
    is true only where a test its True was set under held, false only where one of its
    False's did (`_both_switched`)."""
    both = _both_switched([value for value in values if value is not unreached])
    if both is not None:
        return both
    head = values[0][0] if values and isinstance(values[0], tuple) else values[0] if values else None
    first = _constant_truth(head) if isinstance(head, cst.BaseExpression) else None
    later = [value for value in values[1:] if value is not unreached]
    if first is None or not later or not all(isinstance(v, _Switched) and _constant_truth(v.value) is (not first) for v in later):
        return None
    switched = later[0].test
    for value in later[1:]:
        switched = _disjunction(switched, value.test)
    return switched.negated() if first else switched


def _both_switched(values: list) -> RankTest | None:
    """What a flag says whose every value is a constant set under rank tests, both constants
    among them: being true, what the tests of its True's say when one of them held; being
    false, the same of its False's. None for any other flag."""
    if not values or not all(isinstance(value, _Switched) and _constant_truth(value.value) is not None for value in values):
        return None
    said: dict[bool, RankTest] = {}
    for value in values:
        truth = bool(_constant_truth(value.value))
        said[truth] = _disjunction(said[truth], value.test) if truth in said else value.test
    if len(said) < 2:
        return None
    true, false = said[True], said[False]
    return RankTest(
        true_only_zero=true.true_only_zero, false_only_zero=false.true_only_zero,
        true_never_zero=true.true_never_zero, false_never_zero=false.true_never_zero,
        true_first_replica=true.true_first_replica, false_first_replica=false.true_first_replica,
    )


_LOGICAL_AUGMENTED = {cst.BitOrAssign: cst.Or, cst.BitAndAssign: cst.And}


def _held_by(values: list, resolve: Resolver | None, unknown: tuple) -> RankTest | RankValue | None:
    """What a variable or attribute holds from every value it is assigned (`RankFacts`): a
    switched flag (`_switched_flag`), else the rank every value holds (`_held_rank`), else the
    facts every value says that is a rank test or a constant; None: nothing known. `unknown`:
    the markers of a binding of unknown value and of one no rank of a distributed run makes."""
    switched = _switched_flag(values, unknown[1])
    if switched is not None:
        return switched if switched.is_rank_test else None
    values = [value.value if isinstance(value, _Switched) else value for value in values]
    held_rank = _held_rank(values, resolve, unknown)
    if held_rank is not None:
        return held_rank
    facts, tested = _EVERY_FACT, False
    for value in values:
        if value is unknown[0]:
            return None
        if value is unknown[1]:
            continue
        value, resolved_by = value if isinstance(value, tuple) else (value, resolve)  # a base class's elsewhere
        truth = _constant_truth(value)
        if truth is not None:
            facts = _meet(facts, ALWAYS_TRUE if truth else _ALWAYS_FALSE)
            continue
        test = classify(value, resolved_by)
        if not test.is_rank_test:
            return None
        facts, tested = _meet(facts, test), True
    return facts if tested else None


_NO_VALUE = object()  # `held_in_attribute`'s marker of a binding no rank of a distributed run makes: none


def assignment_values(found: list) -> list:
    """The values of an attribute as another module assigns it (ProcessContext.attribute_assignments:
    (value, resolver of its module, the `if` tests around it as (test, way taken) pairs)), as
    `_held_by` reads them: a constant under rank tests is switched there (`if args.distributed:
    if args.gpu != 0: self.verbose = False`, each test read with its module's resolver)."""
    values: list = []
    for value, resolve, tests in found:
        if not tests or _constant_truth(value) is None:
            values.append((value, resolve))
            continue
        said = [classify(test, resolve) if way else classify(test, resolve).negated() for test, way in tests]
        test = said[0]
        for other in said[1:]:
            test = _conjunction(test, other)
        values.append(_Switched(value, test))
    return values


def held_in_attribute(found: list) -> RankTest | RankValue | None:
    """What `self.<attribute>` holds, read in another module, from every assignment of it in its
    class and base classes (ProcessContext.attribute_assignments): `self.verbose = True`, then
    `self.verbose = False` under `if self.args.distributed: if self.args.gpu != 0:` is a
    rank-0 test where `args.gpu` holds the rank; None: nothing known."""
    return _held_by(assignment_values(found), None, (_NO_VALUE, _NO_VALUE)) if found else None


class RankFacts:
    """Rank tests held in variables and attributes: `verbose = rank == 0`, `master =
    dist.get_rank() == 0`, `self.is_main = args.rank == 0`, `args.save_logs = args.logs and
    is_master(args)`; then `if verbose:` is a rank-0 guard.

    Before the walk, one pass over the module's statements (never into expressions) records
    every value assigned to each name (per scope) and to each attribute: `self.x` per class,
    any other `a.b` per module, since `args` is usually the same namespace passed around. A
    variable is a rank test when at least one of its values is, and the facts are those that
    hold for all of its values (a constant `False` or `True` spoils none); a variable also
    bound otherwise (a parameter, a loop target, `+=`) says nothing. Values assigned where
    no rank of a distributed run gets (`else:` of `if ddp:`) are left out. A flag given a
    constant and then the other one under a rank test (`self.verbose = True`, then `if
    args.distributed: if dist.get_rank() != 0: self.verbose = False`) holds the negation of
    that test (also where the other constant is set again where no rank of a distributed run
    gets: `default_gpu = False`, then `if args.local_rank != -1: if rank == 0: default_gpu =
    True` / `else: default_gpu = True` is a rank-0 test).

    A flag the module starts its process group under is, whatever its name, true in every
    distributed run (`if args.distribution: dist.init_process_group(...)`), or false in every
    one (`if not single_gpu:`, or the `else:` of `if single_gpu:`), when each
    `init_process_group` call of the module is so guarded: then `rank == 0 or not
    args.distribution` is a rank-0 test. So is a flag compared with a constant (`if args.dist
    == "ON":` starts it): then `args.dist == "OFF"` and `args.dist != "ON"` are false in every
    distributed run.

    The same pass records the module's functions and methods, so that a call of one is judged
    by its body (`predicate_test`: `def should_save(): return dist.get_rank() == 0`), and a
    function named without a call (`if is_main_process:`, `if dist.is_initialized and ...`)
    is seen to be always true: no guard at all."""

    _NOTHING = object()  # a binding whose value is not known
    _UNREACHED = object()  # a binding no rank of a distributed run makes

    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        self._names: dict[int, dict[str, list]] = {}  # id(def node or module) -> name -> values
        self._attributes: dict[str, list] = {}  # "Class.x" for self.x, "args.x" otherwise
        self._functions: dict[str, cst.FunctionDef] = {}  # module-level functions
        self._bases: dict[str, list[str]] = {}  # class -> its bases as written
        self._methods: dict[str, cst.FunctionDef] = {}  # "Class.name"
        self._contexts: dict[int, tuple[str | None, str | None]] = {}  # id(def) -> (class, self's name)
        # id(def) -> the def it is written in, for a function nested in another (a closure)
        self._enclosing: dict[int, cst.FunctionDef] = {}
        self._nested: dict[int, dict[str, cst.FunctionDef | None]] = {}  # id(def) -> the functions defined in it
        self._predicates: dict[int, RankTest | None] = {}  # id(def) -> what a call of it says
        self._resolving: set[str] = set()
        # What `_held` answered, by what it depends on: the name (or the called name), the
        # predicate being read or else the frame and scope of the walk; kept only for answers
        # that no recursion guard cut short (`_cuts` counts those), which do not depend on the
        # order questions come in. `if args.x:` asks after `args` again in every function.
        self._answers: dict[tuple, RankTest | RankValue | None] = {}
        self._cuts = 0
        self._judging: set = set()  # functions (by id) and names (by owner and name) being judged
        self._unreached = 0  # inside branches that no rank of a distributed run takes
        self._conditions: list[RankTest] = []  # what the `if`s around the statement say
        self._groups_started = 0  # statements of the module that call init_process_group
        self._spawned = 0  # statements of the module that start processes (`mp.spawn(worker, ...)`)
        self._spawn_targets: set[str] = set()  # the module's functions they start (`worker`)
        # Flags tested by an `if` that starts the process group: (flag, the constant it is
        # compared with or None for a truth test, owner, class, self's name, the test's value
        # where it starts, how many init_process_group calls and spawns its branch holds).
        self._switched: list[tuple[cst.Name | cst.Attribute, object, cst.CSTNode, str | None, str | None, bool, tuple[int, int]]] = []
        # Flags tested by an `if`, with each branch: as above, without the count (..., the test's
        # value there, the branch, its own simple statements); read by `_note_group_uses`.
        self._group_users: list[tuple[cst.Name | cst.Attribute, object, cst.CSTNode, str | None, str | None, bool, cst.CSTNode, list]] = []
        self._collect(model.module.body, model.module, None, None)
        # (the flag's key, the constant or None) -> what the test of it says
        self._switches: dict[tuple[str | None, object], RankTest] = {}
        # A module that spawns its own processes has distributed runs only in what it spawns
        # (`if args.multi_gpu: mp.spawn(worker, ...)`); its init_process_group runs inside them.
        kind = 1 if self._spawned else 0
        if sum(switch[-1][kind] for switch in self._switched) == (self._spawned or self._groups_started):
            for flag, constant, owner, cls, self_name, value, started in self._switched:
                if not started[kind]:
                    continue
                key = (self._switch_key(flag, owner, cls, self_name), constant)
                test = DISTRIBUTED if value else NOT_DISTRIBUTED
                self._switches[key] = test if self._switches.get(key, test) == test else UNKNOWN
        self._switches = {key: test for key, test in self._switches.items() if test.is_rank_test}  # not both ways
        # the flag's key -> what it says, where its values say nothing (`_held`)
        self._group_switches: dict[str | None, RankTest] = {}
        if not (self._groups_started or self._spawned):
            self._note_group_uses()

    def _note_group_uses(self) -> None:
        """In a module that starts no process group (a trainer class handed its switch), a flag
        under which the module does what only a distributed run can (builds a DistributedSampler,
        wraps in DDP, asks the rank, runs a collective: `if self.is_dist: sampler =
        DistributedSampler(ds)`, in the branch's own statements), and never the other way (at
        any depth: `if cached: if rank == 0: dist.barrier()` / `else: dist.barrier()` is no
        switch), is the switch of the distributed run: true in every one, where its values say
        nothing else (`is_logger = rank == 0` stays a rank test). So `not self.is_dist or
        self.rank == 0` is a rank-0 test."""
        found: dict[tuple, set[bool]] = {}
        direct: set[tuple] = set()
        for flag, constant, owner, cls, self_name, value, body, simple in self._group_users:
            itself = any(map(self._needs_group, simple))
            if not itself and not any(map(self._needs_group, nodes_under(body, cst.SimpleStatementLine))):
                continue
            key = (self._switch_key(flag, owner, cls, self_name), constant)
            found.setdefault(key, set()).add(value)
            if itself:
                direct.add(key)
        for key, values in found.items():
            if len(values) == 1 and key in direct and key[1] is None and key not in self._switches:
                self._group_switches[key[0]] = DISTRIBUTED if values.pop() else NOT_DISTRIBUTED

    @property
    def classes(self) -> frozenset[str]:
        """The names of the classes the module defines."""
        return frozenset(self._bases)

    # -- the pass over statements ---------------------------------------------------------

    def _note(self, owner: cst.CSTNode, cls: str | None, self_name: str | None, target, value) -> None:
        if self._unreached:
            value = self._UNREACHED
        elif self._conditions and isinstance(value, cst.Name) and value.value in ("True", "False"):
            test = self._conditions[0]
            for condition in self._conditions[1:]:
                test = _conjunction(test, condition)
            value = _Switched(value, test)
        if isinstance(target, cst.Name):
            self._names.setdefault(id(owner), {}).setdefault(target.value, []).append(value)
        elif isinstance(target, cst.Attribute):
            key = self._attribute_key(target, cls, self_name)
            bound = self._names.get(id(owner), {}).get(value.value) if isinstance(value, cst.Name) else None
            if bound is not None and len(bound) == 1 and isinstance(bound[0], _Passed):
                value = bound[0]  # `self.device = device`: what the callers pass for the parameter
            if key is not None:
                self._attributes.setdefault(key, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._note(owner, cls, self_name, element.value, self._NOTHING)
        elif isinstance(target, cst.StarredElement):
            self._note(owner, cls, self_name, target.value, self._NOTHING)

    def _augmented(self, owner: cst.CSTNode, node: cst.AugAssign):
        """`flag |= test` after one `flag = value` binds `value or test` (`&=`: `and`): on
        booleans the bitwise operators are the logical ones. Any other augmented assignment
        binds a value not known."""
        operator = _LOGICAL_AUGMENTED.get(type(node.operator))
        bound = self._names.get(id(owner), {}).get(node.target.value) if isinstance(node.target, cst.Name) else None
        if operator is None or bound is None or len(bound) != 1 or not isinstance(bound[0], cst.BaseExpression):
            return self._NOTHING
        return cst.BooleanOperation(left=bound[0], operator=operator(), right=node.value)

    @staticmethod
    def _attribute_key(target: cst.Attribute, cls: str | None, self_name: str | None) -> str | None:
        name = dotted_name(target)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if self_name is not None and head == self_name and cls is not None:
            return f"{cls}.{rest}"
        return f".{name}"

    def _collect(self, statements, owner, cls: str | None, self_name: str | None) -> None:
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            self._note(owner, cls, self_name, target.target, small.value)
                    elif isinstance(small, cst.AnnAssign) and small.value is not None:  # `x: bool` alone binds nothing
                        self._note(owner, cls, self_name, small.target, small.value)
                    elif isinstance(small, cst.AugAssign):
                        self._note(owner, cls, self_name, small.target, self._augmented(owner, small))
                self._groups_started += self._starts_group(statement)
                self._spawned += self._spawns(statement)
                continue
            if isinstance(statement, cst.FunctionDef):
                params = statement.params
                inner_cls, inner_self = cls, self_name
                if isinstance(owner, cst.ClassDef):
                    first = (params.posonly_params or params.params or (None,))[0]
                    inner_cls, inner_self = owner.name.value, first.name.value if first is not None else None
                key = statement.name.value if owner is self.model.module else (
                    f"{owner.name.value}.{statement.name.value}" if isinstance(owner, cst.ClassDef) else None
                )
                named = (*params.posonly_params, *params.params, *params.kwonly_params)
                for param in (*named, params.star_arg, params.star_kwarg):
                    if isinstance(param, cst.Param):
                        passed = _Passed(key, param.name.value) if key is not None and param in named else self._NOTHING
                        self._note(statement, inner_cls, inner_self, param.name, passed)
                if owner is self.model.module:
                    self._functions[statement.name.value] = statement
                elif isinstance(owner, cst.ClassDef):
                    self._methods[f"{owner.name.value}.{statement.name.value}"] = statement
                elif isinstance(owner, cst.FunctionDef):
                    self._enclosing[id(statement)] = owner
                    nested = self._nested.setdefault(id(owner), {})
                    nested[statement.name.value] = None if statement.name.value in nested else statement  # two defs: unknown
                self._contexts[id(statement)] = (inner_cls, inner_self)
                self._collect_suite(statement.body, statement, inner_cls, inner_self)
                continue
            if isinstance(statement, cst.ClassDef):
                self._bases[statement.name.value] = [b for b in (dotted_name(arg.value) for arg in statement.bases) if b]
                self._collect_suite(statement.body, statement, None, None)
                continue
            if isinstance(statement, cst.If):
                self._collect_if(statement, owner, cls, self_name)
                continue
            if isinstance(statement, cst.For):
                self._note(owner, cls, self_name, statement.target, self._NOTHING)
            elif isinstance(statement, cst.With):
                for item in statement.items:
                    if item.asname is not None:
                        self._note(owner, cls, self_name, item.asname.name, self._NOTHING)
            for suite in self._suites(statement):
                self._collect_suite(suite, owner, cls, self_name)

    @staticmethod
    def _suites(statement: cst.BaseCompoundStatement):
        body = getattr(statement, "body", None)
        if isinstance(body, cst.BaseSuite):
            yield body
        for handler in getattr(statement, "handlers", ()):
            yield handler.body
        for case in getattr(statement, "cases", ()):
            yield case.body
        orelse = getattr(statement, "orelse", None)
        while orelse is not None:
            yield orelse.body
            orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None
        final = getattr(statement, "finalbody", None)
        if final is not None:
            yield final.body

    def _starts_group(self, line: cst.SimpleStatementLine) -> bool:
        """Whether the statement line starts the process group: `dist.init_process_group(...)`,
        `deepspeed.init_distributed()`. (This pass reads names in the module's scope: a name
        imported inside the function, `import deepspeed` under `if use_deepspeed:`, is read as
        written.)"""
        return any(
            isinstance(small, (cst.Expr, cst.Assign))
            and isinstance(small.value, cst.Call)
            and (self.model.qualified(small.value.func) or dotted_name(small.value.func)) in GROUP_STARTS
            for small in line.body
        )

    def _needs_group(self, line: cst.SimpleStatementLine) -> bool:
        """Whether the statement line makes a call that only a distributed run makes: builds a
        DistributedSampler, wraps a model in DDP, asks the rank or runs a collective (without a
        process group these raise)."""
        return any(
            isinstance(small, (cst.Expr, cst.Assign)) and isinstance(small.value, cst.Call)
            and self.model.qualified(small.value.func) in _NEEDS_GROUP
            for small in line.body
        )

    def _spawns(self, line: cst.SimpleStatementLine) -> bool:
        """Whether the statement line starts processes: `mp.spawn(worker, ...)`; notes the
        function it starts when the module names it (`worker`)."""
        spawns = False
        for small in line.body:
            if not isinstance(small, (cst.Expr, cst.Assign)) or not isinstance(small.value, cst.Call):
                continue
            qualified = self.model.qualified(small.value.func)
            if qualified in SPAWN or qualified in START_PROCESSES:
                spawns = True
                target = argument_for(small.value, SPAWN if qualified in SPAWN else START_PROCESSES, "fn")
                if target is not None and isinstance(target.value, cst.Name):
                    self._spawn_targets.add(target.value.value)
        return spawns

    def _note_switch(self, statement: cst.If, owner, cls, self_name) -> None:
        """`if flag:`, `if not flag:`, `if flag == "ON":`, whose body or `else:` starts the
        process group in its own statements."""
        flag, negated = statement.test, False
        while isinstance(flag, cst.UnaryOperation) and isinstance(flag.operator, cst.Not):
            flag, negated = flag.expression, not negated
        flag, constant, equal = _compared_flag(flag)
        if flag is None:
            return
        negated ^= not equal
        branches = [(statement.body, True)]
        if isinstance(statement.orelse, cst.Else):
            branches.append((statement.orelse.body, False))
        for body, test_true in branches:
            lines = body.body if isinstance(body, cst.IndentedBlock) else [cst.SimpleStatementLine(body=body.body)]  # type: ignore[attr-defined]
            simple = [line for line in lines if isinstance(line, cst.SimpleStatementLine)]
            started = (sum(map(self._starts_group, simple)), sum(map(self._spawns, simple)))
            if any(started):
                self._switched.append((flag, constant, owner, cls, self_name, test_true != negated, started))
            self._group_users.append((flag, constant, owner, cls, self_name, test_true != negated, body, simple))

    def _switch_key(self, flag: cst.Name | cst.Attribute, owner: cst.CSTNode, cls: str | None, self_name: str | None) -> str | None:
        if isinstance(flag, cst.Attribute):
            return self._attribute_key(flag, cls, self_name)
        bound_here = flag.value in self._names.get(id(owner), {})
        return f"name {flag.value} {id(owner) if bound_here else id(self.model.module)}"

    def _collect_if(self, statement: cst.If, owner, cls, self_name) -> None:
        """Values assigned where no rank of a distributed run gets (`else:` of `if ddp:`, as
        in `master_process = True` for a single-process run) spoil no rank test."""
        self._note_switch(statement, owner, cls, self_name)
        test = classify(statement.test)
        branches = [(statement.body, test.true_only_zero and test.true_never_zero, test)]
        unreached_else = test.false_only_zero and test.false_never_zero
        if isinstance(statement.orelse, cst.Else):
            branches.append((statement.orelse.body, unreached_else, test.negated()))
        for suite, unreached, condition in branches:
            self._unreached += unreached
            self._conditions.append(condition)
            self._collect_suite(suite, owner, cls, self_name)
            self._conditions.pop()
            self._unreached -= unreached
        if isinstance(statement.orelse, cst.If):
            self._unreached += unreached_else
            self._conditions.append(test.negated())
            self._collect_if(statement.orelse, owner, cls, self_name)
            self._conditions.pop()
            self._unreached -= unreached_else

    def _collect_suite(self, suite: cst.BaseSuite, owner, cls, self_name) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self._collect(suite.body, owner, cls, self_name)
        else:
            self._collect([cst.SimpleStatementLine(body=suite.body)], owner, cls, self_name)  # type: ignore[attr-defined]

    # -- questions during the walk --------------------------------------------------------

    def __call__(self, expr: cst.BaseExpression) -> RankTest | None:
        """What `expr` (a name, attribute or call, where the walk is) holds, as a rank test;
        None when nothing is known about it."""
        frame = self.model.frame
        self_class = frame.self_class
        return self._held(expr, None, self_class.name.value if self_class is not None else None, frame.self_name)

    def uncalled(self, test: cst.BaseExpression) -> str | None:
        """The rank predicate that `test` (where the walk is) names without calling it, which
        makes that part of the test always true (`if is_main_process:`); None if none."""
        if isinstance(test, cst.UnaryOperation):
            return self.uncalled(test.expression)
        if isinstance(test, cst.BooleanOperation):
            return self.uncalled(test.left) or self.uncalled(test.right)
        if isinstance(test, (cst.Name, cst.Attribute)) and self(test) is ALWAYS_TRUE:
            return dotted_name(test)
        return None

    def _held(
        self, expr: cst.BaseExpression, function: cst.FunctionDef | None, cls: str | None, self_name: str | None
    ) -> RankTest | None:
        """As `__call__`, for `expr` in the body of `function` (a predicate being read), or
        where the walk is when `function` is None."""
        kind = type(expr)
        name = dotted_name(expr.func) if kind is cst.Call else dotted_name(expr)  # type: ignore[attr-defined]
        if name is None:
            return self._held_afresh(expr, function, cls, self_name)
        where = (function, None, None) if function is not None else (None, self.model.frame, self.model.scope)
        # a call is judged with its arguments too (`is_main_device(device)`: `_at_call`)
        passed = tuple(dotted_name(arg.value) or id(arg.value) for arg in expr.args) if kind is cst.Call else ()  # type: ignore[attr-defined]
        key = (kind is cst.Call, name, cls, self_name, *where, passed)
        if key in self._answers:
            return self._answers[key]  # type: ignore[return-value]
        cuts = self._cuts
        answer = self._held_afresh(expr, function, cls, self_name)
        if answer is None and self._group_switches and kind in (cst.Name, cst.Attribute):
            owner = f"name {name} {self._name_owner(name, function)}" if kind is cst.Name else None
            answer = self._group_switches.get(owner if kind is cst.Name else self._attribute_key(expr, cls, self_name))  # type: ignore[arg-type]
        if self._cuts == cuts:
            self._answers[key] = answer
        return answer

    def _held_afresh(
        self, expr: cst.BaseExpression, function: cst.FunctionDef | None, cls: str | None, self_name: str | None
    ) -> RankTest | None:
        if isinstance(expr, cst.Comparison):
            switched = self._compared_switch(expr, cls, self_name)
            return switched if switched is not None else self._compared_with_none(expr, function, cls, self_name)
        if isinstance(expr, cst.Call):
            called = self._function(expr.func, function, cls, self_name)
            if isinstance(called, str):  # imported: judged by its body through the program model
                context = self.context
                return context.predicate(self.model.project.module, dotted_name(expr.func)) if context else None
            if not isinstance(called, cst.FunctionDef):
                return None
            verdict = self._returns(called)
            if isinstance(verdict, RankValue) or verdict is not None and verdict.is_rank_test:
                return verdict
            at_call = self._at_call(called, expr, function, cls, self_name)
            return at_call if at_call is not None else verdict
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        named = self._function(expr, function, cls, self_name)
        if isinstance(named, str) and self.context is not None and self.context.names_function(self.model.project.module, dotted_name(expr)):
            return ALWAYS_TRUE  # a project function named without a call: a function object
        if named is not None:
            return self._named(named)
        if isinstance(expr, cst.Name):
            owner = self._name_owner(expr.value, function)
            values = self._names.get(owner, {}).get(expr.value) if owner is not None else None
            values = self._with_passed(values) if values else values
            key = f"name {expr.value} {owner}"
        else:
            key = self._attribute_key(expr, cls, self_name)
            values = self._attributes.get(key) if key is not None else None
            values = self._with_passed(values) if values else values
        if (key, None) in self._switches:
            return self._switches[(key, None)]
        if key is not None and cls is not None and (f".{key[len(cls) + 1:]}", None) in self._switches and key.startswith(f"{cls}."):
            return self._switches[(f".{key[len(cls) + 1:]}", None)]  # `self.args.flag`: the `args` it was handed
        if cls is not None and key is not None and key.startswith(f"{cls}.") and "." not in key[len(cls) + 1 :]:
            values = self._with_passed(self._inherited(cls, key[len(cls) + 1 :]))  # `self.x`, also set in a base class
        if not values and key is not None and key.count(".") == 2 and self.context is not None:
            return self._set_elsewhere(key, function, cls, self_name)
        if not values:
            return None
        if key in self._resolving:
            self._cuts += 1
            return None
        resolve = self if function is None else lambda inner: self._held(inner, function, cls, self_name)
        self._resolving.add(key)  # `verbose = verbose and rank == 0`
        try:
            return _held_by(values, resolve, (self._NOTHING, self._UNREACHED))
        finally:
            self._resolving.discard(key)

    def _set_elsewhere(self, key: str, function: cst.FunctionDef | None, cls: str | None, self_name: str | None):
        """What an attribute of a namespace (`key`: `.opt.log`, `Runner.args.proc_id`) that this
        module never assigns holds, as other modules assign it: `opt.log` set by `init_dist(opt)`
        of another module (handed_attribute); `self.args.proc_id`, or `args.proc_id` after
        `args = self.args`, in a class whose `__init__` keeps its parameter as `self.args`, set
        by the code that builds the object or a helper it hands the namespace to
        (`ddp_init(args)`, then `Runner(args)`: ProcessContext.kept_attribute). None: not known."""
        context, module = self.context, self.model.project.module
        if not key.startswith("."):
            return context.kept_attribute(module, cls, key[len(cls) + 1 :]) if cls is not None and key.startswith(f"{cls}.") else None
        holder, _, attribute = key[1:].partition(".")
        held = held_in_attribute(context.handed_attribute(module, holder, attribute))
        if held is not None or cls is None or self_name is None:
            return held
        owner = self._name_owner(holder, function)
        bound = self._names.get(owner, {}).get(holder, ()) if owner is not None else ()
        kept = bound[0] if len(bound) == 1 else None  # `args = self.args`, bound once
        if isinstance(kept, cst.Attribute) and isinstance(kept.value, cst.Name) and kept.value.value == self_name:
            return context.kept_attribute(module, cls, f"{kept.attr.value}.{attribute}")
        return None

    def _at_call(
        self, called: cst.FunctionDef, call: cst.Call, function: cst.FunctionDef | None, cls: str | None, self_name: str | None
    ) -> RankTest | RankValue | None:
        """What this call of a module-level function gives, its body read with each parameter
        that the body never rebinds holding what the call passes for it, as the caller holds
        that (`is_main_device(device)` in a function whose `device` is the rank, where other
        callers of the helper pass values nothing is known of); None where that says no more
        than the body read alone (`_returns`)."""
        if self._functions.get(called.name.value) is not called or id(called) in self._judging:
            return None
        params = called.params
        if params.star_arg is not None and isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
            return None
        positional = [param.name.value for param in (*params.posonly_params, *params.params)]
        bound: dict[str, cst.BaseExpression] = {}
        for index, arg in enumerate(call.args):
            if arg.star:
                return None
            name = arg.keyword.value if arg.keyword is not None else positional[index] if index < len(positional) else None
            if name is not None:
                bound[name] = arg.value
        names = self._names.get(id(called), {})
        bound = {name: value for name, value in bound.items() if len(names.get(name, ())) == 1}  # not rebound
        if not bound:
            return None
        outer = self if function is None else (lambda inner: self._held(inner, function, cls, self_name))
        inner_cls, inner_self = self._contexts.get(id(called), (None, None))

        def resolve(inner: cst.BaseExpression):
            if isinstance(inner, cst.Name) and inner.value in bound:
                value = bound[inner.value]
                dimension = _dimension(value, outer)
                if dimension is not None:
                    return RankValue(dimension)
                if isinstance(value, (cst.Name, cst.Attribute, cst.Call)):
                    return outer(value)
                said = classify(value, outer)
                return said if said.is_rank_test else None
            return self._held(inner, called, inner_cls, inner_self)

        self._judging.add(id(called))
        try:
            verdict = judge_function(called, resolve)
        finally:
            self._judging.discard(id(called))
        decisive = isinstance(verdict, RankValue) or verdict is not None and verdict.is_rank_test
        return verdict if decisive else None

    def _compared_switch(self, test: cst.Comparison, cls: str | None, self_name: str | None) -> RankTest | None:
        """What `flag == constant` (or `!=`) says where every start of the process group is
        under a comparison of that flag: `dist == "ON"` starts it, so `dist == "OFF"` and
        `dist != "ON"` are false in every distributed run."""
        flag, constant, equal = _compared_flag(test)
        if flag is None or constant is None:
            return None
        if isinstance(flag, cst.Name):
            key = f"name {flag.value} {self._name_owner(flag.value, None)}"
        else:
            key = self._attribute_key(flag, cls, self_name)
        said = {switch: found for (held, switch), found in self._switches.items() if held == key and switch is not None}
        if constant in said:
            return said[constant] if equal else said[constant].negated()
        # another constant: `dist == "OFF"` is false wherever `dist == "ON"` must hold
        if equal and DISTRIBUTED in said.values():
            return NOT_DISTRIBUTED
        return None

    def _compared_with_none(
        self, test: cst.Comparison, function: cst.FunctionDef | None, cls: str | None, self_name: str | None
    ) -> RankTest | None:
        """What `x is not None` (or `is None`) says, where `x` is a call of a function of this
        module that returns None on every way but those under a rank-0 test (NeWCRFs'
        `online_eval` returns its measures only `if not distributed or gpu == 0`), or a
        variable every value of which is such a call (`measures = online_eval(...)`) or None;
        None where nothing is known."""
        comparison = test.comparisons[0]
        if len(test.comparisons) != 1 or not isinstance(comparison.operator, (cst.Is, cst.IsNot)):
            return None
        if not isinstance(comparison.comparator, cst.Name) or comparison.comparator.value != "None":
            return None
        said = self._present(test.left, function, cls, self_name)
        return None if said is None else said if isinstance(comparison.operator, cst.IsNot) else said.negated()

    def _present(self, expr: cst.BaseExpression, function: cst.FunctionDef | None, cls: str | None, self_name: str | None) -> RankTest | None:
        """What `expr` being other than None says (`_compared_with_none`)."""
        if isinstance(expr, cst.Name) and expr.value == "None":
            return _ALWAYS_FALSE
        if isinstance(expr, cst.Call):
            called = self._function(expr.func, function, cls, self_name)
            if not isinstance(called, cst.FunctionDef) or id(called) in self._judging:
                return None
            key = ("present", id(called))
            if key in self._answers:
                return self._answers[key]  # type: ignore[return-value]
            cuts, inner_cls, inner_self = self._cuts, *self._contexts.get(id(called), (None, None))
            self._judging.add(id(called))
            try:
                said = predicate_test(called, lambda inner: self._held(inner, called, inner_cls, inner_self), presence=True)
            finally:
                self._judging.discard(id(called))
            answer = said if said.is_rank_test else None
            if self._cuts == cuts:
                self._answers[key] = answer
            return answer
        if not isinstance(expr, cst.Name):
            return None
        owner = self._name_owner(expr.value, function)
        values = self._names.get(owner, {}).get(expr.value) if owner is not None else None
        judged = ("present", owner, expr.value)
        if judged in self._judging:
            return None  # a name bound from itself (`x = x or f()`): nothing more is known
        facts = _EVERY_FACT
        self._judging.add(judged)
        try:
            for value in values or [self._NOTHING]:
                if value is self._UNREACHED:
                    continue
                said = self._present(value, function, cls, self_name) if isinstance(value, cst.BaseExpression) else None
                if said is None:
                    return None
                facts = _meet(facts, said)
        finally:
            self._judging.discard(judged)
        return facts if facts.is_rank_test and facts != _EVERY_FACT else None

    def _inherited(self, cls: str, attribute: str) -> list:
        """The values `self.<attribute>` is assigned in class `cls` and in its project base
        classes: those of this module as `_collect` noted them, those of other modules through
        the program model (`self._primary = self._rank == 0` in a base class's `__init__`) as
        (value, the resolver of its module)."""
        values: list = []
        pending, seen = [cls], set()
        context = self.context
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            values += self._attributes.get(f"{name}.{attribute}", ())
            for base in self._bases.get(name, ()):
                if base in self._bases:
                    pending.append(base)
                elif context is not None:
                    values += assignment_values(context.attribute_assignments(self.model.project.module, base, attribute))
        return values

    def _function(
        self, expr: cst.BaseExpression, function: cst.FunctionDef | None, cls: str | None, self_name: str | None
    ) -> cst.FunctionDef | str | None:
        """The function `expr` names: a module-level function or a method of `self`'s class
        (its definition), or an imported one (its qualified name); None for anything else."""
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == self_name:
            return self._methods.get(f"{cls}.{expr.attr.value}")
        name = dotted_name(expr)
        if name is None:
            return None
        head = name.partition(".")[0]
        if function is None and head == name:
            nested = self._nested_function(head)
            if nested is not None:
                return nested
        if function is None:
            scope = self.model.binding_scope(head)
        else:
            scope = None if head in self._names.get(id(function), {}) else self.model.module_scope.owner(head)
        if scope is not self.model.module_scope:
            return None
        origin = scope.bindings[head]
        if origin is None:  # bound in this module
            defined = self._functions.get(name)
            return defined if defined is not None and name not in self._names.get(id(self.model.module), {}) else None
        return origin + name[len(head) :]

    def _nested_function(self, name: str) -> cst.FunctionDef | None:
        """The function `name` defines in a function the walk is in (TAPE's `do_save`, written
        in `run_train`), where that function binds `name` in no other way; None otherwise."""
        frame = self.model.frame
        while frame is not None:
            defined = self._nested.get(id(frame.node), {})
            if name in self._names.get(id(frame.node), {}):
                return None  # also a variable there
            if name in defined:
                return defined[name]
            frame = frame.parent
        return None

    def _with_passed(self, values: list) -> list:
        """A parameter's values: what every call in the project passes for it
        (`Trainer(model, device=rank)` makes `device` a rank), each read in its caller's module
        by its words alone; unknown without the program model or where a call is not read."""
        expanded: list = []
        for value in values:
            if not isinstance(value, _Passed):
                expanded.append(value)
                continue
            spawned = self._process_index(value)
            if spawned:
                expanded.append((cst.Name("local_rank"), None))
            context = self.context
            passed = context.passed_arguments(self.model.project.module, value.function, value.name) if context else None
            if passed is None and spawned:
                continue  # no other call known: the spawn's index is all it holds
            if passed is None:
                # Callers not known (`mp.spawn(trainer.train)` passes the process index): a
                # parameter named like a rank is judged by its name, as its reads in the body are
                expanded.append((cst.Name(value.name), None) if value.name in RANK_NAMES else self._NOTHING)
                continue
            for text in passed:
                try:
                    expanded.append((_passed_expression(text), None))
                except Exception:  # noqa: BLE001 - text libcst does not read: unknown
                    expanded.append(self._NOTHING)
        return expanded

    def _process_index(self, value: _Passed) -> bool:
        return self.process_index(value.function) == value.name

    def process_index(self, key: str | None) -> str | None:
        """The parameter of function `key` of this module that holds the process's local rank:
        the first one of a function the module starts processes with (`mp.spawn(worker, ...)`
        passes each process its index first: `def worker(gpu, args)`); None for any other."""
        function = self._functions.get(key) if key in self._spawn_targets else None
        params = (*function.params.posonly_params, *function.params.params) if function is not None else ()
        return params[0].name.value if params else None

    @property
    def context(self):
        """The program model's process context (ddplint.model.context), with a project."""
        project = self.model.project
        return project.context if project is not None else None

    def _returns(self, function: cst.FunctionDef) -> RankTest | RankValue | None:
        """What a call of a function of this module gives: the rank it returns (`def rank():
        return dist.get_rank()`), else its body's verdict as a test; None (its name decides)
        when the body mentions a rank but says less than a guard (a `try` whose handler
        returns True)."""
        key = id(function)
        if key in self._judging:
            self._cuts += 1  # recursion proves nothing
            return None
        if key not in self._predicates:
            self._judging.add(key)
            try:
                cls, self_name = self._contexts.get(key, (None, None))
                self._predicates[key] = judge_function(function, lambda inner: self._held(inner, function, cls, self_name))
            finally:
                self._judging.discard(key)
        return self._predicates[key]

    def _named(self, named: cst.FunctionDef | str) -> RankTest | None:
        """What naming a function without calling it tests: a property is read (its body's
        verdict); a rank predicate (by its body or by the convention of its name) is a
        function object, always true; of anything else nothing is known."""
        if isinstance(named, str):
            last = named.rpartition(".")[2]
            is_predicate = last.startswith("is_") and last in MAIN_PROCESS_NAMES
            return ALWAYS_TRUE if is_predicate or last in DISTRIBUTED_PREDICATES or last in RANK_FUNCTIONS else None
        decorators = {last_name(decorator.decorator) for decorator in named.decorators}
        if decorators & _PROPERTIES:
            return self._returns(named)
        if not decorators <= _PLAIN_FUNCTION_DECORATORS:
            return None  # the decorator may make it anything
        name = named.name.value
        if name in MAIN_PROCESS_NAMES or name in DISTRIBUTED_PREDICATES or name in RANK_FUNCTIONS:
            return ALWAYS_TRUE
        verdict = self._returns(named)
        return ALWAYS_TRUE if isinstance(verdict, RankValue) or verdict is not None and verdict.is_rank_test else None

    def _name_owner(self, name: str, function: cst.FunctionDef | None) -> int | None:
        """Id of the def (or module) whose binding of `name` is read in `function` (where the
        walk is, when None); None when it is bound nowhere here."""
        if function is not None:
            inner: cst.FunctionDef | None = function
            while inner is not None:  # a closure reads the binding of the def it is written in
                if name in self._names.get(id(inner), {}):
                    return id(inner)
                inner = self._enclosing.get(id(inner))
            return id(self.model.module)
        where = self.model.binding_scope(name)
        frame = self.model.frame
        while frame is not None and frame.scope is not where:
            frame = frame.parent
        return None if where is None or frame is None else id(frame.node)


_PROPERTIES = frozenset({"property", "cached_property", "abstractproperty"})
_PLAIN_FUNCTION_DECORATORS = frozenset({"staticmethod", "classmethod", "lru_cache", "cache", "wraps"})


def _compared_flag(test: cst.BaseExpression) -> tuple[cst.Name | cst.Attribute | None, object, bool]:
    """`flag` (None as the constant), `flag == "ON"` or `flag != 2` (the constant, and whether
    the test is an equality): a switch a process group can be started under; (None, None,
    True) for any other test."""
    if isinstance(test, (cst.Name, cst.Attribute)):
        return test, None, True
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None, None, True
    operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if not isinstance(operator, (cst.Equal, cst.NotEqual)) or not isinstance(test.left, (cst.Name, cst.Attribute)):
        return None, None, True
    if isinstance(right, cst.SimpleString):
        constant = right.evaluated_value
    elif isinstance(right, cst.Integer):
        constant = right.evaluated_value
    else:
        return None, None, True
    return test.left, constant, isinstance(operator, cst.Equal)


def _sharding(call: cst.Call) -> bool:
    """An `Accelerator(...)` given a DeepSpeed, FSDP or Megatron-LM plugin (not a literal None)."""
    return any(
        arg.keyword is not None and arg.keyword.value in ACCELERATOR_SHARDING_PLUGINS
        and not (isinstance(arg.value, cst.Name) and arg.value.value == "None")
        for arg in call.args
    )


def decorated_rank_zero_only(function: cst.FunctionDef) -> bool:
    return any(last_name(decorator.decorator) in RANK_ZERO_DECORATORS for decorator in function.decorators)


def _leaves_block(suite: cst.BaseSuite) -> bool:
    """The block ends by leaving the enclosing block: return, raise, continue, break, exit()."""
    statements = suite.body
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    if isinstance(last, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
        return True
    return (
        isinstance(last, cst.Expr)
        and isinstance(last.value, cst.Call)
        and dotted_name(last.value.func) in ("sys.exit", "exit", "quit", "os._exit")
    )


@dataclass(frozen=True)
class RegionCall:
    """A call of a same-module function, and the rank region it is in."""

    callee: str
    caller: str | None
    only_zero: bool
    never_zero: bool
    node: cst.Call
    first_replica: bool = False


@dataclass(frozen=True)
class _Region:
    """A block where only rank 0 (`only`), only the other ranks (`never`) or only the first
    data-parallel replica (`replica`) get, closed when the walk leaves node `pop_at`."""

    pop_at: int
    only: bool
    never: bool
    replica: bool
    guard: cst.CSTNode  # the `if` or decorated def that makes it so


def _facts(test: RankTest, way: bool) -> tuple[bool, bool, bool] | None:
    """(only zero, never zero, first replica) where `test` came out `way`; None if nothing."""
    facts = (
        (test.true_only_zero, test.true_never_zero, test.true_first_replica) if way
        else (test.false_only_zero, test.false_never_zero, test.false_first_replica)
    )
    return facts if any(facts) else None


def _meet_ends(body: tuple[bool, bool, bool] | None, orelse: tuple[bool, bool, bool] | None) -> tuple[bool, bool, bool] | None:
    """What holds after an `if` whose two ways end with these facts; None where nothing does or
    no way goes on."""
    if body is None or orelse is None:
        return None
    after = tuple(a and b for a, b in zip(body, orelse))
    return after if any(after) and after != (True, True, True) else None  # type: ignore[return-value]


def _assumed(test: cst.BaseExpression, way: bool) -> dict[str, bool]:
    """The names and attributes whose truth `test` coming out `way` fixes: `not args.deepspeed`
    true makes `args.deepspeed` false; `a and b` true makes both true."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _assumed(test.expression, not way)
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) == way:
        return {**_assumed(test.left, way), **_assumed(test.right, way)}
    name = dotted_name(test) if isinstance(test, (cst.Name, cst.Attribute)) else None
    return {name: way} if name is not None else {}


class RankRegions(Analysis):
    """Whether only rank 0, or only the other ranks, reach the current node; same-module
    calls with the region they are in, for questions about whole functions.

    Read `only_rank_zero`/`never_rank_zero` (and the `reached_by_*` forms) during the walk;
    `call_sites`, `functions` and `functions_only_rank_zero_calls()` after it.
    """

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        # id of a block -> what holds in it (only zero, never zero, first replica) and the `if`
        # or decorated def that makes it so
        self._pending: dict[int, tuple[tuple[bool, bool, bool], cst.CSTNode]] = {}
        # Per open frame (by id of the model's frame): the regions the walk is in.
        self._regions: dict[int, list[_Region]] = {}
        # Per open frame, the `if` tests around the walk and which way each came out: a test
        # inside another can settle the outer one (`if not args.deepspeed:` inside `if
        # dp_rank == 0 or args.deepspeed:`).
        self._conditions: dict[int, list[tuple[int, cst.BaseExpression, bool]]] = {}
        self._pending_conditions: dict[int, tuple[cst.BaseExpression, bool]] = {}
        # What each open `if`'s test says (visit_If), read again when it is left: the walk is in
        # the same frame and scope then, so the file's facts give the same answer.
        self._open_tests: dict[int, RankTest] = {}
        self._blocks: list[cst.CSTNode] = []  # the open blocks, where a guard's early exit ends
        # id of a block left -> what held at its end (its test's facts and its early exits')
        self._ends: dict[int, tuple[bool, bool, bool]] = {}
        self.call_sites: list[RegionCall] = []
        self.rank_aware_frames: set[str | None] = set()  # functions that test the rank or distributed mode
        self.functions: dict[str, cst.FunctionDef] = {}
        self.started: set[str] = set()  # same-module functions handed to a spawn of processes
        self.facts = RankFacts(model)
        # Bodies of `if`s whose test names a rank predicate without calling it: id -> its name;
        # the open ones as (id of the body, frame, name).
        self._uncalled: dict[int, str] = {}
        self._open_uncalled: list[tuple[int, int, str]] = []

    # -- where are we ---------------------------------------------------------------------

    @property
    def regions(self) -> list[_Region]:
        return self._regions.setdefault(id(self.model.frame), [])

    @property
    def conditions(self) -> list[tuple[int, cst.BaseExpression, bool]]:
        return self._conditions.setdefault(id(self.model.frame), [])

    @property
    def uncalled_guard(self) -> str | None:
        """Where the walk is in the body of `if is_main_process:` (a predicate named without a
        call, so the test is always true), that name; None elsewhere."""
        if self._open_uncalled and self._open_uncalled[-1][1] == id(self.model.frame):
            return self._open_uncalled[-1][2]
        return None

    @property
    def only_rank_zero(self) -> bool:
        """Only rank 0 of a distributed run gets here (or, vacuously, no rank does)."""
        return any(region.only for region in self.regions)

    @property
    def never_rank_zero(self) -> bool:
        return any(region.never for region in self.regions)

    @property
    def only_first_replica(self) -> bool:
        """Only the first data-parallel replica gets here: rank 0, or with model parallelism
        one process of each part of the model (`if mpu.get_data_parallel_rank() == 0:`)."""
        return any(region.replica for region in self.regions)

    @property
    def rank_zero_guard(self) -> cst.CSTNode | None:
        """Where the walk is in a region only rank 0 gets to, what makes it so: the innermost
        `if` whose test (or early exit) lets rank 0 alone through, or the function decorated as
        rank-0-only; None elsewhere."""
        return next((region.guard for region in reversed(self.regions) if region.only), None)

    @property
    def reached_by_rank_zero_alone(self) -> bool:
        """Rank 0 gets here and the other ranks of a distributed run do not."""
        return self.only_rank_zero and not self.never_rank_zero

    @property
    def reached_by_other_ranks_alone(self) -> bool:
        return self.never_rank_zero and not self.only_rank_zero

    def callee_key(self, call: cst.Call) -> str | None:
        """The same-module function a call may reach: `helper()`, `self.helper()`, or
        `trainer.train()` where `trainer` is bound once, to an object of a class of this module
        (`trainer = Trainer(args)`)."""
        func = call.func
        if isinstance(func, cst.Name) and self.model.qualified(func) is None:
            return func.value
        made = self.model.constant(func.value.value) if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) else None
        if (
            isinstance(made, cst.Call) and isinstance(made.func, cst.Name) and made.func.value in self.facts.classes
            and self.model.binding_scope(made.func.value) is self.model.module_scope
        ):
            return f"{made.func.value}.{func.attr.value}"  # type: ignore[union-attr]
        self_class = self.model.frame.self_class
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
            and self_class is not None
        ):
            return f"{self_class.name.value}.{func.attr.value}"
        return None

    # -- regions --------------------------------------------------------------------------

    def _push(self, node: cst.CSTNode, pop_at: cst.CSTNode | None = None) -> None:
        region = self._pending.pop(id(node), None)
        if region is not None:
            facts, guard = region
            self.regions.append(_Region(id(pop_at or node), *facts, guard))
        condition = self._pending_conditions.pop(id(node), None)
        if condition is not None:
            self.conditions.append((id(node), *condition))

    def _pop(self, node: cst.CSTNode) -> None:
        regions = self.regions
        for index in range(len(regions) - 1, -1, -1):
            if regions[index].pop_at == id(node):
                del regions[index]
        conditions = self.conditions
        if conditions and conditions[-1][0] == id(node):
            conditions.pop()

    def _note(self, block: cst.CSTNode, test: cst.BaseExpression, facts: RankTest, way: bool, guard: cst.If) -> None:
        """What holds in `block`, reached where `test` came out `way`: its own facts, and those
        of the tests around it once this one settles some of their parts."""
        found = _facts(facts, way)
        assumed = _assumed(test, way)
        for _, outer, outer_way in self.conditions if assumed else ():
            settled = _facts(classify(outer, lambda expr: self._settled(expr, assumed)), outer_way)
            if settled is not None:
                found = tuple(a or b for a, b in zip(found or (False,) * 3, settled))  # type: ignore[assignment]
        if found is not None:
            self._pending[id(block)] = (found, guard)  # type: ignore[assignment]
        self._pending_conditions[id(block)] = (test, way)

    def _settled(self, expr: cst.BaseExpression, assumed: dict[str, bool]):
        name = dotted_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
        if name in assumed:
            return ALWAYS_TRUE if assumed[name] else _ALWAYS_FALSE
        return self.facts(expr)

    def visit_Module(self, node: cst.Module) -> None:
        self._blocks.append(node)

    def visit_If(self, node: cst.If) -> None:
        self._push(node)
        test = self._open_tests[id(node)] = classify(node.test, self.facts)
        if test.is_rank_test:
            self.rank_aware_frames.add(self.model.frame.key)
        self._note(node.body, node.test, test, True, node)
        if node.orelse is not None:
            self._note(node.orelse, node.test, test, False, node)
        uncalled = self.facts.uncalled(node.test)
        if uncalled is not None:
            self._uncalled[id(node.body)] = uncalled

    def leave_If(self, original_node: cst.If) -> None:
        self._pop(original_node)
        # What follows the `if` in this block runs where both ways end: `if rank != 0: return`
        # leaves it to rank 0, and so does `if args.distributed: ...; if rank != 0: return` with
        # an `else:` that only a one-process run takes.
        orelse = original_node.orelse
        test = self._open_tests.pop(id(original_node))
        if isinstance(orelse, cst.If):
            return
        after = _meet_ends(
            self._end_of(original_node.body, test, True),
            self._end_of(orelse.body, test, False) if orelse is not None else _facts(test, False),
        )
        if after is not None:
            self._pending[id(original_node)] = (after, original_node)
            self._push(original_node, pop_at=self._blocks[-1])

    def _end_of(self, suite: cst.BaseSuite, test: RankTest, way: bool) -> tuple[bool, bool, bool] | None:
        """What holds at the end of a branch taken where `test` came out `way`: its own facts
        and those of the early exits in it; every fact (no rank goes on) when it leaves."""
        if _leaves_block(suite):
            return (True, True, True)
        ends = [facts for facts in (_facts(test, way), self._ends.pop(id(suite), None)) if facts is not None]
        return tuple(any(column) for column in zip(*ends)) if ends else None  # type: ignore[return-value]

    def visit_Else(self, node: cst.Else) -> None:
        self._push(node)

    def leave_Else(self, original_node: cst.Else) -> None:
        self._pop(original_node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._push(node)
        self._blocks.append(node)
        self._enter_suite(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._blocks.pop()
        ends = [(region.only, region.never, region.replica) for region in self.regions if region.pop_at == id(original_node)]
        if ends:
            self._ends[id(original_node)] = tuple(any(column) for column in zip(*ends))  # type: ignore[assignment]
        self._pop(original_node)
        self._leave_suite(original_node)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._push(node)
        self._enter_suite(node)

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self._pop(original_node)
        self._leave_suite(original_node)

    def _enter_suite(self, node: cst.BaseSuite) -> None:
        name = self._uncalled.pop(id(node), None)
        if name is not None:
            self._open_uncalled.append((id(node), id(self.model.frame), name))

    def _leave_suite(self, node: cst.BaseSuite) -> None:
        if self._open_uncalled and self._open_uncalled[-1][0] == id(node):
            self._open_uncalled.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        key = self.model.frame.key
        if decorated_rank_zero_only(node):
            self.regions.append(_Region(id(node), True, False, True, node))
        self.functions.setdefault(key, node)  # type: ignore[arg-type]

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._regions.pop(id(self.model.frame), None)

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.callee_key(node)
        if callee is not None:
            self.call_sites.append(
                RegionCall(
                    callee, self.model.frame.key, self.only_rank_zero, self.never_rank_zero, node, self.only_first_replica
                )
            )
        started = self._started(node)
        if started is not None:
            self.started.add(started)

    def _started(self, call: cst.Call) -> str | None:
        """The same-module function a call starts processes with: `mp.spawn(worker, ...)`,
        `start_processes(worker, ...)`, `Process(target=worker)`."""
        qualified = self.model.qualified(call.func)
        if qualified in SPAWN or qualified in START_PROCESSES:
            target = argument_for(call, SPAWN if qualified in SPAWN else START_PROCESSES, "fn")
        elif qualified in PROCESS:
            target = argument_for(call, PROCESS, "target")
        else:
            return None
        return target.value.value if target is not None and isinstance(target.value, cst.Name) else None

    # -- whole-module questions, for leave_Module -----------------------------------------

    def functions_only_rank_zero_calls(self, replicas: bool = False) -> set[str]:
        """Same-module functions called at least once, and only from rank-0-only places
        (directly, or from other such functions); with the project's program model, the calls
        other modules make count too (`if dist.get_rank() == 0: utils.save_checkpoint(...)`
        in train.py). `replicas`: the first data-parallel replica's places count too. Not a
        function handed to a spawn of processes (`mp.spawn(main_worker)`), also when a
        one-process fallback calls it directly (`else: main_worker(0, args)`)."""
        sites: dict[str, list[RegionCall]] = {}
        for site in self.call_sites:
            if site.callee in self.functions:
                sites.setdefault(site.callee, []).append(site)
        elsewhere: dict[str, bool | None] = {}

        def only_rank_zero_calls(callee: str, guarded: set[str]) -> bool:
            if callee in self.started:
                return False  # every process a spawn starts runs it, whoever else calls it
            callers = sites.get(callee, ())
            if not all((site.first_replica if replicas else site.only_zero) or site.caller in guarded for site in callers):
                return False
            if callee not in elsewhere:
                elsewhere[callee] = self._called_elsewhere_only_on_rank_zero(callee, replicas)
            return bool(elsewhere[callee] or (callers and elsewhere[callee] is None))

        def and_callees(guarded: set[str]) -> set[str]:
            return guarded | {callee for callee in self.functions if callee not in guarded and only_rank_zero_calls(callee, guarded)}

        return fixed_point(and_callees, {key for key, node in self.functions.items() if decorated_rank_zero_only(node)})

    def _called_elsewhere_only_on_rank_zero(self, key: str, replicas: bool) -> bool | None:
        """None when no other module calls function `key` (or there is no project model);
        else whether only rank 0 (or the first replica) makes each of those calls
        (ddplint.model.context)."""
        context = self.facts.context
        return context.called_elsewhere_only_on_rank_zero(self.model.project.module, key, replicas) if context else None


class WrappedModels(Analysis):
    """Names bound to `DistributedDataParallel(...)`, in traversal order (flow-sensitive:
    `model` is wrapped only after `model = DDP(model)`, and no longer after `model = other`).
    `self.x` belongs to the class, since it is bound in one method and used in another.

    With the project's program model (ddplint.model.program), also what other functions and
    modules make a DDP model: a parameter some call hands one (`train_one_epoch(model, ...)`
    called with the wrapped model), a `self` attribute another method or module stores one in,
    and the result of a project function that returns one (`model = build_model(args)`).
    `origin(expr)` says where such a model comes from."""

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self._bound: dict[str | None, set[str]] = {}
        self._origins: dict[tuple[str | None, str], object] = {}  # (owner, name) -> program Origin
        # Accelerate: names bound to `Accelerator(...)`, and to what its `prepare(...)` returns
        # (the model among them is DDP-wrapped when `accelerate launch` runs several processes).
        self._accelerators: dict[str | None, set[str]] = {}
        self._sharded_accelerators: dict[str | None, set[str]] = {}
        self._prepared: dict[str | None, set[str]] = {}
        # Names bound to a DDP model's inner module (`net = model.module`, `raw = unwrap_model(model)`,
        # a `self` attribute the program model says holds one): (owner, name) -> (the DDP model's
        # name where known, a note for a message).
        self._inner: dict[tuple[str | None, str], tuple[str | None, str]] = {}
        # The `DistributedDataParallel(...)` call a name is bound to here, and the value each plain
        # name was last assigned (what a DDP call's module argument names): (owner, name) -> node.
        self._wrap_calls: dict[tuple[str | None, str], cst.Call] = {}
        self._values: dict[tuple[str | None, str], cst.BaseExpression] = {}
        # The values the names held when each DDP call ran (by the call's id): `model = DDP(model)`
        # rebinds the name its module argument reads.
        self._values_at_wrap: dict[int, dict[tuple[str | None, str], cst.BaseExpression]] = {}

    def _owner(self, name: str) -> str | None:
        self_class = self.model.frame.self_class
        if name.startswith("self.") and self_class is not None:
            return f"class {self_class.name.value}"
        return self.model.frame.key

    def _bind(self, owner: str | None, name: str, origin) -> None:
        self._bound.setdefault(owner, set()).add(name)
        self._origins[(owner, name)] = origin

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        project = self.model.project
        if project is not None:
            for attribute, origin in project.wrapped_attributes(node.name.value).items():
                self._bind(f"class {node.name.value}", f"self.{attribute}", origin)
            for attribute, inner in project.inner_attributes(node.name.value).items():
                note = f" (`self.{attribute}` is the inner module of the DDP model wrapped at {inner.wrapped_at})"
                self._inner[(f"class {node.name.value}", f"self.{attribute}")] = (None, note)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        project = self.model.project
        if project is not None:
            key = self.model.frame.key
            for name, origin in project.wrapped_parameters(key).items():
                self._bind(key, name, origin)
            for name, prepared in project.prepared_parameters(key).items():
                if prepared.sharded:
                    continue  # prepared by DeepSpeed or FSDP: no DDP model
                self._prepared.setdefault(key, set()).add(name)
                self._origins[(key, name)] = prepared

    def _accelerate(self, node: cst.Assign) -> None:
        value = node.value
        if not isinstance(value, cst.Call):
            return
        func = value.func
        if self.model.qualified(func) in ACCELERATOR:
            # given a DeepSpeed or FSDP plugin, or launched only with such a configuration,
            # what it prepares is no DDP model
            shards = self.model.project is not None and self.model.project.accelerate_shards
            table = self._sharded_accelerators if _sharding(value) or shards else self._accelerators
        elif isinstance(func, cst.Attribute) and func.attr.value == "prepare" and self._named_in(self._accelerators, func.value):
            table = self._prepared
        else:
            return
        for target in node.targets:
            elements = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else (target.target,)
            for element in elements:
                name = dotted_name(element.value if isinstance(element, cst.BaseElement) else element)
                if name is not None:
                    table.setdefault(self._owner(name), set()).add(name)

    def _named_in(self, table: dict[str | None, set[str]], expr: cst.BaseExpression) -> bool:
        name = dotted_name(expr)
        return name is not None and any(name in table.get(owner, ()) for owner in self._owners_here())

    def is_accelerator(self, expr: cst.BaseExpression) -> bool:
        """`expr` names an `Accelerator(...)` built here (with or without a sharding plugin)."""
        return self._named_in(self._accelerators, expr) or self._named_in(self._sharded_accelerators, expr)

    def is_prepared(self, expr: cst.BaseExpression) -> bool:
        """`expr` names what Accelerate's `accelerator.prepare(...)` returned: called, it is the
        prepared model (the optimizer, loaders and schedulers it also returns are not called)."""
        return self._named_in(self._prepared, expr)

    def prepared_where(self, expr: cst.BaseExpression) -> str:
        """A note on where another function prepared the model `expr` names (" (`model` is
        prepared by Accelerate at train.py:30 and passed here by the call at train.py:33)"), or ""."""
        name = dotted_name(expr)
        origin = self._origins.get((self.model.frame.key, name)) if name is not None else None
        if origin is None or not hasattr(origin, "prepared_at"):
            return ""
        return f" (`{name}` is prepared at {origin.prepared_at} and passed here by the call at {origin.passed_at})"

    def visit_Assign(self, node: cst.Assign) -> None:
        self._accelerate(node)
        value = node.value
        # `model = DDP(m) if distributed else m`: the distributed run takes the wrapping branch
        branches = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        wrap_call = next((b for b in branches if isinstance(b, cst.Call) and self.model.qualified(b.func) in DDP), None)
        wraps = wrap_call is not None
        origin = None
        same = value  # `model = model.train()`: what the calls return is the object they are called on
        while isinstance(same, cst.Call) and isinstance(same.func, cst.Attribute) and same.func.attr.value in SAME_VALUE_METHODS:
            same = same.func.value
        if wraps:
            pass
        elif isinstance(same, (cst.Name, cst.Attribute)) and self.is_wrapped(same):  # `self.model = model`
            wraps, origin = True, self._origin(dotted_name(same))
        elif isinstance(value, cst.Call) and self.model.project is not None:
            callee, self_class = dotted_name(value.func), self.model.frame.self_class
            if callee is not None:
                origin = self.model.project.wrapped_result(callee, self_class.name.value if self_class else None)
        if wrap_call is not None:
            self._values_at_wrap[id(wrap_call)] = dict(self._values)
        for target in node.targets:
            self._unpack(target.target, value)
            name = dotted_name(target.target)
            if name is None:
                continue
            owner = self._owner(name)
            self._origins.pop((owner, name), None)
            receiver = value
            while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value in SAME_VALUE_METHODS:
                receiver = receiver.func.value
            # `model = model.cuda()` keeps the object `model` held: its value stays what it was
            self._values[(owner, name)] = self._values.get((owner, name), value) if receiver is not value and dotted_name(receiver) == name else value
            if wrap_call is not None:
                self._wrap_calls[(owner, name)] = wrap_call
            else:
                self._wrap_calls.pop((owner, name), None)
            if origin is not None:
                self._bind(owner, name, origin)
            elif wraps:
                self._bound.setdefault(owner, set()).add(name)
            else:
                self._bound.setdefault(owner, set()).discard(name)
            unwrapped = self._unwrapped(value)
            if unwrapped is not None:
                wrapper, taken = unwrapped
                dropped = ": the DDP model itself is not kept" if isinstance(wrapper, cst.Call) else ""
                self._inner[(owner, name)] = (dotted_name(wrapper), f"{self.where(wrapper)} (`{name}` is `{taken}`{dropped})")
            else:
                self._inner.pop((owner, name), None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        """`model: nn.Module = DDP(net)` binds as `model = DDP(net)` does (relora)."""
        if node.value is not None:
            self.visit_Assign(cst.Assign(targets=[cst.AssignTarget(target=node.target)], value=node.value))

    def _unwrapped(self, expr: cst.BaseExpression) -> tuple[cst.BaseExpression, str] | None:
        """(the DDP model, how `expr` is written) where `expr` takes a DDP model's inner module:
        `model.module`, `DistributedDataParallel(net).module` (the DDP model itself is dropped), or a
        project helper that returns it (`unwrap_model(model)`)."""
        if isinstance(expr, cst.Attribute) and expr.attr.value == "module":
            if self.is_wrapped(expr.value):
                return expr.value, f"{dotted_name(expr.value)}.module"
            if isinstance(expr.value, cst.Call) and self.model.qualified(expr.value.func) in DDP:
                return expr.value, f"{dotted_name(expr.value.func)}(...).module"
        project = self.model.project
        callee = dotted_name(expr.func) if isinstance(expr, cst.Call) and project is not None else None
        if callee is None:
            return None
        self_class = self.model.frame.self_class
        unwrapped = project.unwrapped_argument(self.model.frame.key, self_class.name.value if self_class else None, callee)
        arg = argument_at(expr, *unwrapped) if unwrapped is not None else None
        if arg is None or not self.is_wrapped(arg.value):
            return None
        return arg.value, f"{callee}({dotted_name(arg.value)})"

    def inner(self, expr: cst.BaseExpression) -> tuple[str | None, str] | None:
        """(the DDP model's name where known, a note for a message) where `expr` is a DDP model's
        inner module through a name bound to it or a project helper's call (`_unwrapped`):
        `net` after `net = model.module`, `self.net`, `unwrap_model(model)`; None otherwise."""
        name = dotted_name(expr)
        for owner in self._owners_here() if name is not None else ():
            if (owner, name) in self._inner:
                return self._inner[(owner, name)]
        unwrapped = self._unwrapped(expr) if isinstance(expr, cst.Call) else None
        if unwrapped is None:
            return None
        wrapper, taken = unwrapped
        return dotted_name(wrapper), f"{self.where(wrapper)} (`{taken}` is its inner module)"

    def inner_name(self, wrapper: cst.BaseExpression) -> str | None:
        """A name visible here bound to the inner module of the DDP model `wrapper` names
        (`model_without_ddp` after `model_without_ddp = model.module`), or None."""
        name, owners = dotted_name(wrapper), self._owners_here()
        bound = (inner for (owner, inner), (of, _) in self._inner.items() if owner in owners and of == name)
        return next(bound, None) if name is not None else None

    def _unpack(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`model, device = setup(net)`: a name takes the DDP model the project function returns
        at its position."""
        project = self.model.project
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, cst.Call) or project is None:
            return
        callee, self_class = dotted_name(value.func), self.model.frame.self_class
        if callee is None or any(isinstance(element, cst.StarredElement) for element in target.elements):
            return
        for index, element in enumerate(target.elements):
            name = dotted_name(element.value)
            if name is None:
                continue
            owner = self._owner(name)
            self._origins.pop((owner, name), None)
            self._bound.setdefault(owner, set()).discard(name)
            origin = project.wrapped_result(callee, self_class.name.value if self_class else None, index)
            if origin is not None:
                self._bind(owner, name, origin)

    def _owners_here(self) -> list[str | None]:
        frame = self.model.frame
        kept = self.__dict__.get("_owners_of")
        if kept is not None and kept[0] is frame:
            return kept[1]
        owners = [frame.key]
        # a nested function reads the names of the functions around it it does not bind (a
        # closure: `def update(engine, batch): model(batch)` inside the function that wraps `model`)
        outer = frame.parent if frame.is_function else None
        while outer is not None and outer.is_function:
            owners.append(outer.key)
            outer = outer.parent
        owners.append(None)
        if frame.self_class is not None:
            owners.append(f"class {frame.self_class.name.value}")
        self._owners_of = (frame, owners)  # the same for the whole frame: asked of every expression
        return owners

    def names_here(self) -> set[str]:
        """The wrapped names visible where the walk is."""
        return set().union(*(self._bound.get(owner, ()) for owner in self._owners_here()))

    def is_wrapped(self, expr: cst.BaseExpression) -> bool:
        # (asked of nearly every expression some rules see: no set of the names is built, and
        # no generator; most files bind no wrapped name at all)
        bound = self._bound
        if not bound:
            return False
        name = dotted_name(expr)
        if name is None:
            return False
        for owner in self._owners_here():
            if name in bound.get(owner, ()):
                return True
        return False

    def _origin(self, name: str | None):
        for owner in self._owners_here():
            if name is not None and name in self._bound.get(owner, ()):
                return self._origins.get((owner, name))
        return None

    def wrap_site(self, expr: cst.BaseExpression):
        """Where the DDP model `expr` names was wrapped: the `DistributedDataParallel(...)` call
        of this file it is bound to, or the program model's value (ddplint.model.records.Wrapped:
        another function or module wrapped it); None when unknown."""
        name = dotted_name(expr)
        for owner in self._owners_here() if self.is_wrapped(expr) else ():
            if (owner, name) in self._wrap_calls:
                return self._wrap_calls[(owner, name)]
        origin = self._origin(name)
        return origin if hasattr(origin, "wrapped_at") else None

    def value_of(self, expr: cst.BaseExpression, wrap: cst.Call | None = None) -> cst.BaseExpression | None:
        """The value the name `expr` was last assigned where the walk is (in this function, or
        for `self.x` in its class), or None; with `wrap`, a DDP call of this file, the value it
        held when that call ran."""
        name = dotted_name(expr)
        values = self._values_at_wrap.get(id(wrap), self._values) if wrap is not None else self._values
        return next((values[(o, name)] for o in self._owners_here() if (o, name) in values), None) if name else None

    def where(self, expr: cst.BaseExpression) -> str:
        """A note for a message on where the DDP model `expr` names was made, when another
        function or module made it (" (`model` is wrapped in DDP at train.py:141 and passed
        here by the call at train.py:150)"); "" when this function wrapped it itself."""
        name = dotted_name(expr)
        origin = self._origin(name)
        return f" ({origin.describe(name)})" if origin is not None else ""
