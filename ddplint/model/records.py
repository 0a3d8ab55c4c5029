"""The program model's data: places, what a summary says an expression holds, function and
module summaries, and the values the solved program gives. Typed records, frozen, and stored in
the cache without losing their type (`encode`/`decode`).

Three families:

- `Place`: a line of a project file, where something is made, passed, saved or combined.
- Sources (`Source`): what an expression holds in a function, as the summary writes it before
  anything is solved (`Param("model")`, `CallResult("DDP", 12)`, `Item(CallResult(...), 0)`).
  The program evaluates a source to a value.
- Values (`Value`): what the solved program knows a source holds: a DDP model (`Wrapped`), its
  inner module (`Inner`), what Accelerate prepared (`Prepared`), a framework's object that
  communicates (`Framework`: an Accelerator, a DeepSpeed engine, an FSDP model), a sampler or a loader drawing
  from one (`Sampler`, `Loader`), an object of a project class (`Instance`), a library loss
  scaler (`LossScaler`), or several of them in a tuple, list or dict (`Pack`).

A function's summary (`FunctionSummary`) lists, in statement order, what the program model
needs of it; a module's (`ModuleSummary`) holds its functions, classes and who runs them
(`FunctionContext`, read by ddplint.model.context). This module imports nothing of the model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from typing import Union

_RECORDS: dict[str, type] = {}


def record(cls):
    """A frozen dataclass the cache can store (`encode`) and load back (`decode`) by its name."""
    cls = dataclass(frozen=True)(cls)
    _RECORDS[cls.__name__] = cls
    return cls


# -- places --------------------------------------------------------------------------------


@record
class Place:
    """A line of a project file, by its path relative to the project root."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@record
class LaunchCommand:
    """A command in a shell script or document of the project (README, run.sh, *.md, *.yaml)
    that runs `launcher` (a key of torch_api.LAUNCHERS: `torch.distributed.launch`,
    `deepspeed`), with the lines it continues onto with backslashes. `runs_in`: the project
    folder a `cd` before it moved to ("" the root; UNKNOWN_FOLDER where that is no folder of the
    project that can be told; None where no `cd` came before it: the folder it is run from is
    not written). `processes`: how many processes a configuration file it names starts
    (`accelerate launch --config_file x.yaml`), where that file says so (None: not known)."""

    place: Place
    command: str
    launcher: str
    runs_in: str | None = None
    processes: int | None = None


UNKNOWN_FOLDER = "*"  # a `cd` to a folder that is not one of the project's, or not known


# -- sources: what an expression holds, as a summary writes it --------------------------------


@record
class Param:
    """The function's parameter `name`."""

    name: str


@record
class SelfAttr:
    """`self.<name>` in a method."""

    name: str


@record
class Literal:
    """A literal argument of a data call (`shuffle=False`); `value` None where the code decides."""

    value: object


@record
class Unknown:
    """An argument of a data call the summary does not follow."""


@record
class ParameterTest:
    """An `if` around a sampler's construction that tests a parameter of the builder against
    literals (`if split == "train":`): `values` None for any true value, `way` which branch."""

    name: str
    values: tuple | None
    way: bool


@record
class DataCall:
    """What a call that may build a DistributedSampler, a DataLoader or a BatchSampler passes
    for what the program follows: `shuffle`/`drop_last` (a Literal, Unknown, or None when not
    passed), the source of the `dataset`, `sampler` or `batch_sampler` (Unknown when not
    followed), and the builder's parameter tests around it. `starred`: `*args` hide where
    things land (`**kwargs` only what is not given by name: those are Unknown)."""

    shuffle: Literal | Unknown | None = None
    drop_last: Literal | Param | Unknown | None = None  # a Param: the builder's parameter passed as it
    dataset: Source | Unknown | None = None
    sampler: Source | Unknown | None = None
    batch_sampler: Source | Unknown | None = None
    when: tuple[ParameterTest, ...] = ()
    starred: bool = False
    optional: bool = False  # a DataLoader's `sampler` may be None on some path (Summary._may_be_none)


@record
class CallResult:
    """What the call of `callee` at `line` returns; `data` where it may build a sampler or loader;
    `plugins`, the sharding plugins (torch_api.ACCELERATOR_SHARDING_PLUGINS) a call named like
    an Accelerator is given, or the Accelerator a method is called on was (`accelerator.prepare`)."""

    callee: str
    line: int
    data: DataCall | None = None
    plugins: tuple[str, ...] = ()


@record
class Either:
    """One of the branches' values (`a if test else b`, a name two ways of an `if` bind)."""

    branches: tuple


@record
class Group:
    """A tuple or list literal of sources (None where unknown), or a dict literal's values with its `keys`."""

    items: tuple
    keys: tuple[str, ...] = ()


@record
class Each:
    """A list whose every element is `item` (`[DataLoader(d) for d in ds]`, `append` in a loop)."""

    item: Source


@record
class Element:
    """An element of the list `listed` (the target of a loop over it)."""

    listed: Source


@record
class Item:
    """`held[index]`: an element of a tuple, or a dict's value under a literal key; `size`: the
    number of names an unpacking binds (`a, b = build()`), which only a tuple of that many
    items fits (another raises), or None."""

    held: Source
    index: int | str
    size: int | None = None


@record
class InnerOf:
    """The module a DDP model wraps: `wrapper.module`, `getattr(wrapper, "module", wrapper)`."""

    wrapper: Source


@record
class Attr:
    """`held.<name>` of an object other than `self`: an attribute of a project object
    (`Loaders(cfg).train_loader`), or one the program carries on an object it follows
    (`args.train_loader = loader` in one function, read in another that is handed `args`)."""

    held: Source
    name: str


Source = Union[Param, SelfAttr, CallResult, Either, Group, Each, Element, Item, InnerOf, Attr]


# -- a function's summary ----------------------------------------------------------------------


@record
class Called:
    """A call of the dotted name `callee` at `line`."""

    callee: str
    line: int


@record
class PassingCall:
    """A call that passes followed values: the sources of its positional arguments (None where
    unknown) and of its keyword arguments."""

    callee: str
    args: tuple
    keywords: dict
    line: int


@record
class LiteralCall:
    """A call's literal arguments, as (position or keyword, value) pairs."""

    callee: str
    line: int
    literals: tuple


@record
class Loop:
    """A loop (or comprehension) from line `first` to `last`, over the parameters (or "self.x")
    its iterable names; `trains` when a backward() runs in it. `sources`: what its iterable
    iterates (`loader`, `args.train_loader`; `enumerate(self.loader)` as a Through); a `while`
    loop iterates nothing."""

    first: int
    last: int
    iterated: tuple[str, ...]
    trains: bool
    sources: tuple = ()


@record
class Through:
    """What a loop iterates through calls that wrap it (`enumerate(tqdm(loader))`, `pbar =
    tqdm(loader)`): `held`, handed through `calls`, outermost first, as (callee, position)."""

    held: Source
    calls: tuple


@record
class Unlike:
    """`held` where an `if isinstance(held, C):` around found it no instance of any of
    `classes` (as written: the program qualifies them): the `else:` of `if isinstance(model,
    DistributedDataParallel):` holds no DDP model."""

    held: Source
    classes: tuple[str, ...]


@record
class Pull:
    """`iter(x)` at `line`: a new pass over what `sources` hold starts there (`next(iter(loader))`)."""

    line: int
    sources: tuple


@record
class Carried:
    """`holder.<name> = source` on an object other than `self` that the function holds (a
    parameter, or what a call returned): `args.train_loader = build_loader(args)`."""

    holder: Source
    name: str
    source: Source


@record
class Handed:
    """A call whose first argument is the parameter `param`, untouched so far: `DDP(model, ...)`."""

    callee: str
    param: str
    line: int
    keywords: tuple[str, ...]


@record
class GroupCall:
    """`init_process_group(...)` at `line` with its literal `backend` (None when not a literal);
    `bound` when it is given a device (`device_id=`)."""

    callee: str
    line: int
    backend: str | None
    bound: bool


@record
class ForwardPass:
    """A call of a followed value (`model(x)`, `model.forward(x)`) where gradients are on."""

    source: Source
    line: int


@record
class InnerHanded:
    """A call that hands a model's inner module on: the callee as written and resolved, the
    position or keyword, the argument as written, its source."""

    written: str | None
    callee: str
    position: int | str
    argument: str
    source: Source
    line: int


@record
class MethodCall:
    """A call of a method a framework object may have (torch_api.FRAMEWORK_METHODS) on a value the
    summary follows: the method, the source of its receiver, the call as written, its line."""

    method: str
    receiver: Source
    written: str
    line: int


@record
class ParameterLoop:
    """A loop at `line` over the parameter at `index`."""

    index: int
    line: int


@record
class Save:
    """`save(obj, f)`: the (dict key, source) of each model whose `state_dict()` it writes, and
    the file it writes (a path key; "param:<name>" for a parameter its callers name)."""

    callee: str
    held: tuple
    path: str | None
    line: int


@record
class StateSave:
    """`save(obj, f)` of an object's whole state dict (`torch.save(sched.state_dict(), p)`, also
    through a local bound to it): the object as written (`sched`, `self.lr_scheduler`)."""

    callee: str
    state_of: str
    line: int


@record
class FileWrite:
    """A call named like a save given a file (a path key; "param:<name>" for a parameter its
    callers name; "folder:<name>" for a file the save names in a folder a parameter names); `host`: what it saves holds no CUDA tensors (tensors on the host, or plain
    Python values); `saved`: where the function alone cannot tell, what it saves as a source
    (a parameter, the state dict of an object the function made), for the program to judge."""

    callee: str
    path: str
    host: bool
    line: int
    saved: object = None


@record
class HandedFiles:
    """The files (path keys) a save helper is handed, by position (as a string) or keyword."""

    callee: str
    given: dict
    line: int


@record
class HandedStates:
    """The state dicts a call named like a save helper is handed (`save_checkpoint({"state_dict":
    model.state_dict()}, path)`), by position (as a string) or keyword: [(dict key, source of the
    model whose state_dict() the argument holds)]. The helper's own summary says which of its
    parameters it `torch.save`s."""

    callee: str
    given: dict
    line: int


@record
class Send:
    """A call that pickles what it is given (spawn, Process, a queue's put, torch.save)."""

    callee: str
    sent: tuple
    line: int


@record
class RecordWrite:
    """A save of a dict with string `keys` (by torch.save or a save helper); `plain` when it
    holds no CUDA tensors (Python values, tensors on the host)."""

    callee: str
    keys: tuple[str, ...]
    plain: bool
    line: int


@record
class Escapes:
    """What leaves a function (ddplint.model.files reads it): the files it saves (`saves`, with
    the state dicts in them; `files`, every call named like a save given a file; `handed_files`,
    the files a save helper is handed, `handed_states` the state dicts; `plain_saves`, saves under no `if` in a function saying
    nothing of ranks; `writes`, saved dict records; `state_saves`, saves of one object's whole
    state dict, by the object's name), what it pickles to another process
    (`sends`), and the call results it keeps beyond what the summary follows (`stores`)."""

    saves: tuple[Save, ...] = ()
    files: tuple[FileWrite, ...] = ()
    handed_files: tuple[HandedFiles, ...] = ()
    plain_saves: tuple[Called, ...] = ()
    writes: tuple[RecordWrite, ...] = ()
    sends: tuple[Send, ...] = ()
    stores: tuple = ()
    state_saves: tuple[StateSave, ...] = ()
    handed_states: tuple[HandedStates, ...] = ()


@record
class FunctionSummary:
    """What the program model knows of one function (ddplint.model.summary reads it):

    - `calls`: calls that pass followed values; `invocations`: every call of a dotted name;
      `element_calls`: calls on an element of a value, by the dotted name of what is indexed
      (`metric_logger.meters["acc"].update(...)`: `utils.MetricLogger().meters`);
      `literals`: the literal arguments of calls;
    - `returns`: what its returns give (`other_returns`: it may return something else or
      None); `fresh`: per return, the call whose result it returns untouched, or None;
    - `sets`: what it stores on `self`; `made`: callees whose results it binds;
    - `loops`, `pulls` (`iter(x)` calls), `backward` (lines), `gates` (parameters a `step()`
      waits on), `forward_passes`; `carried`: what it stores on objects other than `self`;
    - `handed`: its untouched parameters handed first to a call; `process_groups`;
      `unwrapped`: inner modules it hands on; `cuda`/`bare_cuda`: the first line placing on
      CUDA / on the current CUDA device; `device_moves`: a move that names its device;
      `sync_control`: it controls DDP's all-reduce (`no_sync()`, `require_backward_grad_sync`);
    - `method_calls`: calls of framework methods on followed values; `grouped`: the lines of
      calls given a process group (`group=`), which only that group's ranks must reach;
    - `forwards`: the DataLoader an `__init__` hands its **kwargs; `cycles`/`passes`: the
      parameter an endless generator re-iterates / a function passes over once;
      `deduplicates`: it cuts or places results by sample; `keyed_files`/`lists_files`: it
      writes a file per sample named by the sample / lists a folder's files (ddplint.model.keyed);
      `abstract`: a method that only stands for its subclasses' overrides (`@abstractmethod`, or a
      body that only raises NotImplementedError): a call of it runs an override;
      `input_gradient`: its backward()
      takes the gradient of an input it asked gradients of, and it steps no optimizer (an
      attack, a saliency map): it trains nothing;
    - what leaves it (`escapes`: files saved, values pickled or kept), and `tolerant`, the
      lines of calls passing find_unused_parameters other than a literal False.
    """

    line: int
    params: tuple[str, ...]
    method: bool
    cls: str | None
    calls: tuple[PassingCall, ...] = ()
    returns: tuple = ()
    other_returns: bool = False
    fresh: tuple = ()
    sets: dict = field(default_factory=dict)
    made: tuple[str, ...] = ()
    invocations: tuple[Called, ...] = ()
    element_calls: tuple[Called, ...] = ()
    literals: tuple[LiteralCall, ...] = ()
    loops: tuple[Loop, ...] = ()
    pulls: tuple[Pull, ...] = ()
    carried: tuple[Carried, ...] = ()
    backward: tuple[int, ...] = ()
    gates: tuple[str, ...] = ()
    handed: tuple[Handed, ...] = ()
    process_groups: tuple[GroupCall, ...] = ()
    forward_passes: tuple[ForwardPass, ...] = ()
    method_calls: tuple[MethodCall, ...] = ()
    grouped: tuple[int, ...] = ()
    unwrapped: tuple[InnerHanded, ...] = ()
    cuda: int | None = None
    bare_cuda: int | None = None
    device_moves: bool = False
    sync_control: bool = False
    forwards: Called | None = None
    cycles: ParameterLoop | None = None
    passes: ParameterLoop | None = None
    deduplicates: bool = False
    keyed_files: bool = False
    lists_files: bool = False
    input_gradient: bool = False
    abstract: bool = False
    escapes: Escapes = Escapes()
    tolerant: tuple[int, ...] = ()

    def arguments(self, bound: bool) -> tuple[str, ...]:
        """The parameters a call fills, `self` left out where it is bound."""
        return self.params[1:] if bound else self.params


@record
class Guard:
    """An `if` around lines `first` to `last`: its test as source text, and whether it is true there."""

    test: str
    first: int
    last: int
    sense: bool


@record
class FunctionContext:
    """Who runs a function (ddplint.model.context): the guards around its code, its calls, its
    decorators, and the lines of a function short enough to be read as a predicate."""

    guards: tuple[Guard, ...] = ()
    calls: tuple[Called, ...] = ()
    decorators: tuple[str, ...] = ()
    lines: tuple[int, int] | None = None


UNNAMED_BASE = "<expression>"  # a base written as a call or a subscript: no class that can be named


@record
class ClassSummary:
    line: int
    bases: tuple[str, ...]


@record
class ModuleSummary:
    """A module's functions (by `name`, or `Class.name` for a method), its classes, who runs its
    code (`context`, "" for the module's own code), the imports its top-level `if` and `try`
    blocks bind (name -> every origin, the last one last), and whether it may bind a device."""

    functions: dict
    classes: dict
    context: dict
    binds_device: bool
    imports: dict = field(default_factory=dict)


# -- values: what the solved program knows a source holds -------------------------------------


class Value:
    """A value the program follows. `passed_at`: the call that hands it to a parameter, if it
    was handed; a function's result forgets it (`made`)."""

    passed_at: Place | None

    def made(self):
        """The value as its maker has it, without the call that passed it on."""
        return replace(self, passed_at=None) if self.passed_at is not None else self


@record
class Wrapped(Value):
    """A DDP model, wrapped at `wrapped_at`; `wraps`: the (module, class) of the project class
    whose object it wraps, where the program follows it; `broadcasts`: its forward broadcasts the
    module's buffers (the wrap does not pass `broadcast_buffers=False`)."""

    wrapped_at: Place
    passed_at: Place | None = None
    wraps: tuple[str, str] | None = None
    broadcasts: bool = True

    def describe(self, name: str) -> str:
        text = f"`{name}` is wrapped in DDP at {self.wrapped_at}"
        return f"{text} and passed here by the call at {self.passed_at}" if self.passed_at else text


@record
class Prepared(Value):
    """What Accelerate's `accelerator.prepare(...)` returned at `prepared_at`: the model among
    them is DDP-wrapped when `accelerate launch` runs several processes, unless the Accelerator
    was given a DeepSpeed or FSDP plugin (`sharded`)."""

    prepared_at: Place
    passed_at: Place | None = None
    sharded: bool = False


@record
class Framework(Value):
    """An object of a framework that communicates across ranks, made at `made_at`: an Accelerate
    `Accelerator` (`kind` "accelerate"; `sharded` when given a DeepSpeed or FSDP plugin), a
    DeepSpeed engine ("deepspeed"), a model FSDP1 wraps ("fsdp"; `sharded` when its sharding
    strategy is known to split the parameters and gradients across the ranks). Which of its
    methods every rank must call: torch_api.FRAMEWORK_COLLECTIVES."""

    kind: str
    made_at: Place
    sharded: bool = False
    passed_at: Place | None = None


@record
class Inner(Value):
    """The module inside the DDP model wrapped at `wrapped_at`: calling it runs the model
    without DDP's forward."""

    wrapped_at: Place
    passed_at: Place | None = None


@record
class Instance(Value):
    """An object of the project class `cls` of `module`, made at `made_at`."""

    module: str
    cls: str
    made_at: Place | None
    passed_at: Place | None = None


@record
class FileStep:
    """A step a function takes with files and the ranks (ddplint.model.program.Program.file_steps):
    `kind` "write" (a file), "barrier" or "list" (a folder's files), at `place`; `every_rank`:
    every rank that runs the function takes it (no rank test stands around it)."""

    kind: str
    place: Place
    every_rank: bool


@record
class LossScaler(Value):
    """An object of a library loss scaler (torch_api.LOSS_SCALERS: timm's NativeScaler): calling
    it runs the backward, and the optimizer step unless its gate says not to."""

    made_at: Place
    passed_at: Place | None = None


@record
class SamplerTest:
    """A parameter test of the builder `(module, key)` that a sampler is made under."""

    module: str
    key: str
    test: ParameterTest


@record
class Sampler(Value):
    """A torch DistributedSampler made at `made_at`. `shuffle`/`drop_last`: None where the code
    decides at run time. `dataset`: the (module, key, parameter) of its builder that is its
    dataset; `when`: the parameter tests it is made under; `drop_last_from`: the (module, key,
    parameter) of its builder passed as its drop_last (`drop_last=is_train`), which a call of
    the builder passing a literal decides (Program.admitted). `optional`: as a DataLoader draws
    from it, it may be absent on some path of the code that makes the loader (`DistributedSampler(ds)
    if distributed else None`, `sampler = None` in another branch, another sampler there): the
    loader's `sampler` is then a RandomSampler or SequentialSampler, which has no set_epoch.
    `epoch_given`: the call hands its constructor, for the epoch its order is seeded from, a
    parameter of the function that makes it (`DistributedSampler(ds, epoch=epoch)` of a project
    class whose `__init__` stores it where `set_epoch` does)."""

    made_at: Place
    shuffle: bool | None = True
    drop_last: bool | None = False
    passed_at: Place | None = None
    dataset: tuple | None = None
    when: tuple[SamplerTest, ...] = ()
    optional: bool = False
    drop_last_from: tuple | None = None
    epoch_given: bool = False

    @property
    def pads(self) -> bool:
        """It repeats samples to give every rank as many: drop_last is known to be off."""
        return self.drop_last is False


@record
class Loader(Value):
    """A DataLoader made at `made_at`, drawing from `sampler`; `batched` where it draws through
    its `batch_sampler` (a BatchSampler over the sampler): its own `sampler` is then the
    SequentialSampler or RandomSampler DataLoader makes, and the sampler is `batch_sampler.sampler`."""

    made_at: Place
    sampler: Sampler
    passed_at: Place | None = None
    batched: bool = False

    @property
    def when(self) -> tuple[SamplerTest, ...]:
        return self.sampler.when


@record
class Batches(Value):
    """A BatchSampler made at `made_at` over `sampler` (a DistributedSampler): a DataLoader given
    it as `batch_sampler` draws from that sampler (a Loader that is `batched`), also where a
    project function makes it and returns it (`batch_sampler = build_sampler(args, dataset)`)."""

    made_at: Place
    sampler: Sampler
    passed_at: Place | None = None


@record
class Pack(Value):
    """Values by position (None where unknown): what `return a, b` gives; a dict literal's
    values with their `keys`; a list every element of which is the one item (`each`)."""

    items: tuple
    passed_at: Place | None = None
    keys: tuple = ()
    each: bool = False

    def at(self, index: int | str):
        """The item at a position, or under a key of a dict (`loaders["val"]`); None if unknown."""
        if self.each:
            return self.items[0]
        if isinstance(index, str):
            index = self.keys.index(index) if index in self.keys else len(self.items)
        return self.items[index] if index < len(self.items) else None


# -- the cache's form ------------------------------------------------------------------------

_TAG = "@"  # no function, attribute or keyword is named so


def encode(value):
    """JSON-able data for a record (a dict naming its type), a tuple or list, a dict or a plain value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        found = {_TAG: type(value).__name__}
        for item in dataclasses.fields(value):
            held = getattr(value, item.name)
            if item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING or held != _default(item):
                found[item.name] = encode(held)
        return found
    if isinstance(value, (tuple, list)):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    return value


def decode(data):
    """The record, tuple or dict that `encode` gave `data` for (a JSON list comes back as a tuple)."""
    if isinstance(data, list):
        return tuple(decode(item) for item in data)
    if isinstance(data, dict):
        kind = data.get(_TAG)
        if kind is None:
            return {key: decode(item) for key, item in data.items()}
        return _RECORDS[kind](**{key: decode(item) for key, item in data.items() if key != _TAG})
    return data


def _default(item: dataclasses.Field):
    return item.default_factory() if item.default_factory is not dataclasses.MISSING else item.default
