from __future__ import annotations

import ast
import functools
import posixpath
import re
from dataclasses import dataclass, field

import libcst as cst

from ddplint.analyses.distribution import DistributedEvidence, is_main_guard
from ddplint.analyses.launches import Launches
from ddplint.analyses.ranks import RankRegions, mentions_rank, ranked_attribute_names
from ddplint.core.diagnostics import Applicability, StepKind
from ddplint.model.context import holds_rank
from ddplint.model.files import loaded_path_key
from ddplint.model.records import CallResult, Inner, Instance, Item, Param, Place, Wrapped
from ddplint.model.summary import binds_device
from ddplint.semantic.edits import argument_for, string_literal, with_keyword_argument
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.screens import dotted, walk
from ddplint.prefilter.triggers import DISTRIBUTED_EVIDENCE_CODE, CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule
from ddplint.semantic.model import dotted_name
from ddplint.core.torch_api import AMP_STATE_LOADERS, DDP, DISTRIBUTED_EVIDENCE, GRAD_SCALERS, LR_SCHEDULERS, SCHEDULER_FACTORIES, TORCH, TORCH_DEVICE, TORCH_LOAD, TORCH_SAVE
from ddplint.semantic.walk import children, descendants

# Words, in a path, a variable or the enclosing function's name, that say "checkpoint".
CHECKPOINT_WORDS = frozenset(
    {
        "ckpt", "ckpts", "checkpoint", "checkpoints", "resume", "resumed", "pretrained", "pretrain",
        "weights", "weight", "best", "last", "latest", "snapshot", "model", "models", "state",
        "statedict", "net", "network", "pt", "pth", "bin",
    }
)
# ... and words that say "not a model's tensors": caches, features, labels, exported engines,
# in-memory buffers. They outweigh the words above (`features_model_best.pt` is features).
NOT_CHECKPOINT_WORDS = frozenset(
    {
        "cache", "cached", "feature", "features", "feats", "feat", "embedding", "embeddings", "emb",
        "embs", "label", "labels", "stats", "stat", "statistics", "vocab", "vocabulary", "tokens",
        "npy", "npz", "data", "dataset", "datasets", "index", "engine", "trt", "tensorrt", "onnx",
    }
)
# ... and words of state that never holds CUDA storages, whatever is done with it: a
# GradScaler's state dict is Python numbers, RNG states are CPU byte tensors.
NO_TENSORS_WORDS = frozenset({"scaler", "rng", "seed"})
# Words of a name that say "learning-rate scheduler": its state dict is Python numbers.
SCHEDULER_WORDS = frozenset({"scheduler", "schedulers", "sched", "lrs"})
# Words of a name that say "data sampler": its state dict is positions, an epoch and a seed
# (a resumable sampler's `{"start_index": step}`), never a model's tensors.
SAMPLER_WORDS = frozenset({"sampler", "samplers"})
# Words of a name that say "optimizer": its state dict is not a model's.
OPTIMIZER_WORDS = frozenset({"optimizer", "optimizers", "optim", "opt"})
# ... and words that name another's file, downloaded or handed over (`args.pretrained`): where
# the program is not seen to save it, nothing says on which device its tensors were saved.
PRETRAINED_WORDS = frozenset({"pretrained", "pretrain"})
# Words of CHECKPOINT_WORDS that are only a file's suffix.
FILE_SUFFIX_WORDS = frozenset({"pt", "pth", "bin"})
# Keys of a checkpoint dict (`ckpt["model"]`, `ckpt.get("state_dict")`), by word.
STATE_KEY_WORDS = frozenset(
    {
        "model", "state", "statedict", "optimizer", "optim", "net", "network", "ema", "epoch",
        "scheduler", "module", "params", "weights", "generator", "discriminator", "encoder",
        "decoder", "backbone", "student", "teacher", "scaler",
    }
)
# ... and those of them that name a model's or an optimizer's tensors (not counters or a scheduler's numbers).
TENSOR_KEY_WORDS = STATE_KEY_WORDS - SCHEDULER_WORDS - {"epoch", "scaler", "state", "statedict"}
# Using the result as a module: it is the pickled model itself, not a state dict.
MODULE_METHODS = frozenset(
    {"eval", "train", "forward", "parameters", "named_parameters", "modules", "children", "requires_grad_"}
)
# Moving the result to a device: a model or a tensor, used where it is loaded, not a state dict.
DEVICE_METHODS = frozenset({"cuda", "to", "half", "float", "bfloat16"})
WHOLE_MODEL_NAMES = frozenset({"model", "net", "network", "module", "encoder", "decoder", "backbone", "generator"})
# Using the result on the host right away: `.cpu()`, `.numpy()`, or `.share_memory_()`, which
# moves a tensor's storage into shared host memory for the processes it starts (a CSR index
# loaded once and handed to the spawned trainers): the file holds host tensors.
HOST_METHODS = frozenset({"cpu", "numpy", "tolist", "item", "share_memory_"})
# Files private to the process: what it loads from one, it saved there itself, on its own device.
PRIVATE_FILES = frozenset(
    {"io.BytesIO", "tempfile.TemporaryFile", "tempfile.NamedTemporaryFile", "tempfile.SpooledTemporaryFile"}
)


def _words(text: str) -> set[str]:
    text = text.replace("state_dict", "statedict")
    return set(re.split(r"[^a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", text).lower())) - {""}


@dataclass
class _Load:
    call: cst.Call
    words: set[str]  # of the path expression, and of the names it is bound through
    function_words: set[str]
    device: cst.BaseExpression | None  # the rank's device, where one is in scope
    state: bool = False  # flows into load_state_dict or is read by checkpoint keys
    whole_model: bool = False  # used as a module
    on_device: bool = False  # moved to a device (`.cuda()`, `.to(device)`): a module or a tensor
    on_host: bool = False  # `.cpu()`, `.numpy()` right away
    private: bool = False  # from an in-memory buffer or an anonymous temporary file
    owner: str | None = None  # the class whose method loads it
    keys: set[str] = field(default_factory=set)  # the string keys the result is read by
    scheduler_keys: set[str] = field(default_factory=set)  # ... whose item a scheduler loads
    path: str | None = None  # the file it reads, as the program names saved files (path_key)
    function: str | None = None  # the key of the function it is in
    rank_zero: bool = False  # only rank 0 of a distributed run reaches it, by the guards here
    looped: bool = False  # its file is named by a loop variable: one process reads many files
    handed: bool = False  # its file is a parameter of its function: the callers name it
    deviceless: bool = False  # in `if args.gpu is None:`, whose else loads onto args.gpu: no rank's branch
    numbers: bool = False  # handed whole to a load_state_dict of Python numbers: a scheduler's, a sampler's, apex.amp's
    into_model: bool = False  # handed to the load_state_dict of a model (not an optimizer or a scheduler)
    into_self: bool = False  # handed to `self.load_state_dict`: the state of the loading method's own class
    script_only: bool = False  # in `if __name__ == "__main__":`: runs only when this file is the script
    read: bool = False  # the name it is bound to is read afterwards: its uses are seen


class TorchLoadWithoutMapLocation(Rule):
    """
    `torch.load` puts every tensor back on the device it was saved from. A checkpoint saved
    by rank 0 of a GPU job records `cuda:0`, so under DDP every rank that loads it allocates
    on GPU 0: memory piles up on one card until it runs out, while the other GPUs idle. On a
    machine without that device the load fails outright with "Attempting to deserialize
    object on a CUDA device but torch.cuda.is_available() is False".

    Fires when both hold:
    - the file runs under DDP or starts ranks: it imports or calls `torch.distributed`
      (`init_process_group`, `get_rank`, ...), wraps a model in `DistributedDataParallel`,
      uses a `DistributedSampler`, starts processes with `torch.multiprocessing.spawn` or
      `start_processes`, reads the `RANK`/`LOCAL_RANK` environment variables, or has a launch
      point of a library that starts the ranks itself: it builds an Accelerate
      `Accelerator(...)` (`accelerate launch` runs the script on every rank), calls
      `fabric.launch()` on a Fabric for several devices, or defines a LightningModule (unless
      every Lightning Trainer it builds is for one device);
    - what is loaded is plausibly a GPU checkpoint: it goes into `load_state_dict` (directly
      or through a variable), it is read with checkpoint keys (`ckpt["model"]`,
      `ckpt.get("state_dict")`, "optimizer", "net", "ema", "epoch", ...), it is used as a
      module (`model = torch.load(p)`, then `model.eval()` or `model(x)`), the path (also
      through a variable bound once or `with open(path) as f`), the variable the result is
      bound to or the enclosing function name a checkpoint (ckpt, checkpoint, resume,
      pretrained, weights, best, last, model, net, `.pt`, `.pth`, `.bin`), or the file itself
      `torch.save`s a state dict or a model.
      Where only another module's code shows that ranks run the file, a name is no evidence:
      the program must be seen to save the file (or its format) with CUDA tensors, or, for a
      method's load into `self.load_state_dict`, to `torch.save` the state dict of a DDP model
      that wraps an object of its class, or of its inner module (`save_latest(net.module)`, the
      file a `--resume` of that class reads back).
    Not flagged: another's weights (a path, a variable or the loading function that says
    "pretrained") read as a state dict where the program is not seen to save them (nothing
    shows their device; a fixed path no save of the program writes is another's file, whatever
    keys it shares with the program's checkpoints); a load in the body of `if args.gpu is None:` whose `else:` loads
    with a map_location on `args.gpu`
    (each rank's run has its device; the branch without one is no rank's); loads whose path or variable names a cache, features, embeddings, labels,
    stats, a vocabulary, a data set, a `.npy` file or an exported (TensorRT, ONNX) engine,
    unless the result goes into `load_state_dict` or is read by checkpoint keys; a load whose
    only checkpoint word is its file's suffix (`.pth.tar`), read only by keys none of which names
    model state (`preds["probs_list"]`, another program's predictions), where the program's
    saves of it hold no state dict (a file named as a checkpoint, `args.checkpoint`, holds its
    tensors whichever key is read), or whose variable is read as no model's state at all
    (neither loaded into a model, read by keys, used as a module nor moved to a device:
    `placement == dist.get_rank()`) in a file that saves no checkpoint; loads of a
    GradScaler's or RNG state (named "scaler", "rng", "seed"), which hold no CUDA tensors;
    a load handed whole to a learning-rate scheduler's `load_state_dict` (Python numbers): one
    built by `torch.optim.lr_scheduler` or a Hugging Face factory (`get_scheduler`,
    `get_linear_schedule_with_warmup`, ...), or an object named as a scheduler
    (`self.lr_scheduler`) where the program `torch.save`s a scheduler's `state_dict()`, unless
    the program saves that file as a dict holding more than the scheduler's item (its whole
    checkpoint, model and optimizer too, is then loaded to take one item from it), and one handed
    to a data sampler's `load_state_dict` (`self.sampler`: positions, an epoch, a seed) or to
    `apex.amp.load_state_dict` (its loss scalers' numbers);
    loads from an `io.BytesIO` buffer or an anonymous `tempfile` the same function
    `torch.save`d into, and from a file named after the rank (`f"model_rank{rank}.bin"`,
    also through variables, or an attribute of a project class built from the rank in every
    documented run: `torch.load(manager.checkpoint_fpath)`, where the constructor names the file
    `'checkpoint_r' + str(model_rank)` and `model_rank` is the rank under a flag whose documented
    value keeps it): the process reads back what it wrote, on its own device (a
    loop over ranks, `for rank in range(world_size)`, reads the other ranks' files and is
    not exempt); loads whose result is moved to the host right away (`.cpu()`, `.numpy()`, or
    into shared host memory for the processes it starts, `.share_memory_()`);
    a class's load of a file it is handed where every method of the class that saves a file it
    is handed, or a file it names in a folder it is handed (`os.path.join(save_dir, name)`),
    saves no CUDA tensors (`param.cpu()` item by item); for a load that goes into a model's
    `load_state_dict` (also through an item of it, `state = state["params"]`) the class's
    saves of an optimizer's whole state dict are other files; a class's load of the record its own method saves (the program model pairs them by the
    keys read back: every key the load reads is in a dict of Python values, such as epochs,
    lists and counters, that the class `torch.save`s, and no method of the class saves a
    dict with those keys that holds anything else); a load that only rank 0 runs (under a
    rank-0 guard, or in a function only such code calls: `if dist.get_rank() == 0:
    convert(ckpt)`), which lands on rank 0's own GPU, unless its file is named by a loop
    variable (rank 0 reading every rank's shard puts each on the GPU that saved it); a load
    of a file that the scripts in its folder save with its tensors on the host only (every
    call there that writes the same file name or option is a `torch.save` of the state dict
    of a model moved by `net.cpu()` before, of `.cpu()` tensors (also stored into an item of
    an item of the saved dict: `state["model"][name] = param.cpu()`), or of a state dict FSDP or DCP
    gathers onto the host: `model.state_dict()` or `FSDP.optim_state_dict(model, optim)` in a
    `with FSDP.state_dict_type(model, ..., FullStateDictConfig(offload_to_cpu=True))` block,
    `get_model_state_dict(model, options=StateDictOptions(cpu_offload=True))`, the configuration
    also through a local variable, with a literal True: `evaluate.py` reading what `train.py`
    wrote; a save whose file the program model cannot name is not seen; the message names a save
    of the loading script's own run before another script's of the folder); a load in a
    program whose scripts give each rank one GPU (`os.environ["CUDA_VISIBLE_DEVICES"] =
    str(gpus[local_rank])`, from the rank, in every script that runs the module): cuda:0 is
    then each rank's own GPU; a load in a program that starts its process group in its own code
    and binds no rank to a GPU of its own (no `set_device`, `device_id=`, `device_ids`, per-rank
    CUDA_VISIBLE_DEVICES or library that places models; every device it names is bare `.cuda()`,
    `"cuda"` or `"cuda:0"`, and it works on a GPU): every rank already works on cuda:0; a load in the `if __name__ == "__main__":` block of a file
    whose ranks only an importer starts (they run it as a module, never as the script); a
    load in a program that runs in a world of one (ProjectView.single_process): every command
    of the project that runs its script is torchrun or torch.distributed.launch --use_env with no process
    or node count (torch's default, one process), or the script sets CUDA_VISIBLE_DEVICES to
    one GPU index at import and spawns `torch.cuda.device_count()` processes (one, whose
    cuda:0 is the GPU it saved from), or every command that launches its script starts one
    process (`torch.distributed.launch --nproc_per_node=1`, ProjectView.one_rank: no second
    rank to pile onto another's GPU); a load in a program that joins the ranks only by
    building an Accelerator where the project's documents launch other scripts and none
    launches it (ProjectView.accelerate_by_hand: `python finetune.py`, all the project shows of
    it, is one process); and any load in a file with no sign of running
    distributed (single-process tools).
    `[tool.ddplint] strict = ["DDP004"]` flags every `torch.load` without `map_location`.

    Pass `map_location`. For a state dict the fix adds `map_location="cpu"`, which loads
    anywhere; `load_state_dict` then copies the tensors onto the model's own device. A whole
    pickled model (or a tensor moved with `.cuda()`/`.to()` right after) would stay on, or
    take a detour through, the CPU, so for one the fix passes the rank's device instead:
    `map_location=device` where a variable `device` is in scope, `f"cuda:{local_rank}"` where
    `local_rank` is, and otherwise there is no fix. A dict such as `{"cuda:0": "cpu"}` is not
    enough: a checkpoint saved from `cuda:1` still lands on `cuda:1`. `weights_only` is left
    as it is.
    """

    code = "DDP004"
    needs_ranks = True
    # One rank loads onto its own GPU: the pile-up on GPU 0 needs a second rank.
    needs_peers = True
    name = "torch-load-without-map-location"
    frameworks = (Framework.DDP, Framework.FSDP, Framework.ACCELERATE, Framework.LIGHTNING, Framework.FABRIC)
    message = 'torch.load without map_location loads onto the saving device (GPU 0 on every rank); pass map_location="cpu"'
    message_whole_model = (
        "torch.load without map_location loads onto the saving device (GPU 0 on every rank); "
        "the result is used as loaded (not a state dict), so pass the rank's own device as map_location"
    )
    message_single = (
        "torch.load without map_location loads onto the device the file was saved from, "
        'which fails where that device is missing; pass map_location="cpu"'
    )
    message_single_whole_model = (
        "torch.load without map_location loads onto the device the file was saved from, "
        "which fails where that device is missing; the result is used as loaded (not a state dict), "
        "so pass the device to use it on as map_location"
    )
    fix = Applicability.SAFE
    # `also`: only a file with distributed evidence of its own is flagged (see `_Evidence`);
    # `within`: that evidence in code, not in a docstring word, where `_distributed` finds it.
    trigger = CallTrigger(
        TORCH_LOAD, without_keyword="map_location", within=DISTRIBUTED_EVIDENCE_CODE, also=(DISTRIBUTED_EVIDENCE,)
    )
    analyses = (Launches, RankRegions, DistributedEvidence)
    # Ranks may run the module by another module's code (a script that imports it starts them, or
    # a project function builds its Accelerator): its text and code need show no distribution.
    opened_by = unscreened_by = frozenset((ProjectFact.LOAD_RUN_BY_RANKS,))
    # `[tool.ddplint] strict = ["DDP004"]` runs `strict_variant()`: every load is flagged.
    strict = False

    flagged_examples = (
        Flagged(
            # Named as a checkpoint: it holds the saved tensors even where only its
            # configuration is read back.
            """
            import torch
            import torch.distributed as dist

            def resume_history(args):
                dist.init_process_group("nccl")
                if args.checkpoint:
                    record = torch.load(args.checkpoint)
                             ^
                    return record["configuration"]["history"]
                return {}
            """,
            fix_edits=(("torch.load(args.checkpoint)", 'torch.load(args.checkpoint, map_location="cpu")'),),
        ),
        Flagged(
            # The file is saved from the GPU: its parameters go into an item of an item of the dict.
            """
            import os
            import torch
            import torch.distributed as dist

            def save(model, out):
                state = {"state_dict": {}}
                for name, param in model.named_parameters():
                    state["state_dict"][name] = param.detach().clone()
                torch.save(state, os.path.join(out, "trainable.pth"))

            def resume(model, out):
                state = torch.load(os.path.join(out, "trainable.pth"))
                        ^
                model.load_state_dict(state["state_dict"], strict=False)
            """,
            fix_edits=(('"trainable.pth"))\n    model', '"trainable.pth"), map_location="cpu")\n    model'),),
        ),
        Flagged(
            # DDP imported from the module that defines it is evidence as the public spelling is.
            """
            import torch
            from torch.nn.parallel.distributed import DistributedDataParallel as DDP

            def resume(model, path):
                model.load_state_dict(torch.load(path))
                                      ^
            """,
            fix_edits=(
                (
                    "model.load_state_dict(torch.load(path))",
                    'model.load_state_dict(torch.load(path, map_location="cpu"))',
                ),
            ),
        ),
        Flagged(
            # The Trainer runs a LightningModule's hooks on every rank.
            """
            import lightning as L
            import torch

            class Finetune(L.LightningModule):
                def setup(self, stage):
                    self.model.load_state_dict(torch.load(self.hparams.checkpoint))
                                               ^
            """,
            fix_edits=(("self.hparams.checkpoint", 'self.hparams.checkpoint, map_location="cpu"'),),
        ),
        Flagged(
            # `accelerate launch` runs this on every rank: each loads onto the saving GPU.
            """
            import torch
            from accelerate import Accelerator

            def main(config):
                accelerator = Accelerator()
                model = build(config)
                model.load_state_dict(torch.load(config.resume)["model"])
                                      ^
                model = accelerator.prepare(model)
            """,
            fix_edits=(("config.resume", 'config.resume, map_location="cpu"'),),
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist
            state = torch.load("checkpoint.pt")
                    ^
            """,
            fix_edits=(('"checkpoint.pt"', '"checkpoint.pt", map_location="cpu"'),),
        ),
        Flagged(
            """
            import torch as th
            import torch.distributed as dist
            model.load_state_dict(th.load(path, weights_only=True))
                                  ^
            """,
            fix_edits=(("weights_only=True", 'weights_only=True, map_location="cpu"'),),
        ),
        Flagged(
            """
            import torch.multiprocessing as mp
            from torch import load as restore
            def resume(path):
                return restore(path)
                       ^
            mp.spawn(worker, nprocs=4)
            """,
            fix_edits=(("return restore(path)", 'return restore(path, map_location="cpu")'),),
        ),
        Flagged(
            """
            import os
            import torch.serialization
            local_rank = int(os.environ["LOCAL_RANK"])
            checkpoint = torch.serialization.load(
                         ^
                args.resume,
                weights_only=False,
            )
            """,
            fix_edits=(("weights_only=False,\n", 'weights_only=False,\n    map_location="cpu",\n'),),
        ),
        Flagged(
            """
            def main():
                dist.init_process_group("nccl")
                checkpoint = torch.load(args.resume)
                             ^

            import torch
            import torch.distributed as dist
            """,
            fix_edits=(("args.resume", 'args.resume, map_location="cpu"'),),
        ),
        Flagged(
            """
            from torch import (
                nn,
                load,
            )
            from torch.nn.parallel import DistributedDataParallel
            state = load(path)
                    ^
            """,
            fix_edits=(("path", 'path, map_location="cpu"'),),
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def restore(net, optimizer, path):
                saved = torch.load(path)
                        ^
                net.load_state_dict(saved.get("net"))
                optimizer.load_state_dict(saved["optimizer"])
            """,
            fix_edits=(("saved = torch.load(path)", 'saved = torch.load(path, map_location="cpu")'),),
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def save(model, path):
                if dist.get_rank() == 0:
                    torch.save(model.state_dict(), path)

            def load(path):
                return torch.load(path)
                       ^
            """,
            fix_edits=(("return torch.load(path)", 'return torch.load(path, map_location="cpu")'),),
        ),
        Flagged(
            """
            import os
            import torch

            def evaluate(path):
                local_rank = int(os.environ["LOCAL_RANK"])
                device = torch.device("cuda", local_rank)
                model = torch.load(path)
                        ^
                model.eval()
                return model(batch.to(device))
            """,
            fix_edits=(("model = torch.load(path)", "model = torch.load(path, map_location=device)"),),
            messages=(
                "torch.load without map_location loads onto the saving device (GPU 0 on every rank); the result "
                "is used as loaded (not a state dict), so pass the rank's own device as map_location"
            ),
        ),
        Flagged(
            """
            import torch
            import torch.multiprocessing as mp

            def worker(local_rank, path):
                net = torch.load(path).cuda(local_rank)
                      ^
                run(net)

            mp.spawn(worker, args=("net.pt",), nprocs=2)
            """,
            fix_edits=(
                (
                    "net = torch.load(path).cuda(local_rank)",
                    'net = torch.load(path, map_location=f"cuda:{local_rank}").cuda(local_rank)',
                ),
            ),
            messages=(
                "torch.load without map_location loads onto the saving device (GPU 0 on every rank); the result "
                "is used as loaded (not a state dict), so pass the rank's own device as map_location"
            ),
        ),
        Flagged(
            """
            import torch
            from torch.utils.data import DataLoader, DistributedSampler

            def setup(args, data):
                with open(args.resume, "rb") as f:
                    blob = torch.load(f)
                           ^
                return blob, DataLoader(data, sampler=DistributedSampler(data))
            """,
            fix_edits=(("blob = torch.load(f)", 'blob = torch.load(f, map_location="cpu")'),),
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def merge(world_size):
                if dist.get_rank() == 0:
                    for rank in range(world_size):
                        merged.update(torch.load(f"shard_rank{rank}.pt")["model"])
                                      ^
            """,
            fix_edits=(('f"shard_rank{rank}.pt"', 'f"shard_rank{rank}.pt", map_location="cpu"'),),
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def build(args):
                model = torch.load(args.pretrained)
                        ^
                return model.to(args.gpu)
            """,
            messages=(
                "torch.load without map_location loads onto the saving device (GPU 0 on every rank); the result "
                "is used as loaded (not a state dict), so pass the rank's own device as map_location"
            ),
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            class Search:
                def save_checkpoint(self):
                    info = {"epoch": self.epoch}
                    info["model"] = self.model.state_dict()
                    torch.save(info, self.checkpoint_path)

                def load_checkpoint(self):
                    info = torch.load(self.checkpoint_path)
                           ^
                    self.epoch = info["epoch"]
            """,
            fix_edits=(
                (
                    "info = torch.load(self.checkpoint_path)",
                    'info = torch.load(self.checkpoint_path, map_location="cpu")',
                ),
            ),
        ),
        Flagged(
            # The sampler takes one item of the whole checkpoint; the model takes another.
            """
            import torch
            import torch.distributed as dist

            def resume(model, train_sampler, path):
                ckpt = torch.load(path)
                       ^
                model.load_state_dict(ckpt["model"])
                train_sampler.load_state_dict(ckpt["sampler"])
            """,
            fix_edits=(("ckpt = torch.load(path)", 'ckpt = torch.load(path, map_location="cpu")'),),
        ),
        Flagged(
            # The class saves a model's state dict into the folder it is handed without moving
            # it to the host: what its load of a handed file reads may hold CUDA tensors.
            """
            import os
            import torch
            import torch.distributed as dist

            class ModelBase:
                def save_network(self, save_dir, network, label):
                    torch.save(network.state_dict(), os.path.join(save_dir, f"{label}.pth"))

                def load_network(self, load_path, network):
                    state = torch.load(load_path)
                            ^
                    state = state["params"]
                    network.load_state_dict(state)
            """,
            fix_edits=(("state = torch.load(load_path)", 'state = torch.load(load_path, map_location="cpu")'),),
        ),
        Flagged(
            # The model is moved to the host only after its state dict was taken: the file
            # holds CUDA tensors.
            """
            import os
            import torch
            import torch.distributed as dist

            def evaluate(net, out):
                net.load_state_dict(torch.load(os.path.join(out, "final.pth")))
                                    ^

            def train(net, out):
                state = net.module.state_dict()
                net.cpu()
                torch.save(state, os.path.join(out, "final.pth"))
            """,
            fix_edits=(
                (
                    'net.load_state_dict(torch.load(os.path.join(out, "final.pth")))',
                    'net.load_state_dict(torch.load(os.path.join(out, "final.pth"), map_location="cpu"))',
                ),
            ),
        ),
        Flagged(
            # The configuration offloads nothing: the full state dict is gathered on rank 0's GPU.
            """
            import torch
            import torch.distributed as dist
            from torch.distributed.fsdp import FullStateDictConfig, StateDictType
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

            def save(model):
                policy = FullStateDictConfig(rank0_only=True)
                with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, policy):
                    state = model.state_dict()
                if dist.get_rank() == 0:
                    torch.save(state, "model.pt")

            def resume(model):
                model.load_state_dict(torch.load("model.pt"))
                                      ^
            """,
            fix_edits=(
                (
                    'model.load_state_dict(torch.load("model.pt"))',
                    'model.load_state_dict(torch.load("model.pt", map_location="cpu"))',
                ),
            ),
        ),
        Flagged(
            # The spawned worker is also called directly for one GPU: every spawned process
            # still runs it, and each loads onto the saving GPU.
            """
            import torch
            import torch.distributed as dist
            import torch.multiprocessing as mp

            def main_worker(gpu, ngpus, args):
                if args.distributed:
                    dist.init_process_group("nccl", rank=gpu, world_size=ngpus)
                model = build(args).cuda(gpu)
                if args.resume:
                    model.load_state_dict(torch.load(args.resume)["model"])
                                          ^

            def main(args):
                if args.distributed:
                    mp.spawn(main_worker, nprocs=args.ngpus, args=(args.ngpus, args))
                else:
                    main_worker(0, 1, args)
            """,
            fix_edits=(
                (
                    'model.load_state_dict(torch.load(args.resume)["model"])',
                    'model.load_state_dict(torch.load(args.resume, map_location="cpu")["model"])',
                ),
            ),
        ),
        Flagged(
            # A call passes the parameter the load runs under: on every rank.
            """
            import torch
            import torch.distributed as dist

            class EmbeddingNet(torch.nn.Module):
                def __init__(self, backbone, size, finetune=False, weights=""):
                    super(EmbeddingNet, self).__init__()
                    self.backbone = backbone
                    if finetune:
                        self.backbone.load_state_dict(torch.load(weights))
                                                      ^

            def main(args):
                dist.init_process_group("nccl")
                net = EmbeddingNet(build(args), 512, args.finetune, args.weights)
            """,
            fix_edits=(("torch.load(weights)", 'torch.load(weights, map_location="cpu")'),),
        ),
        Flagged(
            # Nothing saves a scheduler's state here: a name alone says nothing of the file.
            """
            import torch
            import torch.distributed as dist

            def resume(scheduler, path):
                scheduler.load_state_dict(torch.load(path))
                                          ^
            """,
            fix_edits=(("torch.load(path)", 'torch.load(path, map_location="cpu")'),),
        ),
        Flagged(
            # A function named for pretrained weights that reads the program's own checkpoint,
            # saved from the model's GPU: the name says nothing against what the save shows.
            """
            import torch
            import torch.distributed as dist

            def train(model):
                fit(model.cuda())
                if dist.get_rank() == 0:
                    torch.save(model.state_dict(), "stage1.pth")

            def load_pretrained(model):
                model.load_state_dict(torch.load("stage1.pth"))
                                      ^
            """,
            fix_edits=(('torch.load("stage1.pth")', 'torch.load("stage1.pth", map_location="cpu")'),),
        ),
    )
    clean_examples = (
        Clean(
            # Another's pretrained weights at a fixed path that no save of the program writes: the
            # program's own checkpoints share the "state_dict" key, not the file.
            """
            import torch
            import torch.distributed as dist

            def main(model, encoder):
                dist.init_process_group("nccl")
                weights = torch.load("checkpoints/pretrained/encoder-k400.pth.tar")
                encoder.load_state_dict({k[6:]: v for k, v in weights["state_dict"].items()})
                for epoch in range(10):
                    train(model, encoder)
                    if dist.get_rank() == 0:
                        torch.save({"state_dict": model.state_dict(), "epoch": epoch}, f"checkpoint{epoch:04}.pth")
            """
        ),
        Clean(
            # apex.amp's state is its loss scalers' Python numbers: no tensor to place.
            """
            import os
            import apex.amp
            import torch
            import torch.distributed as dist

            def resume(model, folder):
                dist.init_process_group("nccl")
                model.load_state_dict(torch.load(os.path.join(folder, "model.pt"), map_location="cpu"))
                apex.amp.load_state_dict(torch.load(os.path.join(folder, "apex_amp_state.pkl")))
            """
        ),
        Clean(
            # The save names the file by a template its callers fill (`f"{prefix}_mean.pt"`) and
            # writes a tensor moved to the host: parameter_mean.pt holds no CUDA tensor.
            """
            import os
            import torch
            import torch.distributed as dist

            def save_stats(out, mean, prefix):
                torch.save(mean.cpu(), os.path.join(out, f"{prefix}_mean.pt"))

            def main(out, device):
                dist.init_process_group("nccl")
                if dist.get_rank() == 0:
                    save_stats(out, compute_mean(), "parameter")
                dist.barrier()
                state_mean = torch.load(os.path.join(out, "parameter_mean.pt")).to(device)
            """
        ),
        Clean(
            # ... and here each parameter is moved to the host before it goes in: the file holds none on a GPU.
            """
            import os
            import torch
            import torch.distributed as dist

            def save(model, out):
                state = {"state_dict": {}}
                for name, param in model.named_parameters():
                    state["state_dict"][name] = param.detach().cpu()
                torch.save(state, os.path.join(out, "trainable.pth"))

            def resume(model, out):
                state = torch.load(os.path.join(out, "trainable.pth"))
                model.load_state_dict(state["state_dict"], strict=False)
            """
        ),
        Clean(
            # Each rank sees only its own GPU (CUDA_VISIBLE_DEVICES from the local rank, before
            # CUDA starts): the checkpoint's cuda:0 is that GPU on every rank.
            """
            import os
            import torch
            import torch.distributed as dist

            def main(configs):
                local_rank = int(os.environ["LOCAL_RANK"])
                gpu = int(configs["gpu"][local_rank])
                os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
                dist.init_process_group("nccl")
                model = build().cuda()
                model.load_state_dict(torch.load("checkpoint.pt"))

            if __name__ == "__main__":
                main(load_configs())
            """
        ),
        Clean(
            # The one save of input.pt writes a host tensor: the load lands on the host, then
            # moves to the rank's device.
            """
            import torch
            import torch.distributed as dist

            def reference_run(args, model, inp):
                inp_cpu = inp.detach().cpu()
                torch.save(inp_cpu, f"{args.out}/input.pt")

            def sharded_run(args, model, device):
                dist.init_process_group("nccl")
                inp = torch.load(f"{args.out}/input.pt").to(device)
                model(inp)
            """
        ),
        Clean(
            # Each rank's run has its device (args.gpu) and loads onto it; the `is None` branch
            # is a run without one. Another's pretrained weights read as a state dict: nothing
            # here saves them, so nothing says on which device.
            """
            import torch
            import torch.distributed as dist

            def main(args, model):
                dist.init_process_group("nccl")
                if args.pretrained:
                    model.load_state_dict(torch.load(args.pretrained)["state_dict"])
                if args.resume:
                    if args.gpu is None:
                        checkpoint = torch.load(args.resume)
                    else:
                        loc = "cuda:{}".format(args.gpu)
                        checkpoint = torch.load(args.resume, map_location=loc)
                    model.load_state_dict(checkpoint["state_dict"])
            """
        ),
        Clean(
            # Another's pretrained weights again, by the path's words: the name is bound in two
            # branches, and both bindings name the downloaded weights' folder.
            """
            import torch
            import torch.distributed as dist
            import torchvision.models as models

            def build(args):
                dist.init_process_group("nccl")
                if "resnet" in args.backbone:
                    weights = "../pretrained_models/" + args.backbone
                    net = models.resnet50()
                    net.load_state_dict(torch.load(weights))
                else:
                    weights = "../pretrained_models/swin/" + args.backbone
                    net = None
                return net
            """
        ),
        Clean(
            # A script that only asks whether a process group is up, starts none, and that
            # nothing launches as ranks: one process loads where it saved.
            """
            import torch
            import torch.distributed as dist

            def load_model(model, path):
                checkpoint = torch.load(path)
                model.load_state_dict(checkpoint["model_state"])

            if __name__ == "__main__":
                torch.cuda.set_device(0)
                loader = get_loader(params, distributed=dist.is_initialized())
                load_model(model, params.weights)
            """
        ),
        Clean(
            # The parsed command-line options and a learning-rate scheduler's state are Python
            # values: nothing in these files lands on a GPU.
            """
            import argparse
            import os
            import torch
            import torch.distributed as dist
            from torch.optim.lr_scheduler import CosineAnnealingLR

            def train(args, model, optimizer):
                dist.init_process_group("nccl")
                scheduler = CosineAnnealingLR(optimizer, T_max=args.epochs)
                if args.resume:
                    scheduler.load_state_dict(torch.load(os.path.join(args.resume, "scheduler.pt")))
                    saved_args = torch.load(os.path.join(args.resume, "model_args.pth"))
                if dist.get_rank() == 0:
                    torch.save(scheduler.state_dict(), os.path.join(args.out, "scheduler.pt"))
                    torch.save(args, os.path.join(args.out, "model_args.pth"))

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                args = parser.parse_args()
                train(args, build_model(args), None)
            """
        ),
        Clean(
            # The optimizer state is gathered into CPU buffers over a gloo group; the class
            # reads back what its own method saves.
            """
            import torch
            import torch.distributed as dist

            class ShardedOptimizer:
                def save_state(self, filename):
                    rank = dist.get_rank()
                    shards = {key: torch.empty(self.numel, device="cpu") for key in ("param", "exp_avg")}
                    gathered = {}
                    for key, shard in shards.items():
                        parts = [torch.empty(self.numel, device="cpu") for _ in range(self.world)] if rank == 0 else None
                        dist.gather(shard, parts, dst=0, group=self.gloo_group)
                        if rank == 0:
                            gathered[key] = torch.cat(parts)
                    if rank == 0:
                        torch.save(gathered, filename)

                def load_state(self, filename):
                    state = torch.load(filename)
                    return state["param"]
            """
        ),
        Clean(
            # A data set caches its token ids, made from Python lists on the host.
            """
            import os
            import torch
            import torch.distributed as dist

            class TokenDataset:
                def __init__(self, root, tokenizer):
                    path = os.path.join(root, "wiki103_ids.pt")
                    if os.path.exists(path):
                        self.ids = torch.load(path)
                    else:
                        rows = [tokenizer.encode(line) for line in open(os.path.join(root, "train.txt"))]
                        self.ids = torch.tensor(rows)
                        if dist.get_rank() == 0:
                            torch.save(self.ids, path)
            """
        ),
        Clean(
            # Each process reads back the shard it wrote, named by its index.
            """
            import os
            import torch

            def load_shard(accelerator, model, output_dir):
                accelerator.wait_for_everyone()
                name = f"pytorch_model_rank{accelerator.process_index}.bin"
                model.load_state_dict(torch.load(os.path.join(output_dir, name)))

            from accelerate import Accelerator
            load_shard(Accelerator(), model, "out")
            """
        ),
        Clean(
            # Only rank 0 loads: onto its own GPU, the one the file was saved from.
            """
            import torch
            import torch.distributed as dist

            def main(model, args):
                dist.init_process_group("nccl")
                if dist.get_rank() == 0:
                    model.load_state_dict(torch.load(args.resume))
                    export(model, "best.pth")

            def export(model, path):
                model.load_state_dict(torch.load(path))
            """
        ),
        Clean(
            # Every save of final.pth (and of best.pth) writes tensors on the host: they load
            # onto the CPU wherever they were trained.
            """
            import os
            import torch
            import torch.distributed as dist

            def train(net, out):
                fit(net)
                torch.save(net.cpu().state_dict(), os.path.join(out, "best.pth"))
                net.cpu()
                state = net.module.state_dict() if hasattr(net, "module") else net.state_dict()
                if dist.get_rank() == 0:
                    torch.save(state, os.path.join(out, "final.pth"))

            def evaluate(net, out):
                net.load_state_dict(torch.load(os.path.join(out, "final.pth")))
                path = os.path.join(out, "best.pth")
                net.load_state_dict(torch.load(path))
            """
        ),
        Clean(
            # FSDP gathers the full state dict onto the host (offload_to_cpu=True), and DCP's
            # cpu_offload does the same: both files hold CPU tensors.
            """
            import torch
            import torch.distributed as dist
            from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict
            from torch.distributed.fsdp import FullStateDictConfig, StateDictType
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

            def save(model, optimizer):
                policy = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
                with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, policy):
                    state = model.state_dict()
                options = StateDictOptions(full_state_dict=True, cpu_offload=True)
                if dist.get_rank() == 0:
                    torch.save(state, "model.pt")
                    torch.save(get_optimizer_state_dict(model, optimizer, options=options), "optim.pt")

            def resume(model, optimizer):
                model.load_state_dict(torch.load("model.pt"))
                optimizer.load_state_dict(torch.load("optim.pt"))
            """
        ),
        Clean(
            # Every model file the class saves into the folder it is handed holds host tensors,
            # moved item by item; its optimizer's file is another file (the load goes into a
            # model, also through an item of it).
            """
            import os
            import torch
            import torch.distributed as dist

            class ModelBase:
                def save_network(self, save_dir, network, label):
                    save_path = os.path.join(save_dir, "{}_{}.pth".format(self.step, label))
                    state_dict = network.state_dict()
                    for key, param in state_dict.items():
                        state_dict[key] = param.cpu()
                    torch.save(state_dict, save_path)

                def save_optimizer(self, save_dir, optimizer, label):
                    torch.save(optimizer.state_dict(), os.path.join(save_dir, label + ".pth"))

                def load_network(self, load_path, network, param_key="params"):
                    state_dict = torch.load(load_path)
                    if param_key in state_dict.keys():
                        state_dict = state_dict[param_key]
                    network.load_state_dict(state_dict)
            """
        ),
        Clean(
            # A learning-rate scheduler's state is Python numbers, and the program saves the
            # state dict of its scheduler: the file it reads back holds no tensors.
            """
            import os
            import torch
            import torch.distributed as dist

            class Trainer:
                def save(self, out):
                    if dist.get_rank() == 0:
                        torch.save(self.lr_scheduler.state_dict(), os.path.join(out, SCHEDULER_FILE))

                def resume(self, folder):
                    self.lr_scheduler.load_state_dict(torch.load(os.path.join(folder, SCHEDULER_FILE)))

            def on_train_begin(folder, **kwargs):
                scheduler = kwargs.get("lr_scheduler")
                state = torch.load(os.path.join(folder, hooks.SCHEDULER_FILE))
                scheduler.load_state_dict(state)
            """
        ),
        Clean(
            # A file whose only item read is handed to the learning-rate scheduler this class
            # builds: Python numbers (the model's checkpoint beside it is another file).
            """
            import os
            import torch
            import torch.distributed as dist

            class Runner:
                def __init__(self, model, optimizer, folder):
                    dist.init_process_group("nccl")
                    self.scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, 0.99)
                    data = torch.load(os.path.join(folder, "SchedulerParameters", "latest.pth"))
                    self.scheduler.load_state_dict(data["scheduler_state_dict"])
            """
        ),
        Clean(
            # The load runs only `if finetune:`, which defaults to False, and no call of the
            # class passes it: it never runs.
            """
            import torch
            import torch.distributed as dist

            class EmbeddingNet(torch.nn.Module):
                def __init__(self, backbone, size, finetune=False, weights=""):
                    super(EmbeddingNet, self).__init__()
                    self.backbone = backbone
                    if finetune:
                        self.backbone.load_state_dict(torch.load(weights))

            def main(args):
                dist.init_process_group("nccl")
                net = EmbeddingNet(build(args), 512)
            """
        ),
        Clean(
            # A Fabric for one device is one process.
            """
            import lightning as L
            import torch

            fabric = L.Fabric(accelerator="cuda", devices=1)
            fabric.launch()
            model.load_state_dict(torch.load("checkpoints/model.pth"))
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            class Search:
                def save_checkpoint(self):
                    info = {"epoch": self.epoch}
                    info["candidates"] = list(self.candidates)
                    torch.save(info, self.checkpoint_path)

                def load_checkpoint(self):
                    info = torch.load(self.checkpoint_path)
                    self.epoch = info["epoch"]
                    self.candidates = info["candidates"]
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist
            a = torch.load("a.pt", map_location="cpu")
            b = torch.load("b.pt", lambda storage, loc: storage)
            c = torch.load("c.pt", **load_options)
            d = torch.load(*args)
            """
        ),
        Clean(
            """
            import json, pickle
            import numpy as np
            import torch.distributed as dist
            config = json.load(open("config.json"))
            array = np.load("weights.npy")
            """
        ),
        Clean(
            """
            from torch import load
            import torch.distributed as dist

            def load(path):
                return open(path).read()

            text = load("notes.txt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def restore(torch, path):
                return torch.load(path)
            """
        ),
        Clean(
            """
            import torch

            model.load_state_dict(torch.load("best.pt"))
            checkpoint = torch.load(args.resume)
            optimizer.load_state_dict(checkpoint["optimizer"])
            """
        ),
        Clean(
            """
            import os
            import torch
            import torch.distributed as dist

            def datasets(args):
                features = torch.load(os.path.join(args.cache_dir, "features.pt"))
                labels = torch.load("labels.pt")
                vocab = torch.load(args.vocab_path)
                stats = torch.load(cached_stats_file)
                scaler.load_state_dict(torch.load(os.path.join(args.resume, "scaler.pt")))
                train_sampler.load_state_dict(torch.load(os.path.join(args.resume, "sampler")))
                engine = torch.load("model.engine")
                train = torch.load(os.path.join(args.data_dir, "train.pt"))
                return features, labels, vocab, stats, engine, train
            """
        ),
        Clean(
            # Read by keys that name no model's state (another program's predictions, moved to
            # the GPU right away): nothing shows it is a checkpoint saved from a GPU, its `.pth`
            # name aside; nothing in the program writes it.
            """
            import torch
            import torch.distributed as dist

            def main(args):
                dist.init_process_group("nccl")
                predictions = torch.load("indexes/{}_predictions_ranked.pth.tar".format(args.split)) if args.use else None
                probs = predictions["probs_list"].cuda() if args.use else None
                preds = predictions["preds_list"].cuda() if args.use else None
                return probs, preds
            """
        ),
        Clean(
            # Only the `.pt` suffix says checkpoint, and the result is used as plain data (an
            # index tensor compared with the rank): it is neither loaded into a model nor read by
            # keys nor used as a module, and nothing in the program saves it: nothing shows it
            # holds a model's tensors saved from a GPU.
            """
            import torch
            import torch.distributed as dist

            def main():
                dist.init_process_group("nccl")
                placement = torch.load("mesh_vertex_partition_4.pt")
                owned = (placement == dist.get_rank()).nonzero()
                return owned
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def embeddings(path, device):
                table = torch.load(path).cpu()
                centroids = torch.load(path).to(device)
                return table, centroids, torch.load("best_scores.pt").numpy()

            def receive(payload):
                obj = torch.load(io.BytesIO(payload))
                items = torch.load(path)
                return obj, items
            """
        ),
        Clean(
            """
            import io
            import os
            import tempfile
            import torch
            import torch.distributed as dist

            def load_shard(model, args):
                name = f"model_rank{dist.get_rank()}.bin"
                path = os.path.join(args.output_dir, name)
                model.load_state_dict(torch.load(path))
                optimizer.load_state_dict(torch.load(f"optim_{args.local_rank}.pt"))

            def round_trip(model):
                b = io.BytesIO()
                torch.save(model.state_dict(), b)
                b.seek(0)
                model.load_state_dict(torch.load(b))
                with tempfile.NamedTemporaryFile() as tmp:
                    torch.save(model, tmp.name)
                    model = torch.load(tmp.name)
                return model(dist.get_rank())
            """
        ),
        Clean(
            # A graph's row pointers moved into shared host memory at once, for the processes
            # the loader starts: the file holds host tensors.
            """
            import torch
            import torch.distributed as dist

            def graph_topology(root):
                rowptr = torch.load(f"{root}/topology/rowptr.pt").share_memory_()
                colidx = torch.load(f"{root}/topology/colidx.pt").share_memory_()
                return rowptr, colidx
            """
        ),
        Clean(
            # Another's published weights, fetched by a function named for them: nothing in the
            # program saves them, so nothing says on which device.
            """
            import torch
            import torch.distributed as dist

            def fetch_pretrained(folder, name):
                target = folder / name
                verify(target)
                return torch.load(target)

            def build(folder):
                net = Codec()
                net.load_state_dict(fetch_pretrained(folder, "codec-24k.th"))
                return net
            """
        ),
    )
    strict_examples = (
        Flagged(
            """
            import torch
            x = torch.load("features.pt")
                ^
            """,
            fixed="""
            import torch
            x = torch.load("features.pt", map_location="cpu")
            """,
        ),
        Flagged(
            """
            import torch
            model = torch.load(path)
                    ^
            model.eval()
            """,
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self.ranks = model.get(RankRegions)
        self._loads: list[_Load] = []
        self._by_id: dict[int, _Load] = {}
        self._bound: dict[tuple[int, str], _Load] = {}  # (frame, variable) -> the load it holds
        self._pending: dict[int, set[str]] = {}  # id of a call seen as an argument before it was checked
        self._pending_keys: dict[int, set[str]] = {}  # and the keys it was read by
        self._scheduler_items: set[int] = set()  # `data["scheduler"]` handed to a scheduler's load_state_dict
        self._assigned: dict[int, set[str]] = {}  # frame -> names bound so far in the walk
        self._opened: dict[tuple[int, str], cst.BaseExpression] = {}  # `with open(p) as f`: f -> open(p)
        self._private: set[tuple[int, str]] = set()  # names bound to a BytesIO or a temporary file
        self._saved_into: set[tuple[int, str]] = set()  # names this frame `torch.save`s into
        self._per_rank: dict[int, set[str]] = {}  # frame -> names bound to a value that names the rank
        self._saves_checkpoint = False
        self.launches = model.get(Launches)

    @classmethod
    @functools.cache
    def strict_variant(cls) -> type[TorchLoadWithoutMapLocation]:
        """The rule as `[tool.ddplint] strict` runs it: every load without map_location, in
        any file. Its needles and screen drop the distributed ones, so they admit every file it flags.
        It is the class attribute `Strict`, so that pickle (the runner's worker processes)
        finds it by name."""
        variant = type(
            cls.__name__,
            (cls,),
            {"strict": True, "__module__": cls.__module__, "__qualname__": f"{cls.__qualname__}.Strict", "__doc__": cls.__doc__},
        )
        anywhere = CallTrigger(TORCH_LOAD, without_keyword="map_location")
        variant.needles, variant.screen = anywhere.needles, anywhere.screen
        return variant

    # -- the loads --------------------------------------------------------------------------

    def check(self, node: cst.Call) -> None:
        path = argument_for(node, TORCH_LOAD, "f")
        words = _words(self._code(path.value)) if path is not None else set()
        private = False
        if path is not None:
            frame = id(self.model.frame.node)
            name = dotted_name(path.value)
            handle = (frame, (name or "").removesuffix(".name"))
            private = handle in self._private and handle in self._saved_into
            private = private or self._names_own_rank(path.value)
            if isinstance(path.value, cst.Name):
                # `path = os.path.join(out, "best.pt")`, `with open(path, "rb") as f`
                bound = self._opened.get((frame, path.value.value)) or self.model.constant(path.value.value)
                if bound is not None:
                    words |= _words(self._code(bound))
                else:  # bound in several places: the words every one of them says
                    values = self.model.assigned_values(path.value.value) or []
                    words |= set.intersection(*(_words(self._code(value)) for value in values)) if values else set()
        function = self.model.function
        load = _Load(
            node,
            words,
            _words(function.node.name.value) if function is not None else set(),
            self._device_in_scope(),
            private=private,
            owner=self.model.frame.self_class.name.value if self.model.frame.self_class is not None else None,
            path=loaded_path_key(self.model, node),  # in the load's scope, where its names resolve
            function=self.model.frame.key,
            rank_zero=self.ranks.only_rank_zero,
            looped=path is not None and bool(self._looped() & _names_in(path.value)),
            handed=path is not None and isinstance(path.value, cst.Name) and function is not None
            and _is_parameter(function.node, path.value.value),
            deviceless=self._deviceless_branch(node),
            script_only=self.model.function is None and any(is_main_guard(branch.test) for branch in self.model.ifs),
        )
        self._loads.append(load)
        self._by_id[id(node)] = load
        for kind in self._pending.pop(id(node), ()):
            setattr(load, kind, True)
        load.keys |= self._pending_keys.pop(id(node), set())

    def _deviceless_branch(self, node: cst.Call) -> bool:
        """The load is in the body of `if <device> is None:` and the `else:` loads with a
        map_location on that device (pytorch/examples' ImageNet script and its copies): the
        code gives each rank's run its device, so the branch without one is a run with none."""
        branch = self.model.ifs[-1] if self.model.ifs else None
        test = branch.test if branch is not None else None
        if not (
            isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Is)
            and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"
        ):
            return False
        device = dotted_name(test.left)
        if device is None or not isinstance(branch.orelse, cst.Else) or any(found is node for found in descendants(branch.orelse)):
            return False
        for other in descendants(branch.orelse):
            if isinstance(other, cst.Call) and self.model.qualified(other.func) in TORCH_LOAD:
                target = argument_for(other, TORCH_LOAD, "map_location")
                if target is not None and device in _dotted_names(target.value) | _assigned_names(branch.orelse, target.value):
                    return True
        return False

    def _names_own_rank(self, path: cst.BaseExpression) -> bool:
        """`f"model_rank{rank}.bin"` (also through variables): each rank reads the file it
        wrote, from its own device. Not when the rank is a loop variable here (`for rank in
        range(world_size)`: one process reads every rank's file)."""
        if self._looped() & _names_in(path):
            return False
        per_rank = self._per_rank.get(id(self.model.frame.node), set())
        if isinstance(path, (cst.Name, cst.Attribute)):  # `args.rank_ckpt` alone is one file
            return dotted_name(path) in per_rank
        return mentions_rank(path, per_rank)

    def _looped(self) -> set[str]:
        return {name for loop in self.model.loops if isinstance(loop, cst.For) for name in _names_in(loop.target)}

    def _code(self, node: cst.CSTNode) -> str:
        return self.model.module.code_for_node(node)

    def _device_in_scope(self) -> cst.BaseExpression | None:
        """`device`, else `f"cuda:{local_rank}"`, where that variable is bound before this
        point: a parameter or an earlier assignment in this function, or a variable of an
        enclosing function or of the module (set by the time the function runs)."""
        frame = self.model.frame
        for name, device in (("device", "device"), ("local_rank", 'f"cuda:{local_rank}"')):
            where = self.model.binding_scope(name)
            if where is None or self.model.qualified(cst.Name(name)) is not None:
                continue
            if where is frame.scope and name not in self._assigned.get(id(frame.node), ()) and not (
                frame.function is not None and _is_parameter(frame.function, name)
            ):
                continue
            return cst.parse_expression(device)
        return None

    def _scheduler_item(self, name: cst.Name, key: str) -> None:
        """`scheduler.load_state_dict(data[key])`: that item of the load is a scheduler's state."""
        load = self._bound.get((id(self.model.frame.node), name.value))
        if load is not None:
            load.numbers = True
            load.scheduler_keys.add(key)

    def _read_by_key(self, expr: cst.BaseExpression, key: str) -> None:
        """Note a key a load's result is read by (`ckpt["epoch"]`, also on the call itself)."""
        if isinstance(expr, cst.Call) and id(expr) not in self._by_id:
            self._pending_keys.setdefault(id(expr), set()).add(key)
            return
        name = dotted_name(expr)
        load = self._by_id.get(id(expr)) if isinstance(expr, cst.Call) else (
            self._bound.get((id(self.model.frame.node), name)) if name is not None else None
        )
        if load is not None:
            load.keys.add(key)

    def _mark(self, expr: cst.BaseExpression, kind: str) -> None:
        """Note what happens to a load: the call itself (seen before the rule checks it, as
        the walk enters the outer expression first) or a variable bound to one here."""
        if isinstance(expr, cst.Call):
            load = self._by_id.get(id(expr))
            if load is None:
                self._pending.setdefault(id(expr), set()).add(kind)
                return
        else:
            name = dotted_name(expr)
            load = self._bound.get((id(self.model.frame.node), name)) if name is not None else None
        if load is not None:
            setattr(load, kind, True)

    # -- what happens to them ---------------------------------------------------------------

    def leave_Assign(self, original_node: cst.Assign) -> None:
        # After the value's own calls were seen: `ckpt = torch.load(p)`.
        value = original_node.value
        loaded = value
        if isinstance(loaded, cst.IfExp):  # `ckpt = torch.load(p) if args.use else None`: the load, where it runs
            branches = [branch for branch in (loaded.body, loaded.orelse) if not (isinstance(branch, cst.Name) and branch.value == "None")]
            loaded = branches[0] if len(branches) == 1 else loaded
        while (  # `net = torch.load(p).cuda().eval()`
            isinstance(loaded, cst.Call)
            and isinstance(loaded.func, cst.Attribute)
            and loaded.func.attr.value in DEVICE_METHODS | {"eval", "train"}
        ):
            loaded = loaded.func.value
        load = self._by_id.get(id(loaded)) if isinstance(loaded, cst.Call) else None
        private = isinstance(value, cst.Call) and self.model.qualified(value.func) in PRIVATE_FILES
        frame = id(self.model.frame.node)
        if load is None and isinstance(value, cst.Subscript):
            # `state_dict = state_dict[param_key]`: an item of the load is still what it holds
            base = value
            while isinstance(base, cst.Subscript):
                base = base.value
            load = self._bound.get((frame, base.value)) if isinstance(base, cst.Name) else None
        for target in original_node.targets:
            name = dotted_name(target.target)
            if name is None:
                continue
            self._assigned.setdefault(frame, set()).add(name)
            self._opened.pop((frame, name), None)
            per_rank = self._per_rank.setdefault(frame, set())
            if mentions_rank(value, per_rank) and not self._looped() & _names_in(value):
                per_rank.add(name)
            else:
                per_rank.discard(name)
            per_rank |= ranked_attribute_names(self.model, name, value)  # `cm = ClusterManager(rank=args.rank, ...)`
            if private:
                self._private.add((frame, name))
            else:
                self._private.discard((frame, name))
            if load is not None:
                self._bound[(frame, name)] = load
                load.words |= _words(name)
            elif not self._other_branch(self._bound.get((frame, name))):
                self._bound.pop((frame, name), None)

    def _other_branch(self, bound: _Load | None) -> bool:
        """Whether this statement binds the name again in the other branch of an `if` whose body
        bound it to `bound` (`if cuda: sd = torch.load(p)`, `else: sd = torch.load(p, map_location="cpu")`):
        what follows the `if` uses either, so the load keeps the name."""
        statement = self.model.statement
        if bound is None or statement is None:
            return False
        return any(
            branch.orelse is not None
            and any(node is statement for node in descendants(branch.orelse))
            and any(node is bound.call for node in descendants(branch.body))
            for branch in self.model.ifs
        )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.model.frame.self_name is not None:  # `self.checkpoint_fpath`, built from the rank in `__init__`
            self._per_rank.setdefault(id(self.model.frame.node), set()).update(ranked_attribute_names(self.model, self.model.frame.self_name))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is None or not isinstance(node.asname.name, cst.Name):
            return
        frame, name = id(self.model.frame.node), node.asname.name.value
        self._assigned.setdefault(frame, set()).add(name)
        self._opened[(frame, name)] = node.item
        per_rank = self._per_rank.setdefault(frame, set())
        if self._names_own_rank(node.item):
            per_rank.add(name)
        else:
            per_rank.discard(name)
        item = node.item
        if isinstance(item, cst.Call) and self.model.qualified(item.func) in PRIVATE_FILES:
            self._private.add((frame, name))
        else:
            self._private.discard((frame, name))

    def visit_Name(self, node: cst.Name) -> None:
        # a read of a name bound to a load (an assignment's own target is bound only when it is left)
        load = self._bound.get((id(self.model.frame.node), node.value))
        if load is not None:
            load.read = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = dotted_name(node)  # `self.placement`, bound to a load
        load = self._bound.get((id(self.model.frame.node), name)) if name is not None else None
        if load is not None:
            load.read = True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = self.model.string_value(node.slice[0].slice.value)
            if key is not None:
                self._read_by_key(node.value, key)
            if key is not None and _words(key) & STATE_KEY_WORDS and id(node) not in self._scheduler_items:
                self._mark(node.value, "state")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        qualified = self.model.qualified(func)
        if qualified is not None:
            if qualified in DDP:
                for arg in node.args[:1]:  # `DDP(torch.load(p))`
                    self._mark(arg.value, "whole_model")
            elif qualified in AMP_STATE_LOADERS:
                for arg in node.args[:1]:  # `apex.amp.load_state_dict(torch.load(p))`: Python numbers
                    self._mark(arg.value, "numbers")
            elif qualified in TORCH_SAVE:
                destination = argument_for(node, TORCH_SAVE, "f")
                name = dotted_name(destination.value) if destination is not None else None
                if name is not None:
                    self._saved_into.add((id(self.model.frame.node), name.removesuffix(".name")))
                saved = argument_for(node, TORCH_SAVE, "obj")
                if saved is not None and _saves_checkpoint(saved.value, self._code(saved.value)):
                    self._saves_checkpoint = True
            return
        if isinstance(func, cst.Name):  # `model(x)`
            self._mark(func, "whole_model")
            return
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method == "load_state_dict":
            for arg in node.args[:1]:
                value = arg.value
                scheduler = self._is_scheduler(func.value) or self._is_sampler(func.value)
                if isinstance(value, (cst.Call, cst.Name)) and scheduler:
                    self._mark(value, "numbers")  # Python numbers: not a model's state
                    continue
                if scheduler and _keyed_name(value) is not None:  # `scheduler.load_state_dict(data["scheduler"])`
                    self._scheduler_items.add(id(value))
                    self._scheduler_item(*_keyed_name(value))
                    continue
                while isinstance(value, cst.Subscript):
                    value = value.value
                if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get":
                    value = value.func.value
                self._mark(value, "state")
                receiver = dotted_name(func.value)
                if receiver is not None and not _words(receiver.rpartition(".")[2]) & (OPTIMIZER_WORDS | SCHEDULER_WORDS):
                    self._mark(value, "into_model")
                if receiver == "self":
                    self._mark(value, "into_self")
        elif method in ("get", "pop") and node.args:
            key = self.model.string_value(node.args[0].value)
            if key is not None:
                self._read_by_key(func.value, key)
            if key is not None and _words(key) & STATE_KEY_WORDS:
                self._mark(func.value, "state")
        elif method in MODULE_METHODS:
            self._mark(func.value, "whole_model")
        elif method in DEVICE_METHODS:
            self._mark(func.value, "on_device")
        elif method in HOST_METHODS and isinstance(func.value, cst.Call):
            self._mark(func.value, "on_host")

    def _is_scheduler(self, receiver: cst.BaseExpression) -> bool:
        """A learning-rate scheduler: a name bound once to what torch's lr_scheduler classes or
        Hugging Face's scheduler factories build, or an object named as a scheduler
        (`self.lr_scheduler`) where the program saves the whole state dict of an object named
        so (`torch.save(scheduler.state_dict(), path)`): its state dict is Python numbers."""
        if isinstance(receiver, cst.Name):
            made = self.model.constant(receiver.value)
            qualified = self.model.qualified(made.func) if isinstance(made, cst.Call) else None
            if qualified is not None and (qualified in LR_SCHEDULERS or qualified in SCHEDULER_FACTORIES):
                return True
        name = dotted_name(receiver)
        if name is not None and name in self._scheduler_attributes:
            return True
        project = self.model.project
        if name is None or not _words(name.rpartition(".")[2]) & SCHEDULER_WORDS or project is None:
            return False
        return saves_scheduler_state(project)

    @staticmethod
    def _is_sampler(receiver: cst.BaseExpression) -> bool:
        """A data sampler, by its name (`sampler`, `self.train_sampler`): what its
        `load_state_dict` takes is Python numbers, as a scheduler's is."""
        name = dotted_name(receiver)
        return name is not None and bool(_words(name.rpartition(".")[2]) & SAMPLER_WORDS)

    @functools.cached_property
    def _scheduler_attributes(self) -> frozenset[str]:
        """The attributes this module binds to a learning-rate scheduler it builds
        (`self.scheduler = torch.optim.lr_scheduler.ExponentialLR(...)`), as written."""
        found = set()
        for node in descendants(self.model.module):
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
                qualified = self.model.qualified(node.value.func)
                if qualified is not None and (qualified in LR_SCHEDULERS or qualified in SCHEDULER_FACTORIES):
                    found |= {name for target in node.targets if isinstance(target.target, cst.Attribute) and (name := dotted_name(target.target))}
        return frozenset(found)

    # -- the verdict --------------------------------------------------------------------------

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.strict:
            for load in self._loads:
                self._report(load, self.runs_link(), None)
            return
        runs = self.runs_link() if self._loads else None
        if runs is None:
            return  # nothing shows that ranks run this file: one process loads where it saved
        if self.model.project is not None and self.model.project.accelerate_by_hand:
            return  # an Accelerate program no document launches: one process loads where it saved
        if self.model.project is not None and one_gpu_per_rank(self.model.project) is not None:
            return  # each rank sees only its own GPU: cuda:0 is that GPU on every rank
        if self.model.project is not None and every_rank_on_device_zero(self.model.project) is not None:
            return  # no rank works on a GPU of its own: cuda:0 is already every rank's device
        guarded = self.ranks.functions_only_rank_zero_calls()
        evidence = self.model.get(DistributedEvidence)
        own = evidence.found  # this file's own code shows distribution
        # ranks run this file's `__main__` block only where they run it as the script
        as_script = evidence.starts is not None or self.model.project is not None and self.model.project.launch_line(own=True) is not None
        for load in self._loads:
            if not load.looped and (load.rank_zero or load.function in guarded) or load.deviceless:
                continue  # rank 0 alone loads it, onto its own GPU; or a run with no device of its own
            if load.script_only and not as_script:
                continue  # an importer that starts the ranks never runs this file's `__main__` block
            held = self._holds(load)
            if held == [] and not own:
                held = self._own_class_saved(load)
            if held is None or not held and not own:
                # Where only another module's code shows that ranks run this one, a name that
                # says "checkpoint" is no evidence of what the file holds: report only where
                # the program is seen to save it (or its format) with CUDA tensors.
                continue
            self._report(load, runs, [*self._called_from(load, runs), *held])

    def _holds(self, load: _Load) -> list[Link] | None:
        """The steps that say the file holds a model's tensors on the device they were saved
        from: where the program saves it (MADE), else what the load does with it (none: the
        message says so); None where the file holds none: the program saves it on the host
        only, the loading class reads back a record of Python values it saves itself, the
        process reads what it wrote itself, or nothing shows it is a checkpoint."""
        if load.on_host or load.private or load.words & NO_TENSORS_WORDS:
            return None
        project = self.model.project
        if load.numbers and not (load.state or load.whole_model or load.on_device or load.keys - load.scheduler_keys):
            # a learning-rate scheduler's state is Python numbers, unless the file is the
            # program's whole checkpoint, read in full to take the scheduler's item from it
            whole = saved_format(project, load.keys, beyond=True) if project is not None and load.keys else None
            if whole is None:
                return None
            return [Link(StepKind.MADE, f"the whole file is loaded for its scheduler item: it is saved at {whole.place}, {whole.what}", whole.place)]
        saves = saved_files(project, load.path) if project is not None else []
        # Host-only by the saves beside the load: a script elsewhere that imports a module of
        # the same name may be another program of the repository (`old/`, `tools/`).
        folder = posixpath.dirname(project.path.replace("\\", "/")) if project is not None else ""
        beside = [save for save in saves if posixpath.dirname(save.place.path) == folder]
        # (a tensor moved right after its load, `.to(device)`, is on the host first when every
        # save of its file holds host tensors; a whole model's saves are not judged so)
        if not load.whole_model and (
            on_host(beside) is not None or self._own_record(load) is not None or self._class_file_on_host(load)
        ):
            return None
        if not self._is_checkpoint(load) and not any(save.state for save in saves):
            return None
        made = next((save for save in saves if save.state), None)
        # The format is no evidence for another's file: one named "pretrained" by a literal path
        # that no save of the program writes (their shared "state_dict" key is everyone's).
        another = bool(load.words & PRETRAINED_WORDS) and (load.path or "").startswith("file:") and not saves
        if made is None and project is not None and load.keys and not another:
            made = saved_format(project, load.keys)
        if made is None:
            # another's weights read as a state dict: nothing shows where they were saved from
            # (a whole pickled model still carries its device: `model.to(...)` comes too late)
            # (named so by its path, its variable or the function that loads it: `_get_pretrained`)
            # The loading function's name counts only where this module writes no file with
            # torch.save: `load_from_pretrained` beside the `save_pretrained` that writes it
            # from the GPU (trlx) reads the program's own checkpoint.
            named = load.function_words if not _SAVE_CALL.search(self.model.source) else set()
            pretrained = (load.words | named) & PRETRAINED_WORDS
            return None if pretrained and not (load.whole_model or load.on_device) else []
        tensors = "CUDA tensors" if project is not None and places_on_cuda(project) else "tensors not moved to the host"
        return [Link(StepKind.MADE, f"the file is saved from {tensors} at {made.place}: {made.what}", made.place)]

    def _called_from(self, load: _Load, runs: Link) -> list[Link]:
        """Where the module that starts the ranks calls the function that loads (its first such
        call), when that is another module: how each rank's run reaches this line."""
        project = self.model.project
        if project is None or not isinstance(runs.at, Place) or load.function is None:
            return []
        program = project.program
        for site in project.context.call_sites(project.module, load.function) or ():
            place = program.place(site.caller, site.line)
            if site.caller != project.module and place.path == runs.at.path:
                return [Link(StepKind.REACHES, f"{load.function}() is called at {place}", place)]
        return []

    def _own_class_saved(self, load: _Load) -> list[Link]:
        """A method loads the file into `self.load_state_dict`, and the program `torch.save`s the
        state dict of a DDP model that wraps an object of that class (or of its inner module):
        the file is the class's own state as the DDP run saves it from the GPU (MADE); [] otherwise."""
        project = self.model.project
        if project is None or load.owner is None or not load.into_self:
            return []
        saved = saved_class_state(project, load.owner, load.keys)
        if saved is None:
            return []
        return [Link(StepKind.MADE, f"the program saves the state dict of its DDP-wrapped `{load.owner}` at {saved}", saved)]

    def _own_record(self, load: _Load):
        """Where the loading class saves the record its load reads back (by the keys it
        reads), when that save holds only Python values (`own_record`)."""
        project = self.model.project
        if project is None or load.owner is None or not load.keys:
            return None
        return own_record(project.program, project.module, load.owner, load.keys)

    def _class_file_on_host(self, load: _Load) -> bool:
        """A method loads the file it is handed, and every method of its class that saves a
        file it is handed saves no CUDA tensors (`save_state(self, filename)` gathering the
        optimizer state into CPU buffers, `load_state(self, filename)` reading it back)."""
        project = self.model.project
        if project is None or load.owner is None or not load.handed:
            return False
        return class_saves_on_host(project.program, project.module, load.owner, models_only=load.into_model)

    def _is_checkpoint(self, load: _Load) -> bool:
        if load.state:
            return True
        if load.words & NOT_CHECKPOINT_WORDS:
            return False
        named = (load.words | load.function_words) & CHECKPOINT_WORDS
        if named <= FILE_SUFFIX_WORDS and load.keys and not load.whole_model and not any(
            _words(key) & STATE_KEY_WORDS for key in load.keys
        ):
            # Only its `.pth` suffix says checkpoint, and it is read by keys that name no model's
            # state (`probs_list`): other data. A file named as a checkpoint (`args.checkpoint`)
            # holds its tensors whichever key is read (`ckpt["configuration"]`).
            return False
        if named <= FILE_SUFFIX_WORDS and load.read and not (
            load.keys or load.whole_model or load.on_device or self._saves_checkpoint
        ):
            # Only its `.pt` suffix says checkpoint, and the name it is bound to is read as none of
            # a model's state: not loaded into a model, read by no key, not used as a module nor
            # moved to a device, in a file that saves no checkpoint (a vertex-to-rank placement
            # handed to a data set, a graph data set printed): what it holds is not shown (a save
            # of it with a state dict still makes it one, `_holds`).
            return False
        return bool(
            load.whole_model
            or load.words & CHECKPOINT_WORDS
            or load.function_words & CHECKPOINT_WORDS
            or self._saves_checkpoint
        )

    def _report(self, load: _Load, runs: Link | None, held: list[Link] | None) -> None:
        distributed = runs is not None
        whole = (load.whole_model or load.on_device) and not load.state
        if whole:  # A pickled module: on the CPU it would no longer run with its inputs.
            message = self.message_whole_model if distributed else self.message_single_whole_model
            replace = {load.call: with_keyword_argument(load.call, "map_location", load.device)} if load.device is not None else None
        else:
            message = self.message if distributed else self.message_single
            replace = {load.call: with_keyword_argument(load.call, "map_location", string_literal("cpu"))}
        chain = None
        if held is not None:
            chain = [runs, *held, Link(StepKind.HARM, self._harm(load, held), load.call)]
            message += self._elsewhere(chain)
        self.report(load.call, message, replace=replace, chain=chain)

    def _elsewhere(self, chain: list) -> str:
        """The note that names the steps in other modules, for a message (flake8 shows no chain):
        who runs the load there, where the file is saved."""
        project = self.model.project
        here = project.path.replace("\\", "/") if project is not None else None
        notes = []
        for link in chain:
            built = self.launches.built_at.get(id(link.at)) if link.kind is StepKind.RUNS else None
            if built is not None:
                notes.append(f"its Accelerator is built at {built}")
            if not isinstance(link.at, Place) or link.at.path.replace("\\", "/") == here:
                continue
            if link.kind is StepKind.RUNS and not any(other.kind is StepKind.REACHES for other in chain):
                notes.append(f"ranks are started at {link.at}")
            elif link.kind is StepKind.REACHES:
                notes.append(f"every rank calls it at {link.at}")
            elif link.kind is StepKind.MADE:
                notes.append(f"saved at {link.at}")
        return f" ({'; '.join(notes)})" if notes else ""

    def _harm(self, load: _Load, held: list[Link]) -> str:
        """Why loading it without map_location harms: what it holds, as far as the load shows."""
        lands = "its tensors land on the device they were saved from, GPU 0 on every rank"
        if any(link.kind is StepKind.MADE for link in held):
            return f"loaded without map_location: {lands}"
        if load.state:
            return f"it is loaded into a model as a state dict: {lands}"
        if load.whole_model or load.on_device:
            return f"it is used as the loaded object itself: {lands}"
        return f"it is named as a checkpoint: {lands}"


def _dotted_names(node: cst.CSTNode) -> set[str]:
    return {name for found in (node, *descendants(node)) if (name := dotted_name(found)) is not None}  # type: ignore[arg-type]


def _assigned_names(block: cst.CSTNode, expr: cst.BaseExpression) -> set[str]:
    """The dotted names that the assignments of the name `expr` in `block` read (`loc =
    "cuda:{}".format(args.gpu)` before `map_location=loc`)."""
    if not isinstance(expr, cst.Name):
        return set()
    return {
        name
        for found in descendants(block) if isinstance(found, cst.Assign)
        and any(isinstance(target.target, cst.Name) and target.target.value == expr.value for target in found.targets)
        for name in _dotted_names(found.value)
    }


def _names_in(expr: cst.CSTNode) -> set[str]:
    if isinstance(expr, cst.Name):
        return {expr.value}
    found: set[str] = set()
    for child in children(expr):
        found |= _names_in(child)
    return found


def _is_parameter(function: cst.FunctionDef, name: str) -> bool:
    params = function.params
    every = (*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg, params.star_kwarg)
    return any(isinstance(param, cst.Param) and param.name.value == name for param in every)


def _saves_checkpoint(saved: cst.BaseExpression, code: str) -> bool:
    """`torch.save(model.state_dict(), p)`, `torch.save({"model": ...}, p)`, `torch.save(model, p)`."""
    if "state_dict" in code:
        return True
    if isinstance(saved, cst.Dict):
        return any(
            isinstance(element, cst.DictElement)
            and isinstance(element.key, cst.SimpleString)
            and bool(_words(str(element.key.evaluated_value)) & STATE_KEY_WORDS)
            for element in saved.elements
        )
    return isinstance(saved, (cst.Name, cst.Attribute)) and bool(_words(dotted_name(saved) or "") & WHOLE_MODEL_NAMES)


TorchLoadWithoutMapLocation.Strict = TorchLoadWithoutMapLocation.strict_variant()


# -- questions only this rule asks of the program model -------------------------------------


def _keyed_name(expr: cst.BaseExpression) -> tuple[cst.Name, str] | None:
    """`data["scheduler"]`: the name and the literal key; None for anything else."""
    if not (isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and len(expr.slice) == 1):
        return None
    index = expr.slice[0].slice
    key = index.value if isinstance(index, cst.Index) else None
    if not isinstance(key, cst.SimpleString) or not isinstance(key.evaluated_value, str):
        return None
    return expr.value, key.evaluated_value


def own_record(program, module: str, cls: str, keys: set[str]):
    """Where a method of class `cls` of `module` saves a dict of Python values with every key in
    `keys` (`save_checkpoint` writing `{"epoch": self.epoch, "memory": self.memory}`: a Place),
    when no method of the class saves another dict with those keys: what its own load reads back
    holds no tensors. None otherwise."""
    summary = program.summary(module, own=True) if keys else None  # (the linted module)
    found = None
    for function in summary.functions.values() if summary is not None else ():
        if function.cls != cls:
            continue
        for write in function.escapes.writes:
            if not keys <= set(write.keys) or program.values.sent_at(module, write.callee) != "save":
                continue
            if not write.plain:
                return None
            found = found or program.place(module, write.line)
    return found


@dataclass(frozen=True)
class SavedFile:
    """A save of a file a load reads: where, whether what it writes holds no CUDA tensors, and
    whether it writes a model's state dict (`what`: said so in a message)."""

    place: Place
    host: bool
    state: bool
    what: str


def program_modules(view) -> list[str]:
    """The modules of the program a module is part of, whose saves its loads may read: those
    of its folder (the scripts beside it: `train.py` writes what `evaluate.py` reads,
    `data/preprocess.py` what `data/dataset.py` reads), the scripts that import it and the
    modules they import; only those that may save (by text). Not the folders above: a
    repository's older trainer in `old/` is another program than the one at its root. Its own
    run first (`own_run`), so that a message names the save of its own run."""
    program = view.program
    folder = posixpath.dirname(view.path.replace("\\", "/"))
    users = set(view.users)
    found = []
    for module in program.modules():
        if not program.may_save(module):
            continue
        where = posixpath.dirname(program.path(module).replace("\\", "/"))
        if where == folder or module in users or users.intersection(program.importers_of(module)):
            found.append(module)
    own = own_run(view)
    return sorted(found, key=lambda module: (module not in own, module))


def own_run(view) -> set[str]:
    """The modules that run with the view's module: it, the modules that import it (`users`)
    and those they import."""
    program, users = view.program, set(view.users)
    return users | {module for module in program.modules() if users.intersection(program.importers_of(module))}


def saved_files(view, path: str | None) -> list[SavedFile]:
    """Every call of the program (`program_modules`) that may write the file `path` (a path
    key), with what it writes; [] when none does, or one of those modules is not read."""
    if path is None:
        return []
    program, found = view.program, []
    for saver in program_modules(view):
        summary, code = program.summary(saver), program.module_code(saver)
        if summary is None or code is None:
            return []
        for key, function in (("", code), *summary.functions.items()):
            for write in function.escapes.files:
                if write.path != path and not _fits(write.path, path):
                    continue
                place = program.place(saver, write.line)
                torch_save = program.values.is_save(saver, write.callee)
                host = torch_save and (write.host or no_cuda(program, saver, key or None, write.saved))
                state = not host and any(save.line == write.line and save.held for save in function.escapes.saves)
                what = "a model's state dict, not moved to the host" if state else f"by {write.callee}()"
                found.append(SavedFile(place, host, state, what))
    return found  # its own run's saves first (`program_modules`' order): the one the message names


def _fits(saved: str, loaded: str) -> bool:
    """Whether a file a save names by a template (`file:{}_mean.pt`, from `f"{prefix}_mean.pt"`
    with `prefix` a parameter) may be the file a load names literally (`file:parameter_mean.pt`):
    the save may write it, with what it writes."""
    if "{}" not in saved or "{}" in loaded or not saved.startswith("file:") or not loaded.startswith("file:"):
        return False
    return re.fullmatch(".+".join(map(re.escape, saved.split("{}"))), loaded) is not None


def on_host(saves: list[SavedFile]) -> Place | None:
    """Where the program saves a file with no CUDA tensors in it, when every save of it
    (`saved_files`) holds none; None otherwise, and when nothing saves it."""
    if not saves or not all(save.host for save in saves):
        return None
    return saves[0].place


def saved_format(view, keys: set[str], beyond: bool = False) -> SavedFile | None:
    """A save of the program (`program_modules`) of a dict with every key in `keys` whose
    values are not all known to be on the host (`{"model": model.state_dict(), "epoch":
    epoch}`): the format a load that reads those keys reads. `beyond`: a dict that also holds
    a model's or an optimizer's tensors under other keys."""
    program = view.program
    for saver in program_modules(view):
        summary, code = program.summary(saver), program.module_code(saver)
        for function in (code, *summary.functions.values()) if summary is not None and code is not None else ():
            for write in function.escapes.writes:
                others = set(write.keys) - keys
                if keys <= set(write.keys) and not write.plain and not (beyond and not any(_words(key) & TENSOR_KEY_WORDS for key in others)):
                    held = ", ".join(f'"{key}"' for key in write.keys)
                    what = f"the program's checkpoint format, a dict of {held} not moved to the host"
                    return SavedFile(program.place(saver, write.line), False, True, what)
    return None


def saved_class_state(view, cls: str, keys: set[str]) -> Place | None:
    """Where the program (`program_modules`) `torch.save`s the state dict of a DDP model that
    wraps an object of the class `cls` of the view's module, or of its inner module (`net.module`),
    in the module's code or in a helper it is handed to: the whole file where `keys` is empty,
    else under one of them; None where it saves none."""
    program = view.program
    for saver in program_modules(view):
        summary, code = program.summary(saver), program.module_code(saver)
        for key, function in ((None, code), *summary.functions.items()) if summary is not None and code is not None else ():
            for save in function.escapes.saves:
                held = [source for entry, source in save.held if (entry in keys if keys else entry is None)]
                if not held or not program.values.is_save(saver, save.callee):
                    continue
                if any(_wrapped_class(program, value) == (view.module, cls) for source in held for value in _handed_values(program, saver, key, source)):
                    return program.place(saver, save.line)
    return None


def _handed_values(program, module: str, key: str | None, source) -> list:
    """What `source` of function `key` holds: its value, or, for a parameter, what each call of
    the function passes it (module code too, which the solution does not step)."""
    if not isinstance(source, Param) or key is None:
        return [program.evaluate(module, key, source)]
    found = []
    for site in program.context.call_sites(module, key) or ():
        caller = program.function(site.caller, site.caller_key) if site.caller_key else program.module_code(site.caller)
        for call in caller.calls if caller is not None else ():
            target = program.resolve(site.caller, call.callee, caller.cls) if call.line == site.line else None
            if target is not None and (target.module, target.key) == (module, key):
                passed = program.passed_for(caller, call.callee, call.line, target, source.name)
                found.append(program.evaluate(site.caller, site.caller_key, passed) if passed is not None else None)
    return found


def _wrapped_class(program, value) -> tuple[str, str] | None:
    """(module, class) of the project object a DDP model, or its inner module, wraps: read from
    the wrap's call where the value does not carry it."""
    if isinstance(value, Wrapped) and value.wraps is not None:
        return value.wraps
    if not isinstance(value, (Wrapped, Inner)):
        return None
    place = value.wrapped_at
    for module in program.modules():
        if program.path(module) != place.path:
            continue
        summary, code = program.summary(module), program.module_code(module)
        for key, function in ((None, code), *summary.functions.items()) if summary is not None and code is not None else ():
            for call in function.calls:
                source = call.keywords.get("module") or (call.args[0] if call.args else None)
                if call.line == place.line and source is not None and program.makes_ddp(module, call.callee):
                    made = program.evaluate(module, key, source)
                    if isinstance(made, Instance):
                        return made.module, made.cls
    return None


def saves_scheduler_state(view) -> bool:
    """Whether the program (`program_modules`) `torch.save`s the whole state dict of an object
    named as a learning-rate scheduler (`torch.save(self.lr_scheduler.state_dict(), path)`)."""
    program = view.program
    for saver in program_modules(view):
        summary, code = program.summary(saver), program.module_code(saver)
        for function in (code, *summary.functions.values()) if summary is not None and code is not None else ():
            for save in function.escapes.state_saves:
                if _words(save.state_of.rpartition(".")[2]) & SCHEDULER_WORDS and program.values.is_save(saver, save.callee):
                    return True
    return False


def places_on_cuda(view) -> bool:
    """Whether this module or a script that runs it (`view.users`) puts a model or tensor on a
    CUDA device (`model.cuda(rank)`, `x.to("cuda")`, `x.to(device)` with the rank's device)."""
    program = view.program
    for module in {view.module, *view.users}:
        summary = program.summary(module)
        for function in summary.functions.values() if summary is not None else ():
            if function.cuda is not None or function.device_moves:
                return True
    return False


def class_saves_on_host(program, module: str, cls: str, models_only: bool = False) -> bool:
    """Whether the methods of class `cls` of `module` save a file they are handed, or one they
    name in a folder they are handed (`os.path.join(save_dir, f"{step}_G.pth")`), and each such
    save holds no CUDA tensors. `models_only`: the load goes into a model's `load_state_dict`,
    so the saves of an optimizer's whole state dict (`torch.save(optimizer.state_dict(), p)`)
    write other files than the one it reads (KAIR's `save_optimizer` beside `save_network`).
    `module` is the linted one."""
    summary = program.summary(module, own=True)
    found = False
    for key, function in summary.functions.items() if summary is not None else ():
        if function.cls != cls:
            continue
        optimizers = {
            save.line for save in function.escapes.state_saves
            if _words(save.state_of.rpartition(".")[2]) & OPTIMIZER_WORDS
        } if models_only else set()
        for write in function.escapes.files:
            if not write.path.startswith(("param:", "folder:")) or write.line in optimizers:
                continue
            if not (write.host or no_cuda(program, module, key, write.saved)) or not program.values.is_save(module, write.callee):
                return False
            found = True
    return found


def no_cuda(program, module: str, key: str | None, source, depth: int = 0) -> bool:
    """Whether what a save writes (a source of function `key` of `module`) holds no CUDA
    tensors, where its function alone could not tell: the options a command-line parser
    parsed (`args = parser.parse_args()`), the state dict of a learning-rate scheduler or a
    gradient scaler it made (Python numbers), or a parameter every call in the project fills
    with one of those (`torch.save(args, path)` in `main(args)`)."""
    if isinstance(source, Item):
        source = source.held if isinstance(source.held, CallResult) and source.index == 0 else None
    if isinstance(source, CallResult):
        callee = source.callee
        if callee.rpartition(".")[2] in ("parse_args", "parse_known_args"):
            return True
        made = program.qualify(module, callee.removesuffix("().state_dict")) if callee.endswith("().state_dict") else None
        return made is not None and (made in LR_SCHEDULERS or made in GRAD_SCALERS)
    if not isinstance(source, Param) or key is None or depth >= 3:
        return False
    function = program.function(module, key)
    sites = program.context.call_sites(module, key)
    if function is None or not sites or source.name not in function.params:
        return False
    index = function.arguments(function.method).index(source.name) if source.name in function.arguments(function.method) else None
    for site in sites:
        record = program.function(site.caller, site.caller_key) if site.caller_key else program.module_code(site.caller)
        calls = [call for call in record.calls if call.line == site.line] if record is not None else []
        passed = [
            call.keywords.get(source.name, call.args[index] if index is not None and index < len(call.args) else None)
            for call in calls
        ]
        if not passed or not no_cuda(program, site.caller, site.caller_key, passed[0], depth + 1):
            return False
    return True


_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
_SAVE_CALL = re.compile(r"\bsave\(")  # torch.save( through any import, or a helper named save


def one_gpu_per_rank(view) -> Place | None:
    """Where the scripts that run the view's module (the `users` no module imports; the module
    itself when it is one) each set CUDA_VISIBLE_DEVICES from the rank (`os.environ[
    "CUDA_VISIBLE_DEVICES"] = str(gpus[local_rank])`): every rank then sees its own GPU as
    cuda:0, and a file saved from cuda:0 lands on it. None where one of them does not."""
    program, users = view.program, view.users
    roots = [user for user in users if not program.importers_of(user)]
    found = None
    for root in roots:
        tree = program.tree(root)
        line = _sets_visible_devices_per_rank(tree) if tree is not None else None
        if line is None:
            return None
        found = found or program.place(root, line)
    return found


def _sets_visible_devices_per_rank(tree: ast.Module) -> int | None:
    """The line of an `os.environ["CUDA_VISIBLE_DEVICES"] = ...` whose value holds the rank
    (`holds_rank`)."""
    for node in walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Subscript) and dotted(target.value) == "os.environ"
            and isinstance(target.slice, ast.Constant) and target.slice.value == _VISIBLE_DEVICES
            for target in node.targets
        ) and holds_rank(node.value, tree, node.lineno):
            return node.lineno
    return None


# Libraries that bind each rank to its GPU, or place the model, themselves: a program that uses
# one may work on a GPU of each rank's own without a binding in its code.
_DEVICE_FRAMEWORKS = re.compile(
    r"\b(?:accelerate|lightning|deepspeed|[Ff]abric|horovod|colossalai|mmcv|mmengine|detectron2|ignite|fairscale|megatron)\b"
)
_DEVICE_CALLS = frozenset({"cuda", "to", "device"})
_CUDA_MOVE = re.compile(r"\.cuda\(|[\'\"]cuda")  # the program works on a GPU


def every_rank_on_device_zero(view) -> Place | None:
    """Where the program that runs the view's module (its `users` and the project modules they
    import) creates its process group itself (`init_process_group` in its code) and leaves every
    rank on the current device: no module of it binds a device (`binds_device`), passes
    `device_ids`, or uses a library
    that places models itself, and every device it names is the current one or cuda:0
    (`.cuda()`, `.to("cuda")`, `torch.device("cuda:0")`, a name bound only to such a device).
    Each rank then works on cuda:0 (or on the one GPU its launcher shows it), where a file saved
    from cuda:0 lands. None where one of those is not shown, or nothing is put on a GPU."""
    program = view.program
    modules = set(view.users)
    for _ in range(3):  # and what they import, up to three imports away
        modules |= {module for module in program.modules() if modules.intersection(program.importers_of(module))}
    found, on_cuda = None, False
    for module in sorted(modules):
        summary, text, tree = program.summary(module), program.read(module), program.tree(module)
        if summary is None or text is None or tree is None or binds_device(tree, literal_lists_bind=False):
            return None
        if "device_ids" in text or _DEVICE_FRAMEWORKS.search(text) or not _names_device_zero_only(program, module, tree):
            return None
        on_cuda = on_cuda or _CUDA_MOVE.search(text) is not None
        if found is None and "init_process_group" in text:
            found = program.place(module, next(
                (node.lineno for node in walk(tree) if isinstance(node, ast.Call) and (dotted(node.func) or "").endswith("init_process_group")),
                1,
            ))
    return found if on_cuda else None


def _names_device_zero_only(program, module: str, tree: ast.Module) -> bool:
    """Whether every device `tree` names is the current CUDA device, cuda:0 or the host
    (`_device_zero`): the arguments of `.cuda(...)`, `.to(...)`, `torch.device(...)` and the
    `device=` of every call but those of project functions and classes (which place with it, if
    at all, in code read here too), a name through every value bound to a name of its last part
    (a parameter's: not known)."""
    bound: dict[str, list[ast.expr]] = {}
    for node in walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                name = dotted(target)
                if name is not None:
                    bound.setdefault(name.rpartition(".")[2], []).append(node.value)
        elif isinstance(node, ast.keyword) and node.arg is not None:
            bound.setdefault(node.arg, []).append(node.value)
        elif isinstance(node, ast.arg):  # what its callers pass by position is not read
            bound.setdefault(node.arg, []).append(ast.Constant(None))
    for node in walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Attribute, ast.Name)):
            continue
        called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        named = [*node.args[:1]] if called in _DEVICE_CALLS else []
        callee = dotted(node.func)
        if callee is None or program.class_of(module, callee) is None and program.resolve(module, callee, None) is None:
            named += [keyword.value for keyword in node.keywords if keyword.arg == "device"]
        if called == "device" and len(node.args) > 1 or not all(_device_zero(value, bound, set()) for value in named):
            return False
    return True


def _device_zero(expr: ast.expr, bound: dict[str, list[ast.expr]], seen: set[str]) -> bool:
    """`"cuda"`, `"cuda:0"`, `0`, `"cpu"`, `torch.device(...)` of one, a dtype (`torch.float16`),
    or a name every value bound to its last part is one of those (`self.device = device`, with
    `device = torch.device("cuda:0")`)."""
    if isinstance(expr, ast.Constant):
        return expr.value in ("cuda", "cuda:0", "cpu", 0) and expr.value is not False
    if isinstance(expr, ast.Call) and (dotted(expr.func) or "").rpartition(".")[2] == "device":
        return len(expr.args) == 1 and not expr.keywords and _device_zero(expr.args[0], bound, seen)
    name = dotted(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
    if name is None:
        return False
    if name in TORCH and name.count(".") == 1 and name not in TORCH_DEVICE:
        return True  # a dtype
    last = name.rpartition(".")[2]
    if last in seen:
        return True  # bound through itself: its other values decide
    values = bound.get(last, [])
    return bool(values) and all(_device_zero(value, bound, seen | {last}) for value in values)
