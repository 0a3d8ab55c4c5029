from __future__ import annotations

import libcst as cst

from ddplint.analyses.branches import Branches, Path, exclusive
from ddplint.analyses.grad_mode import GradientMode
from ddplint.analyses.roles import evaluates
from ddplint.analyses.ranks import RankRegions, WrappedModels
from ddplint.core.diagnostics import Applicability
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.edits import passed_arguments
from ddplint.semantic.model import dotted_name
from ddplint.core.torch_api import ACCELERATOR, DDP, LOSS_SCALERS
from ddplint.semantic.walk import children
from ddplint.prefilter.project_facts import ProjectFact

# Models that are copies of the trained one and are never all-reduced: EMA, teachers, targets.
COPY_WORDS = ("teacher", "ema", "momentum", "target", "shadow", "average", "avg", "frozen")
# nn.Module methods that run no forward: their results reach a backward without training anything.
MODULE_API = frozenset({
    "parameters", "buffers", "modules", "children", "state_dict", "get_submodule", "get_parameter", "get_buffer",
    "apply", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_",
    "zero_grad", "extra_repr", "type",
})
# Methods that put their (last) argument into the container they are called on.
ADDING_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft"})
# Calls whose result carries no autograd graph: a loss built from them cannot backpropagate.
DETACHING_METHODS = frozenset({"detach", "detach_", "item", "tolist", "numpy"})
_HANDED = (
    "`{name}` is the inner module of the DDP model wrapped at {wrapped}; {helper}() runs its forward "
    "at {forward} and then backward(), so DDP never all-reduces these gradients and the ranks silently "
    "diverge; pass the DDP model instead"
)


def _bypass_message(*notes: str) -> str:
    """The message the examples expect for a forward through the inner module, with its notes."""
    return (
        "training step through model.module(...) bypasses DDP's forward: its backward never all-reduces "
        "gradients and the ranks silently diverge; call the DDP model itself " + " ".join(f"({note})" for note in notes)
    )


class DDPForwardBypassed(Rule):
    """
    `DistributedDataParallel` all-reduces gradients only after its own forward ran: the
    forward calls `reducer.prepare_for_backward`, and until then the reducer's autograd hooks
    return without communicating. A training step that calls the wrapped module directly,
    `model.module(x)`, and then runs `backward()` on its result computes purely local
    gradients. Every rank steps its optimizer with its own gradients and the replicas
    silently drift apart; nothing fails.

    Measured (the verify scenario, ddplint/harness/scenarios/ddp019/, gloo, 2 ranks with
    different data, 5 SGD steps from the same weights): through `model.module(x)`, 0
    all-reduces on each rank and parameters differing by up to 0.20 across ranks; through
    `model(x)`, 5 all-reduces per rank and identical parameters.

    Fires when the result of a call `model.module(...)` (or `model.module.forward(...)`, or a
    method or submodule of the inner module such as `model.module.compute_loss(batch)`, which
    run its parameters as well; not the nn.Module API: `parameters()`, `state_dict()`, ...),
    `model` bound to `DistributedDataParallel(...)` or to the model Accelerate's
    `accelerator.prepare(...)` returns (DDP-wrapped where several processes run, which `.module`
    presumes; not with a DeepSpeed or FSDP plugin or configuration), reaches a `backward()` later
    in the same function (`loss.backward()`, `scaler.scale(loss).backward()`, `accelerator.backward(loss)`,
    through assignments), and that function never calls the DDP model itself. The call may go
    through a name bound to the inner module (`model_without_ddp = model.module` ...
    `model_without_ddp(x)`), a `self` attribute that holds it (`self.net = self.model.module`,
    also set in another module's class), or a project helper that returns it (`def
    unwrap_model(m): return m.module if hasattr(m, "module") else m`, in this module or another;
    `raw = unwrap_model(model)` ... `raw(x)`, or `unwrap_model(model)(x)`), or a name or `self`
    attribute bound to `DistributedDataParallel(...).module` itself (only the inner module kept);
    also a method of such a name (`self.net.compute_loss(batch)`) and a name bound to one
    (`loss_func = self.net.compute_loss`, or `loss_func = loss_func or self.net.compute_loss`
    where the parameter defaults to None, so a call that leaves it out takes the method); no fix
    there. The result may reach the loss through a container it is put in
    (`preds.append(model.module.step(h))` ... `torch.stack(preds)`). `model`
    may be a parameter or `self` attribute that another function or module hands a DDP model (the
    program model). Unwrapping to save, to evaluate without gradients or to read attributes is
    not flagged.

    Also fires where a function takes the inner module (`model.module`, or a name bound to
    `model.module`, `model.module if distributed else model` or `getattr(model, "module",
    model)`) and hands it to a project function, in this module or another, that calls it
    where gradients are on and runs `backward()` after (itself, through a project helper such
    as a loss scaler or through timm's `NativeScaler`/`ApexScaler`, or in the loop around the
    forward), also where that function hands it on
    or keeps it on `self` for a method: `engine.train_one_epoch(model_without_ddp, ...)`. The
    finding is at the argument, since that is the line to change (the helper is right to call
    what it is given, and may be called with a DDP model elsewhere), and it names the helper's
    forward. No fix there: the helper may read attributes the DDP wrapper does not have.
    Not flagged there: helpers that only evaluate (no backward, or forwards under no_grad),
    save, load or build an optimizer from it, helpers that also call a DDP model, helpers
    named for evaluation, EMA/teacher names, calls under no_grad or on rank 0 only, and runs
    without a DDP wrap.

    Not flagged:
    under `torch.no_grad()`/`torch.inference_mode()` (blocks or decorators), in functions
    named for evaluation (`evaluate`, `validate`, `test_*`, `predict`, `infer*`), where only
    rank 0 runs it (rank-0-only evaluation), on EMA/teacher/target copies, results that are
    detached before the loss, attribute access such as `model.module.state_dict()`, and
    functions that also run the DDP forward (a second, deliberate forward whose gradients are
    reduced together with the first's; for Accelerate's prepared model, its own forward).
    Nor in code that runs in a world of one rank in every documented run: only scripts that
    run as one process reach it, or that every launch command of the project starts as one
    (`python -m torch.distributed.launch --nnodes 1 --nproc_per_node 1 main.py`, the only
    command that runs it; ProjectView.one_rank). A process group of one has no other rank to
    all-reduce with, so the bypass loses nothing.

    Fix (safe): call the DDP model, `model(x)`: the same module runs, now with DDP's forward,
    which also broadcasts buffers from rank 0 as configured. If that step leaves some
    parameters without a gradient, DDP now says so ("Expected to have finished reduction in
    the prior iteration"): the same problem the bypass had been hiding, see DDP015.
    """

    code = "DDP019"
    # the helper this module hands the inner module to runs the backward elsewhere; a helper
    # of another module unwraps the DDP model (`raw = unwrap_model(model)`)
    opened_by = unscreened_by = frozenset((ProjectFact.HANDS_INNER_MODULE, ProjectFact.CALLS_UNWRAPPER))
    needs_ranks = True
    # a world of one rank has nothing to all-reduce with: the bypass loses no gradient
    needs_peers = True
    name = "ddp-forward-bypassed"
    frameworks = (Framework.DDP, Framework.ACCELERATE, Framework.TIMM)
    message = (
        "training step through model.module(...) bypasses DDP's forward: its backward never "
        "all-reduces gradients and the ranks silently diverge; call the DDP model itself"
    )
    fix = Applicability.SAFE
    # `also`: the inner module it reaches, and the backward that misses the all-reduce (a library
    # loss scaler runs one).
    trigger = CallTrigger(DDP | ACCELERATOR, also=(".module", ("backward", *LOSS_SCALERS.last_names)))
    analyses = (WrappedModels, RankRegions, GradientMode, Branches)

    flagged_examples = (
        Flagged(
            """
            import torch
            import torch.nn.functional as F
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, local_rank):
                model = DDP(net.to(local_rank), device_ids=[local_rank])
                for x, y in loader:
                    logits = model.module(x)
                             ^
                    loss = F.cross_entropy(logits, y)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
            fixed="""
            import torch
            import torch.nn.functional as F
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, local_rank):
                model = DDP(net.to(local_rank), device_ids=[local_rank])
                for x, y in loader:
                    logits = model(x)
                    loss = F.cross_entropy(logits, y)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
        ),
        Flagged(
            """
            import torch
            import torch.nn as nn

            class Trainer:
                def __init__(self, net, rank):
                    self.model = nn.parallel.DistributedDataParallel(net, device_ids=[rank])
                    self.scaler = torch.cuda.amp.GradScaler()

                def train_step(self, batch):
                    with torch.autocast("cuda"):
                        outputs, aux = self.model.module(batch["image"])
                                       ^
                        loss = self.criterion(outputs, batch["label"]) + 0.4 * aux.mean()
                    self.scaler.scale(loss).backward()
                    self.scaler.step(self.optimizer)
            """,
            fixed="""
            import torch
            import torch.nn as nn

            class Trainer:
                def __init__(self, net, rank):
                    self.model = nn.parallel.DistributedDataParallel(net, device_ids=[rank])
                    self.scaler = torch.cuda.amp.GradScaler()

                def train_step(self, batch):
                    with torch.autocast("cuda"):
                        outputs, aux = self.model(batch["image"])
                        loss = self.criterion(outputs, batch["label"]) + 0.4 * aux.mean()
                    self.scaler.scale(loss).backward()
                    self.scaler.step(self.optimizer)
            """,
        ),
        Flagged(
            """
            # The one-GPU branch calls the plain model; the distributed one still bypasses DDP.
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, args, net):
                    self.args = args
                    self.model = DDP(net, device_ids=[args.gpu]) if args.distributed else net

                def train(self, loader):
                    for batch in loader:
                        if self.args.distributed:
                            results = self.model.module.train_step(batch)
                                      ^
                        else:
                            results = self.model.train_step(batch)
                        results["loss"].backward()
                        self.optim.step()
            """,
            messages=_bypass_message("`train_step()` of the inner module is a forward DDP never sees"),
        ),
        Flagged(
            """
            from torch.nn.parallel import DistributedDataParallel

            def fit(net, data, accelerator):
                ddp = DistributedDataParallel(net)
                for x, y in data:
                    accelerator.backward(loss_fn(ddp.module.forward(x), y))
                                                 ^
            """,
            fixed="""
            from torch.nn.parallel import DistributedDataParallel

            def fit(net, data, accelerator):
                ddp = DistributedDataParallel(net)
                for x, y in data:
                    accelerator.backward(loss_fn(ddp(x), y))
            """,
        ),
        Flagged(
            """
            import torch.nn.functional as F
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train_one_epoch(model, loader, optimizer):
                for x, y in loader:
                    loss = F.cross_entropy(model.module(x), y)
                                           ^
                    loss.backward()
                    optimizer.step()

            def main(net, loader, optimizer, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                train_one_epoch(model, loader, optimizer)
                train_one_epoch(net, loader, optimizer)
            """,
            fixed="""
            import torch.nn.functional as F
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train_one_epoch(model, loader, optimizer):
                for x, y in loader:
                    loss = F.cross_entropy(model(x), y)
                    loss.backward()
                    optimizer.step()

            def main(net, loader, optimizer, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                train_one_epoch(model, loader, optimizer)
                train_one_epoch(net, loader, optimizer)
            """,
            messages=_bypass_message(
                "`model` is wrapped in DDP at example.py:11 and passed here by the call at example.py:12"
            ),
        ),
        Flagged(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                model_without_ddp = model.module
                for x, y in loader:
                    loss = criterion(model_without_ddp(x), y)
                                     ^
                    loss.backward()
                    optimizer.step()
            """,
            messages=_bypass_message("`model_without_ddp` is `model.module`"),
        ),
        Flagged(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train_one_epoch(model, loader, optimizer):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()

            def main(net, loader, optimizer, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                model_without_ddp = model.module
                train_one_epoch(model_without_ddp, loader, optimizer)
                                ^
            """,
            messages=(
                "`model_without_ddp` is the inner module of the DDP model wrapped at example.py:10; "
                "train_one_epoch() runs its forward at example.py:5 and then backward(), so DDP never "
                "all-reduces these gradients and the ranks silently diverge; pass the DDP model instead"
            ),
        ),
        Flagged(
            # timm's loss scaler runs the backward.
            """
            import torch
            from timm.utils import NativeScaler

            def fit(net, batches, optimizer, loss_scaler):
                for images, labels in batches:
                    loss_scaler(criterion(net(images), labels), optimizer)

            def main(net, batches, optimizer, rank):
                ddp = torch.nn.parallel.DistributedDataParallel(net.to(rank), device_ids=[rank])
                fit(ddp.module, batches, optimizer, NativeScaler())
                    ^
            """,
            messages=(
                "`ddp.module` is the inner module of the DDP model wrapped at example.py:9; fit() runs its "
                "forward at example.py:6 and then backward(), so DDP never all-reduces these gradients and the "
                "ranks silently diverge; pass the DDP model instead"
            ),
        ),
        Flagged(
            # A method of the inner module runs its parameters outside DDP's forward too.
            """
            import torch

            def train_one_epoch(model, loader, optimizer):
                for batch in loader:
                    losses = model.module.compute_loss(batch)
                             ^
                    sum(losses.values()).backward()
                    optimizer.step()

            def main(net, loader, optimizer, rank):
                model = torch.nn.parallel.DistributedDataParallel(net.to(rank), device_ids=[rank])
                train_one_epoch(model, loader, optimizer)
            """,
            messages=_bypass_message(
                "`model` is wrapped in DDP at example.py:10 and passed here by the call at example.py:11",
                "`compute_loss()` of the inner module is a forward DDP never sees",
            ),
        ),
        Flagged(
            # The inner module kept on `self` for the training step.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, net, rank):
                    self.model = DDP(net.to(rank), device_ids=[rank])
                    self.net = self.model.module
                    self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)

                def train_step(self, x, y):
                    loss = criterion(self.net(x), y)
                                     ^
                    loss.backward()
                    self.optimizer.step()
            """,
            messages=_bypass_message("`self.net` is `self.model.module`"),
        ),
        Flagged(
            # A project helper that unwraps the DDP model hands back its inner module.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def unwrap_model(m):
                return m.module if hasattr(m, "module") else m

            def train(net, loader, optimizer, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                raw = unwrap_model(model)
                for x, y in loader:
                    loss = criterion(raw(x), y)
                                     ^
                    loss.backward()
                    optimizer.step()
            """,
            messages=_bypass_message("`raw` is `unwrap_model(model)`"),
        ),
        Flagged(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def unwrap(model):
                if isinstance(model, DDP):
                    return model.module
                return model

            def train(net, loader, optimizer, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                for x, y in loader:
                    criterion(unwrap(model)(x), y).backward()
                              ^
                    optimizer.step()
            """,
            messages=_bypass_message("`unwrap(model)` is its inner module"),
        ),
        Flagged(
            # Accelerate's prepared model is DDP-wrapped where several processes run (which
            # `.module` presumes); the critic's own forward does not reduce the autoencoder's
            # gradients.
            """
            from accelerate import Accelerator

            def train(autoencoder, critic, loader, optimizer):
                accelerator = Accelerator()
                autoencoder, critic, optimizer, loader = accelerator.prepare(autoencoder, critic, optimizer, loader)
                for x in loader:
                    code = autoencoder.module.encode(x)
                           ^
                    loss = critic(autoencoder.module.decode(code)).mean()
                                  ^
                    accelerator.backward(loss)
                    optimizer.step()
            """,
            messages=(
                _bypass_message(
                    "`autoencoder` is prepared by Accelerate, which wraps it in DDP under a launch of several processes",
                    "`encode()` of the inner module is a forward DDP never sees",
                ),
                _bypass_message(
                    "`autoencoder` is prepared by Accelerate, which wraps it in DDP under a launch of several processes",
                    "`decode()` of the inner module is a forward DDP never sees",
                ),
            ),
        ),
        Flagged(
            # Only the inner module is kept: the DDP model is wrapped and dropped at once. A method
            # of it taken as the step's loss function (the parameter's default is None) runs it.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel

            class Trainer:
                def __init__(self, net, rank):
                    self.model = DistributedDataParallel(net.to(rank), device_ids=[rank]).module

                def train_epoch(self, loader, optimizer, loss_func=None):
                    loss_func = loss_func or self.model.compute_loss
                    for batch in loader:
                        loss = loss_func(batch)
                               ^
                        loss.backward()
                        optimizer.step()
            """,
            messages=_bypass_message(
                "`self.model` is `DistributedDataParallel(...).module`: the DDP model itself is not kept",
                "`loss_func` is `self.model.compute_loss`, a forward DDP never sees",
            ),
        ),
        Flagged(
            # A method of a name bound to the inner module.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def fit(net, batches, optimizer, rank):
                ddp = DDP(net.to(rank), device_ids=[rank])
                inner = ddp.module
                for batch in batches:
                    inner.compute_loss(batch).backward()
                    ^
                    optimizer.step()
            """,
            messages=_bypass_message(
                "`inner` is `ddp.module`", "`compute_loss()` of the inner module is a forward DDP never sees"
            ),
        ),
        Flagged(
            # The per-frame outputs reach the loss through a list: `append` puts them in it.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                for frames, target in loader:
                    state = model.module.encode(frames)
                            ^
                    preds = []
                    for t in range(frames.shape[1]):
                        preds.append(model.module.step(state[:, t]))
                                     ^
                    loss = criterion(torch.stack(preds, dim=1), target)
                    loss.backward()
                    optimizer.step()
            """,
            messages=(
                _bypass_message("`encode()` of the inner module is a forward DDP never sees"),
                _bypass_message("`step()` of the inner module is a forward DDP never sees"),
            ),
        ),
    )
    clean_examples = (
        Clean(
            # The prepared model's own forward runs too: the second view's gradients are reduced
            # with the first's.
            """
            from accelerate import Accelerator

            def step(net, x1, x2, optimizer):
                accelerator = Accelerator()
                model, optimizer = accelerator.prepare(net, optimizer)
                loss = model(x1).mean() + model.module(x2).mean()
                accelerator.backward(loss)
                optimizer.step()
            """
        ),
        Clean(
            # The unwrapped model saved, evaluated without gradients and read: no forward reaches a backward.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def unwrap_model(m):
                return m.module if isinstance(m, DDP) else m

            def train(net, loader, optimizer, rank, path):
                model = DDP(net.to(rank), device_ids=[rank])
                for x, y in loader:
                    criterion(model(x), y).backward()
                    optimizer.step()
                torch.save(unwrap_model(model).state_dict(), path)
                raw = unwrap_model(model)
                print(raw.config, model.module.config)
                with torch.no_grad():
                    for x, y in loader:
                        print(criterion(unwrap_model(model)(x), y))

            def finetune(net, loader, optimizer):
                head = unwrap_model(net)
                for x, y in loader:
                    criterion(head(x), y).backward()
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, net, rank):
                    self.model = DDP(net.to(rank), device_ids=[rank])
                    self.net = self.model.module

                def train_step(self, x, y):
                    criterion(self.model(x), y).backward()

                @torch.no_grad()
                def validate(self, x):
                    return self.net(x)

                def save(self, path):
                    torch.save({"model": self.net.state_dict(), "config": self.model.module.config}, path)
            """
        ),
        Clean(
            # The nn.Module API runs no forward: a penalty on the (identical) weights diverges nothing.
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def regularize(net, optimizer, rank, weight_decay):
                model = DDP(net.to(rank), device_ids=[rank])
                penalty = sum(p.pow(2).sum() for p in model.module.parameters())
                (weight_decay * penalty).backward()
                optimizer.step()
            """
        ),
        Clean(
            # The helper calls the inner module and keeps the loss scaler's state, but runs no backward.
            """
            import torch
            from timm.utils import NativeScaler

            def snapshot(net, loss_scaler, batch, path):
                print(net(batch).mean())
                torch.save({"model": net.state_dict(), "scaler": loss_scaler.state_dict()}, path)

            def main(net, batch, rank):
                ddp = torch.nn.parallel.DistributedDataParallel(net.to(rank), device_ids=[rank])
                snapshot(ddp.module, NativeScaler(), batch, "ckpt.pt")
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train_one_epoch(model, loader, optimizer):
                for x, y in loader:
                    criterion(model(x), y).backward()
                    optimizer.step()

            @torch.no_grad()
            def evaluate(model, loader):
                return [model(x) for x in loader]

            def save(model, path):
                torch.save(model.state_dict(), path)

            def main(net, loader, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                model_without_ddp = model.module
                optimizer = torch.optim.SGD(model_without_ddp.parameters(), lr=0.1)
                train_one_epoch(model, loader, optimizer)
                evaluate(model_without_ddp, loader)
                save(model_without_ddp, "ckpt.pt")

            def single_process(net, loader, optimizer):
                model = net.cuda()
                model_without_ddp = model.module if hasattr(model, "module") else model
                train_one_epoch(model_without_ddp, loader, optimizer)
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, loader, optimizer, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                model_without_ddp = model.module
                for x, y in loader:
                    criterion(model(x), y).backward()
                    optimizer.step()
                torch.save(model_without_ddp.state_dict(), "ckpt.pt")

            def probe(net, x, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                inner = model.module
                inner = net
                inner(x).sum().backward()
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(net, loader, optimizer, rank):
                model = DDP(net)
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                with torch.no_grad():
                    val = criterion(model.module(x), y)
                if rank == 0:
                    preds = model.module(x)
                    preds.sum().backward()
                torch.save(model.module.state_dict(), "ckpt.pt")
                print(model.module.fc.weight.shape)
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def evaluate(model, x, y):
                loss = criterion(model.module(x), y)
                loss.backward()  # gradient-based attribution on the local replica
                return x.grad

            @torch.inference_mode()
            def score(model, x):
                return model.module(x)

            def run(net, x, y):
                model = DDP(net)
                evaluate(model, x, y)
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def distill(student_net, teacher_net, x, optimizer):
                student = DDP(student_net)
                teacher = DDP(teacher_net)
                target = teacher.module(x)
                features = student.module.encoder(x).detach()
                probe_loss = criterion(probe(features), target)
                probe_loss.backward()
                loss = kl(student(x), target)
                loss.backward()
            """
        ),
        Clean(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def step(net, x1, x2, optimizer):
                model = DDP(net)
                out1 = model(x1)
                out2 = model.module(x2)  # second view: reduced with the first in one backward
                (criterion(out1) + criterion(out2)).backward()
                optimizer.step()
            """
        ),
        Clean(
            """
            import torch.nn as nn

            def train(net, x, y):
                model = nn.DataParallel(net)
                loss = criterion(model.module(x), y)
                loss.backward()
                other = wrap(net)
                other.module(x).sum().backward()
            """
        ),
        Clean(
            # The kept inner module evaluated without gradients, its nn.Module API, and a list of
            # outputs whose step also runs the DDP model's own forward.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Evaluator:
                def __init__(self, net, rank):
                    self.model = DDP(net.to(rank), device_ids=[rank]).module

                @torch.no_grad()
                def score(self, batch):
                    return self.model.compute_loss(batch)

                def tune(self, batch, optimizer):
                    self.model.train()
                    loss = sum(p.sum() for p in self.model.parameters())
                    loss.backward()

            def train(net, loader, optimizer, rank):
                model = DDP(net.to(rank), device_ids=[rank])
                for x, y in loader:
                    outs = [model(x)]
                    outs.append(model.module.head(y))
                    criterion(torch.stack(outs), y).backward()
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._wrapped = model.get(WrappedModels)
        self._ranks = model.get(RankRegions)
        self._grad = model.get(GradientMode)
        self._branches = model.get(Branches)
        # call -> (call, wrapper (None: called through a name bound to the inner module), frame, a note on where it comes from, its branch path)
        self._candidates: dict[int, tuple[cst.Call, cst.BaseExpression | None, int, str, Path]] = {}
        self._taint: dict[int, dict[str, set[int]]] = {}  # per function node: name -> candidates it carries
        self._backwarded: set[int] = set()
        # function -> the branch paths of its calls of the DDP model itself, and of Accelerate's prepared model (by name)
        self._forwards: dict[int, list[tuple[Path, str | None]]] = {}
        self._unfixed: set[int] = set()  # calls through a name bound to the inner module or of its method: no fix
        self._handed: dict | None = None  # the module's calls that hand the inner module to a trainer (program model)
        # per function node: names bound to a method of the inner module -> (the DDP model's name, a note)
        self._methods: dict[int, dict[str, tuple[str | None, str]]] = {}

    def _frame_id(self) -> int:
        return id(self.model.frame.node)

    def _evaluation_function(self) -> bool:
        frame = self.model.function
        while frame is not None:
            if evaluates(frame.node.name.value):  # type: ignore[union-attr]
                return True
            frame = frame.parent
            while frame is not None and not frame.is_function:
                frame = frame.parent
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self._check_handed(node)
        func = node.func
        if self._wrapped.is_wrapped(func) or (
            isinstance(func, cst.Attribute) and func.attr.value == "forward" and self._wrapped.is_wrapped(func.value)
        ):
            self._forwards.setdefault(self._frame_id(), []).append((self._branches.path, None))
            return
        called = func.value if isinstance(func, cst.Attribute) and func.attr.value == "forward" else func
        if self._wrapped.is_prepared(called):
            self._forwards.setdefault(self._frame_id(), []).append((self._branches.path, dotted_name(called)))
            return
        wrapper = _bypassed_wrapper(func)
        method = None
        if wrapper is None:
            wrapper = method = _inner_method(func)
        prepared = wrapper is not None and self._wrapped.is_prepared(wrapper)
        if wrapper is not None and (self._wrapped.is_wrapped(wrapper) or prepared):
            origin = _prepared_note(self._wrapped, wrapper) if prepared else self._wrapped.where(wrapper)
            if method is not None:
                self._unfixed.add(id(node))
                origin += f" (`{func.attr.value}()` of the inner module is a forward DDP never sees)"  # type: ignore[attr-defined]
            self._consider(node, wrapper, dotted_name(wrapper), origin)
        elif wrapper is None:
            # a name or `self` attribute bound to the inner module, a method of it, a name bound to
            # such a method, or `unwrap_model(model)` itself: no fix (the name may be rebound; the
            # helper may be meant for other models)
            inner = self._inner_forward(func)
            if inner is not None:
                self._unfixed.add(id(node))
                self._consider(node, None, *inner)

    def _inner_forward(self, func: cst.BaseExpression) -> tuple[str | None, str] | None:
        """(the DDP model's name where known, a note) where calling `func` runs the inner module
        of a DDP model through a name: `net(x)`, `net.forward(x)`, `net.compute_loss(x)` after `net
        = model.module`, or `loss_func(x)` after `loss_func = net.compute_loss`; None otherwise."""
        called = func.value if isinstance(func, cst.Attribute) and func.attr.value == "forward" else func
        inner = self._wrapped.inner(called)
        if inner is not None:
            return inner[0] or dotted_name(called), inner[1]
        if isinstance(func, cst.Attribute) and _runs_parameters(func.attr.value):
            inner = self._wrapped.inner(func.value)
            if inner is not None:
                note = f" (`{func.attr.value}()` of the inner module is a forward DDP never sees)"
                return inner[0] or dotted_name(func.value), inner[1] + note
        name = dotted_name(func)
        return self._methods.get(self._frame_id(), {}).get(name) if name is not None else None

    def _bind_methods(self, targets: list[cst.BaseExpression], value: cst.BaseExpression | None) -> None:
        """Names bound to a method of a DDP model's inner module (`loss_func = net.compute_loss`,
        also `loss_func = loss_func or net.compute_loss` where the parameter's default is None:
        a call that leaves it out takes the method): calling them runs the inner module."""
        if self.model.function is None:
            return
        method = value
        if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or) and self._defaults_to_none(value.left):
            method = value.right
        found = None
        if isinstance(method, cst.Attribute) and _runs_parameters(method.attr.value):
            wrapper = _bypassed_wrapper(method.value)
            if wrapper is not None and self._wrapped.is_wrapped(wrapper):
                found = (dotted_name(wrapper), self._wrapped.where(wrapper))
            elif wrapper is not None and self._wrapped.is_prepared(wrapper):
                found = (dotted_name(wrapper), _prepared_note(self._wrapped, wrapper))
            else:
                found = self._wrapped.inner(method.value)
        methods = self._methods.setdefault(self._frame_id(), {})
        for target in targets:
            name = dotted_name(target)
            if name is None:
                continue
            if found is None:
                methods.pop(name, None)
            else:
                note = f" (`{name}` is `{dotted_name(method)}`, a forward DDP never sees)"
                methods[name] = (found[0] or dotted_name(method.value), found[1] + note)  # type: ignore[union-attr]

    def _defaults_to_none(self, expr: cst.BaseExpression) -> bool:
        """`expr` names a parameter of this function whose default is None."""
        function = self.model.function
        node = function.node if function is not None else None
        if not isinstance(expr, cst.Name) or not isinstance(node, cst.FunctionDef):
            return False
        params = (*node.params.params, *node.params.kwonly_params)
        return any(
            param.name.value == expr.value and isinstance(param.default, cst.Name) and param.default.value == "None"
            for param in params
        )

    def _consider(self, node: cst.Call, wrapper: cst.BaseExpression | None, name: str | None, origin: str) -> None:
        """A forward through the inner module of the DDP model `name`: a candidate unless
        gradients are off, only rank 0 runs it, it is a copy (EMA, teacher) or the function evaluates."""
        if not (
            self._grad.gradients_off
            or self._ranks.only_rank_zero
            or any(word in (name or "").lower() for word in COPY_WORDS)
            or self._evaluation_function()
            or self.model.function is None
        ):
            self._candidates[id(node)] = (node, wrapper, self._frame_id(), origin, self._branches.path)

    def _check_handed(self, node: cst.Call) -> None:
        """A call that hands the inner module to a project function that trains it (the program
        model's ddplint.model.inner.handed), reported at the argument: the caller chose it."""
        project, function = self.model.project, self.model.function
        if project is None or function is None or self._grad.gradients_off or self._ranks.only_rank_zero:
            return
        if self._handed is None:
            self._handed = project.inner_handed()
        handed = self._handed
        if not handed:
            return
        callee = dotted_name(node.func)
        for position, arg in passed_arguments(node):
            name = dotted_name(arg)
            found = handed.get((function.key, callee, position, name))
            if found is None or any(word in (name or "").lower() for word in COPY_WORDS):
                continue
            if not evaluates(found.function.rpartition(".")[2]):
                self.report(arg, _HANDED.format(name=name, wrapped=found.inner.wrapped_at, helper=found.function, forward=found.forward))

    def leave_Call(self, original_node: cst.Call) -> None:
        # On leaving, so that the calls inside its arguments are known: backward(loss_fn(...)).
        node, func = original_node, original_node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward":
            for expr in (func.value, *(arg.value for arg in node.args)):
                self._backwarded |= self._carried(expr)
        elif isinstance(func, cst.Attribute) and func.attr.value in ADDING_METHODS and node.args:
            # `outputs.append(model.module.head(x))`: the container holds what it is given
            self._assign([func.value], node.args[-1].value, True)

    def _carried(self, expr: cst.BaseExpression) -> set[int]:
        """The candidate calls whose results `expr` carries, directly or through names."""
        if not self._candidates:
            return set()  # every set of names carries candidates; none yet, none carried (most files)
        taint = self._taint.get(self._frame_id(), {})
        found: set[int] = set()
        stack: list[cst.CSTNode] = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call):
                if id(node) in self._candidates:
                    found.add(id(node))  # and what its arguments carry: decode(encode(x))
                elif isinstance(node.func, cst.Attribute) and node.func.attr.value in DETACHING_METHODS:
                    continue
            elif isinstance(node, (cst.Name, cst.Attribute)):
                name = dotted_name(node)
                if name in taint:
                    found |= taint[name]
                    continue
            elif isinstance(node, (cst.Lambda, cst.FunctionDef)):
                continue
            stack.extend(children(node))
        return found

    def _assign(self, targets: list[cst.BaseExpression], value: cst.BaseExpression | None, augment: bool) -> None:
        if value is None or self.model.function is None:
            return
        carried = self._carried(value)
        taint = self._taint.setdefault(self._frame_id(), {})
        path = self._branches.path
        for target in targets:
            for name in _names(target):
                if augment:
                    taint.setdefault(name, set()).update(carried)
                    continue
                # what the other branch of an `if` bound stays (`if ddp: out = model.module(x) else: out = model(x)`)
                kept = {call for call in taint.get(name, ()) if exclusive(self._candidates[call][4], path)}
                if carried or kept:
                    taint[name] = carried | kept
                else:
                    taint.pop(name, None)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._assign([t.target for t in original_node.targets], original_node.value, False)
        self._bind_methods([t.target for t in original_node.targets], original_node.value)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._assign([original_node.target], original_node.value, False)
        self._bind_methods([original_node.target], original_node.value)

    def leave_AugAssign(self, original_node: cst.AugAssign) -> None:
        self._assign([original_node.target], original_node.value, True)

    def leave_Module(self, original_node: cst.Module) -> None:
        for key, (call, wrapper, frame, origin, path) in self._candidates.items():
            name = dotted_name(wrapper) if wrapper is not None else None
            # a DDP forward the same pass may also run (not in the other branch of an `if`)
            ran = any(not exclusive(path, where) and prepared in (None, name) for where, prepared in self._forwards.get(frame, ()))
            if key in self._backwarded and not ran:
                fix = None if key in self._unfixed else {call: call.with_changes(func=wrapper)}
                self.report(call, self.message + origin, replace=fix)


def _prepared_note(wrapped: WrappedModels, model: cst.BaseExpression) -> str:
    """Where Accelerate prepared `model`: its `prepare` wraps it in DDP where several processes
    run, which its `.module` presumes (on one process the prepared model has none)."""
    return wrapped.prepared_where(model) or f" (`{dotted_name(model)}` is prepared by Accelerate, which wraps it in DDP under a launch of several processes)"


def _runs_parameters(attribute: str) -> bool:
    """Whether calling the attribute `attribute` of a module may run its parameters: a method or
    submodule of its own, not the nn.Module API that runs none."""
    return attribute not in MODULE_API and not attribute.startswith(("register_", "named_", "load_"))


def _inner_method(func: cst.BaseExpression) -> cst.BaseExpression | None:
    """`model` for `model.module.compute_loss` and `model.module.encoder` (a method or submodule
    of the inner module, which runs its parameters), not for the nn.Module API that runs none."""
    if (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Attribute)
        and func.value.attr.value == "module"
        and _runs_parameters(func.attr.value)
    ):
        return func.value.value
    return None


def _bypassed_wrapper(func: cst.BaseExpression) -> cst.BaseExpression | None:
    """`model` for `model.module` and `model.module.forward`; None otherwise."""
    if isinstance(func, cst.Attribute) and func.attr.value == "forward":
        func = func.value
    if isinstance(func, cst.Attribute) and func.attr.value == "module":
        return func.value
    return None


def _names(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names(target.value)
    else:
        name = dotted_name(target)
        if name is not None:
            yield name
