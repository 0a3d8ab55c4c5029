from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ddplint.core.diagnostics import Applicability
from ddplint.analyses.branches import Branches
from ddplint.analyses.ranks import WrappedModels
from ddplint.model.files import expression_path_key, loaded_path_key
from ddplint.model.records import Inner
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Rule
from ddplint.semantic.model import dotted_name
from ddplint.semantic.edits import argument_at, argument_for
from ddplint.core.torch_api import CONSUME_PREFIX, DDP, NN_MODULE, OPTIMIZER_MODULES, TORCH, TORCH_LOAD, TORCH_SAVE
from ddplint.semantic.walk import children
from ddplint.prefilter.project_facts import ProjectFact

_IMPORT = "from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present"
_OPTIMIZER_NAME = re.compile(r"optimi[sz]er|^optim$|^opt(_|$)|sched|scaler|^lr(_|$)", re.IGNORECASE)
_CODE = cst.Module([])
# Methods that take keys out of a dict or put new ones in.
_REWRITING = frozenset(("pop", "popitem", "update", "setdefault", "clear"))


def _code(expr: cst.CSTNode) -> str:
    return _CODE.code_for_node(expr)


def _first_key(expr: cst.BaseExpression) -> str | None:
    """`"model"` for `checkpoint["model"]` and `checkpoint["model"]["ema"]`; None otherwise."""
    key = None
    while isinstance(expr, cst.Subscript):
        index = expr.slice[0].slice if len(expr.slice) == 1 else None
        value = index.value if isinstance(index, cst.Index) else None
        key = value.evaluated_value if isinstance(value, cst.SimpleString) else None
        expr = expr.value
    return key if isinstance(key, str) else None


def _keys_agree(saved: str | None, loaded: str | None) -> bool:
    """Whether a state dict saved under the dict key `saved` (None: as the whole object, or
    under a key not known) can be the one a load reads under `loaded` (None: the whole object
    loaded is taken for the state dict). A whole checkpoint loaded as a state dict is no entry
    of a dict record: such a load reads another file (`else: model.load_state_dict(checkpoint)`
    after `if "model_state_dict" in checkpoint`)."""
    return saved is None or saved == loaded


@dataclass(frozen=True)
class _Save:
    """A state dict this module saves: its file (`path`: a known string; `file`: as the program
    names files), the dict key it is saved under, and whether it is the DDP wrapper's (keys
    prefixed `module.`) or its inner module's (keys without)."""

    path: str | None
    file: str | None
    entry: str | None
    wrapped: bool
    inner: bool

    def may_be_read_by(self, path: str | None, file: str | None, entry: str | None) -> bool:
        """Whether a load of `entry` from that file is shown to read this state dict: the same
        file (by its string, or as the program names files), or, where the file is not known
        on both sides, the same named entry of a saved record (`checkpoint["model"]`). A whole
        state dict saved to one unknown file and loaded from another is no shown pair."""
        if not _keys_agree(self.entry, entry):
            return False
        if None not in (self.path, path):
            return self.path == path
        return (file is not None and self.file == file) or (entry is not None and self.entry == entry)


def _is_torch_ddp(qualified: str | None) -> bool:
    """torch's own DistributedDataParallel, from which every DDP wrapper derives: an object
    that is no instance of it is no DDP model (one that is no `MMDistributedDataParallel`
    may still be one)."""
    return qualified in DDP and qualified in TORCH


def _handed_file(expr: cst.BaseExpression) -> str | None:
    """A file known only by the name it is handed in (`torch.save(sd, path)` in `train(path)`,
    `torch.load(path)` in `evaluate(path)`): the same name on both sides of one module is taken
    for the same file, as a script passes one `path` to both."""
    return f"handed:{expr.value}" if isinstance(expr, cst.Name) else None


def _root_name(expr: cst.BaseExpression) -> str | None:
    """`checkpoint` for `checkpoint`, `checkpoint["model"]`, `checkpoint["a"]["b"]`."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


INVERSE_MESSAGE = (
    'state dict saved from the model inside DDP has no "module." keys and is loaded into the DDP wrapper, '
    "which matches none of them (strict=False loads nothing, silently); load it into the inner model (`model.module`)"
)


class DdpStateDictPrefix(Rule):
    """
    `DistributedDataParallel` keeps the user's model as its attribute `module`, so the
    wrapper's `state_dict()` names every tensor `module.<name>`. A checkpoint saved from the
    wrapper (`torch.save(ddp_model.state_dict(), path)`) no longer fits the plain model:
    loading it for evaluation, export or single-GPU fine-tuning fails with
    `Missing key(s) in state_dict: "encoder.weight" ... Unexpected key(s) in state_dict:
    "module.encoder.weight"` (seed report 000), and `strict=False` silently loads nothing.

    Fires when a model's `load_state_dict` reads a checkpoint entry that this module saves from
    a DDP-wrapped model.

    Flagged, on the load side: `model.load_state_dict(sd)` into a model that is not wrapped
    at that point (not bound to `DistributedDataParallel(...)`, or `ddp.module`), where `sd`
    comes from `torch.load` (`sd = torch.load(...)`, `checkpoint["model"]`), in a module
    that also saves the state dict of a DDP-wrapped model (bound to `DistributedDataParallel(...)`
    before the save: the analysis follows the order of bindings). Only then is the prefix
    known to be there. The load must be shown to read that save: the same file (one string,
    or files the code names alike), or, where the file is not known on both sides, the same
    named entry of the saved record (`checkpoint["model"]`); a whole state dict saved to one
    unknown file and loaded from another (`torch.load(weights_file)`, a whole checkpoint
    record handed to the load included) is no shown pair. `strict=False` is flagged as well:
    no key matches, nothing loads, and nothing says so. In another module (an `evaluate.py` run as one process included), a
    load is flagged when the program model sees a DDP model's state dict saved, by any
    module or helper the model is handed to, to the same file name (also one formatted alike:
    `"checkpoint_{}.tar".format(epoch)` and `f"{out}/checkpoint_{n}.tar"` name the same files,
    `f"{out}/{name}.tar"` none known) or the same configuration value (`args.checkpoint`,
    `cfg.MODEL.WEIGHTS`) under an agreeing key; the message names that save. A helper that tests
    `isinstance(model, nn.DataParallel)` before saving `model.module.state_dict()` saves a
    DDP model's own state dict in its other branch: DDP is no `DataParallel`. A helper that saves to its parameter (`def
    save_checkpoint(model, optimizer, path)` in `utils.py`) saves to the files its callers
    name, each call that hands it a DDP model (`save_checkpoint(ddp_model, opt, args.ckpt)`)
    counting for its own file. `model.module.state_dict()` and a `model_without_ddp =
    model.module` are the inner model: no prefix. Not flagged: an optimizer's,
    scheduler's or gradient scaler's `load_state_dict` (their keys are parameter indices),
    a checkpoint whose keys the code rewrites before the load (`ckpt[key[7:]] = ckpt.pop(key)`,
    as `consume_prefix_in_state_dict_if_present` does), an entry of the checkpoint other than
    the one the wrapper's state dict is saved under
    (`checkpoint["optimizer"]`), a whole checkpoint loaded as the state dict where the wrapper's
    is saved only as an entry of a dict (that load reads another file), and a checkpoint whose
    path is that of a state dict saved before the wrap, and a load into a model that a branch of an
    `if` before it wraps (`if args.distributed: model = DDP(model) else: model =
    DataParallel(model)`: the distributed run loads into the wrapper), and a load into `model.module`
    in the `else:` of `if isinstance(model, nn.Module):` (the DDP wrapper is a Module too: that
    branch never runs; `isinstance(model, nn.DataParallel)` is no such test), and a state dict saved, or a
    load, where an `isinstance(model, DistributedDataParallel)` test found the model no DDP model (the
    `else:` of that test, in a statement or a conditional expression: `model.module.state_dict() if
    isinstance(model, DDP) else model.state_dict()` saves no `module.` keys either way). A save helper of the project
    that `torch.save`s its parameter (`def save_checkpoint(state, filename): torch.save(state,
    filename)`) saves what each call hands it, as `torch.save` would. A dict bound to a name and saved
    later (`checkpoint = {"model": model.state_dict()}`, `checkpoint["ema"] = ...`, then
    `torch.save(checkpoint, path)`) holds the state dicts put in it, each judged where it is
    put in.

    The other way round, too: a state dict saved from the inner model (`model.module.state_dict()`,
    `model_without_ddp.state_dict()`, in this module or, to the same file name, in another)
    loaded into the DDP wrapper (`model.load_state_dict(best["model"], strict=False)`) matches
    none of the wrapper's `module.` keys: strictly the load fails with `Missing key(s)`, and with
    `strict=False` nothing loads and nothing says so (the "best" model evaluated is the last
    one). Not flagged where the same file may also hold the wrapper's own state dict.

    Fix (safe): `consume_prefix_in_state_dict_if_present(sd, "module.")` (from
    `torch.nn.modules.utils`) before the load. It strips the prefix in place where present
    and changes nothing for a checkpoint without it, so old and new checkpoints both load.
    The better cure is on the save side, `torch.save(ddp_model.module.state_dict(), ...)`,
    but existing checkpoints still need the load-side fix. For a load into the wrapper, the fix
    loads into the inner model instead: the name bound to it (`model_without_ddp`, which holds
    the plain model in a run without DDP too), else `model.module` where the wrap always runs
    (no fix where only a branch wraps it).
    """

    code = "DDP009"
    # the checkpoint loaded here may be saved from the wrapper in another module
    opened_by = unscreened_by = frozenset((ProjectFact.LOADS_WRAPPER_CHECKPOINT,))
    # The prefix breaks the load in any process: evaluation and export scripts run as one.
    needs_ranks = False
    name = "ddp-state-dict-prefix"
    frameworks = (Framework.DDP,)
    message = (
        'state dict saved from the DDP wrapper has "module." keys and is loaded into an unwrapped model; '
        'strip them with consume_prefix_in_state_dict_if_present(sd, "module.") (or save model.module.state_dict())'
    )
    fix = Applicability.SAFE
    # `also`: the wrapper whose state dict is saved, and the load that meets its prefix.
    trigger = CallTrigger(TORCH_SAVE, also=("load_state_dict", "DistributedDataParallel"))

    flagged_examples = (
        Flagged(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net):
                model = DDP(net)
                torch.save(model.state_dict(), "model.pth")

            def evaluate(net):
                state = torch.load("model.pth", map_location="cpu")
                net.load_state_dict(state)
                ^
            """,
            fix_edits=(
                (
                    "import torch\n",
                    "import torch\n"
                    "from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present\n",
                ),
                (
                    'state = torch.load("model.pth", map_location="cpu")\n',
                    'state = torch.load("model.pth", map_location="cpu")\n'
                    '    consume_prefix_in_state_dict_if_present(state, "module.")\n',
                ),
            ),
        ),
        Flagged(
            """
            import torch as t
            import torch.nn as nn

            class Solver:
                def build(self):
                    self.model = nn.parallel.DistributedDataParallel(self.model)

                def save(self, path):
                    t.save({"model": self.model.state_dict(), "epoch": 3}, path)

                def load(self, path):
                    checkpoint = t.load(path, map_location="cpu")
                    # restore the weights
                    self.model.module.load_state_dict(checkpoint["model"])
                    ^
            """,
            fix_edits=(
                (
                    "import torch.nn as nn\n",
                    "import torch.nn as nn\n"
                    "from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present\n",
                ),
                (
                    "# restore the weights\n",
                    "# restore the weights\n"
                    '        consume_prefix_in_state_dict_if_present(checkpoint["model"], "module.")\n',
                ),
            ),
        ),
        Flagged(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel

            model = DistributedDataParallel(build())
            torch.save(model.state_dict(), "ddp.pt")
            model = build()
            model.load_state_dict(torch.load("ddp.pt", map_location="cpu"))
            ^
            """
        ),
        Flagged(
            # Only the model's entry has the prefix: the optimizer and scheduler loads are fine.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, optimizer, scheduler, path):
                model = DDP(net)
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                            "scheduler": scheduler.state_dict()}, path)

            def resume(net, optimizer, scheduler, path):
                checkpoint = torch.load(path, map_location="cpu")
                net.load_state_dict(checkpoint["model"])
                ^
                optimizer.load_state_dict(checkpoint["optimizer"])
                scheduler.load_state_dict(checkpoint["scheduler"])
            """,
            fix_edits=(
                (
                    "import torch\n",
                    "import torch\n"
                    "from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present\n",
                ),
                (
                    'checkpoint = torch.load(path, map_location="cpu")\n',
                    'checkpoint = torch.load(path, map_location="cpu")\n'
                    '    consume_prefix_in_state_dict_if_present(checkpoint["model"], "module.")\n',
                ),
            ),
        ),
        Flagged(
            # The checkpoint dict is built first, then saved; the resume loads it before the wrap.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def resume(model, path):
                checkpoint = torch.load(path, map_location="cpu")
                if "model_state_dict" in checkpoint:
                    model.load_state_dict(checkpoint["model_state_dict"])
                    ^
                else:
                    model.load_state_dict(checkpoint)

            def main(model, args):
                resume(model, args.resume)
                model = DDP(model)
                checkpoint = {"epoch": 0, "model_state_dict": model.state_dict()}
                checkpoint["optimizer_state_dict"] = optimizer.state_dict()
                torch.save(checkpoint, args.out)
            """,
            fix_edits=(
                (
                    "import torch\n",
                    "import torch\n"
                    "from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present\n",
                ),
                (
                    'if "model_state_dict" in checkpoint:\n',
                    'if "model_state_dict" in checkpoint:\n'
                    '        consume_prefix_in_state_dict_if_present(checkpoint["model_state_dict"], "module.")\n',
                ),
            ),
        ),
        Flagged(
            # The ImageNet example's save helper: the dict handed to it is what it saves.
            """
            import torch
            import torch.distributed as dist

            def main_worker(local_rank, args):
                dist.init_process_group("nccl", rank=local_rank, world_size=args.world_size)
                model = build()
                if args.weight_file is not None:
                    temp_ckp = torch.load(args.weight_file, map_location="cpu")
                    model.load_state_dict(temp_ckp["state_dict"])
                    ^
                model = torch.nn.parallel.DistributedDataParallel(model.cuda(local_rank))
                for epoch in range(args.epochs):
                    train(model)
                    if local_rank == 0:
                        save_checkpoint({"epoch": epoch, "state_dict": model.state_dict()}, args.out)

            def save_checkpoint(state, filename="checkpoint.pth.tar"):
                torch.save(state, filename)
            """,
            fix_edits=(
                (
                    "import torch.distributed as dist\n",
                    "import torch.distributed as dist\n"
                    "from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present\n",
                ),
                (
                    'temp_ckp = torch.load(args.weight_file, map_location="cpu")\n',
                    'temp_ckp = torch.load(args.weight_file, map_location="cpu")\n'
                    '        consume_prefix_in_state_dict_if_present(temp_ckp["state_dict"], "module.")\n',
                ),
            ),
        ),
        Flagged(
            # OpenMMLab's wrapper derives from DistributedDataParallel: the same `module.` keys.
            """
            import torch
            from mmcv.parallel import MMDistributedDataParallel

            model = MMDistributedDataParallel(build().cuda(), device_ids=[0])
            torch.save(model.state_dict(), "latest.pth")
            fresh = build()
            fresh.load_state_dict(torch.load("latest.pth", map_location="cpu"))
            ^
            """
        ),
        Flagged(
            # DDP is no DataParallel: the `else:` runs, and loads the wrapper's save into its inner model.
            """
            import torch
            import torch.nn as nn
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(net, args):
                model = DDP(net)
                checkpoint = torch.load(args.resume, map_location="cpu")
                if isinstance(model, nn.DataParallel):
                    model.load_state_dict(checkpoint["state_dict"])
                else:
                    model.module.load_state_dict(checkpoint["state_dict"])
                    ^
                torch.save({"state_dict": model.state_dict()}, args.resume)
            """,
            fix_edits=(
                (
                    "import torch.nn as nn\n",
                    "import torch.nn as nn\n"
                    "from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present\n",
                ),
                (
                    "    else:\n",
                    "    else:\n"
                    '        consume_prefix_in_state_dict_if_present(checkpoint["state_dict"], "module.")\n',
                ),
            ),
        ),
        Flagged(
            # strict=False does not help: no key matches, nothing loads, and no error says so.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(net, args):
                model = DDP(net)
                torch.save({"net": model.state_dict(), "epoch": 9}, args.checkpoint)
                student = build()
                checkpoint = torch.load(args.checkpoint, map_location="cpu")
                student.load_state_dict(checkpoint["net"], strict=False)
                ^
            """,
            fix_edits=(
                (
                    "import torch\n",
                    "import torch\n"
                    "from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present\n",
                ),
                (
                    'checkpoint = torch.load(args.checkpoint, map_location="cpu")\n',
                    'checkpoint = torch.load(args.checkpoint, map_location="cpu")\n'
                    '    consume_prefix_in_state_dict_if_present(checkpoint["net"], "module.")\n',
                ),
            ),
        ),
        Flagged(
            # The other way round: the best weights are saved from the inner model (no prefix)
            # and loaded into the wrapper, whose keys all start with `module.`: with
            # strict=False nothing loads and nothing says so.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(net, args):
                model = DDP(net)
                model_without_ddp = model.module
                for epoch in range(args.epochs):
                    torch.save({"model": model_without_ddp.state_dict(), "epoch": epoch}, "best.pth")
                best = torch.load("best.pth", map_location="cpu")
                model.load_state_dict(best["model"], strict=False)
                ^
            """,
            messages=INVERSE_MESSAGE,
            fix_edits=(
                (
                    'model.load_state_dict(best["model"], strict=False)',
                    'model_without_ddp.load_state_dict(best["model"], strict=False)',
                ),
            ),
        ),
        Flagged(
            # Strictly, the same load fails: Missing key(s) "module.weight" ...
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net):
                model = DDP(net)
                torch.save(model.module.state_dict(), "weights.pt")
                model.load_state_dict(torch.load("weights.pt", map_location="cpu"))
                ^
            """,
            messages=INVERSE_MESSAGE,
            fix_edits=(
                (
                    'model.load_state_dict(torch.load("weights.pt", map_location="cpu"))',
                    'model.module.load_state_dict(torch.load("weights.pt", map_location="cpu"))',
                ),
            ),
        ),
        Flagged(
            # Only the distributed run wraps `net`: `net.module` would fail in the other, so no fix.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(net, args):
                if args.distributed:
                    net = DDP(net)
                    torch.save(net.module.state_dict(), "net.pt")
                net.load_state_dict(torch.load("net.pt", map_location="cpu"), strict=False)
                ^
            """,
            messages=INVERSE_MESSAGE,
        ),
    )
    clean_examples = (
        Clean(
            # The inner model's weights go back into the inner model; the file the wrapper
            # loads is not shown to be the one saved.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, args):
                model = DDP(net)
                torch.save(model.module.state_dict(), "weights.pt")
                model.module.load_state_dict(torch.load("weights.pt", map_location="cpu"))
                model.load_state_dict(torch.load(args.resume, map_location="cpu"))
            """
        ),
        Clean(
            # Nothing shows the file loaded is the one saved: the save writes a step-numbered
            # file of its own, the load reads whatever file its caller names.
            """
            import os
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(model, steps):
                model = DDP(model)
                for step in range(steps):
                    if step % 1000 == 0:
                        path = os.path.join("models", "model_{}.p".format(step))
                        torch.save(model.state_dict(), path)

            def build(weights_file):
                model = make_network()
                if weights_file:
                    weights = torch.load(weights_file)
                    model.load_state_dict(weights)
                return model
            """
        ),
        Clean(
            # The load is handed the whole checkpoint record (its step is read from it too),
            # not the state dict inside it: no key matches, prefix or none.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(model, args):
                if args.resume:
                    record = torch.load(args.resume)
                    model.load_state_dict(record, strict=False)
                    step = record["global_step"]
                if args.distributed:
                    model = DDP(model)
                torch.save({"global_step": step, "state_dict": model.state_dict()}, args.logdir + "/last.pt")
                torch.save(model.state_dict(), args.logdir + "final_model.pth")
            """
        ),
        Clean(
            # Every model is an nn.Module, the DDP wrapper too: these loads into `.module` never run.
            """
            from torch import load, nn, save
            from torch.nn.parallel import DistributedDataParallel

            def resume(model, path):
                state = load(path, map_location="cpu")
                if not isinstance(model, nn.Module):
                    model.module.load_state_dict(state["state_dict"])
                if isinstance(model, nn.Module):
                    return state["epoch"]
                else:
                    return model.module.load_state_dict(state["state_dict"])

            ddp_model = DistributedDataParallel(build())
            resume(ddp_model, "last.pt")
            save({"state_dict": ddp_model.state_dict()}, "last.pt")
            """
        ),
        Clean(
            # Where `isinstance(model, DistributedDataParallel)` is False the model is no DDP
            # model (every DDP wrapper derives from torch's): its own state dict has no prefix.
            # So the `else:` never saves the wrapper's, whichever runs.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel

            class Trainer:
                def __init__(self, model):
                    self.model = DistributedDataParallel(model)

                def resume(self, path):
                    checkpoint = torch.load(path, map_location="cpu")
                    if isinstance(self.model, DistributedDataParallel):
                        self.model.module.load_state_dict(checkpoint["model"])
                    else:
                        self.model.load_state_dict(checkpoint["model"])

                def save(self, path):
                    state = {"epoch": 1}
                    if isinstance(self.model, DistributedDataParallel):
                        state["model"] = self.model.module.state_dict()
                    else:
                        state["model"] = self.model.state_dict()
                    torch.save(state, path)
                    weights = self.model.module.state_dict() if isinstance(self.model, DistributedDataParallel) else self.model.state_dict()
                    torch.save(weights, "weights.pt")
                    if not isinstance(self.model, (torch.nn.DataParallel, DistributedDataParallel)):
                        torch.save(self.model.state_dict(), "plain.pt")
                    fresh = build()
                    fresh.load_state_dict(torch.load("weights.pt", map_location="cpu"))
                    fresh.load_state_dict(torch.load("plain.pt", map_location="cpu"))
            """
        ),
        Clean(
            # The ImageNet example's wrap: the distributed run's branch makes `model` the DDP
            # model, whatever the walk saw last, so its resume loads into the wrapper.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(model, args):
                if args.distributed:
                    model = DDP(model)
                else:
                    model = torch.nn.DataParallel(model)
                checkpoint = torch.load("checkpoint.pth.tar", map_location="cpu")
                model.load_state_dict(checkpoint["state_dict"])
                save_checkpoint({"state_dict": model.state_dict()}, "checkpoint.pth.tar")

            def save_checkpoint(state, filename):
                torch.save(state, filename)
            """
        ),
        Clean(
            # The save helper is handed the inner model's state dict, and the optimizer's.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(net, optimizer, args):
                net.load_state_dict(torch.load(args.resume, map_location="cpu")["state_dict"])
                model = DDP(net)
                save_checkpoint({"state_dict": model.module.state_dict()}, args.out)
                save_checkpoint({"optimizer": optimizer.state_dict()}, args.out)

            def save_checkpoint(state, filename):
                torch.save(state, filename)
            """
        ),
        Clean(
            # The wrapper's own state dict is taken only where `.module` failed: never for DDP.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(net, args):
                checkpoint = torch.load(args.resume, map_location="cpu")
                net.load_state_dict(checkpoint["model_state_dict"])
                net = DDP(net)
                save_dict = {"epoch": 1}
                try:
                    save_dict["model_state_dict"] = net.module.state_dict()
                except AttributeError:
                    save_dict["model_state_dict"] = net.state_dict()
                torch.save(save_dict, args.out)
            """
        ),
        Clean(
            # The keys are stripped by hand before the load.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(net, args):
                model = DDP(net)
                torch.save(model.state_dict(), "netG_{}.pth".format(args.epoch))
                ckpt = torch.load("netG_{}.pth".format(args.epoch), map_location="cpu")
                for key in list(ckpt.keys()):
                    ckpt[key[7:]] = ckpt.pop(key)
                fresh = build()
                fresh.load_state_dict(ckpt)
            """
        ),
        Clean(
            # The dict saved holds the state dict of the model before its wrap.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(model, args):
                checkpoint = {"model": model.state_dict()}
                model = DDP(model)
                torch.save(checkpoint, args.out)
                fresh = build()
                fresh.load_state_dict(torch.load(args.out, map_location="cpu")["model"])
                other = build()
                other.load_state_dict(torch.load(args.out, map_location="cpu"))
            """
        ),
        Clean(
            # Optimizer, scheduler and scaler state dicts have no `module.` prefix.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net, path):
                model = DDP(net)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                torch.save(model.state_dict(), path)
                state = torch.load(path, map_location="cpu")
                opt.load_state_dict(torch.load("opt.pt", map_location="cpu"))
                self.lr_scheduler.load_state_dict(state["lr_scheduler"])
                grad_scaler.load_state_dict(state)
            """
        ),
        Clean(
            # The checkpoint loaded was saved before the DDP wrap, and another entry of a
            # wrapped checkpoint is read.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(net, args):
                torch.save(net.state_dict(), "init.pt")
                model = DDP(net)
                torch.save({"model": model.state_dict(), "ema": ema.state_dict()}, args.output)
                fresh = build()
                fresh.load_state_dict(torch.load("init.pt", map_location="cpu"))
                checkpoint = torch.load(args.output, map_location="cpu")
                ema_copy.load_state_dict(checkpoint["ema"])
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net):
                model = DDP(net)
                torch.save(model.module.state_dict(), "model.pth")
                net.load_state_dict(torch.load("model.pth", map_location="cpu"))
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            def train(net):
                model = DDP(net)
                torch.save(model.state_dict(), "model.pth")
                model.load_state_dict(torch.load("model.pth", map_location="cpu"))
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(net)
            torch.save(model.state_dict(), "model.pth")
            state = torch.load("model.pth", map_location="cpu")
            consume_prefix_in_state_dict_if_present(state, "module.")
            net.load_state_dict(state)
            """
        ),
        Clean(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            net.load_state_dict(torch.load("pretrained.pt", map_location="cpu"))
            torch.save(net.state_dict(), "net.pt")
            model = DDP(net)
            torch.save(model.state_dict(), "ddp.pt")
            """
        ),
        Clean(
            # The snapshot is resumed in `__init__` before the wrap: `self.model` is still the
            # plain model there, and it saves the inner model's keys.
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            class Trainer:
                def __init__(self, model, snapshot_path):
                    self.model = model
                    self._load_snapshot(snapshot_path)
                    self.model = DDP(self.model)

                def _load_snapshot(self, path):
                    snapshot = torch.load(path, map_location="cpu")
                    self.model.load_state_dict(snapshot["MODEL_STATE"])

                def _save_snapshot(self, path):
                    torch.save({"MODEL_STATE": self.model.module.state_dict()}, path)
            """
        ),
    )

    analyses = (WrappedModels, Branches)

    def __init__(self, model) -> None:
        super().__init__(model)
        self._wrapped = model.get(WrappedModels)
        self._branches = model.get(Branches)
        # frame -> {name bound to torch.load(...): the path it loads, when a known string}
        self._loaded: dict[str | None, dict[str, str | None]] = {}
        self._saves: list[_Save] = []  # every state dict saved
        self._consumed: dict[str | None, set[str]] = {}  # frame -> code of prefix-stripped dicts
        self._loads: list[tuple[cst.Call, cst.BaseExpression, str | None, cst.SimpleStatementLine | None]] = []
        self._optimizer_names: set[str] = set()  # names bound to torch.optim / amp objects
        # id of a load_state_dict call -> the file its torch.load reads, as the program names
        # saved files: read where the load is, since the names it uses resolve there
        self._load_paths: dict[int, str | None] = {}
        self._bound_loads: dict[tuple[str | None, str], cst.Call] = {}  # (frame, name) -> torch.load
        # (frame, name) -> (dict key, wrapped, inner) of the state dicts a dict bound to the name holds
        # (`checkpoint = {"model": model.state_dict()}`, `checkpoint["ema"] = ema.state_dict()`),
        # judged where each is put in: `model` may be wrapped only later
        self._held: dict[tuple[str | None, str], list[tuple[str | None, bool, bool]]] = {}
        # Loads into the DDP wrapper: (call, state, path when a known string, the inner model to load into)
        self._wrapper_loads: list[tuple[cst.Call, cst.BaseExpression, str | None, cst.BaseExpression | None]] = []
        self._handlers = 0  # except handlers open around the node
        # Names a branch of an `if` wraps (`if args.distributed: model = DDP(model) else: model =
        # DataParallel(model)`): after it the name may hold the DDP model, whichever branch the
        # walk saw last. (frame, name), per `if` open around the node, then past its end.
        self._wrapped_in_branch: list[set[tuple[str | None, str]]] = []
        self._maybe_wrapped: set[tuple[str | None, str]] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        loads = isinstance(node.value, cst.Call) and self.model.qualified(node.value.func) in TORCH_LOAD
        loaded = self._loaded.setdefault(self.model.frame.key, {})
        value = node.value
        if isinstance(value, cst.Call) and (self.model.qualified(value.func) or "").startswith(OPTIMIZER_MODULES):
            self._optimizer_names.update(filter(None, (dotted_name(t.target) for t in node.targets)))
        for target in node.targets:
            self._hold(target.target, value)
            if isinstance(target.target, cst.Subscript):
                self._rewrite(target.target.value)  # `ckpt[key[7:]] = ...`
            if isinstance(target.target, cst.Name):
                if loads:
                    loaded[target.target.value] = self._path(node.value)  # type: ignore[arg-type]
                    self._bound_loads[(self.model.frame.key, target.target.value)] = node.value  # type: ignore[assignment]
                else:
                    loaded.pop(target.target.value, None)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        for target in original_node.targets:
            name = dotted_name(target.target)
            if name is None:
                continue
            if self._wrapped.is_wrapped(target.target):
                for branch in self._wrapped_in_branch:
                    branch.add((self.model.frame.key, name))
            self._maybe_wrapped.discard((self.model.frame.key, name))

    def visit_If(self, node: cst.If) -> None:
        self._wrapped_in_branch.append(set())

    def leave_If(self, original_node: cst.If) -> None:
        self._maybe_wrapped |= self._wrapped_in_branch.pop()

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._handlers += 1

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler) -> None:
        self._handlers -= 1

    def _rewrite(self, expr: cst.BaseExpression) -> None:
        """A loaded dict whose keys the code rewrites before the load (`for key in list(ckpt):
        ckpt[key[7:]] = ckpt.pop(key)`) strips the prefix its own way: taken as consumed."""
        name = _root_name(expr)
        if name is not None and name in self._loaded.get(self.model.frame.key, {}):
            self._consumed.setdefault(self.model.frame.key, set()).add(name)

    def _hold(self, target: cst.BaseAssignTargetExpression, value: cst.BaseExpression) -> None:
        """Note the state dicts a dict bound to a name holds (`_held`), for a later save of it."""
        frame = self.model.frame.key
        if isinstance(target, cst.Name):
            self._held.pop((frame, target.value), None)
            if isinstance(value, cst.Dict) or isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
                self._held[(frame, target.value)] = list(self._state_dicts(value, None))
        elif isinstance(target, cst.Subscript) and (frame, _root_name(target)) in self._held and not self._handlers:
            # (an entry filled in an `except` handler is the fallback where the `try` failed:
            # `try: sd["model"] = net.module.state_dict() except: sd["model"] = net.state_dict()`)
            self._held[(frame, _root_name(target))].extend(self._state_dicts(value, _first_key(target)))  # type: ignore[index]

    def _path(self, call: cst.Call) -> str | None:
        path = argument_for(call, TORCH_LOAD, "f")
        return None if path is None else self.model.string_value(path.value)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        if qualified in TORCH_SAVE:
            saved = argument_for(node, TORCH_SAVE, "obj")
            if saved is not None:
                path_arg = argument_for(node, TORCH_SAVE, "f")
                self._save(saved.value, None if path_arg is None else path_arg.value)
        elif (helper := self._through_helper(node)) is not None:
            self._save(*helper)  # `save_checkpoint({"state_dict": model.state_dict()}, path)`
        elif qualified in CONSUME_PREFIX and node.args:
            self._consumed.setdefault(self.model.frame.key, set()).add(_code(node.args[0].value))
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value in _REWRITING:
            self._rewrite(node.func.value)  # `ckpt.pop(key)`: the loaded dict's keys are rewritten
        elif (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "load_state_dict"
            and node.args
            and not self._is_optimizer(node.func.value)
        ):
            self._note_load(node, node.func.value)

    def _note_load(self, node: cst.Call, receiver: cst.BaseExpression) -> None:
        """Note a model's `load_state_dict` of what `torch.load` read: into the DDP wrapper
        (`_wrapper_loads`), or into a model not wrapped where it runs (`_loads`)."""
        state, frame = node.args[0].value, self.model.frame.key
        loaded = self._loaded.get(frame, {})
        if isinstance(state, cst.Call) and self.model.qualified(state.func) in TORCH_LOAD:
            path, load = self._path(state), state
        elif _root_name(state) in loaded:
            path, load = loaded[_root_name(state)], self._bound_loads[(frame, _root_name(state))]  # type: ignore[index]
        else:
            return
        self._load_paths[id(node)] = loaded_path_key(self.model, load) or (_handed_file(load.args[0].value) if load.args else None)
        maybe_wrapped = (frame, dotted_name(receiver)) in self._maybe_wrapped
        if self._is_ddp(receiver):
            if not isinstance(receiver, cst.Name):
                # An attribute (`self.model`) may be wrapped after the load: a trainer resumes
                # its snapshot in `__init__` before `self.model = DDP(self.model)`.
                return
            # The name bound to its inner module holds the plain model in a run without the wrap
            # too; `.module` is there only where the wrap always runs.
            inner = self._wrapped.inner_name(receiver)
            into: cst.BaseExpression | None = None
            if inner is not None:
                into = cst.parse_expression(inner)
            elif not maybe_wrapped:
                into = cst.Attribute(receiver, cst.Name("module"))
            self._wrapper_loads.append((node, state, path, into))
            return
        if maybe_wrapped or self._outer_no_module(receiver):
            return
        consumed = self._consumed.get(frame, ())
        if _code(state) not in consumed and _root_name(state) not in consumed:
            self._loads.append((node, state, path, self.model.statement))

    def _is_inner(self, model: cst.BaseExpression) -> bool:
        """`ddp_model.module`, or a name bound to it: a DDP model's inner module."""
        if isinstance(model, cst.Attribute) and model.attr.value == "module" and self._wrapped.is_wrapped(model.value):
            return True
        return self._wrapped.inner(model) is not None

    def _outer_no_module(self, receiver: cst.BaseExpression) -> bool:
        """A load into `outer.module` that runs only where `outer` is no nn.Module (the `else:`
        of `if isinstance(outer, nn.Module):`): the DDP wrapper is a Module, so this `outer`
        is none, and its `.module` no DDP wrapper's inner model."""
        if not (isinstance(receiver, cst.Attribute) and receiver.attr.value == "module"):
            return False
        return self._found_no(receiver.value, lambda qualified: qualified in NN_MODULE)

    def _is_ddp(self, model: cst.BaseExpression) -> bool:
        """`model` is the DDP wrapper where the walk is: bound to one, and not where an
        `isinstance(model, DistributedDataParallel)` test around found it none."""
        return self._wrapped.is_wrapped(model) and not self._found_no(model, _is_torch_ddp)

    def _found_no(self, expr: cst.BaseExpression, is_class) -> bool:
        """Whether the walk is where an `if` around it found `expr` no instance of a class
        `is_class` accepts (the `else:` of `if isinstance(expr, C):`, the body of `if not
        isinstance(expr, (A, C)):`)."""
        in_else = dict(self._branches.path)
        for test in self.model.ifs:
            tested = self._tested_class(test.test, is_class, _code(expr))
            if tested is not None and id(test) in in_else and in_else[id(test)] == tested[1]:
                return True
        return False

    def _tested_class(self, test: cst.BaseExpression, is_class, outer: str | None = None) -> tuple[str, bool] | None:
        """(the object tested, as written; whether the test is true where it is an instance)
        for `isinstance(x, C)` or `not isinstance(x, C)` with C (or one class of a tuple C)
        one `is_class` accepts, of `x` written `outer` where given; None for any other test."""
        negated = False
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negated = test.expression, True
        if not (isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance" and len(test.args) == 2):
            return None
        tested, classes = _code(test.args[0].value), test.args[1].value
        named = [element.value for element in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
        if outer not in (None, tested) or not any(is_class(self.model.qualified(cls)) for cls in named):
            return None
        return tested, not negated

    def _save(self, saved: cst.BaseExpression, path_arg: cst.BaseExpression | None) -> None:
        """Note the state dicts a save writes (`_saves`), with its file."""
        path = None if path_arg is None else self.model.string_value(path_arg)
        file = None if path_arg is None else expression_path_key(self.model, path_arg) or _handed_file(path_arg)
        held = [*self._state_dicts(saved, None)]
        if isinstance(saved, cst.Name):
            held += self._held.get((self.model.frame.key, saved.value), ())
        self._saves.extend(_Save(path, file, key, wrapped, inner) for key, wrapped, inner in held)

    def _through_helper(self, node: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression | None] | None:
        """(what is saved, the file) of a call of a project helper that `torch.save`s one of
        its parameters (`def save_checkpoint(state, filename): torch.save(state, filename)`),
        named like a save as such helpers are; None for any other call."""
        project, callee = self.model.project, dotted_name(node.func)
        if project is None or callee is None or "save" not in callee.rpartition(".")[2].lower():
            return None
        function, self_class = self.model.function, self.model.frame.self_class
        key, cls = function.key if function is not None else None, self_class.name.value if self_class is not None else None
        helper = project.saved_parameter(key, cls, callee)
        saved = argument_at(node, helper.position(helper.saved), helper.saved) if helper is not None else None
        if saved is None:
            return None
        path = argument_at(node, helper.position(helper.file), helper.file) if helper.file is not None else None
        return saved.value, path.value if path is not None else None

    def _is_optimizer(self, receiver: cst.BaseExpression) -> bool:
        """An optimizer, scheduler or gradient scaler: its state dict has no `module.` keys."""
        name = dotted_name(receiver)
        if name is None:
            return False
        return name in self._optimizer_names or _OPTIMIZER_NAME.search(name.rpartition(".")[2]) is not None

    def _state_dicts(self, expr: cst.CSTNode, key: str | None, not_ddp: frozenset[str] = frozenset()):
        """(dict key, wrapped, inner) for each `x.state_dict()` in a saved object, with the string
        key of the innermost dict literal entry it is saved under. `not_ddp`: the models (as
        written) that a conditional expression around it found no DDP model."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "state_dict":
            model = expr.func.value
            if not self._is_optimizer(model):
                wrapped = self._is_ddp(model) and _code(model) not in not_ddp
                yield key, wrapped, self._is_inner(model)
            return
        if isinstance(expr, cst.IfExp):
            # `m.module.state_dict() if isinstance(m, DDP) else m.state_dict()`
            tested = self._tested_class(expr.test, _is_torch_ddp)
            outer, on_true = tested if tested is not None else (None, True)
            yield from self._state_dicts(expr.test, key, not_ddp)
            yield from self._state_dicts(expr.body, key, not_ddp | {outer} if outer is not None and not on_true else not_ddp)
            yield from self._state_dicts(expr.orelse, key, not_ddp | {outer} if outer is not None and on_true else not_ddp)
            return
        if isinstance(expr, cst.Dict):
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    inner = self.model.string_value(element.key)
                    yield from self._state_dicts(element.value, inner if inner is not None else key, not_ddp)
                else:
                    yield from self._state_dicts(element.value, key, not_ddp)
            return
        for child in children(expr):
            yield from self._state_dicts(child, key, not_ddp)

    def _saved_wrapped(self, path: str | None, file: str | None, key: str | None) -> bool:
        """Whether the checkpoint a load reads is shown to hold a state dict saved from the
        wrapper: among the saves it may read (the exact path when one save has it: a
        checkpoint saved before the wrap has no prefix), one is the wrapper's."""
        fitting = [save for save in self._saves if save.may_be_read_by(path, file, key)]
        exact = [save for save in fitting if path is not None and save.path == path]
        return any(save.wrapped for save in exact or fitting)

    def _saved_inner(self, path: str | None, file: str | None, key: str | None) -> bool | None:
        """Whether the checkpoint a load into the wrapper reads holds only state dicts saved
        from the inner model; None where no save of this module is shown to be it."""
        fitting = [save for save in self._saves if save.may_be_read_by(path, file, key)]
        exact = [save for save in fitting if path is not None and save.path == path]
        chosen = exact or fitting
        return all(save.inner for save in chosen) if chosen else None

    def leave_Module(self, original_node: cst.Module) -> None:
        self._report_prefixed_loads()
        self._report_wrapper_loads()

    def _report_prefixed_loads(self) -> None:
        if not any(save.wrapped for save in self._saves):
            self._loads_of_saves_elsewhere()
            return
        for call, state, path, line in self._loads:
            if not self._saved_wrapped(path, self._load_paths[id(call)], _first_key(state)):
                continue  # another checkpoint, another entry of it, one saved unwrapped, or none shown
            self._report_load(call, state, line)

    def _report_wrapper_loads(self) -> None:
        """Loads into the DDP wrapper of a state dict saved from its inner module: no key of it
        has the wrapper's `module.` prefix."""
        project = self.model.project
        for call, state, path, into in self._wrapper_loads:
            file, key = self._load_paths[id(call)], _first_key(state)
            here = self._saved_inner(path, file, key)
            where = saved_from_inner(project.program, file, key) if here is None and project is not None else None
            if here or where is not None:
                message = INVERSE_MESSAGE if where is None else f"{INVERSE_MESSAGE} (saved from the inner model in {where})"
                self.report(call, message, replace={call.func.value: into} if into is not None else None)  # type: ignore[attr-defined]

    def _loads_of_saves_elsewhere(self) -> None:
        """Loads of a checkpoint that another module of the project saves from a DDP model:
        the same file name, or the same configuration value (`args.checkpoint`)."""
        project = self.model.project
        if project is None:
            return
        for call, state, _, line in self._loads:
            where = saved_from_wrapper(project.program, self._load_paths[id(call)], _first_key(state))
            if where is not None:
                self._report_load(call, state, line, f"{self.message} (saved from the DDP wrapper in {where})")

    def _report_load(self, call, state, line, message: str | None = None) -> None:
        if line is None or isinstance(state, cst.Call) or dotted_name(call.func) is None:
            self.report(call, message)
            return
        strip = cst.parse_statement(f'consume_prefix_in_state_dict_if_present({_code(state)}, "module.")\n')
        strip = strip.with_changes(leading_lines=line.leading_lines)
        fixed_line = line.with_changes(leading_lines=())
        self.report(call, message, replace={line: cst.FlattenSentinel([strip, fixed_line])}, imports=(_IMPORT,))


# -- questions only this rule asks of the program model -------------------------------------


def saved_from_wrapper(program, path: str | None, key: str | None = None):
    """Where the program saves a DDP model's state dict to the file `path` (a path key) under a
    dict key that agrees with `key` (a Place), or None."""
    return _saved_as(program.values.wrapper_saves(), path, key)


def saved_from_inner(program, path: str | None, key: str | None):
    """Where the program saves a DDP model's inner module's state dict to the file `path` (a
    path key) under a dict key that agrees with `key`, where no DDP model's is saved there too
    (a Place), or None."""
    if saved_from_wrapper(program, path, key) is not None:
        return None
    return _saved_as(program.values.state_saves(Inner), path, key)


def _saved_as(saves, path: str | None, key: str | None):
    if path is None:
        return None
    return next((save.place for save in saves if save.path == path and _keys_agree(save.entry, key)), None)
