from __future__ import annotations

import operator
from dataclasses import dataclass, field

import libcst as cst

from ddplint.analyses.configs import ConfigValues
from ddplint.analyses.options import UNKNOWN, ParserOptions, literal
from ddplint.analyses.ranks import WrappedModels
from ddplint.core.diagnostics import StepKind
from ddplint.model.records import Param, SelfAttr
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule, wrap_links
from ddplint.semantic.model import Scope, dotted_name
from ddplint.core.torch_api import ACCELERATOR, DDP, IGNITE_ENGINE, LOSS_SCALERS
from ddplint.semantic.edits import argument_for
from ddplint.semantic.walk import children, descendants

_BACKWARD_ONLY = (
    "no_sync() around the backward only: DDP decides whether to all-reduce during the forward, "
    "which ran outside it, so this backward still all-reduces; put the forward inside the "
    "no_sync() block too"
)


# the forward is a model `accelerator.prepare(...)` returned; where another function prepared it, after the prefix
_PREPARED = "(prepared by Accelerate)"
_ACCELERATE = (
    "gradient accumulation on a model prepared by Accelerate, outside accelerator.accumulate(): under "
    "`accelerate launch` it is DDP-wrapped and every micro-batch's backward all-reduces (k times the "
    "communication per optimizer step); build `Accelerator(gradient_accumulation_steps=k)` and run each "
    "micro-batch inside `with accelerator.accumulate(model):`, or its forward and backward inside "
    "`with accelerator.no_sync(model):`"
)


@dataclass(frozen=True)
class _Forward:
    """The DDP model's forward in a micro-batch loop: the note the message adds on where the
    model comes from, whether Accelerate prepared it, and the steps to it (where it is
    wrapped, the call that runs it)."""

    note: str
    prepared: bool
    links: tuple[Link, ...]


@dataclass(frozen=True)
class _Candidate:
    """A backward that all-reduces on every micro-batch: its function, the call, the forward,
    the loop, what gates the optimizer step (an `if`, a gate argument, the step itself), and
    the counts of micro-batches per step the code writes (`_counts`) with the scope they are
    read in."""

    function: int
    backward: cst.Call
    forward: _Forward
    loop: cst.CSTNode
    gate: cst.CSTNode
    counts: tuple[cst.BaseExpression, ...] = ()
    scope: Scope | None = None


@dataclass
class _Loop:
    node: cst.CSTNode
    ifs_depth: int  # how many `if`s were open when the loop began
    forward: _Forward | None = None  # the DDP model is called in it
    # backward() calls that run on every micro-batch, each with its branch path (see _path) and
    # how many optimizer steps of the loop came before it
    backwards: list[tuple[cst.Call, tuple, int]] = field(default_factory=list)
    # the optimizer.step() calls inside the loop, in order: (branch path, the accumulation test's
    # node it waits for, or None where it steps on every micro-batch)
    step_log: list[tuple[tuple, cst.CSTNode | None]] = field(default_factory=list)
    steps: bool = False  # an optimizer step, gated or not, inside the loop
    # backward() calls of micro-batch loops that ended inside this one, waiting for its step
    pending: list[tuple[cst.Call, _Forward, cst.CSTNode]] = field(default_factory=list)
    # `if (i + 1) % k: continue`: the rest of each iteration runs only on the stepping micro-batches
    skipped: cst.If | None = None


_COMPARE = {
    cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge, cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le, cst.Equal: operator.eq, cst.NotEqual: operator.ne,
}

_EVERY_BACKWARD = (
    "this backward all-reduces the gradients on every micro-batch: no no_sync() holds the forward and backward "
    "of the micro-batches that do not step"
)


class AccumulationWithoutNoSync(Rule):
    """
    With gradient accumulation (`backward()` on every micro-batch, `optimizer.step()` every
    k-th), a DDP model all-reduces the gradients on every backward unless the non-stepping
    micro-batches run inside `with model.no_sync():`. The result is correct, but each
    optimizer step pays k all-reduces instead of one: k times the communication. A performance
    finding (level "warning"): the trained weights are the same.

    The context must hold the forward. DDP decides during the forward whether the next
    backward synchronises (the forward calls `reducer.prepare_for_backward` only when
    `require_backward_grad_sync` is set); PyTorch's `no_sync` docstring warns "The forward
    pass should be included inside the context manager, or else gradients will still be
    synchronized." A `no_sync()` around the backward alone therefore changes nothing.

    Measured (the verify scenario, ddplint/harness/scenarios/ddp021/, gloo, 2 ranks, 4
    micro-batches per optimizer step, a comm hook counting all-reduces): 4 per step without `no_sync`; 1 with
    `no_sync` around the forward and backward of the first three micro-batches; 4 with
    `no_sync` around the backward only; 1 with it around the forward only. Parameters end
    equal across ranks in every variant.

    Fires when a loop that calls a model bound to `DistributedDataParallel(...)` (also in
    either branch of a conditional expression, `DDP(m) if distributed else m`; `model(x)` or
    `model.forward(x)`, both DDP's forward; also read by a nested function from the function
    around it) runs `backward()` on every iteration while
    `optimizer.step()` sits under an accumulation test (`if (i + 1) % accum_steps == 0`, a
    condition naming the accumulation, a local such a test was last assigned to: `update =
    (i + 1) % k == 0` ... `if update:`, or after `if (i + 1) % k: continue`), or while the loop
    steps nowhere and an `optimizer.step()` follows it in the enclosing loop or function (a
    micro-batch loop, `for _ in range(accum): ... backward()` then `optimizer.step()`, also inside
    another loop that steps nowhere: `for _ in range(k1): for part in split(batch, k2):`; and
    the body of a function handed to pytorch-ignite's `Engine(update)`, which calls `update(engine,
    batch)` once per batch: `if engine.state.iteration % k == 0: optimizer.step()`), in a
    function without any `no_sync`; and when a `with model.no_sync():` on a DDP model holds
    only the backward. The forward may run behind a call: a project function handed the DDP
    model (`loss = train_step(model, x)`, also a method of an object of another module's class
    that a local holds: `diffusion.train_losses(model, x)`), or a method of the same object
    that calls a `self` attribute holding it (`loss = self._calc_loss(batch)` calling
    `self.reader(...)`). The backward and the gated step may run inside a loss scaler: a
    project object whose `__call__` runs them (`loss_scaler(loss, optimizer, update_grad=(i +
    1) % k == 0)`), or timm's `NativeScaler`/`ApexScaler` (`need_update=...`), handed in by
    another function or module. Accelerate counts as DDP: a model that `accelerator.prepare(...)`
    returned (the `Accelerator()` built in the file, or in the function that prepares it and
    hands it to this one: `train_epoch(accelerator, model, ...)`) is DDP-wrapped under `accelerate
    launch`, and `accelerator.backward(loss)` outside `accelerator.accumulate(model)` syncs
    on every call. Not flagged: FSDP, DeepSpeed engines, an Accelerator given a DeepSpeed or
    FSDP plugin (`Accelerator(fsdp_plugin=...)`: FSDP's `no_sync` trades memory for
    communication, and DeepSpeed accumulates itself), or in a project whose Accelerate
    configuration files and launch flags for the script pick only DeepSpeed, FSDP or
    Megatron-LM (`distributed_type: DEEPSPEED`, `--use_deepspeed`), Accelerate with `accelerator.accumulate`
    or `accelerator.no_sync` in the function, Lightning, models not wrapped by DDP or prepared
    in the file, functions that toggle `require_backward_grad_sync` themselves or in a closure they
    define (`def maybe_no_sync(): return self.model.no_sync()`), or hand the DDP model to a project
    helper, or call a method of the same object, that calls its `no_sync()` or sets that flag (`with
    maybe_no_sync(model, sync):`, `with self.maybe_no_sync():`), a backward that an optimizer step on every micro-batch follows in the
    iteration (a GAN's generator steps after each backward, while only the discriminator's optimizer
    waits for `if idx % 4 == 0:`), and a count of micro-batches per step that is 1 on every run
    (the `n` of `for _ in range(n):` or the `k` of `(i + 1) % k`: a literal 1, a name or a `self`
    attribute bound once to one (`self.accumulate_every = 1` in `__init__`), a key of the config
    file the script loads (`cfg["train"]["accum"]` of `cfg = json.load(open(path))` or
    `OmegaConf.load(path)`) that each shipped file the run may load gives 1 or none holds (no
    count is shown: the file the path names, or, where the run names it (`-c` with no shipped
    default), the project's config files of that format nearest the script), an option or a yacs setting that every documented
    run leaves at 1 (ProjectView.documented_values: `--accum 1` in every launch command, whatever
    the default), an option whose default of 1 no launch command changes (also through a tuple
assignment, `print_freq, accum_iter = 20, args.accum_iter`, or one a helper module reads
    from the namespace that the parser of a script importing it built, or a parser module that script
    imports: `accum_iter = args.accum_iter`), or a parameter that every call of the function gives
    such a 1, or leaves to its default of 1 (also a call in another module, `train(...,
    accum=args.accum)`, with the option as the parsers seen from there declare it): the optimizer then
    steps after every backward, whose all-reduce is the step's only one. Nor a backward under an
    `if` on such a setting that no documented run takes (`if config.TRAIN.ACCUMULATION_STEPS > 1:`
    where the setting defaults to 0, no YAML file the launch commands merge sets it, and no
    command passes it: yacs's `merge_from_file(args.cfg)` of the `--cfg configs/a.yaml` each
    command names, with its `BASE` files).

    The finding's chain shows where the model is wrapped (and handed on), the micro-batch loop
    and the forward in it, what the optimizer step waits for, and the backward.

    No fix: run the non-stepping micro-batches' forward and backward inside the context:

        sync = (i + 1) % accum_steps == 0
        with contextlib.nullcontext() if sync else model.no_sync():
            loss = criterion(model(x), y) / accum_steps
            loss.backward()
        if sync:
            optimizer.step()
            optimizer.zero_grad()
    """

    code = "DDP021"
    needs_ranks = True
    name = "accumulation-without-no-sync"
    frameworks = (Framework.DDP, Framework.ACCELERATE, Framework.TIMM)
    level = "warning"
    message = (
        "gradient accumulation on a DDP model without no_sync(): every micro-batch's backward "
        "all-reduces (k times the communication per optimizer step); run the forward and "
        "backward of the non-stepping micro-batches inside `with model.no_sync():`"
    )
    # `also`: the wrapper's call as written (narrower than the name `Accelerator`, which an
    # import alone has), and the backward and step of the accumulation loop (a library loss
    # scaler runs both inside).
    trigger = CallTrigger(
        DDP | ACCELERATOR,
        also=(
            ("DistributedDataParallel", "Accelerator("), ("backward", *LOSS_SCALERS.last_names),
            ("step", "no_sync", *LOSS_SCALERS.last_names),
        ),
    )
    analyses = (WrappedModels, ParserOptions, ConfigValues)

    flagged_examples = (
        Flagged(
            # pytorch-ignite's Engine calls the function it is built with once per batch of
            # `run(data)`: its body is the micro-batch loop's.
            """
            from ignite.engine import Engine
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, accum):
                model = DDP(net.cuda())

                def update(engine, batch):
                    loss = model(batch).sum() / accum
                    loss.backward()
                    ^
                    if engine.state.iteration % accum == 0:
                        optimizer.step()
                        optimizer.zero_grad()
                    return loss.item()

                Engine(update).run(loader)
            """
        ),
        Flagged(
            # `model.train()` returns the DDP model itself (UAlign's `model = model.train()`).
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, rank):
                model = DDP(net.cuda(rank), device_ids=[rank])
                model = model.train()
                for step, batch in enumerate(loader):
                    loss = model(batch).sum() / 4
                    loss.backward()
                    ^
                    if (step + 1) % 4 == 0:
                        optimizer.step()
                        optimizer.zero_grad()
            """
        ),
        Flagged(
            # An annotated binding, and the optimizer step skipped by `continue` until the k-th.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, accum_steps, rank):
                model: torch.nn.Module = DDP(net.to(rank), device_ids=[rank])
                for step, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y) / accum_steps
                    loss.backward()
                    ^
                    if (step + 1) % accum_steps != 0:
                        continue
                    optimizer.step()
                    optimizer.zero_grad()
            """
        ),
        Flagged(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, accum_steps, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                for i, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y) / accum_steps
                    loss.backward()
                    ^
                    if (i + 1) % accum_steps == 0:
                        optimizer.step()
                        optimizer.zero_grad()
            """
        ),
        Flagged(
            """
            import torch.nn as nn

            class Trainer:
                def __init__(self, net):
                    self.model = nn.parallel.DistributedDataParallel(net)

                def epoch(self, batches):
                    for step, batch in enumerate(batches):
                        with torch.autocast("cuda"):
                            loss = self.model(**batch).loss / self.args.gradient_accumulation_steps
                        self.scaler.scale(loss).backward()
                        ^
                        if step % self.args.gradient_accumulation_steps == 0:
                            self.scaler.step(self.optimizer)
                            self.scaler.update()
            """
        ),
        Flagged(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, accum):
                model = DDP(net)
                for i, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y) / accum
                    if (i + 1) % accum != 0:
                        with model.no_sync():
                             ^
                            loss.backward()
                    else:
                        loss.backward()
                        optimizer.step()
                        optimizer.zero_grad()
            """,
            messages=_BACKWARD_ONLY,
        ),
        Flagged(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(config, net, loader, optimizer):
                model = DDP(net)
                for idx, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y)
                    if config.ACCUMULATION_STEPS > 1:
                        loss = loss / config.ACCUMULATION_STEPS
                        if config.use_amp:
                            scaler.scale(loss).backward()
                            ^
                        else:
                            loss.backward()
                            ^
                        if (idx + 1) % config.ACCUMULATION_STEPS == 0:
                            optimizer.step()
                    else:  # no accumulation: this backward is followed by a step every time
                        loss.backward()
                        optimizer.step()
            """,
        ),
        Flagged(
            """
            import torch

            def train_one_epoch(model, loader, optimizer, accum_iter):
                for step, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y) / accum_iter
                    loss.backward()
                    ^
                    if (step + 1) % accum_iter == 0:
                        optimizer.step()

            def main(net, loader, optimizer, args):
                model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[args.gpu])
                for epoch in range(args.epochs):
                    train_one_epoch(model, loader, optimizer, args.accum_iter)
            """,
            messages=(
                "gradient accumulation on a DDP model without no_sync(): every micro-batch's backward "
                "all-reduces (k times the communication per optimizer step); run the forward and backward of the "
                "non-stepping micro-batches inside `with model.no_sync():` (`model` is wrapped in DDP at "
                "example.py:11 and passed here by the call at example.py:13)"
            ),
        ),
        Flagged(
            # timm's loss scaler runs the backward, and the optimizer step only when `need_update` is true.
            """
            import torch
            from timm.utils import NativeScaler

            def train_one_epoch(model, loader, optimizer, loss_scaler, accum_iter):
                for i, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y) / accum_iter
                    loss_scaler(loss, optimizer, need_update=(i + 1) % accum_iter == 0)
                    ^

            def main(net, loader, optimizer, args):
                ddp = torch.nn.parallel.DistributedDataParallel(net, device_ids=[args.gpu])
                train_one_epoch(ddp, loader, optimizer, NativeScaler(), args.accum_iter)
            """,
            messages=(
                "gradient accumulation on a DDP model without no_sync(): every micro-batch's backward "
                "all-reduces (k times the communication per optimizer step); run the forward and backward of the "
                "non-stepping micro-batches inside `with model.no_sync():` (`model` is wrapped in DDP at "
                "example.py:10 and passed here by the call at example.py:11)"
            ),
        ),
        Flagged(
            """
            from accelerate import Accelerator

            class Trainer:
                def __init__(self, model, opt, loader, accumulate_every):
                    self.accelerator = Accelerator(split_batches=True)
                    self.model, self.opt, self.dl = self.accelerator.prepare(model, opt, loader)
                    self.accumulate_every = accumulate_every

                def train(self, steps):
                    for step in range(steps):
                        for _ in range(self.accumulate_every):
                            loss = self.model(next(self.dl)) / self.accumulate_every
                            self.accelerator.backward(loss)
                            ^
                        self.opt.step()
                        self.opt.zero_grad()
            """,
            messages=_ACCELERATE,
        ),
        Flagged(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train_step(net, micro_batches, optimizer):
                model = DDP(net)
                for x, y in micro_batches:
                    criterion(model(x), y).backward()
                    ^
                optimizer.step()
                optimizer.zero_grad()
            """
        ),
        Flagged(
            # Micro-batch loops inside one another, then one step: k1 x k2 backwards per step.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, batches, optimizer, inter_size, sub_size):
                model = DDP(net)
                for batch in batches:
                    for _ in range(inter_size):
                        for part in split_batch(batch, sub_size):
                            (model(part).loss / (inter_size * sub_size)).backward()
                            ^
                    optimizer.step()
                    optimizer.zero_grad()
            """
        ),
        Flagged(
            # `cfg.accumulate` counts micro-batches; it is no `accelerator.accumulate(model)`.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train_one_epoch(cfg, net, loader, optimizer, rank):
                model = DDP(net.cuda(rank), device_ids=[rank])
                for i, (img, gt) in enumerate(loader):
                    loss = criterion(model(img), gt) / cfg.accumulate
                    loss.backward()
                    ^
                    if (i + 1) % cfg.accumulate == 0:
                        optimizer.step()
                        optimizer.zero_grad()
            """
        ),
        Flagged(
            # The step waits for a flag the accumulation test was assigned to.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, update_freq):
                model = DDP(net)
                for step, (x, y) in enumerate(loader):
                    update = (step + 1) % update_freq == 0
                    criterion(model(x), y).backward()
                    ^
                    if update:
                        optimizer.step()
                        optimizer.zero_grad()
            """
        ),
        Flagged(
            # The distributed run takes the wrapping branch.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(args, net, loader, optimizer):
                model = DDP(net, device_ids=[args.gpu]) if args.distributed else net
                for i, (x, y) in enumerate(loader):
                    criterion(model(x), y).backward()
                    ^
                    if (i + 1) % args.accum_iter == 0:
                        optimizer.step()
                        optimizer.zero_grad()
            """
        ),
        Flagged(
            # `continue` skips the step on the micro-batches that accumulate; `model.forward(x)` is DDP's forward.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, accum):
                model = DDP(net)
                for step, (x, y) in enumerate(loader):
                    loss = criterion(model.forward(x), y) / accum
                    loss.backward()
                    ^
                    if (step + 1) % accum:
                        continue
                    optimizer.step()
                    optimizer.zero_grad()
            """
        ),
        Flagged(
            # The forward behind a call: a method of the same object that calls the DDP model it
            # holds, and a method of another class's object handed the model.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Diffusion:
                def train_losses(self, model, x):
                    return model(x).pow(2).mean()

            class Reader:
                def __init__(self, net):
                    self.reader = DDP(net)

                def _calc_loss(self, batch):
                    return self.reader(batch).mean()

                def train(self, loader, optimizer, accum):
                    for i, batch in enumerate(loader):
                        self._calc_loss(batch).backward()
                        ^
                        if (i + 1) % accum == 0:
                            optimizer.step()

            def train_diffusion(net, loader, optimizer, scaler, accum):
                model = DDP(net)
                diffusion = Diffusion()
                for step, x in enumerate(loader):
                    loss = diffusion.train_losses(model, x)
                    scaler.scale(loss).backward()
                    ^
                    if (step + 1) % accum == 0:
                        scaler.step(optimizer)
                        scaler.update()
            """,
            messages=(
                "gradient accumulation on a DDP model without no_sync(): every micro-batch's backward all-reduces (k "
                "times the communication per optimizer step); run the forward and backward of the non-stepping "
                "micro-batches inside `with model.no_sync():` (its forward runs in self._calc_loss())",
                "gradient accumulation on a DDP model without no_sync(): every micro-batch's backward all-reduces (k "
                "times the communication per optimizer step); run the forward and backward of the non-stepping "
                "micro-batches inside `with model.no_sync():` (its forward runs in diffusion.train_losses())",
            ),
        ),
        Flagged(
            # The discriminator steps after each of its backwards; the generator's backward waits for
            # the accumulation test.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, disc, loader, optimizer, optimizer_d, accum):
                model = DDP(net)
                for i, (x, y) in enumerate(loader):
                    disc(x).mean().backward()
                    optimizer_d.step()
                    loss = criterion(model(x), y) / accum
                    loss.backward()
                    ^
                    if (i + 1) % accum == 0:
                        optimizer.step()
                        optimizer.zero_grad()
            """
        ),
    )
    clean_examples = (
        Clean(
            # An ignite step that steps the optimizer on every batch accumulates nothing.
            """
            from ignite.engine import Engine
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer):
                model = DDP(net.cuda())

                def update(engine, batch):
                    loss = model(batch).sum()
                    loss.backward()
                    optimizer.step()
                    optimizer.zero_grad()

                def helper(batch):
                    model(batch).sum().backward()
                    if batch.numel() % 2 == 0:
                        optimizer.step()

                Engine(update).run(loader)
            """
        ),
        Clean(
            # The count is a `self` attribute its class binds once, to 1: each backward is
            # followed by the optimizer step.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, net, loader, optimizer):
                    self.model = DDP(net)
                    self.loader = loader
                    self.optimizer = optimizer
                    self.accumulate_every = 1

                def train(self):
                    for _ in range(self.train_steps):
                        for _ in range(self.accumulate_every):
                            loss = self.model(next(self.loader)).sum() / self.accumulate_every
                            loss.backward()
                        self.optimizer.step()
                        self.optimizer.zero_grad()
            """
        ),
        Clean(
            # The no_sync() context comes from a closure the function defines, or from a method of
            # the same object: both return the DDP model's no_sync() on all but the last micro-batch.
            """
            import contextlib
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, net):
                    self.model = DDP(net)

                def maybe_no_sync(self, last):
                    return contextlib.nullcontext() if last else self.model.no_sync()

                def train_step(self, samples, optimizer):
                    for i, sample in enumerate(samples):
                        def maybe_no_sync():
                            return self.model.no_sync() if i < len(samples) - 1 else contextlib.ExitStack()

                        with maybe_no_sync():
                            self.model(sample).sum().backward()
                    optimizer.step()

                def train_step_by_method(self, samples, optimizer):
                    for i, sample in enumerate(samples):
                        with self.maybe_no_sync(i == len(samples) - 1):
                            self.model(sample).sum().backward()
                    optimizer.step()
            """
        ),
        Clean(
            # The generator's optimizer steps after every backward; only the discriminator's steps
            # every 4th batch, after its own zero_grad and backward: nothing accumulates.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, disc, loader, optimizer, optimizer_d, scaler, use_amp):
                model = DDP(net)
                model_d = DDP(disc)
                for idx, (x, y) in enumerate(loader):
                    if use_amp:
                        with torch.autocast("cuda"):
                            outputs = model(x)
                            total = criterion(outputs, y)
                        optimizer.zero_grad()
                        scaler.scale(total).backward()
                        scaler.step(optimizer)
                        scaler.update()
                    if idx % 4 == 0:
                        optimizer_d.zero_grad()
                        scaler.scale(model_d(outputs.detach()).mean()).backward()
                        scaler.step(optimizer_d)
                        scaler.update()
            """
        ),
        Clean(
            # no_sync() around the backward alone is in the `else:` of a test that every step
            # passes: `% args.batches_per_allreduce` of a count left at 1 by every documented run
            """
            import argparse
            from torch.nn.parallel import DistributedDataParallel as DDP

            parser = argparse.ArgumentParser()
            parser.add_argument("--batches-per-allreduce", type=int, default=1)
            args = parser.parse_args()

            def train(net, loader, optimizer):
                model = DDP(net)
                for step, (x, y) in enumerate(loader):
                    loss = model(x).sum() / args.batches_per_allreduce
                    if (step + 1) % args.batches_per_allreduce == 0:
                        loss.backward()
                        optimizer.step()
                    else:
                        with model.no_sync():
                            loss.backward()
            """
        ),
        Clean(
            # The count of micro-batches is an option that defaults to 1 and no launch command
            # of the project passes: each optimizer step follows one backward.
            """
            import argparse
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel

            parser = argparse.ArgumentParser()
            parser.add_argument("--step-per-epoch", type=int, default=1)
            args = parser.parse_args()
            STEPS = args.step_per_epoch

            def train(net, batches, optimizer):
                dist.init_process_group("nccl")
                model = DistributedDataParallel(net)
                for batch in batches:
                    for part in range(STEPS):
                        model(batch[part::STEPS]).sum().backward()
                    optimizer.step()
            """
        ),
        Clean(
            # The accumulation count is a local bound once to 1: `(it + 1) % accum == 0` holds on
            # every iteration, so the optimizer steps after each backward.
            """
            from torch.nn.parallel import DistributedDataParallel

            def train(net, loader, optimizer):
                model = DistributedDataParallel(net)
                accum = 1
                for it, (x, y) in enumerate(loader):
                    (criterion(model(x), y) / accum).backward()
                    if (it + 1) % accum == 0:
                        optimizer.step()
                        optimizer.zero_grad()
            """
        ),
        Clean(
            # The count is a parameter, and every call of the function gives it 1: an option
            # left at its default of 1 by every documented run, or its own default.
            """
            import argparse
            from torch.nn.parallel import DistributedDataParallel

            def train(net, loader, optimizer, accum_steps=1):
                model = DistributedDataParallel(net)
                for step, (x, y) in enumerate(loader):
                    (criterion(model(x), y) / accum_steps).backward()
                    if step % accum_steps == 0:
                        optimizer.step()
                        optimizer.zero_grad()

            def main(net, loader, optimizer):
                parser = argparse.ArgumentParser()
                parser.add_argument("--accum_steps", type=int, default=1)
                params = parser.parse_args()
                train(net, loader, optimizer, accum_steps=params.accum_steps)
                train(net, loader, optimizer)
            """
        ),
        Clean(
            # An Accelerator given an FSDP or DeepSpeed plugin prepares no DDP model.
            """
            from accelerate import Accelerator, FullyShardedDataParallelPlugin

            def train(model, loader, optimizer, accumulate_every):
                accelerator = Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin())
                model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
                for step, batch in enumerate(loader):
                    accelerator.backward(model(batch) / accumulate_every)
                    if (step + 1) % accumulate_every == 0:
                        optimizer.step()
                        optimizer.zero_grad()
            """
        ),
        Clean(
            # timm's loss scaler called without `need_update` steps after every backward: no accumulation.
            """
            import timm.utils
            from torch.nn.parallel import DistributedDataParallel

            def fit(model, batches, optimizer, scaler, max_norm):
                for images, labels in batches:
                    optimizer.zero_grad()
                    scaler(criterion(model(images), labels), optimizer, clip_grad=max_norm, parameters=model.parameters())

            def run(args, net, batches, optimizer):
                fit(DistributedDataParallel(net), batches, optimizer, timm.utils.NativeScaler(), args.clip_grad)
            """
        ),
        Clean(
            # DataParallel, not DDP, in either branch: nothing is all-reduced.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(args, net, loader, optimizer):
                model = torch.nn.DataParallel(net) if args.multi_gpu else net
                for i, (x, y) in enumerate(loader):
                    criterion(model(x), y).backward()
                    if (i + 1) % args.accum_iter == 0:
                        optimizer.step()
                        optimizer.zero_grad()
            """
        ),
        Clean(
            """
            import contextlib
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, accum):
                model = DDP(net)
                for i, (x, y) in enumerate(loader):
                    sync = (i + 1) % accum == 0
                    with contextlib.nullcontext() if sync else model.no_sync():
                        loss = criterion(model(x), y) / accum
                        loss.backward()
                    if sync:
                        optimizer.step()
                        optimizer.zero_grad()

            def train_forward_only(net, loader, optimizer, accum):
                model = DDP(net)
                for i, (x, y) in enumerate(loader):
                    if (i + 1) % accum != 0:
                        with model.no_sync():
                            loss = criterion(model(x), y)
                        loss.backward()
                    else:
                        criterion(model(x), y).backward()
                        optimizer.step()
            """
        ),
        Clean(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, accelerator, engine, accum):
                model = DDP(net)
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                    if step % 100 == 0:
                        print(loss.item())
                fsdp_model = FSDP(net)
                for i, batch in enumerate(loader):
                    fsdp_model(batch).sum().backward()
                    if (i + 1) % accum == 0:
                        optimizer.step()
                for i, batch in enumerate(loader):
                    with accelerator.accumulate(model):
                        accelerator.backward(model(batch).sum())
                        optimizer.step()
                for i, batch in enumerate(loader):
                    loss = engine(batch)
                    engine.backward(loss)
                    if (i + 1) % accum == 0:
                        engine.step()
            """
        ),
        Clean(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(config, net, loader, optimizer, scaler):
                for attempt in range(3):
                    try:
                        break
                    except OSError:
                        continue
                    else:
                        pass
                else:
                    raise RuntimeError("no attempt succeeded")
                model = DDP(net)
                for idx, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y)
                    if config.ACCUMULATION_STEPS == 1:  # this branch does not accumulate
                        loss.backward()
                        if (idx + 1) % config.ACCUMULATION_STEPS == 0:  # always true here
                            optimizer.step()
            """
        ),
        Clean(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, accum):
                model = DDP(net)
                for i, (x, y) in enumerate(loader):
                    model.require_backward_grad_sync = (i + 1) % accum == 0
                    criterion(model(x), y).backward()
                    if (i + 1) % accum == 0:
                        optimizer.step()
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._wrapped = model.get(WrappedModels)
        self._loops: dict[int, _Loop] = {}
        self._opted_out: set[int] = set()  # functions that mention no_sync or toggle the sync flag
        self._in_else: set[int] = set()  # the ifs whose else branch the walk is in
        self._candidates: list[_Candidate] = []
        self._backward_only: list[tuple[cst.Call, str, tuple]] = []  # no_sync() around a backward alone, with the ifs around it
        # function -> micro-batch loops' backwards with no loop around: (backward, forward, loop)
        self._waiting: dict[int, list[tuple[cst.Call, _Forward, cst.CSTNode]]] = {}
        self._flags: dict[int, dict[str, cst.BaseExpression]] = {}  # function -> local name -> the value last assigned
        self._around: dict[int, tuple] = {}  # backward (or helper call) -> the ifs around it (ParserOptions.branches)
        # (the function around it, by node id; 0: the module) -> names of functions handed to an
        # ignite Engine there, whose bodies run once per batch
        self._step_bodies: set[tuple[int, str]] = set()

    def visit_Module(self, node: cst.Module) -> None:
        # A walk of the whole tree only where one may be built: `qualified` reads this file's own
        # imports, so an ignite Engine is named only in a file that names ignite ("Engine" alone
        # matched DeepSpeed's engine in Megatron-style trainers, 15 % of an edit there)
        if "ignite" in self.model.source and "Engine" in self.model.source:
            self._step_bodies = _handed_to_engine(node, self.model.qualified)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # `Engine(update)`: ignite calls `update(engine, batch)` once per batch, a loop body
        outer = self.model.function.parent if self.model.function is not None else None
        while outer is not None and not outer.is_function:
            outer = outer.parent
        if (id(outer.node) if outer is not None else 0, node.name.value) in self._step_bodies:
            self._enter_loop(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if id(original_node) in self._loops:
            self._leave_loop(original_node)

    def _candidate(self, backward: cst.Call, forward: _Forward, loop: cst.CSTNode, gate: cst.CSTNode) -> _Candidate:
        return _Candidate(self._function(), backward, forward, loop, gate, self._counts(loop, gate), self.model.scope)

    def _counts(self, loop: cst.CSTNode, gate: cst.CSTNode) -> tuple[cst.BaseExpression, ...]:
        """The micro-batches per optimizer step as the code writes them: `n` of the micro-batch
        loop `for _ in range(n):`, and `k` of the one `% k` its accumulation test reads
        (`if (i + 1) % k == 0:`, also through a flag: `update = (i + 1) % k == 0`) where it is
        an integer literal, a name bound once to one, an option, or a parameter of the function
        (ParserOptions.default_for reads its value in every documented run: none where the
        documents tell the user to raise it, as `--update-freq`; for a parameter, what every
        call of the function gives it)."""
        tests = [] if isinstance(gate, cst.Call) else self._with_flags(gate.test if isinstance(gate, cst.If) else gate)
        divisors = [node.right for test in tests for node in descendants(test)
                    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo)]
        divisor = divisors[0] if len(divisors) == 1 else None
        return tuple(count for count in (_range_count(loop), divisor) if count is not None)

    def _function(self) -> int:
        function = self.model.function
        return id(function.node) if function is not None else 0

    def _enter_loop(self, node: cst.CSTNode) -> None:
        self._loops[id(node)] = _Loop(node, len(self.model.ifs))

    def visit_For(self, node: cst.For) -> None:
        self._enter_loop(node)

    def visit_While(self, node: cst.While) -> None:
        self._enter_loop(node)

    def _leave_loop(self, node: cst.CSTNode) -> None:
        loop = self._loops.pop(id(node))
        if loop.forward is not None:
            self._candidates.extend(
                self._candidate(call, loop.forward, node, gate)
                for call, path, seen in loop.backwards
                for gate in [_accumulating_gate(path, loop.step_log, seen)]
                if gate is not None
            )
        if not loop.steps:
            # A micro-batch loop (`for _ in range(accum): model(x) ... backward()`): the
            # optimizer step that follows it in the same block steps once for k backwards; so
            # too for those of micro-batch loops inside it that wait for a step (`for _ in
            # range(k1): for part in split(batch, k2): ... backward()`, then the step).
            outer = next((self._loops[id(n)] for n in reversed(self.model.loops) if n is not node and id(n) in self._loops), None)
            waiting = outer.pending if outer is not None else self._waiting.setdefault(self._function(), [])
            if loop.forward is not None:
                waiting.extend((call, loop.forward, node) for call, _, _ in loop.backwards)
            waiting.extend(loop.pending)

    def leave_For(self, original_node: cst.For) -> None:
        self._leave_loop(original_node)

    def leave_While(self, original_node: cst.While) -> None:
        self._leave_loop(original_node)

    def _innermost(self) -> _Loop | None:
        """The loop the walk is in, in this function: a `for`/`while`, or the function's own
        body where an ignite Engine runs it per batch."""
        loops, function = self.model.loops, self.model.function
        if loops:
            return self._loops.get(id(loops[-1]))
        return self._loops.get(id(function.node)) if function is not None else None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # also for the functions around a closure that does (`def maybe_no_sync(): return self.model.no_sync()`)
        if node.attr.value in ("no_sync", "require_backward_grad_sync"):
            self._opted_out.add(self._function())
            frame = self.model.function
            while frame is not None and frame.is_function:
                self._opted_out.add(id(frame.node))
                frame = frame.parent

    def _opts_out(self, node: cst.Call) -> None:
        """`accelerator.accumulate(model)` opts out (`cfg.accumulate`, a count of micro-batches
        in YOLO's and mmcv's configs, does not), and so does a project helper handed the DDP
        model, or a method of the same object, that calls its `no_sync()` or sets its
        `require_backward_grad_sync` (`with maybe_no_sync(model, sync):`, `with self.maybe_no_sync():`)."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "accumulate":
            self._opted_out.add(self._function())
            return
        on_self = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
        if not on_self and not any(self._wrapped.is_wrapped(arg.value) for arg in node.args):
            return
        helper = self._callee(node)
        if helper is not None and helper.summary.sync_control:
            self._opted_out.add(self._function())

    def _callee(self, node: cst.Call):
        """What the project callable a call reaches does (the program model's callee summary),
        also where it is a method of an object a local name holds (`diffusion =
        GaussianDiffusion(...)` ... `diffusion.train_losses(model, x)`); None when unknown."""
        project, callee = self.model.project, dotted_name(node.func)
        if project is None or callee is None:
            return None
        self_class, frame = self.model.frame.self_class, self.model.function
        key, cls = frame.key if frame else None, self_class.name.value if self_class else None
        found = project.callee_summary(key, cls, callee)
        head, _, rest = callee.partition(".")
        made = self._flags.get(self._function(), {}).get(head) if found is None and rest else None
        maker = dotted_name(made.func) if isinstance(made, cst.Call) else None
        return project.callee_summary(key, cls, f"{maker}().{rest}") if maker else found

    def leave_Assign(self, original_node: cst.Assign) -> None:
        # `should_step = (i + 1) % accum == 0` ... `if should_step:`: the flag's test is the step's
        flags = self._flags.setdefault(self._function(), {})
        for target in original_node.targets:
            if isinstance(target.target, cst.Name):
                flags[target.target.value] = original_node.value

    def _forward(self, node: cst.Call, called: cst.BaseExpression, prepared: bool, helper: str | None = None) -> _Forward:
        """The DDP model `called` runs its forward at `node` (the call, or that of the `helper` that runs it)."""
        name = dotted_name(called)
        where = f"in {helper}(), " if helper else ""
        runs = Link(StepKind.REACHES, f"the forward of `{name}` runs here, {where}on every micro-batch", node)
        if prepared:
            return _Forward(self._wrapped.prepared_where(called), True, (runs,))
        note = self._wrapped.where(called)
        if helper:
            note = f"{note[:-1]}; its forward runs in {helper}())" if note else f" (its forward runs in {helper}())"
        return _Forward(note, False, (*wrap_links(name, self._wrapped.wrap_site(called)), runs))

    def visit_Call(self, node: cst.Call) -> None:
        self._opts_out(node)
        loop = self._innermost()
        if loop is None:
            waiting = self._waiting.get(self._function())
            if waiting and isinstance(node.func, cst.Attribute) and node.func.attr.value == "step" and _is_optimizer_step(node):
                self._candidates.extend(self._candidate(call, forward, inner, node) for call, forward, inner in waiting)
                waiting.clear()
            return
        func = node.func
        called = func.value if isinstance(func, cst.Attribute) and func.attr.value == "forward" else func
        if self._wrapped.is_wrapped(called):  # `model(x)`, `model.forward(x)`: DDP's forward
            if loop.forward is None or loop.forward.prepared:
                loop.forward = self._forward(node, called, False)
        elif self._wrapped.is_prepared(called):
            if loop.forward is None:
                loop.forward = self._forward(node, called, True)
        elif isinstance(func, cst.Attribute) and func.attr.value == "backward":
            if self._every_micro_batch(loop):
                loop.backwards.append((node, self._path(loop), len(loop.step_log)))
                self._around[id(node)] = self.model.get(ParserOptions).branches()
        elif isinstance(func, cst.Attribute) and func.attr.value == "step" and _is_optimizer_step(node):
            loop.steps = True
            if loop.pending:
                self._candidates.extend(self._candidate(call, forward, inner, node) for call, forward, inner in loop.pending)
                loop.pending.clear()
            loop.step_log.append((self._path(loop), self._gate(loop)))
        else:
            self._helper_call(node, loop)

    def _gate(self, loop: _Loop) -> cst.CSTNode | None:
        """The accumulation test an optimizer step here waits for: an `if` inside the loop that
        tests it (a test decided once for the run, `if accum_steps > 1:`, picks a mode and gates
        no step), or an earlier `if (i + 1) % k: continue`; None if the step is not gated."""
        inner_ifs = self.model.ifs[loop.ifs_depth :]
        found = next((b for b in inner_ifs if self._accumulation_test(b.test) and not self._run_wide(b.test)), None)
        return found if found is not None else loop.skipped

    def _helper_call(self, node: cst.Call, loop: _Loop) -> None:
        """A project helper that runs the DDP model's forward (on a model handed to it, or on a
        `self` attribute of the same object that holds it: `loss = self._calc_loss(batch)`), or
        that runs the backward, and steps only when an argument says so (`loss_scaler(loss,
        optimizer, update_grad=(i + 1) % accum == 0)`, whose `__call__` does
        `scale(loss).backward()` and `if update_grad: step(optimizer)`)."""
        callee = dotted_name(node.func)
        if callee is None or callee.rpartition(".")[2] in ("step", "zero_grad"):
            return
        helper = self._callee(node)
        if helper is None:
            return
        passed = {**dict(zip(helper.arguments, (a.value for a in node.args if a.keyword is None and not a.star))),
                  **{a.keyword.value: a.value for a in node.args if a.keyword is not None}}
        if loop.forward is None or loop.forward.prepared:
            called = self._forwarded(helper, passed, callee.startswith("self."))
            if called is not None:
                loop.forward = self._forward(node, called, False, callee)
        if not helper.summary.backward or not self._every_micro_batch(loop):
            return
        path = self._path(loop)
        loop.backwards.append((node, path, len(loop.step_log)))
        self._around[id(node)] = self.model.get(ParserOptions).branches()
        for gate in helper.summary.gates:
            if gate in passed and self._accumulation_test(passed[gate]) and not self._run_wide(passed[gate]):
                loop.step_log.append((path, passed[gate]))

    def _forwarded(self, helper, passed: dict, on_self: bool) -> cst.BaseExpression | None:
        """The DDP model whose forward a helper runs where gradients are on: a parameter it is
        handed one for (`train_batch(model, x)`), or, for a method of this object, an attribute
        of `self` that holds one (`self.reader(...)` in `self._calc_loss(batch)`)."""
        for forward in helper.summary.forward_passes:
            source = forward.source
            if isinstance(source, Param) and source.name in passed and self._wrapped.is_wrapped(passed[source.name]):
                return passed[source.name]
            if isinstance(source, SelfAttr) and on_self and helper.bound:
                attribute = cst.Attribute(value=cst.Name("self"), attr=cst.Name(source.name))
                if self._wrapped.is_wrapped(attribute):
                    return attribute
        return None

    def visit_Else(self, node: cst.Else) -> None:
        if self.model.ifs and self.model.ifs[-1].orelse is node:  # not a for/while/try else
            self._in_else.add(id(self.model.ifs[-1]))

    def leave_Else(self, original_node: cst.Else) -> None:
        if self.model.ifs and self.model.ifs[-1].orelse is original_node:
            self._in_else.discard(id(self.model.ifs[-1]))

    def visit_If(self, node: cst.If) -> None:
        if len(self.model.ifs) > 1 and self.model.ifs[-2].orelse is node:  # an elif: in its parent's else
            self._in_else.add(id(self.model.ifs[-2]))

    def leave_If(self, original_node: cst.If) -> None:
        if len(self.model.ifs) > 1 and self.model.ifs[-2].orelse is original_node:
            self._in_else.discard(id(self.model.ifs[-2]))
        loop = self._innermost()
        if (
            loop is not None and len(self.model.ifs) - 1 == loop.ifs_depth and original_node.orelse is None
            and _continues(original_node.body)
            and self._accumulation_test(original_node.test) and not self._run_wide(original_node.test)
        ):
            loop.skipped = original_node  # `if (i + 1) % k: continue`: what follows steps

    def _every_micro_batch(self, loop: _Loop) -> bool:
        """Whether a backward here runs on every micro-batch of an accumulating run: no
        `if (i + 1) % k: continue` came before it, the ifs around it inside the loop are decided
        once for the run, and none is the branch of an accumulation switch that does not
        accumulate (the else of `if accum_steps > 1:`, the body of `if accum_steps == 1:`)."""
        if loop.skipped is not None:
            return False
        for branch in self.model.ifs[loop.ifs_depth :]:
            test = branch.test
            if not self._run_wide(test):
                return False
            if "accum" in self.model.module.code_for_node(test).lower():
                body_accumulates = not (
                    isinstance(test, cst.Comparison)
                    and any(isinstance(t.operator, (cst.Equal, cst.LessThan, cst.LessThanEqual)) for t in test.comparisons)
                )
                if (id(branch) in self._in_else) == body_accumulates:
                    return False
        return True

    def _path(self, loop: _Loop) -> tuple:
        """Which branch of each `if` inside `loop` the walk is in: ((id, in its else), ...)."""
        return tuple((id(branch), id(branch) in self._in_else) for branch in self.model.ifs[loop.ifs_depth :])

    def _run_wide(self, test: cst.BaseExpression) -> bool:
        """Whether a test inside the loop is decided once for the whole run, not per
        micro-batch: no `%` and none of the loop variables (`if args.accum_steps > 1:`,
        `if use_amp:`). A backward under such tests runs on every micro-batch."""
        tests = self._with_flags(test)
        if any("%" in self.model.module.code_for_node(t) for t in tests):
            return False
        loop = self.model.loops[-1] if self.model.loops else self.model.function.node  # type: ignore[union-attr]
        if isinstance(loop, cst.FunctionDef):  # a step body: its parameters hold the batch and the engine
            targets = {param.name.value for param in loop.params.params}
        else:
            targets = {name.value for name in _names_in(loop.target)} if isinstance(loop, cst.For) else set()
        return not any(isinstance(node, cst.Name) and node.value in targets for t in tests for node in descendants(t))

    def _accumulation_test(self, test: cst.BaseExpression) -> bool:
        codes = (self.model.module.code_for_node(t).lower() for t in self._with_flags(test))
        return any("%" in code or "accum" in code for code in codes)

    def _with_flags(self, test: cst.BaseExpression) -> list[cst.BaseExpression]:
        """`test` and the values last assigned in this function to the names it reads
        (`update = (step + 1) % k == 0` for `if update:`)."""
        flags = self._flags.get(self._function(), {})
        names = {node.value for node in descendants(test) if isinstance(node, cst.Name)} if flags else ()
        return [test, *(flags[name] for name in names if name in flags)]

    def visit_With(self, node: cst.With) -> None:
        # with model.no_sync(): <backward only>
        for item in node.items:
            call = item.item
            if not (
                isinstance(call, cst.Call)
                and not call.args
                and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "no_sync"
                and self._wrapped.is_wrapped(call.func.value)
            ):
                continue
            body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
            statements = [s for s in body if isinstance(s, cst.SimpleStatementLine)]
            if statements and len(statements) == len(body) and all(_only_backward(s) for s in statements):
                branches = self.model.get(ParserOptions).branches()
                self._backward_only.append((call, _BACKWARD_ONLY + self._wrapped.where(call.func.value), branches))

    def leave_Module(self, original_node: cst.Module) -> None:
        runs = self.runs_link()
        options = self.model.get(ParserOptions)
        for call, message, branches in self._backward_only:
            if not options.never_runs(branches):  # (`else:` of `if step % k == 0:` with k 1 in every run: never)
                self.report(call, message)
        for candidate in self._candidates:
            if candidate.function in self._opted_out or any(self._accumulates_nothing(count, candidate.scope) for count in candidate.counts):
                continue
            around = self._around.get(id(candidate.backward), ())
            if options.never_runs(around) or any(self._never_taken(test, in_else) for test, in_else in around):
                continue  # under `if args.grad_accum:` of an option no documented run turns on
            forward = candidate.forward
            message = (_ACCELERATE if forward.prepared else self.message) + forward.note
            chain = [
                *forward.links[:-1], *([runs] if runs is not None else []),
                Link(StepKind.REACHES, "the micro-batch loop: each iteration runs the forward and this backward", candidate.loop),
                forward.links[-1],
                Link(StepKind.HARM, self._gate_text(candidate.gate), candidate.gate),
                Link(StepKind.HARM, _EVERY_BACKWARD, candidate.backward),
            ]
            self.report(candidate.backward, message, chain=chain)

    def _accumulates_nothing(self, count: cst.BaseExpression, scope: Scope | None) -> bool:
        """Whether no shipped run accumulates over `count` micro-batches: every documented run
        gives it 1, or it is read from config files (ConfigValues) of which none a run may
        load gives it a number above 1 (a key none of them holds shows no count). (An option
        left at a default of 0 is no such count: the run must pass one.)"""
        configs = self.model.get(ConfigValues)
        values = configs.run_values(count, scope)
        if values is None:
            return self._documented(count) == {1}
        if configs.reads_config(count, scope):
            return not any(type(value) is int and value > 1 for value in values)
        return values == {1}

    def _documented(self, expr: cst.BaseExpression) -> frozenset | None:
        """The values the option or yacs setting `expr` reads (`args.accum`, `config.TRAIN.ACCUMULATION_STEPS`)
        takes in the documented runs (ProjectView.documented_values); None where not shown."""
        path = dotted_name(expr) if isinstance(expr, cst.Attribute) and self.model.project is not None else None
        if path is None or path.split(".")[0] in ("self", "cls") and path.count(".") == 1:
            return None
        return self.model.project.documented_values(tuple(path.split(".")))  # type: ignore[union-attr]

    def _never_taken(self, test: cst.BaseExpression, in_else: bool) -> bool:
        """Whether no documented run takes the branch of `test` the backward is in: `test` compares a
        setting with a literal (`config.TRAIN.ACCUMULATION_STEPS > 1`) or is one (`if config.X:`),
        and under each value the runs give the setting (`_documented`) it goes the other way, or
        fails (`None > 1` raises TypeError: neither branch runs)."""
        compared = test.comparisons[0] if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 else None
        operator = _COMPARE.get(type(compared.operator)) if compared is not None else None
        if compared is not None and operator is None:
            return False
        sides = (test.left, compared.comparator) if compared is not None else (test,)  # type: ignore[union-attr]
        read = [side for side in sides if isinstance(side, cst.Attribute)]
        if len(read) != 1:
            return False
        values = self._documented(read[0])
        fixed = [literal(side) for side in sides if side is not read[0]]
        if not values or UNKNOWN in fixed:
            return False
        for value in values:
            operands = [value if side is read[0] else fixed[0] for side in sides]
            try:
                taken = bool(operator(*operands)) if operator is not None else bool(value)
            except TypeError:
                continue  # the test raises: the run stops there
            if taken != in_else:
                return False
        return True

    def _gate_text(self, gate: cst.CSTNode) -> str:
        """What the optimizer step waits for, for the chain."""
        if isinstance(gate, cst.Call):
            return "the optimizer steps once, after the micro-batch loop"
        if isinstance(gate, cst.If):
            test = self.model.module.code_for_node(gate.test)
            if _continues(gate.body) and gate.orelse is None:
                return f"`if {test}: continue` skips the optimizer step on the micro-batches that do not step"
            return f"the optimizer steps only when `{test}`"
        return f"the optimizer steps only when `{self.model.module.code_for_node(gate)}`"


def _is_optimizer_step(call: cst.Call) -> bool:
    receiver = dotted_name(call.func.value) if isinstance(call.func, cst.Attribute) else None  # type: ignore[union-attr]
    if receiver is None:
        return False
    last = receiver.rpartition(".")[2].lower()
    if "sched" in last or last.startswith("lr"):
        return False
    return "optim" in last or last in ("opt", "scaler", "grad_scaler") or last.endswith("_opt")


def _only_backward(statement: cst.SimpleStatementLine) -> bool:
    return all(
        isinstance(small, cst.Expr)
        and isinstance(small.value, cst.Call)
        and isinstance(small.value.func, cst.Attribute)
        and small.value.func.attr.value == "backward"
        for small in statement.body
    )



def _continues(suite: cst.BaseSuite) -> bool:
    """The block ends with `continue`."""
    last = suite.body[-1] if suite.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    return isinstance(last, cst.Continue)


def _names_in(target: cst.BaseExpression):
    return (node for node in descendants(target) if isinstance(node, cst.Name))


def _accumulating_gate(path: tuple, step_log: list, seen: int) -> cst.CSTNode | None:
    """The accumulation test that the optimizer step of a backward on branch `path` waits for:
    that of a gated step the same iteration can run (`step_log`: the loop's steps, in order);
    None where there is none, or where the first step that can follow the backward in the
    iteration (after the `seen` before it) steps on every micro-batch: its gradients are
    stepped each time, whatever another optimizer's gated step does (a GAN's discriminator
    stepping every 4th batch)."""
    following = [gate for step, gate in step_log[seen:] if _same_branches(path, step)]
    if following and following[0] is None:
        return None
    return next((gate for step, gate in step_log if gate is not None and _same_branches(path, step)), None)


def _same_branches(first: tuple, second: tuple) -> bool:
    """Whether two branch paths can run in the same iteration: where they pass through the
    same `if`, they take the same branch of it."""
    for (one, else_one), (other, else_other) in zip(first, second):
        if one != other:
            return True
        if else_one != else_other:
            return False
    return True


def _handed_to_engine(module: cst.Module, qualified) -> set[tuple[int, str]]:
    """The functions the module hands by name to an ignite Engine (`Engine(update)`,
    `Engine(process_function=update)`), each as (the function the call is in, by node id, 0 at
    module level; the name): the Engine calls it once per batch of `run(data)`."""
    found: set[tuple[int, str]] = set()
    pending: list[tuple[cst.CSTNode, int]] = [(module, 0)]
    while pending:
        node, around = pending.pop()
        if isinstance(node, cst.Call) and qualified(node.func) in IGNITE_ENGINE:
            handed = argument_for(node, IGNITE_ENGINE, "process_function")
            if handed is not None and isinstance(handed.value, cst.Name):
                found.add((around, handed.value.value))
        inner = id(node) if isinstance(node, cst.FunctionDef) else around
        pending.extend((child, inner) for child in children(node))
    return found


def _range_count(loop: cst.CSTNode) -> cst.BaseExpression | None:
    """`n` of a loop `for _ in range(n):`; None for any other loop."""
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call) or len(loop.iter.args) != 1:
        return None
    func = loop.iter.func
    return loop.iter.args[0].value if isinstance(func, cst.Name) and func.value == "range" else None
