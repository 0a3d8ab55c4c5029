from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, replace

import libcst as cst

from ddplint.analyses.launches import Launches
from ddplint.analyses.options import UNKNOWN, declared_option
from ddplint.analyses.ranks import (
    GLOBAL,
    MODEL,
    RANK_ENVIRONMENT,
    REPLICA_DIMENSIONS,
    RankRegions,
    RegionCall,
    WrappedModels,
    classify,
    environment_key,
    last_name,
    rank_mentions,
    ranked_attribute_names,
)
from ddplint.core.diagnostics import StepKind
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.screens import WriterOrHelperCalls, dotted
from ddplint.prefilter.triggers import SAVE_EVIDENCE_CODE, CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule
from ddplint.semantic.model import dotted_name
from ddplint.semantic.edits import argument_for, has_star_arguments
from ddplint.model.context import CallSite
from ddplint.model.parsers import NOT_SHOWN, test_value
from ddplint.model.records import Loader, Place
from ddplint.semantic.walk import descendants, nodes_under
from ddplint.core.torch_api import (
    ACCELERATE_SAVE, ACCELERATE_SAVE_HOOK, ACCELERATE_SAVE_STATE, ACCELERATOR, BUILD_TIME_DATASETS, DATA_PARALLEL, BUILD_TIME_METHODS, COLLECTIVES, DATALOADER, DDP,
    DISTRIBUTED_MODULES, DISTRIBUTED_SAMPLER, DOWNLOADING_DATASETS, FULL_STATE_DICT_CONFIG, GET_RANK, GET_STATE_DICT, GROUP_STARTS,
    HF_TRAINER, RANK_ZERO_FIRST, SAFETENSORS_SAVE, SAVE_EVIDENCE, SAVE_PRETRAINED, SMALL_FILE_WRITERS, SPAWN,
    START_PROCESSES, STATE_DICT_OPTIONS, STATE_DICT_TYPE, TORCH_SAVE, TORCHAUDIO_SAVE,
)

# Files private to the process that opens them: every rank writing its own is fine.
PRIVATE_FILES = frozenset(
    {"io.BytesIO", "tempfile.TemporaryFile", "tempfile.NamedTemporaryFile", "tempfile.SpooledTemporaryFile"}
)
# Values no two processes share: a file name made with one is the process's own (uuid4 draws
# from os.urandom; a wrapper that may seed it, as lhotse's after fix_random_seed, does not count).
PROCESS_UNIQUE = frozenset({"os.getpid", "uuid.uuid4"})


# The message, with the rank-0 test of the framework the file uses.
_MESSAGE = (
    "torch.save runs on every rank and all of them write the same file, which corrupts it; save on rank 0 only ({})"
)


_WRITER_MESSAGE = "{} runs on every rank and all of them write the same files, which corrupts them; save on rank 0 only ({})"
_PRETRAINED_MESSAGE = _WRITER_MESSAGE + " or pass is_main_process="
_DOWNLOAD_MESSAGE = (
    "{} runs on every rank and all of them download into the same folder at once, which corrupts its files; "
    "download on rank 0 first ({}), then build it on the other ranks after a barrier"
)
_MODEL_PARALLEL_MESSAGE = (
    "{} runs on every data-parallel rank and its file's name tells apart only model-parallel ranks, so every "
    "replica writes the same file, which corrupts it; save on the first replica only "
    "(if mpu.get_data_parallel_rank() == 0:)"
)
_RANK_ZERO_STATE_MESSAGE = (
    "torch.save runs on every rank, but only rank 0 receives the full state dict and the others write an empty one "
    "to the same file, which can leave it empty; save on rank 0 only ({})"
)

_ELSEWHERE_MESSAGE = (
    "{} runs on every rank ({}) and all of them write the same file, which corrupts it; write it on rank 0 only "
    "(if dist.get_rank() == 0:), with a barrier before the other ranks read it"
)

# The tests of whether a file exists (`os.path.exists`, `os.path.isfile`, `Path.exists`, ...).
_EXISTENCE_TESTS = frozenset({"exists", "lexists", "isfile", "is_file", "isdir", "is_dir"})
_CACHE_MISS = "whenever its file is missing, as every rank finds it on a first run,"
_CACHE_TEST = "every rank tests for the file here before any of them has written it: on a first run all find it missing"

_HELPER_MESSAGE = (
    "{}() runs torch.save ({}) with no rank test, and every rank makes this call: all of them write the "
    "same file, which corrupts it; call it on rank 0 only ({})"
)


_BUILTINS = frozenset(dir(builtins))
# Builtins whose result holds the elements of their argument, in order: a loop over it draws them
_PASSING_BUILTINS = frozenset({"enumerate", "iter", "list", "tuple", "sorted", "reversed"})


def _builds_path(expr: cst.BaseExpression) -> bool:
    """A string or path built from parts: `f"ckpt_{rank}.pt"`, `"ckpt_%d" % rank`, `os.path.join(...)`."""
    if isinstance(expr, (cst.FormattedString, cst.BinaryOperation, cst.ConcatenatedString)):
        return True
    return isinstance(expr, cst.Call) and (last_name(expr.func) or "") in ("join", "format", "Path", "str")


def _is_process_group_api(qualified: str) -> bool:
    """`torch.distributed.barrier`, `...distributed_c10d.get_rank`: calls that only make sense
    in a process group. Its subpackages (`torch.distributed.checkpoint` tools) do not count."""
    module, _, _ = qualified.rpartition(".")
    return module in DISTRIBUTED_MODULES


class SaveOnEveryRank(Rule):
    """
    Every rank of a DDP job runs the same script, so a `torch.save(...)` that is not behind a
    rank-0 guard is executed by every rank at once, all writing the same path. On a shared
    file system the writers interleave and truncate each other's output: the checkpoint is
    corrupt ("PytorchStreamReader failed reading zip archive", pytorch issue 73168), or a
    rank that loads it right after reads a half-written file. It also wastes I/O N times.

    Fires when `torch.save` (any import form) runs in a file that is evidently distributed (it
    calls torch.distributed or DistributedDataParallel, spawns ranks, or reads RANK or
    LOCAL_RANK), or that a launcher runs on every rank without naming DDP (a function that
    builds an Accelerate `Accelerator(...)` or calls `fabric.launch()` on a Fabric for several
    devices, the function `fabric.launch(fn)` starts, a LightningModule's hooks (also a subclass's of a
    project LightningModule, in any module: a LightningCLI in subclass mode runs it) unless every
    Lightning Trainer the file builds is for one device; and, in the function that builds a
    Trainer for several devices with the DDP strategy (`strategy="ddp"`, `DDPStrategy(...)` or a
    project subclass of it, also through a `**kwargs` dict a function or method of the file
    returns), the code after its `fit`/`validate`/`test`/`predict` on the same way through the
    `if`s: Lightning's subprocess launcher runs the script again on every device, so every rank
    runs it together, `if trainer.is_global_zero:` being the guard; not what comes before, which
    the other ranks re-run after rank 0, nor with "ddp_spawn"/"ddp_fork"), or that a shell script or document of
    the project starts with a launcher of several processes (`torchrun --nproc_per_node=4
    finetune.py`: a Hugging Face Trainer script that names no DDP), in code every rank reaches: a
    function (or module code) that tests the rank or does one of those things itself, or is
    called from such code outside a rank-0 guard (also a method of a class of the file called on
    an object bound once: `trainer = Trainer(args)`, then `trainer.fit()`).
    Recognised guards: `if rank == 0`, `if dist.get_rank() == 0`, `if is_main_process()`
    (`is_master`, `is_rank_zero`, `accelerator.is_main_process`, `trainer.is_global_zero`,
    ...), a call of a same-module function or method whose body is such a test, whatever its
    name (`def should_save(): return dist.get_rank() == 0`, also `return not
    dist.is_initialized() or dist.get_rank() == 0` or a call of another such function), `if
    args.local_rank in [-1, 0]`,
    `if not args.distributed or rank == 0` (and `if rank == 0 or not args.distribution` with
    any flag the module starts its process group under: `if args.distribution:
    dist.init_process_group(...)`), early returns such as `if rank != 0: return` (also
    nested under a test every distributed run passes, `if self._distributed: gather(...); if
    rank != 0: return`, whose `else:` only a one-process run takes; not under any other test),
    `@rank_zero_only` (`@rank0_only`, `@main_process`, ...), a same-module function
    (`save_checkpoint()`) whose every call is under such a guard, a test that a value is there
    (`if measures is not None:`, `if measures:`) where it is what a same-module function returns
    that gives None on every way but those under a rank-0 test (`measures = evaluate(...)`, whose
    `return total` sits under `if dist.get_rank() == 0:`, then `return None`; also NeWCRFs'
    `online_eval(..., gpu, ...)` under `if not args.multiprocessing_distributed or gpu == 0:`,
    `gpu` being the process index its spawned caller hands on, which a one-process call in the
    `else:` of the flag the module spawns under does not change; not where the other
    ranks get another value, `return False` included), and any of these tests held
    in a variable or attribute: `verbose = rank == 0` then `if verbose:`, `self.is_main =
    dist.get_rank() == 0` then `if self.is_main:` in another method (also of a subclass, in
    another module too: its values are those its class and project base classes assign it; one
    assigned a parameter of `__init__` holds what every construction passes, also through a
    subclass's `super().__init__(...)` or a local the caller binds once: maskrcnn-benchmark's
    `save_to_disk = get_rank() == 0`, `Checkpointer(..., save_to_disk=save_to_disk)`, then `if not
    self.save_to_disk: return` before the save),
    `args.save_logs =
    args.logs and is_master(args)` then `if args.save_logs:` in another function, a flag given
    a constant and then the other one only under rank tests (`self.verbose = True`, then `if
    self.args.distributed: if self.args.gpu != 0: self.verbose = False`, read also where a
    subclass in another module calls the save under `if self.verbose:`; `self.args.gpu` is
    what the code that builds the trainer assigns the namespace it passes, VL-T5's `args.gpu =
    gpu` with the local rank its callers pass for `gpu`). Such a
    variable is a guard when every value assigned to it in the module is a rank-0 test (or a
    constant `True`/`False`); one assigned anything else, or also bound as a parameter or loop
    variable, is not (values assigned where no distributed run gets, such as `master_process =
    True` under the `else:` of `if ddp:`, do not count). Not guards: a same-module function named like one whose body tests no
    rank (`def is_master(args): return args.save`), and a rank predicate named without a call
    (`if is_main_process:`, `if dist.is_initialized and ...`): a function object is always
    true, so every rank saves, and the message says so.
    With the project index, the save may be in a function of another module: a call, in code
    every rank reaches and outside a rank-0 guard, of a project function that runs `torch.save`
    under no `if` and says nothing of ranks (`save_checkpoint(state, is_best, out_dir)` in
    `utils.py`, also through such helpers it calls: `fit(...)` in `engine.py` that calls it) is
    reported at that call, naming the save; a call that passes a path naming the rank is not.
    Not flagged: a save in the branch of `if isinstance(model, nn.DataParallel):` (a DDP model
    is no DataParallel, so only a one-process run takes it; `(DataParallel, DDP)` is not such a
    test), saves to a path that names the rank (`f"ckpt_{rank}.pt"`, also through a
    variable or `with open(...) as f`; the process index that `mp.spawn` hands the function of
    the module it starts is the local rank, whatever its name: HigherHRNet's
    `final_state{gpu}.pth.tar` in `def main_worker(gpu, ...)`, and what is bound from it,
    `args.gpu = gpu`; or a parameter that every call of its function in the
    module hands such a path: `self.save_model(f"best_{self.args.rank}.pth")`, or an attribute of
    a project class built from the rank in every documented run, `self.checkpoint_fpath` or
    `manager.checkpoint_fpath`, also under a flag whose documented value keeps the rank:
    `model_rank = rank if all_workers else 0`), files named after the samples a loop draws from a DataLoader over a
    DistributedSampler (`for x, names in loader: torch.save(y, f"{out}/{names[j]}.pt")`; also
    `enumerate(loader)`, `tqdm(...)` of it, or a parameter every caller hands such a loader), or
    from a dataset of a project class whose constructor keeps only its rank's rows (a slice
    bounded by the rank, itself or from a project function: VideoSys's `self.data =
    split_df_by_rank(self.data)`): each rank draws its own shard, so the names differ, saves into an `io.BytesIO` buffer or a `tempfile`, or to a name made with `os.getpid()` or
    `uuid.uuid4()` (each process's own; not a wrapper that may be seeded alike on every rank, as
    lhotse's `uuid4` after `fix_random_seed`), and functions with no evidence of running distributed (a library
    helper called from another module is judged where it is called), and saves in a program that
    joins the ranks only by building an Accelerator where the project's documents launch other
    scripts and none launches it (ProjectView.accelerate_by_hand: run as `python train.py`, the
    only run shown, it is one process).
    A save in a module with no sign of distribution of its own is reported when the program
    model finds how every rank reaches it: from code that joins the ranks (calls
    `init_process_group` or builds an `Accelerator`, itself or through a project function, as a
    trainer's constructor that builds one; not where that is in the other branch of an `if`)
    through calls outside any rank-0 test (also of a method of an object a `self` attribute
    holds: `self.actor_critic.save_parameters(...)`), a class's construction for its `__init__` (a dataset
    that caches its preprocessing with `torch.save`; also built where packages re-export it,
    `from pkg import GLUETaskDataset`), a PyTorch Geometric dataset's constructor for its
    `process()`/`download()`, a class chosen by name (`getattr(datasets, name)(...)`);
    the message names where the ranks start and the call that reaches the save. A call in the
    other branch of a flag whose branch does what only a distributed run can (`if args.dist:`
    building the DistributedSampler, wrapping the model in DDP or starting the process group,
    `else:` building the dataset) is the run of one process: not followed; so is a save in
    such a branch, where the other asks the rank (`dist.get_rank()`) or runs a collective, which
    only a process group can answer (TransReID's `if cfg.MODEL.DIST_TRAIN: if dist.get_rank()
    == 0: torch.save(...)` / `else: torch.save(...)`). Several processes must run the code that
    joins the ranks: not a script that every documented run starts as one plain `python` process
    (no launcher runs it, and nothing it imports spawns more; a pool of workers runs a function,
    not the script), nor one that every command runs with torchrun or torch.distributed.launch --use_env
    and no process or node count (torch's default: one process), nor one that sets
    CUDA_VISIBLE_DEVICES to one GPU index at import and spawns `torch.cuda.device_count()`
    processes (one), nor one that every launch command of the project starts as one process
    (`torch.distributed.launch --nproc_per_node=1 train.py`, on one node: ProjectView.one_rank,
    a single writer with no rank beside it), nor one that builds only an Accelerator and that no launch command runs
    where the project's launch commands run its other scripts, nor a branch that only plain
    `python` runs take by the options each passes (`--train_stage SFT_Merge`), nor a branch only
    an option no documented run passes reaches (it keeps its default there; a branch that resumes
    a training is the exception: every stopped run resumes). A
    predicate defined inside the training function guards like any other (`if not is_master:
    return False`, `is_master` read from the enclosing function). A cache written
    where an `if` found its file missing (`if os.path.exists(cache): load` / `else: build and
    torch.save`) is still written by every rank on a first run, when all of them find it missing
    before any has written it: the message and the chain say so. Not where rank 0 writes it
    first: the path to the save passes a block that rank 0 runs before the others (a library's
    `main_process_first()`, or a project context manager whose other ranks wait at a barrier
    before its `yield` and whose rank 0 meets them at one after it, as YOLOv5's
    `with torch_distributed_zero_first(rank):` around the dataset's construction), and from
    there the write happens only where an `if` found the file missing or stale: the other ranks
    then find it and load it.
    Other writers: Hugging Face's `save_pretrained` (not with `is_main_process=`, not with
    `save_function=accelerator.save`, which writes the weights on the main process only unless
    `safe_serialization=True` bypasses it, not a tokenizer's, configuration's or diffusers noise
    scheduler's small files (a scheduler writes only its JSON configuration), not
    a Hugging Face Trainer's, which has no such method and raises, not a method the project
    defines itself), safetensors' `save_file`/`save_model`, torchaudio's `save` (a validation
    hook's `val_0.wav`), a
    torchvision dataset built with `download=True` on every rank into one folder (also a project
    subclass of one, at any depth and in any module, whose `__init__` hands `download` or its
    `**kwargs` on to the base's; not inside
    `main_process_first()` or after a barrier the other ranks wait at), Accelerate's
    `save_state` pre-hooks (Accelerate runs them inside `save_state`, in each process that calls
    it: reported where every rank may call it, as under `if accelerator.is_main_process or
    accelerator.distributed_type == DistributedType.DEEPSPEED:`, or where the file calls it
    nowhere; not where each `save_state` call of the file is under a rank-0 test or in a
    function only rank 0 calls, as diffusers' `if accelerator.is_main_process:`), and
    `torch.save` of a full state dict only rank 0 receives (`FullStateDictConfig(rank0_only=
    True)`, `StateDictOptions(full_state_dict=True, cpu_offload=True)`): the other ranks write
    an empty one over it.
    A Hugging Face Trainer subclass's own `save_model` or `_save_checkpoint` runs on every
    process (the Trainer calls them there); its `_save` runs on process 0 only (`save_model`
    calls it under `args.should_save`) unless the project calls it itself where every rank gets
    (LLaVA's `trainer._save(output_dir, state_dict=state_dict)` after a barrier).
    MosaicML Composer: its launcher (`composer train.py cfg.yaml`, `composer -n 8 --node_rank 0
    train.py`) starts one process per GPU (`-n`/`--nproc`, whose default is the GPU count; not
    with `-n 1`), each running the script's `__main__` code, and its Trainer runs every Callback
    it is handed on every rank, so a Callback subclass's event methods (`eval_end`, `epoch_end`,
    `fit_end`, ...) are every rank's in a script the launcher runs, or that imports one it
    runs; `dist.get_global_rank() == 0` (`composer.utils.dist`) is the guard. So are the `on_*`
    hooks of a Lightning `Callback` subclass (Lightning's Trainer calls each callback's hooks on
    every rank), where the file shows ranks run it; `trainer.is_global_zero`, `trainer.global_rank
    == 0` and `@rank_zero_only` are their guards.
    Model parallelism (Megatron's `mpu`): a test of the data-parallel rank (`if
    mpu.get_data_parallel_rank() == 0:`, `if data_parallel_rank == 0:`, `is_main_replica(...)`)
    is a guard, one writer per part of the model; a path naming the data-parallel rank is one
    file per replica. A path that names only the tensor- or pipeline-parallel rank
    (`f"model_pp{pp_rank}.pt"`) is still written by every replica, and is reported. A helper
    that returns the rank (`def rank(): return dist.get_rank() if initialized() else 0`) is a
    rank, so a guard function with several branches (`if not initialized(): return True; if
    rank() == 0: return True; return False`) is a rank-0 test.

    The message suggests the rank-0 test of the framework the file uses: `if
    accelerator.is_main_process:` (the name the file gives its `Accelerator`), `if
    fabric.is_global_zero:` (its Fabric's name), `if self.trainer.is_global_zero:` or
    `@rank_zero_only` in a LightningModule's hooks; in a function that is no launch point, that
    of its class's or the file's launch point; `if dist.get_global_rank() == 0:` in a file that
    imports Composer's `dist`. `if dist.get_rank() == 0:` where the file uses no
    launcher, or calls torch.distributed itself and the function is no launch point.

    No fix: wrapping the save in a rank-0 test is right only when no other rank
    reads the file before a barrier, which the linter cannot see. Guard it yourself, and
    add `dist.barrier()` after it if other ranks load the checkpoint.
    """

    code = "DDP014"
    # the save may be in a helper of another module that this one imports and calls (the
    # screen sees a call of it as one of torch.save: ddplint.model.project.Hints.origins)
    opened_by = frozenset((ProjectFact.SAVE_HELPER, ProjectFact.RUN_BY_RANKS))
    # a save in a module with no sign of ranks that code starting them runs (a dataset's cache):
    # the module's own code need not show ranks, but the save is still there (a writer's call,
    # or a call of another module's function that may save, which `leave_Module` reports)
    screened_by = frozenset((ProjectFact.RUN_BY_RANKS,))
    needs_ranks = True
    # One process writes its file alone: the clash needs a second rank writing beside it.
    needs_peers = True
    name = "save-on-every-rank"
    frameworks = (Framework.DDP, Framework.ACCELERATE, Framework.LIGHTNING, Framework.FABRIC)
    message = _MESSAGE.format("if dist.get_rank() == 0:")
    fix = None
    # `also`: the catalog's distributed evidence for saves (torch_api.SAVE_EVIDENCE). `within`:
    # the report needs code that shows it runs distributed (`leave_Module` returns early
    # without), which a word in a docstring or an import alone is not: on the pip corpus half
    # the files with a save and that text had none.
    trigger = CallTrigger(
        TORCH_SAVE | SAFETENSORS_SAVE | TORCHAUDIO_SAVE | DOWNLOADING_DATASETS, methods=SAVE_PRETRAINED.last_names,
        within=SAVE_EVIDENCE_CODE, also=(SAVE_EVIDENCE,),
    )
    project_screen = WriterOrHelperCalls(replace(trigger.screen, within=None))

    flagged_examples = (
        Flagged(
            # A count is the same on every rank, whatever loader it counts.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def train(model, data):
                dist.init_process_group("nccl")
                loader = DataLoader(data, sampler=DistributedSampler(data))
                for i in range(len(loader)):
                    torch.save(model.state_dict(), f"part_{i}.pt")
                    ^
            """
        ),
        Flagged(
            # The step enumerate counts is the same on every rank: one file for all of them.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def train(model, data):
                dist.init_process_group("nccl")
                batches = enumerate(DataLoader(data, sampler=DistributedSampler(data)))
                for step, (x, names) in batches:
                    torch.save(model.state_dict(), f"step_{step}.pt")
                    ^
            """
        ),
        Flagged(
            # One call hands save_model a name every rank shares.
            """
            import torch
            import torch.distributed as dist

            class Trainer:
                def fit(self, epochs):
                    dist.init_process_group("nccl")
                    for epoch in range(epochs):
                        self.save_model(f"last_{self.args.rank}.pth")
                    self.save_model("final.pth")

                def save_model(self, filename):
                    path = self.out / filename
                    torch.save(self.model.state_dict(), path)
                    ^
            """
        ),
        Flagged(
            # No DistributedSampler: every rank iterates all the data and writes every file.
            """
            import os
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader

            def dump(model, data, out):
                dist.init_process_group("nccl")
                for x, names in DataLoader(data, batch_size=8):
                    for j in range(len(names)):
                        torch.save(model(x)[j], os.path.join(out, names[j] + ".pt"))
                        ^
            """
        ),
        Flagged(
            # A DDP model is no DataParallel: every rank takes the `else:` and saves.
            """
            import torch
            import torch.distributed as dist

            def save_model(model, path):
                dist.barrier()
                if isinstance(model, torch.nn.DataParallel):
                    torch.save(model.module.state_dict(), path)
                else:
                    torch.save(model.state_dict(), path)
                    ^
            """
        ),
        Flagged(
            # The tuple admits a DDP model: every rank takes the branch.
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            def save_model(model, path):
                dist.barrier()
                if isinstance(model, (torch.nn.DataParallel, DDP)):
                    torch.save(model.module.state_dict(), path)
                    ^
            """
        ),
        Flagged(
            # The process group starts whatever `args.multi_gpu` says: the flag may be off
            # in a distributed run, and then every rank saves.
            """
            import torch
            import torch.distributed as dist

            def train(model, args):
                dist.init_process_group("nccl")
                if dist.get_rank() == 0 or not args.multi_gpu:
                    torch.save(model.state_dict(), "best.pt")
                    ^
            """
        ),
        Flagged(
            # The base class also sets the flag from the configuration: any rank may save.
            """
            import torch
            import torch.distributed as dist

            class BaseTrainer:
                def __init__(self, config):
                    self._primary = dist.get_rank() == 0
                    if config.save_everywhere:
                        self._primary = config.save

            class Trainer(BaseTrainer):
                def fit(self, model):
                    dist.barrier()
                    if self._primary:
                        torch.save(model.state_dict(), "last.pt")
                        ^
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def train(model, epochs):
                dist.init_process_group("nccl")
                for epoch in range(epochs):
                    step(model)
                    torch.save(model.state_dict(), "checkpoint.pt")
                    ^
            """
        ),
        Flagged(
            """
            import os
            from torch import save
            from torch.nn.parallel import DistributedDataParallel as DDP

            local_rank = int(os.environ["LOCAL_RANK"])
            model = DDP(build(), device_ids=[local_rank])
            train(model)
            save(model.module.state_dict(), "final.pt")
            ^
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def save_checkpoint(model, path):
                torch.save(model.state_dict(), path)
                ^

            def main(rank):
                model = setup(rank)
                if rank == 0:
                    save_checkpoint(model, "best.pt")
                dist.barrier()
                save_checkpoint(model, "last.pt")
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            def train(model, args):
                dist.init_process_group("nccl")
                save = dist.get_rank() == 0
                if args.save_every_rank:
                    save = True
                if save:
                    torch.save(model.state_dict(), "checkpoint.pt")
                    ^
            """
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist

            class Trainer:
                def save(self):
                    torch.save(self.model.state_dict(), self.path)
                    ^

                def fit(self):
                    if dist.get_rank() == 0:
                        print("start")
                    for epoch in range(3):
                        self.save()
            """
        ),
        Flagged(
            # A TrainerControl's `should_save` says when to save, not which process: every rank
            # sees it set.
            """
            import torch
            import torch.distributed as dist

            class Trainer:
                def step_end(self, model):
                    dist.barrier()
                    if self.control.should_save:
                        torch.save(model.state_dict(), "checkpoint.pt")
                        ^
            """
        ),
        Flagged(
            # A predicate named without a call is always true; a helper named like a guard
            # whose body tests no rank is no guard.
            """
            import torch
            import torch.distributed as dist
            from utils import is_main_process

            def is_master(args):
                return args.save_checkpoints

            def train(model, args):
                dist.init_process_group("nccl")
                if is_main_process:
                    torch.save(model.state_dict(), "checkpoint.pt")
                    ^
                if is_master(args):
                    torch.save(model.state_dict(), "last.pt")
                    ^
            """,
            messages=(
                (
                    "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                    "rank 0 only (if dist.get_rank() == 0:); `is_main_process` is not called, so the test is always "
                    "true"
                ),
                (
                    "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                    "rank 0 only (if dist.get_rank() == 0:)"
                ),
            ),
        ),
        Flagged(
            # Fabric starts the ranks; the script never names DDP.
            """
            import lightning as L
            import torch

            def main():
                fabric = L.Fabric(accelerator="cuda", devices=4, strategy="ddp")
                fabric.launch()
                model, optimizer = fabric.setup(build(), make_optimizer())
                train(fabric, model, optimizer)
                torch.save(model.state_dict(), "final.pt")
                ^
            """,
            messages=(
                "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                "rank 0 only (if fabric.is_global_zero:)"
            ),
        ),
        Flagged(
            # The Trainer runs a LightningModule's hooks on every rank.
            """
            import pytorch_lightning as pl
            import torch

            class Classifier(pl.LightningModule):
                def on_validation_epoch_end(self):
                    torch.save(self.state_dict(), "best.pt")
                    ^
            """,
            messages=(
                "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                "rank 0 only (if self.trainer.is_global_zero: or @rank_zero_only)"
            ),
        ),
        Flagged(
            # A subclass of a LightningModule is one too: the Trainer runs its hooks on every rank
            # (a LightningCLI in subclass mode runs whichever subclass --model names).
            """
            import lightning as L

            class ControlNetModule(L.LightningModule):
                def on_save_checkpoint(self, checkpoint):
                    if self.trainer.is_global_zero:
                        self.controlnet.save_pretrained(f"controlnet/step_{self.global_step}")

            class ControlNetFTModule(ControlNetModule):
                def on_save_checkpoint(self, checkpoint):
                    self.transformer.save_pretrained(f"transformer/step_{self.global_step}")
                    ^
            """,
            messages=(
                "save_pretrained runs on every rank and all of them write the same files, which corrupts them; "
                "save on rank 0 only (if self.trainer.is_global_zero: or @rank_zero_only) or pass is_main_process="
            ),
        ),
        Flagged(
            # Model parallelism: the file's name tells apart the pipeline stages only, and a
            # pipeline-stage test is no rank-0 test: every data-parallel replica writes.
            """
            import os
            import torch
            import torch.distributed as dist
            from megatron import mpu

            def convert(state, hf_model, out):
                dist.barrier()
                path = os.path.join(out, f"model_pp{mpu.get_pipeline_model_parallel_rank()}.pt")
                torch.save(state, path)
                ^
                if mpu.is_pipeline_last_stage():
                    hf_model.save_pretrained(os.path.join(out, "release"))
                    ^
            """,
            messages=(
                "torch.save runs on every data-parallel rank and its file's name tells apart only model-parallel "
                "ranks, so every replica writes the same file, which corrupts it; save on the first replica only "
                "(if mpu.get_data_parallel_rank() == 0:)",
                "save_pretrained runs on every rank and all of them write the same files, which corrupts them; save "
                "on rank 0 only (if dist.get_rank() == 0:) or pass is_main_process=",
            ),
        ),
        Flagged(
            # A project subclass of a torchvision dataset that hands `download` (or its
            # **kwargs) to the base's __init__ downloads like it; one that keeps it does not.
            """
            import torch.distributed as dist
            from torchvision import datasets

            class Noisy(datasets.CIFAR100):
                def __init__(self, root, train=True, download=False, noisy=False):
                    self.noisy = noisy
                    super(Noisy, self).__init__(root, train=train, download=download)

            class Loose(Noisy):
                def __init__(self, root, **kwargs):
                    super().__init__(root, **kwargs)

            class Offline(datasets.MNIST):
                def __init__(self, root, download=True):
                    super().__init__(root, download=False)

            def main(model, args):
                dist.init_process_group("nccl")
                train_set = Loose(args.data, train=True, download=True)
                            ^
                offline = Offline(args.data, download=True)
                test_set = datasets.MNIST(args.data, train=False)
                fit(model, train_set, offline, test_set)
            """,
            messages=(
                "Loose(download=True) runs on every rank and all of them download into the same folder at once, "
                "which corrupts its files; download on rank 0 first (if dist.get_rank() == 0:), then build it on the "
                "other ranks after a barrier",
            ),
        ),
        Flagged(
            # Other writers: Hugging Face's save_pretrained of a model, safetensors, a dataset
            # downloading into one folder.
            """
            import torch.distributed as dist
            from diffusers import StableDiffusionPipeline
            from safetensors.torch import save_file
            from torchvision import datasets

            def main(model, args):
                dist.init_process_group("nccl")
                train_set = datasets.CIFAR10(args.data, train=True, download=True)
                            ^
                fit(model, train_set)
                model.save_pretrained(args.output_dir)
                ^
                save_file(model.state_dict(), "model.safetensors")
                ^
                StableDiffusionPipeline.save_lora_weights(args.lora_dir, unet_lora_layers=lora_layers(model))
                ^
            """,
            messages=(
                "CIFAR10(download=True) runs on every rank and all of them download into the same folder at once, "
                "which corrupts its files; download on rank 0 first (if dist.get_rank() == 0:), then build it on the "
                "other ranks after a barrier",
                "save_pretrained runs on every rank and all of them write the same files, which corrupts them; save "
                "on rank 0 only (if dist.get_rank() == 0:) or pass is_main_process=",
                "save_file runs on every rank and all of them write the same files, which corrupts them; save on "
                "rank 0 only (if dist.get_rank() == 0:)",
                "save_lora_weights runs on every rank and all of them write the same files, which corrupts them; save "
                "on rank 0 only (if dist.get_rank() == 0:) or pass is_main_process=",
            ),
        ),
        Flagged(
            # FSDP hands the full state dict to rank 0 alone: the others save an empty one.
            """
            import torch
            import torch.distributed as dist
            from torch.distributed.fsdp import FullStateDictConfig, FullyShardedDataParallel as FSDP, StateDictType

            def save(model, path):
                config = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
                with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, config):
                    state = model.state_dict()
                torch.save(state, path)
                ^

            def main():
                dist.init_process_group("nccl")
                save(FSDP(build()), "model.pt")
            """,
            messages=(
                "torch.save runs on every rank, but only rank 0 receives the full state dict and the others write "
                "an empty one to the same file, which can leave it empty; save on rank 0 only (if dist.get_rank() == 0:)"
            ),
        ),
        Flagged(
            # The safetensors file is written by save_pretrained itself, not by the
            # save_function given: every process writes it.
            """
            from accelerate import Accelerator

            def export(model, args):
                accelerator = Accelerator()
                model = accelerator.prepare(model)
                unwrapped = accelerator.unwrap_model(model)
                unwrapped.save_pretrained(args.out, save_function=accelerator.save, safe_serialization=True)
                ^
            """,
            messages=(
                "save_pretrained runs on every rank and all of them write the same files, which corrupts them; save "
                "on rank 0 only (if accelerator.is_main_process:) or pass is_main_process="
            ),
        ),
        Flagged(
            # Accelerate's save_state runs the hooks registered for it on every process.
            """
            import os
            from accelerate import Accelerator

            def main():
                accelerator = Accelerator()

                def save_model_hook(models, weights, output_dir):
                    for model in models:
                        model.save_pretrained(os.path.join(output_dir, "unet"))
                        ^
                        weights.pop()

                accelerator.register_save_state_pre_hook(save_model_hook)
                train(accelerator)
                accelerator.save_state("checkpoint")
            """,
            messages=(
                "save_pretrained runs on every rank and all of them write the same files, which corrupts them; save "
                "on rank 0 only (if accelerator.is_main_process:) or pass is_main_process="
            ),
        ),
        Flagged(
            # Under DeepSpeed every process calls save_state (each saves its own shards), and
            # each runs the pre-hook, which writes the same file.
            """
            import os

            import torch
            from accelerate import Accelerator, DistributedType

            def main(model, args):
                accelerator = Accelerator()

                def save_model_hook(models, weights, output_dir):
                    for model in models:
                        torch.save(model.state_dict(), os.path.join(output_dir, "model.pth"))
                        ^
                        weights.pop()

                accelerator.register_save_state_pre_hook(save_model_hook)
                for step in range(args.steps):
                    if accelerator.is_main_process or accelerator.distributed_type == DistributedType.DEEPSPEED:
                        accelerator.save_state(f"checkpoint-{step}")
            """,
            messages=(
                "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                "rank 0 only (if accelerator.is_main_process:)"
            ),
        ),
        Flagged(
            # The Hugging Face Trainer fires a callback's events on every process it runs in
            # (here several: the script reads LOCAL_RANK, as torchrun sets it): each rank
            # writes the adapter into the same checkpoint folder.
            """
            import os

            import transformers

            class SaveAdapter(transformers.TrainerCallback):
                def on_save(self, args, state, control, **kwargs):
                    folder = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
                    kwargs["model"].save_pretrained(folder)
                    ^

            def main(trainer_args):
                device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)}
                trainer = transformers.Trainer(args=trainer_args, callbacks=[SaveAdapter()])
                trainer.train()
            """,
            messages=(
                "save_pretrained runs on every rank and all of them write the same files, which corrupts them; "
                "save on rank 0 only (if state.is_world_process_zero:) or pass is_main_process="
            ),
        ),
        Flagged(
            # Lightning's Trainer calls a Callback's hooks on every rank (here four, its DDP
            # strategy), as it does a LightningModule's: each rank writes the EMA weights to the
            # same file.
            """
            import pytorch_lightning as pl
            import torch

            class Detector(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    return self.model(batch).loss

            class EMACallback(pl.Callback):
                def on_train_epoch_end(self, trainer, pl_module):
                    torch.save(trainer.ema.state_dict(), f"{trainer.log_dir}/{trainer.current_epoch}.pth")
                    ^

            def main():
                trainer = pl.Trainer(devices=4, strategy="ddp", callbacks=[EMACallback()])
                trainer.fit(Detector())
            """,
            messages=(
                "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                "rank 0 only (if trainer.is_global_zero:)"
            ),
        ),
        Flagged(
            # Lightning's DDP strategy (here a project subclass of DDPStrategy, in the Trainer's
            # arguments a method returns) runs the script again on every device: past `fit`, every
            # rank runs the rest of main() together and writes the same file.
            """
            import pytorch_lightning as pl
            import torch
            from pytorch_lightning.strategies import DDPStrategy

            class ApexDDPStrategy(DDPStrategy):
                pass

            class Forecaster(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    return self(batch)

                def set_trainer_kwargs(self, **kwargs):
                    ret = dict(accelerator="gpu", strategy=ApexDDPStrategy(find_unused_parameters=False))
                    ret.update(kwargs)
                    return ret

            def main(args):
                model = Forecaster()
                trainer_kwargs = model.set_trainer_kwargs(devices=args.gpus)
                trainer = pl.Trainer(**trainer_kwargs)
                if args.test:
                    trainer.test(model)
                else:
                    trainer.fit(model)
                    torch.save(model.state_dict(), "best.pt")
                    ^
            """,
            messages=(
                "torch.save runs on every rank and all of them write the same file, which corrupts it; save on "
                "rank 0 only (if trainer.is_global_zero:)"
            ),
        ),
        Flagged(
            # A dataset that caches its preprocessing when the file is missing, built by every
            # rank: on a first run every rank tests for the file before any has written it, so
            # all of them build it and write it at once.
            """
            import os

            import torch
            import torch.distributed as dist
            from torch.utils.data import Dataset

            class Tokens(Dataset):
                def __init__(self, cache):
                    if os.path.exists(cache):
                        self.data = torch.load(cache)
                    else:
                        self.data = torch.arange(1024)
                        torch.save(self.data, cache)
                        ^

            def main():
                dist.init_process_group("nccl")
                data = Tokens("tokens.pt")
            """,
            messages=(
                "torch.save runs on every rank (every rank builds a Tokens at example.py:17, from example.py:16) "
                "whenever its file is missing, as every rank finds it on a first run, and all of them write the "
                "same file, which corrupts it; write it on rank 0 only (if dist.get_rank() == 0:), with a barrier "
                "before the other ranks read it"
            ),
        ),
        Flagged(
            # Built in a block rank 0 runs first, but the cache is written whether or not its file
            # is there: the other ranks, let in together once rank 0 has left, all write it again.
            """
            import contextlib
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            @contextlib.contextmanager
            def leader_first(rank):
                if rank != 0:
                    dist.barrier()
                yield
                if rank == 0:
                    dist.barrier()

            class Frames(Dataset):
                def __init__(self, files, rank):
                    self.frames = [torch.load(f) for f in files]
                    torch.save(self.frames, "frames.pt")
                    ^
                    if rank == 0:
                        print(len(self.frames))

            def make_loader(files, rank):
                with leader_first(rank):
                    data = Frames(files, rank)
                return DataLoader(data, sampler=DistributedSampler(data))
            """
        ),
        Flagged(
            # The script's own code builds the trainer and calls its method: every rank saves.
            """
            import torch
            import torch.distributed as dist

            class Trainer:
                def __init__(self, model):
                    self.model = model

                def save(self, path):
                    torch.save(self.model.state_dict(), path)
                    ^

                def fit(self, epochs):
                    for epoch in range(epochs):
                        self.save(f"epoch_{epoch}.pt")

            dist.init_process_group("nccl")
            trainer = Trainer(torch.nn.Linear(2, 2))
            trainer.fit(3)
            """
        ),
        Flagged(
            # Lightning runs the hook on every rank: each writes the same audio file.
            """
            import pytorch_lightning as pl
            import torchaudio

            class Vocoder(pl.LightningModule):
                def validation_step(self, batch, batch_idx):
                    if batch_idx == 0:
                        torchaudio.save(f"val_{self.current_epoch}.wav", self(batch).cpu(), 16000)
                        ^
            """,
            messages=_WRITER_MESSAGE.format("torchaudio.save", "if self.trainer.is_global_zero: or @rank_zero_only"),
        ),
        Flagged(
            # The early return of the other ranks sits under a test that says nothing of a
            # distributed run (`if self.only_best:` may be false in one): every rank may save.
            """
            import torch
            import torch.distributed as dist

            class Evaluator:
                def evaluate(self):
                    if self.only_best:
                        if dist.get_rank() != 0:
                            return {}
                    torch.save(self.predictions, "predictions.pth")
                    ^
            """,
            messages=_MESSAGE.format("if dist.get_rank() == 0:"),
        ),
    )
    clean_examples = (
        Clean(
            # detectron2's COCOEvaluator: the other ranks return under `if self._distributed:`,
            # which holds in every distributed run; its `else:` is a one-process run.
            """
            import torch
            import torch.distributed as dist

            class Evaluator:
                def evaluate(self):
                    if self._distributed:
                        predictions = self._gathered(self._predictions)
                        if dist.get_rank() != 0:
                            return {}
                    else:
                        predictions = self._predictions
                    torch.save(predictions, "predictions.pth")
            """
        ),
        Clean(
            # TAPE's run_train: the save runs only where a predicate nested in the training
            # function is true, and it returns False unless the rank test of a local of that
            # function holds (`is_master`, the enclosing function's, read as a closure).
            """
            import torch
            import torch.distributed as dist

            def run_train(model, local_rank, save_freq, epochs):
                dist.init_process_group("nccl")
                is_master = local_rank in (-1, 0)

                def do_save(epoch):
                    if not is_master:
                        return False
                    return (epoch + 1) % save_freq == 0

                for epoch in range(epochs):
                    if do_save(epoch):
                        torch.save(model.state_dict(), "checkpoint.bin")
            """
        ),
        Clean(
            # The set-up helper returns its rank-0 flag in a dict; the save's one caller reads it.
            """
            import os
            import torch
            from torch.distributed import init_process_group
            from torch.nn.parallel import DistributedDataParallel as DDP

            def setup():
                init_process_group("nccl")
                rank = int(os.environ["RANK"])
                master_process = rank == 0
                return {"master_process": master_process, "device": f"cuda:{rank}"}

            def save_checkpoint(model, path):
                torch.save(model.state_dict(), path)

            def train():
                env = setup()
                model = DDP(torch.nn.Linear(2, 2).to(env["device"]))
                for step in range(100):
                    if step % 10 == 0 and env["master_process"]:
                        save_checkpoint(model, "ckpt.pt")

            train()
            """
        ),
        Clean(
            # Every call names the file after the rank: one file per rank.
            """
            import torch
            import torch.distributed as dist

            class Trainer:
                def fit(self, epochs):
                    dist.init_process_group("nccl")
                    for epoch in range(epochs):
                        self.save_model(f"last_{self.args.rank}.pth")
                    self.save_model(filename=f"final_{self.args.rank}.pth")

                def save_model(self, filename):
                    path = self.out / filename
                    torch.save(self.model.state_dict(), path)
            """
        ),
        Clean(
            # Each rank draws its own samples and names each file after one.
            """
            import os
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def dump(model, data, out):
                dist.init_process_group("nccl")
                loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data, shuffle=False))
                for _, (x, names) in enumerate(loader):
                    for j in range(len(names)):
                        torch.save(model(x)[j], os.path.join(out, names[j] + ".pt"))
            """
        ),
        Clean(
            # Only a DataParallel model (one process) takes the branch; the `else:` is not shown.
            """
            import torch
            import torch.distributed as dist
            from torch.nn import DataParallel

            def save_model(model, path):
                dist.barrier()
                if isinstance(model, DataParallel):
                    torch.save(model.module.state_dict(), path)
            """
        ),
        Clean(
            # torchrun sets RANK in every process it starts: without it the run is one process.
            """
            import os
            import torch
            import torch.distributed as dist

            def train(model, epochs):
                dist.init_process_group("nccl")
                for epoch in range(epochs):
                    if "RANK" not in os.environ or int(os.environ["RANK"]) == 0:
                        torch.save(model.state_dict(), "checkpoint.pth")
            """
        ),
        Clean(
            # The process group starts only under `if use_deepspeed:` (deepspeed.init_distributed),
            # so its `else:` runs in a one-process run alone.
            """
            import os

            class Engine:
                def setup(self):
                    if self.config.use_deepspeed:
                        import deepspeed
                        deepspeed.init_distributed()
                        self.local_rank = int(os.environ["LOCAL_RANK"])

                def finish(self):
                    if self.config.use_deepspeed:
                        if self.local_rank == 0:
                            self.model.module.save_pretrained(self.config.output_dir)
                    else:
                        self.model.save_pretrained(self.config.output_dir)
            """
        ),
        Clean(
            # Accelerate runs every process with an Accelerator: "has one and is not the main
            # process" returns on all but the main process (without one it runs alone).
            """
            import torch
            from accelerate import Accelerator

            class Trainer:
                def __init__(self, model, accelerator=None):
                    self.model, self.accelerator = model, accelerator

                def save_checkpoint(self, path):
                    if self.accelerator is not None and not self.accelerator.is_main_process:
                        return None
                    torch.save(self.accelerator.unwrap_model(self.model).state_dict(), path)

            def main(model):
                accelerator = Accelerator()
                trainer = Trainer(accelerator.prepare(model), accelerator)
                trainer.save_checkpoint("last.pt")
            """
        ),
        Clean(
            # A predicate helper given a parameter that the callers fill with the rank: `device`
            # is the process index mp.spawn passes, handed on untouched, so the save is rank 0's.
            """
            import torch
            import torch.distributed as dist
            import torch.multiprocessing as mp

            def is_main_device(device):
                return device == 0

            def train_one_epoch(model, loader, device, epoch):
                for batch in loader:
                    model(batch.to(device)).sum().backward()
                if is_main_device(device):
                    torch.save(model.module.state_dict(), f"model.{epoch}.bin")

            def run(rank, world_size):
                dist.init_process_group("nccl", rank=rank, world_size=world_size)
                for epoch in range(10):
                    train_one_epoch(model, loader, rank, epoch)

            mp.spawn(run, args=(4,), nprocs=4)
            """
        ),
        Clean(
            # mp.spawn hands the method its process index: `self.gpu = rank` holds the rank, and
            # `if self.gpu == 0:` guards the save it calls.
            """
            import torch
            import torch.distributed as dist
            import torch.multiprocessing as mp

            class Runner:
                def train(self, rank):
                    self.gpu = rank
                    dist.init_process_group("nccl", rank=rank, world_size=2)
                    for step in range(10):
                        if self.gpu == 0:
                            self.save()

                def save(self):
                    torch.save(self.model.state_dict(), "last.pt")

            mp.spawn(Runner().train, nprocs=2)
            """
        ),
        Clean(
            # A callback's save on the main process alone, and one in a script that shows no
            # sign of running as several processes (no launcher, no rank variable): one writer.
            """
            import transformers

            class SaveAdapter(transformers.TrainerCallback):
                def on_train_end(self, args, state, control, **kwargs):
                    if state.is_world_process_zero:
                        kwargs["model"].save_pretrained(args.output_dir)

            class KeepLast(transformers.TrainerCallback):
                def on_save(self, args, state, control, **kwargs):
                    kwargs["model"].save_pretrained(args.output_dir)
            """
        ),
        Clean(
            # Hugging Face's TrainingArguments.should_save is true on process 0 alone (local
            # process 0 with save_on_each_node), read where the Trainer keeps its arguments; its
            # is_world_process_zero() says the same. A Trainer written after Hugging Face's
            # saves from a method that only the guarded call reaches.
            """
            import os
            import torch
            import torch.distributed as dist

            class Trainer:
                def __init__(self, model, args):
                    self.model, self.args = model, args

                def save_model(self, output_dir):
                    dist.barrier()
                    state_dict = self.model.state_dict()
                    if self.args.should_save:
                        self._save(output_dir, state_dict)

                def _save(self, output_dir, state_dict):
                    os.makedirs(output_dir, exist_ok=True)
                    torch.save(state_dict, os.path.join(output_dir, "model.pt"))
                    torch.save(self.args, os.path.join(output_dir, "training_args.bin"))

            def main(model, training_args):
                dist.init_process_group("nccl")
                trainer = Trainer(model, training_args)
                trainer.save_model(training_args.output_dir)
                if trainer.args.should_save:
                    torch.save(model.state_dict(), "final.pt")
                if training_args.should_save:
                    torch.save(model.state_dict(), "last.pt")
                if trainer.is_world_process_zero():
                    torch.save(model.state_dict(), "best.pt")
            """
        ),
        Clean(
            # A Hugging Face Trainer subclass's `_save`: the Trainer's save_model calls it only
            # where args.should_save (process 0), unlike save_model and _save_checkpoint.
            """
            import os
            import torch
            from transformers import Trainer

            class AdapterTrainer(Trainer):
                def _save(self, output_dir=None, state_dict=None):
                    weights = {k: v for k, v in self.model.state_dict().items() if "adapter" in k}
                    torch.save(weights, os.path.join(output_dir, "adapter.bin"))
            """
        ),
        Clean(
            # A rank-0 test through helpers with several branches, and model-parallel guards:
            # data-parallel rank 0 (directly, in a variable, in a compound test another test
            # inside settles, Megatron's is_main_replica) writes one file per model-parallel part.
            """
            import torch
            import torch.distributed as dist
            from megatron import mpu
            from megatron.core.dist_checkpointing.mapping import is_main_replica

            def initialized():
                return dist.is_available() and dist.is_initialized()

            def rank():
                return dist.get_rank() if initialized() else 0

            def should_write():
                if not initialized():
                    return True
                if rank() == 0:
                    return True
                return False

            def save_checkpoint(state, name, args):
                dist.barrier()
                if should_write():
                    torch.save(state, "last.pt")
                if not dist.is_initialized() or mpu.get_data_parallel_rank() == 0 or args.deepspeed:
                    if not args.deepspeed:
                        torch.save(state, name)
                data_parallel_rank = mpu.get_data_parallel_rank()
                if data_parallel_rank == 0:
                    torch.save(state, name + ".optim")
                if is_main_replica(args.replica_id):
                    torch.save(state, name + ".shard")
                torch.save(state, f"{name}_dp{mpu.get_data_parallel_rank()}.pt")
            """
        ),
        Clean(
            # Rank 0 downloads first while the others wait; save_pretrained told who writes; a
            # configuration's, a tokenizer's and a diffusion noise scheduler's small files (a
            # scheduler's save_pretrained writes only its JSON configuration); FSDP's full state
            # dict on rank 0.
            """
            import torch
            import torch.distributed as dist
            from accelerate import Accelerator
            from diffusers import DDPMScheduler
            from torchvision import datasets

            def data(rank, root):
                if rank != 0:
                    dist.barrier()
                train_set = datasets.MNIST(root, download=True)
                if rank == 0:
                    dist.barrier()
                return train_set

            def main(model, tokenizer, args):
                accelerator = Accelerator()
                with accelerator.main_process_first():
                    test_set = datasets.MNIST(args.data, train=False, download=True)
                model.save_pretrained(args.out, is_main_process=accelerator.is_main_process)
                model.config.save_pretrained(args.out)
                tokenizer.save_pretrained(args.out)
                self.scheduler.save_pretrained(args.out)
                DDPMScheduler.from_pretrained(args.base).save_pretrained(args.out)
                if accelerator.is_main_process:
                    torch.save(accelerator.get_state_dict(model), "model.pt")
            """
        ),
        Clean(
            # Accelerate runs a save_state pre-hook inside save_state, in the process that calls
            # it: here rank 0 alone (diffusers' training scripts), directly or through a helper.
            """
            import os

            import torch
            from accelerate import Accelerator

            def checkpoint(accelerator, step):
                accelerator.save_state(f"checkpoint-{step}")

            def main(model, args):
                accelerator = Accelerator()

                def save_model_hook(models, weights, output_dir):
                    trained = {name: p for name, p in models[0].named_parameters() if p.requires_grad}
                    torch.save(trained, os.path.join(output_dir, "model.pth"))
                    weights.pop()

                accelerator.register_save_state_pre_hook(save_model_hook)
                for step in range(args.steps):
                    if accelerator.is_main_process:
                        accelerator.save_state(f"checkpoint-{step}")
                    if step % 1000 == 0 and accelerator.is_main_process:
                        checkpoint(accelerator, step)
            """
        ),
        Clean(
            # The weights go through Accelerate's save, which writes on the main process only;
            # a Hugging Face Trainer has no save_pretrained: the call raises, writing nothing.
            """
            import os

            import transformers
            from accelerate import Accelerator

            def export(model, args):
                accelerator = Accelerator()
                model = accelerator.prepare(model)
                accelerator.wait_for_everyone()
                accelerator.unwrap_model(model).save_pretrained(args.out, save_function=accelerator.save)

            def finetune(model, data, args):
                model.to(int(os.environ["LOCAL_RANK"]))
                trainer = transformers.Trainer(model=model, args=args, train_dataset=data)
                trainer.train()
                trainer.save_pretrained(args.output_dir)
            """
        ),
        Clean(
            # A Fabric for one device is one process; rank-0 regions inside launched code.
            """
            import lightning as L
            import torch
            from lightning.pytorch.utilities import rank_zero_only

            def generate():
                fabric = L.Fabric(devices=1)
                fabric.launch()
                torch.save(sample(fabric), "samples.pt")

            def main():
                fabric = L.Fabric(devices=8, strategy="ddp")
                fabric.launch()
                model = fabric.setup(build())
                if fabric.is_global_zero:
                    torch.save(model.state_dict(), "final.pt")

            class Task(L.LightningModule):
                @rank_zero_only
                def export(self):
                    torch.save(self.state_dict(), "export.pt")

                def on_train_end(self):
                    if self.trainer.is_global_zero:
                        torch.save(self.state_dict(), "last.pt")

                def setup(self, stage):
                    self.queue_path = f"queue{self.trainer.global_rank}.pth"

                def on_train_epoch_end(self):
                    torch.save(self.queue, self.queue_path)
            """
        ),
        Clean(
            # A Lightning Callback's hooks behind a rank-0 test of the Trainer they are given.
            """
            import lightning as L
            import torch
            from lightning.pytorch.utilities import rank_zero_only

            class EMACallback(L.Callback):
                def on_train_epoch_end(self, trainer, pl_module):
                    if trainer.is_global_zero:
                        torch.save(trainer.ema.state_dict(), "ema.pth")

                def on_validation_end(self, trainer, pl_module):
                    if trainer.global_rank == 0:
                        torch.save(trainer.ema.state_dict(), "ema_val.pth")

                @rank_zero_only
                def on_train_end(self, trainer, pl_module):
                    torch.save(trainer.ema.state_dict(), "ema_last.pth")

            class Segmenter(L.LightningModule):
                def validation_step(self, batch, batch_idx):
                    self.log("val_loss", self.model(batch).loss)

            L.Trainer(accelerator="gpu", devices=8, strategy="ddp", callbacks=[EMACallback()]).fit(Segmenter())
            """
        ),
        Clean(
            # Before the Trainer's `fit` (the other ranks re-run it after rank 0), in the other
            # branch of the `if` around a `fit`, behind the Trainer's rank-0 test, and after a
            # `ddp_spawn` Trainer's `fit` (its ranks are spawned for the fit alone).
            """
            import pytorch_lightning as pl
            import torch

            class Net(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    return self(batch)

            def main(args):
                model = Net()
                torch.save(model.state_dict(), "init.pt")
                trainer = pl.Trainer(devices=args.gpus, strategy="ddp")
                if args.resume:
                    trainer.fit(model, ckpt_path="last.ckpt")
                else:
                    torch.save(model.state_dict(), "untrained.pt")
                    trainer.fit(model)

            def finish(model):
                trainer = pl.Trainer(devices=4, strategy="ddp")
                trainer.fit(model)
                if trainer.is_global_zero:
                    torch.save(model.state_dict(), "final.pt")

            def export(model):
                trainer = pl.Trainer(devices=4, strategy="ddp_spawn")
                trainer.fit(model)
                torch.save(model.state_dict(), "spawned.pt")
            """
        ),
        Clean(
            # A guard held in an attribute: one rank-0 test or the other.
            """
            import torch
            from accelerate import Accelerator

            class Trainer:
                def __init__(self, local_disk, use_ema):
                    self.accelerator = Accelerator()
                    self.use_ema = use_ema and self.accelerator.is_main_process
                    self.can_checkpoint = self.accelerator.is_local_main_process if local_disk else self.accelerator.is_main_process

                def save(self, path):
                    if not self.can_checkpoint:
                        return
                    state = {"model": self.model.state_dict()}
                    if self.use_ema:
                        state["ema"] = self.ema.state_dict()
                    torch.save(state, path)
            """
        ),
        Clean(
            # Every Trainer of the file is for one device.
            """
            import pytorch_lightning as pl
            import torch

            class Classifier(pl.LightningModule):
                def on_train_end(self):
                    torch.save(self.state_dict(), "last.pt")

            trainer = pl.Trainer(accelerator="cpu", devices=1)
            trainer.fit(Classifier())
            """
        ),
        Clean(
            # The single-process branch's `master_process = True` is never taken by a rank of
            # a distributed run (formerly flagged).
            """
            import os
            import torch
            import torch.distributed as dist

            ddp = int(os.environ.get("RANK", -1)) != -1
            if ddp:
                dist.init_process_group("nccl")
                master_process = int(os.environ["RANK"]) == 0
            else:
                master_process = True
            model = train()
            if master_process:
                torch.save(model.state_dict(), "ckpt.pt")
            """
        ),
        Clean(
            # A flag that starts False and is set True on rank 0 of a distributed run, or in
            # the single-process branch that no rank of one takes (DeVLBert's `default_gpu`).
            """
            import torch
            import torch.distributed as dist

            def main(args, model):
                if args.local_rank != -1:
                    dist.init_process_group("nccl")
                default_gpu = False
                if args.local_rank != -1:
                    if dist.get_rank() == 0:
                        default_gpu = True
                else:
                    default_gpu = True
                train(model)
                if default_gpu:
                    torch.save(model.state_dict(), "ckpt.pt")
            """
        ),
        Clean(
            # The project's own save_pretrained, which gathers on every rank and says which
            # process writes: every rank must call it.
            """
            import torch
            import torch.distributed as dist

            class Trainer:
                def save_pretrained(self, directory):
                    state = gather_state(self.model)
                    if dist.get_rank() == 0:
                        torch.save(state, f"{directory}/model.bin")

                def fit(self, args):
                    dist.init_process_group("nccl")
                    train(self.model)
                    self.save_pretrained(args.output_dir)
            """
        ),
        Clean(
            # A project's rank-0 decorator and predicate (`rank0_only`).
            """
            import torch
            import torch.distributed as dist
            from utils.ddp import rank0_only

            class Trainer:
                @rank0_only
                def save_checkpoint(self, state):
                    torch.save(state, "ckpt.pth")

                def fit(self, model, args):
                    dist.init_process_group("nccl")
                    if rank0_only():
                        torch.save(model.state_dict(), "latest.pth")
                    self.save_checkpoint(model.state_dict())
            """
        ),
        Clean(
            # The CLI's Trainer runs on the CPU with its default devices: one process.
            """
            import torch
            from lightning.pytorch import LightningModule
            from lightning.pytorch.cli import LightningCLI

            class Model(LightningModule):
                def on_train_end(self):
                    torch.save(self.state_dict(), "last.pt")

            LightningCLI(Model, trainer_defaults={"accelerator": "cpu", "max_epochs": 1})
            """
        ),
        Clean(
            # Lightning runs prepare_data on one process per node and waits for it: the download
            # happens once; setup, on every rank, only reads.
            """
            import lightning as L
            from torchvision import datasets

            class MNISTData(L.LightningDataModule):
                def prepare_data(self):
                    datasets.MNIST(self.root, train=True, download=True)

                def setup(self, stage):
                    self.train_set = datasets.MNIST(self.root, train=True)
            """
        ),
        Clean(
            # The process group starts only when `--mode multi`: `--mode single` is one process.
            """
            import os
            import torch
            import torch.distributed as dist

            def main(args):
                model = build()
                if args.mode == "single":
                    train(model)
                    torch.save(model.state_dict(), "model.pt")
                if args.mode == "multi":
                    dist.init_process_group("nccl")
                    local_rank = int(os.environ["LOCAL_RANK"])
                    train(model.to(local_rank))
                    if local_rank == 0:
                        torch.save(model.state_dict(), "model.pt")
            """
        ),
        Clean(
            # Rank-0 predicates of this module, judged by their definition (formerly flagged).
            """
            import os
            import torch
            import torch.distributed as dist

            def should_save():
                return dist.get_rank() == 0

            def is_leader():
                return not dist.is_initialized() or dist.get_rank() == 0

            def on_rank_zero():
                return int(os.environ["RANK"]) == 0

            def is_main_worker():
                if not dist.is_initialized():
                    return True
                return is_leader()

            class Trainer:
                def is_chief(self):
                    return self.rank == 0

                def fit(self, model):
                    dist.barrier()
                    if self.is_chief():
                        torch.save(model.state_dict(), "chief.pt")

            def train(model):
                dist.init_process_group("nccl")
                if should_save():
                    torch.save(model.state_dict(), "a.pt")
                if is_leader():
                    torch.save(model.state_dict(), "b.pt")
                if on_rank_zero():
                    torch.save(model.state_dict(), "c.pt")
                if is_main_worker():
                    torch.save(model.state_dict(), "d.pt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def train(model, rank):
                dist.init_process_group("nccl")
                verbose = rank == 0
                master = dist.get_rank() == 0
                if verbose:
                    torch.save(model.state_dict(), "a.pt")
                if master and epoch % 10 == 0:
                    torch.save(model.state_dict(), "b.pt")
                if not master:
                    return
                torch.save(model.state_dict(), "c.pt")
            """
        ),
        Clean(
            # The process group starts only when the flag is set: in a distributed run it
            # is, and only rank 0 saves.
            """
            import torch
            import torch.distributed as dist

            def train(model, args):
                rank = 0
                if args.distribution:
                    dist.init_process_group("nccl")
                    rank = dist.get_rank()
                fit(model)
                if rank == 0 or not args.distribution:
                    torch.save(model.state_dict(), "best.pt")

            def finetune(model, single_gpu):
                if not single_gpu:
                    dist.init_process_group("nccl")
                fit(model)
                if single_gpu or dist.get_rank() == 0:
                    torch.save(model.state_dict(), "finetuned.pt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def main(args):
                dist.init_process_group("nccl")
                args.save_logs = args.logs and args.logs.lower() != "none" and is_master(args)
                train(model, args)

            def train(model, args):
                dist.barrier()
                if args.save_logs:
                    torch.save(model.state_dict(), "epoch.pt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            class Trainer:
                def __init__(self, model):
                    self.model = model
                    self.is_main = dist.get_rank() == 0
                    self.should_save = False
                    if args.checkpointing:
                        self.should_save = int(os.environ["RANK"]) == 0

                def fit(self):
                    dist.barrier()
                    if self.is_main:
                        torch.save(self.model.state_dict(), "a.pt")
                    if self.should_save:
                        torch.save(self.model.state_dict(), "b.pt")
            """
        ),
        Clean(
            # Set in a base class (also one in another module of the project), read in a
            # subclass's method, also through a local variable.
            """
            import torch
            import torch.distributed as dist

            class BaseTrainer:
                def __init__(self):
                    self._primary = dist.get_rank() == 0

            class Trainer(BaseTrainer):
                def fit(self, model, best):
                    dist.barrier()
                    if self._primary:
                        torch.save(model.state_dict(), "last.pt")
                    should_save = False
                    if best:
                        should_save = self._primary
                    if should_save:
                        torch.save(model.state_dict(), "best.pt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def train(model, args):
                dist.init_process_group("nccl")
                if dist.get_rank() == 0:
                    torch.save(model.state_dict(), "a.pt")
                if args.local_rank in [-1, 0]:
                    torch.save(model.state_dict(), "b.pt")
                if not args.distributed or args.rank == 0:
                    torch.save(model.state_dict(), "c.pt")
                if is_main_process():
                    torch.save(model.state_dict(), "d.pt")
                if accelerator.is_main_process:
                    torch.save(model.state_dict(), "e.pt")
                if trainer.is_global_zero and epoch % 10 == 0:
                    torch.save(model.state_dict(), "f.pt")
                torch.save(model.state_dict(), f"shard_{dist.get_rank()}.pt")
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def save_checkpoint(model, path):
                torch.save(model.state_dict(), path)

            def main(rank):
                dist.init_process_group("gloo")
                if rank == 0:
                    save_checkpoint(model, "best.pt")
                dist.barrier()
            """
        ),
        Clean(
            """
            import torch
            import torch.distributed as dist

            def finish(model, rank):
                dist.barrier()
                if rank != 0:
                    return
                torch.save(model.state_dict(), "final.pt")

            @rank_zero_only
            def dump(model):
                torch.save(model, "model.pt")
            """
        ),
        Clean(
            """
            import torch

            model = train()
            torch.save(model.state_dict(), "model.pt")
            """
        ),
        Clean(
            """
            import io
            import tempfile
            import torch
            import torch.distributed as dist

            def save_checkpoint(state, filename):
                torch.save(state, filename)

            def payload(obj):
                dist.barrier()
                buffer = io.BytesIO()
                torch.save(obj, buffer)
                with tempfile.NamedTemporaryFile() as tmp:
                    torch.save(obj, tmp.name)
                with open(f"{dist.get_rank()}.pt", "wb") as handle:
                    torch.save(obj, handle)
                return buffer.getvalue()
            """
        ),
        Clean(
            # A name made by os.getpid() or uuid.uuid4() (from the operating system's randomness)
            # is each process's own: no two ranks write the same file.
            """
            import os
            import uuid
            import torch
            import torch.distributed as dist

            def dump_failed_batch(batch, out):
                dist.barrier()
                filename = f"{out}/batch-{uuid.uuid4()}.pt"
                torch.save(batch, filename)
                torch.save(batch, os.path.join(out, f"batch-{os.getpid()}.pt"))
            """
        ),
        Clean(
            # The Trainer calls a LightningModule's hooks on every rank; a method that no hook
            # or other method uses runs only where its own caller runs it (here: nothing).
            """
            import torch
            import pytorch_lightning as pl

            class Model(pl.LightningModule):
                def training_step(self, batch, batch_idx):
                    return batch.sum()

                def export_model(self, path):
                    torch.save(self.state_dict(), path)

            pl.Trainer(devices=4, strategy="ddp").fit(Model())
            """
        ),
        Clean(
            # A flag the module starts its processes under (`if args.multi_gpu: mp.spawn(...)`)
            # is true in every distributed run, so `not args.multi_gpu or rank == 0` (also read
            # as `self.args.multi_gpu`) is a rank-0 test; so are the `else:` of
            # `if cfg.is_use_DDP is True:` and `rank is None or rank == 0`.
            """
            import torch
            import torch.distributed as dist
            import torch.multiprocessing as mp

            class Trainer:
                def __init__(self, model, args):
                    self.model, self.args = model, args

                def save(self):
                    if not self.args.multi_gpu or self.args.rank == 0:
                        torch.save(self.model.state_dict(), "last.pt")
                    if self.args.rank is None or self.args.rank == 0:  # no rank: one process
                        torch.save(self.model.state_dict(), "swa.pt")

            def worker(rank, args, cfg):
                dist.init_process_group("nccl", rank=rank, world_size=2)
                args.rank = rank
                model = torch.nn.Linear(2, 2)
                Trainer(model, args).save()
                if not args.multi_gpu or args.rank == 0:
                    torch.save(model.state_dict(), "best.pt")
                if cfg.is_use_DDP is True:
                    if args.rank == 0:
                        torch.save(model.state_dict(), "ddp.pt")
                else:
                    torch.save(model.state_dict(), "single.pt")

            def main(args, cfg):
                if args.multi_gpu:
                    mp.spawn(worker, nprocs=2, args=(args, cfg))
                else:
                    worker(0, args, cfg)
            """
        ),
        Clean(
            # The dataset that caches is built only in the other branch of the flag whose first
            # branch builds the DistributedSampler: the run of one process.
            """
            from pathlib import Path

            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler, TensorDataset

            class Lengths(Dataset):
                def __init__(self, root):
                    index = Path(root) / "lengths.pt"
                    if not index.is_file():
                        torch.save(torch.randint(8, 64, (1024,)), index)
                    self.lengths = torch.load(index)

            def make_loader(args):
                if args.dist:
                    train_set = TensorDataset(torch.arange(1024))
                    return DataLoader(train_set, sampler=DistributedSampler(train_set))
                else:
                    return DataLoader(Lengths(args.root), shuffle=True)

            def main(args):
                dist.init_process_group("nccl")
                loader = make_loader(args)
            """
        ),
        Clean(
            # The save in the `else` of the flag whose first branch asks the rank (which only a
            # process group can answer) and saves on rank 0: the `else` is the run of one process.
            """
            import torch
            import torch.distributed as dist

            def train(cfg, model, loader, optimizer):
                for epoch in range(cfg.EPOCHS):
                    for batch in loader:
                        optimizer.step()
                    if cfg.DIST_TRAIN:
                        if dist.get_rank() == 0:
                            torch.save(model.state_dict(), "model.pth")
                    else:
                        torch.save(model.state_dict(), "model.pth")

            def main(cfg):
                dist.init_process_group("nccl")
                train(cfg, build(), loader, optimizer)
            """
        ),
        Clean(
            # `self.distributed` switches what only a distributed run does (the DistributedSampler,
            # the barrier), so it is true in every one: `not self.distributed or ...` is no
            # escape for the other ranks, whatever the flag is called.
            """
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            class Runner:
                def __init__(self, model, data, rank, use_dist=True):
                    self.model = model
                    self.use_dist = use_dist
                    self.rank = rank if use_dist else None
                    sampler = None
                    if self.use_dist:
                        sampler = DistributedSampler(data)
                    self.loader = DataLoader(data, sampler=sampler)

                def checkpoint(self, path):
                    if not self.use_dist or self.rank == 0:
                        torch.save(self.model.state_dict(), path)
                    if self.use_dist:
                        dist.barrier()
            """
        ),
        Clean(
            # The dataset is built inside a block that rank 0 runs first while the other ranks wait
            # at a barrier (a context manager of the project: a barrier for the others before its
            # `yield`, one for rank 0 after it), and it writes its cache only where the file is
            # missing: rank 0 writes it, the others find it and load it.
            """
            import contextlib
            import os
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            @contextlib.contextmanager
            def rank_zero_before_others(rank):
                if rank > 0:
                    dist.barrier()
                yield
                if rank == 0:
                    dist.barrier()

            class Tokens(Dataset):
                def __init__(self, root, rank):
                    path = os.path.join(root, "tokens.pt")
                    if os.path.exists(path):
                        self.items = torch.load(path)
                    else:
                        self.items = self.tokenize(root)
                        torch.save(self.items, path)
                    if rank == 0:
                        print(len(self.items))

                def tokenize(self, root):
                    return sorted(os.listdir(root))

            def make_loader(root, rank):
                with rank_zero_before_others(rank):
                    data = Tokens(root, rank)
                return DataLoader(data, sampler=DistributedSampler(data))
            """
        ),
        Clean(
            # The method is called on a local object, and only on rank 0.
            """
            import torch
            import torch.distributed as dist

            class Checkpointer:
                def __init__(self, model):
                    self.model = model

                def save(self, path):
                    model = self.model.module if dist.is_initialized() else self.model
                    torch.save(model.state_dict(), path)

            def main(model):
                dist.init_process_group("nccl")
                checkpointer = Checkpointer(model)
                if dist.get_rank() == 0:
                    checkpointer.save("final.pt")
            """
        ),
        Clean(
            # Only the global zero rank writes the audio file.
            """
            import pytorch_lightning as pl
            import torchaudio

            class Vocoder(pl.LightningModule):
                def validation_step(self, batch, batch_idx):
                    if self.trainer.is_global_zero and batch_idx == 0:
                        torchaudio.save(f"val_{self.current_epoch}.wav", self(batch).cpu(), 16000)
            """
        ),
    )

    analyses = (RankRegions, Launches, WrappedModels)

    def __init__(self, model) -> None:
        super().__init__(model)
        self.ranks = model.get(RankRegions)
        self.launches = model.get(Launches)
        self.wrapped = model.get(WrappedModels)
        self._saves: list[_Save] = []
        self._distributed_frames: set[str | None] = set()
        self._spawned: set[str] = set()
        self._hooks: dict[str, cst.Call] = {}  # functions Accelerate's save_state runs -> where registered
        # (frame, whether only rank 0 gets there) of each `accelerator.save_state(...)`, which runs them
        self._save_states: list[tuple[str | None, bool]] = []
        # frame -> names bound to an in-memory file; to a value that names ranks (with their
        # dimensions, ddplint.analyses.ranks.rank_mentions); to a path built naming ranks
        self._buffers: dict[str | None, set[str]] = {}
        self._per_rank: dict[str | None, dict[str, frozenset[str]]] = {}
        self._rank_paths: dict[str | None, dict[str, frozenset[str]]] = {}
        self._per_rank_attributes: set[tuple[str, str]] = set()  # `self` attributes some method binds per replica
        self._rank_named_parameters: dict[str, set[str]] = {}  # `_rank_named_parameters` of the module
        # frame -> names bound to a DistributedSampler, and to a DataLoader drawing from one (or
        # `enumerate(loader)`, `tqdm(...)` of it): what each rank draws from them is its own shard
        self._samplers: dict[str | None, set[str]] = {}
        self._shards: dict[str | None, dict[str, int]] = {}  # name -> `_shard_depth`
        # calls of other modules' functions outside a rank-0 guard: (call, its function, qualified name)
        self._helper_calls: list[tuple[cst.Call, str | None, str]] = []
        # frame -> names bound to a configuration under which only rank 0 receives a full state
        # dict, and to such a state dict: name -> where it is made
        self._rank_zero_configs: dict[str | None, dict[str, cst.CSTNode]] = {}
        self._rank_zero_states: dict[str | None, dict[str, cst.CSTNode]] = {}
        self._rank_zero_blocks: list[cst.CSTNode] = []  # open `with FSDP.state_dict_type(..., config)` of one
        self._first: list[cst.With] = []  # open `with accelerator.main_process_first():` blocks
        # frame -> names bound to an object whose save_pretrained writes no model's weights
        self._no_weights: dict[str | None, set[str]] = {}
        self._downloaded: set[tuple[str | None, str, str]] = set()  # (frame, dataset, folder's code) fetched
        self._blocks: list[cst.CSTNode] = []  # open blocks; those after a barrier the other ranks wait at:
        self._waiting: set[int] = set()

    def _attribute(self, name: str | None) -> tuple[str, str] | None:
        """(class, attribute) for `self.<attribute>` in a method; None for anything else."""
        frame = self.model.frame
        if name is None or frame.self_class is None or not name.startswith(f"{frame.self_name}."):
            return None
        return frame.self_class.name.value, name.partition(".")[2]

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        name = dotted_name(target)
        if name is None:
            return
        key = self.model.frame.key
        if isinstance(value, cst.Call) and (
            self.model.qualified(value.func) in PRIVATE_FILES or "temp" in (last_name(value) or "").lower()
        ) or self._process_unique(value):
            self._buffers.setdefault(key, set()).add(name)
        samplers, shards, depth = self._samplers.setdefault(key, set()), self._shards.setdefault(key, {}), self._shard_depth(value)
        (samplers.add if self._is_sampler(value) else samplers.discard)(name)
        if depth is None:
            shards.pop(name, None)
        else:
            shards[name] = depth
        no_weights = self._no_weights.setdefault(key, set())
        (no_weights.add if self._writes_no_weights(value) else no_weights.discard)(name)
        per_rank = self._per_rank.setdefault(key, {})
        named = rank_mentions(value, per_rank)
        for table, held in ((self._rank_zero_configs, self._rank_zero_config(value)), (self._rank_zero_states, self._rank_zero_state(value))):
            (table.setdefault(key, {}).__setitem__(name, held) if held is not None else table.get(key, {}).pop(name, None))
        if named:
            if _builds_path(value):
                self._rank_paths.setdefault(key, {})[name] = named
            per_rank[name] = named
            attribute = self._attribute(name)
            if attribute is not None and named & REPLICA_DIMENSIONS:  # `self.path = f"queue{rank}.pth"` in another method
                self._per_rank_attributes.add(attribute)
        else:
            per_rank.pop(name, None)
        for held in ranked_attribute_names(self.model, name, value):  # `cm = ClusterManager(rank=args.rank, ...)`
            per_rank[held] = frozenset({GLOBAL})

    def _process_unique(self, value: cst.BaseExpression) -> bool:
        """Whether `value` builds a path from a value no two processes share (PROCESS_UNIQUE):
        `f"{out}/batch-{uuid.uuid4()}.pt"`, `os.path.join(out, f"{os.getpid()}.pt")`."""
        return _builds_path(value) and any(
            isinstance(node, cst.Call) and self.model.qualified(node.func) in PROCESS_UNIQUE for node in descendants(value)
        )

    def _is_sampler(self, value: cst.BaseExpression) -> bool:
        """`DistributedSampler(...)`, or a name this function bound to one."""
        if isinstance(value, cst.Call):
            return self.model.qualified(value.func) in DISTRIBUTED_SAMPLER
        return isinstance(value, cst.Name) and value.value in self._samplers.get(self.model.frame.key, ())

    def _shard_depth(self, value: cst.BaseExpression) -> int | None:
        """`loader`, `enumerate(loader)`, `tqdm(enumerate(loader), ...)` where the loader draws
        from a DistributedSampler: built here (`DataLoader(data, sampler=DistributedSampler(data))`),
        bound to a name here, or a parameter that every call hands such a loader (the program
        model's Loader); or a dataset of a project class that keeps only its rank's part of the
        data (`keeps_rank_part`), or a loader over one. Each rank iterates its own part of the
        data. The answer is how many `enumerate(...)` wrap it (each puts a count, the same on
        every rank, before what it draws); None for anything else (a builtin but those that hand
        on the elements, `len(loader)` or `zip(...)`: not followed)."""
        key = self.model.frame.key
        project = self.model.project
        held = loader_parameters(project, key) if project is not None else {}
        shards = self._shards.get(key, {})
        pending: list[tuple[cst.BaseExpression, int]] = [(value, 0)]
        while pending:
            expr, depth = pending.pop()
            if isinstance(expr, cst.Name) and expr.value in shards:
                return depth + shards[expr.value]
            if isinstance(expr, cst.Name) and expr.value in held:
                return depth
            if not isinstance(expr, cst.Call):
                continue
            if self.model.qualified(expr.func) in DATALOADER:
                sampler = argument_for(expr, DATALOADER, "sampler")
                if sampler is not None and self._is_sampler(sampler.value):
                    return depth
                dataset = argument_for(expr, DATALOADER, "dataset")
                pending.extend([(dataset.value, depth)] if dataset is not None else [])
                continue
            written = dotted_name(expr.func)
            if written in _BUILTINS and written not in _PASSING_BUILTINS and self.model.qualified(expr.func) is None:
                continue  # `len(loader)`, `range(...)`, `zip(...)`: no element of the data, or not followed
            if project is not None and written is not None and keeps_rank_part(project.program, project.module, key, self._class_name(), written):
                return depth
            inner = depth + (written == "enumerate")
            pending.extend((arg.value, inner) for arg in expr.args if arg.keyword is None and not arg.star)
        return None

    def _class_name(self) -> str | None:
        self_class = self.model.frame.self_class
        return self_class.name.value if self_class is not None else None

    def visit_For(self, node: cst.For) -> None:
        """`for _, (x, y, names) in enumerate(loader):` over a loader drawing from a
        DistributedSampler: what the loop draws is this rank's own samples, so a file named
        after one (`os.path.join(out, names[j], "img.pth")`) differs from rank to rank (only
        the few samples the sampler repeats to even out the ranks come twice). The count
        `enumerate` adds is the same on every rank: `f"step_{i}.pt"` is one file."""
        depth = self._shard_depth(node.iter)
        drawn: cst.BaseExpression | None = node.target
        for _ in range(depth or 0):  # `for step, batch in enumerate(loader)`: the step is no sample's
            elements = drawn.elements if isinstance(drawn, (cst.Tuple, cst.List)) else ()
            drawn = elements[1].value if len(elements) == 2 else None
        if depth is None or drawn is None:
            return
        per_rank = self._per_rank.setdefault(self.model.frame.key, {})
        for target in descendants(drawn):
            if isinstance(target, cst.Name):
                per_rank[target.value] = frozenset({GLOBAL})

    def _rank_zero_config(self, value: cst.BaseExpression) -> cst.CSTNode | None:
        """`FullStateDictConfig(rank0_only=True)`, `StateDictOptions(full_state_dict=True,
        cpu_offload=True)` (a literal True each), or a name bound to one: the call."""
        if isinstance(value, cst.Name):
            return self._rank_zero_configs.get(self.model.frame.key, {}).get(value.value)
        if not isinstance(value, cst.Call):
            return None
        qualified = self.model.qualified(value.func)
        if qualified in FULL_STATE_DICT_CONFIG:
            flags = ("rank0_only",)
        elif qualified in STATE_DICT_OPTIONS:
            flags = ("full_state_dict", "cpu_offload")
        else:
            return None
        api = FULL_STATE_DICT_CONFIG if qualified in FULL_STATE_DICT_CONFIG else STATE_DICT_OPTIONS
        given = [argument_for(value, api, flag) for flag in flags]
        return value if all(arg is not None and _is_true(arg.value) for arg in given) else None

    def _rank_zero_state(self, value: cst.BaseExpression) -> cst.CSTNode | None:
        """Where the state dict `value` holds was made, when only rank 0 receives it: DCP's
        `get_model_state_dict(model, options=...)` given such options, a `.state_dict()` in a
        `with FSDP.state_dict_type(model, ..., config)` block given such a configuration, or a
        name bound to one."""
        if isinstance(value, cst.Name):
            return self._rank_zero_states.get(self.model.frame.key, {}).get(value.value)
        if not isinstance(value, cst.Call):
            return None
        if self.model.qualified(value.func) in GET_STATE_DICT:
            options = argument_for(value, GET_STATE_DICT, "options")
            return self._rank_zero_config(options.value) if options is not None else None
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "state_dict" and self._rank_zero_blocks:
            return self._rank_zero_blocks[-1]
        return None

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if not isinstance(call, cst.Call):
                continue
            name = last_name(call) or ""
            if name.endswith(RANK_ZERO_FIRST):  # `accelerator.main_process_first()`
                self._first.append(node)
            elif name == STATE_DICT_TYPE and len(call.args) >= 3:
                made = self._rank_zero_config(call.args[2].value)
                if made is not None:
                    self._distributed_frames.add(self.model.frame.key)  # FSDP's state dicts are collectives
                    self._rank_zero_blocks.append(made)

    def leave_With(self, original_node: cst.With) -> None:
        for item in original_node.items:
            call = item.item
            if isinstance(call, cst.Call) and last_name(call) == STATE_DICT_TYPE and len(call.args) >= 3:
                if self._rank_zero_config(call.args[2].value) is not None and self._rank_zero_blocks:
                    self._rank_zero_blocks.pop()
        if self._first and self._first[-1] is original_node:
            self._first.pop()

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:  # `with open(rank_path, "wb") as f:`
            self._bind(node.asname.name, node.item)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._blocks.pop()
        self._waiting.discard(id(original_node))

    def visit_Module(self, node: cst.Module) -> None:
        self._blocks.append(node)
        self._rank_named_parameters = _rank_named_parameters(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """A parameter that every call of the function in this module hands a path naming the
        rank (`self.save_model(f"best_{self.args.rank}.pth")`) names the rank too; so does the
        process index that `mp.spawn` hands the function it starts (`def main_worker(gpu, ...)`)."""
        key = self.model.frame.key
        index = self.ranks.facts.process_index(key)
        for name in (*self._rank_named_parameters.get(key, ()), *([index] if index else ())):  # type: ignore[arg-type]
            self._per_rank.setdefault(key, {})[name] = frozenset({GLOBAL})
        if self.model.frame.self_name is not None:  # `self.checkpoint_fpath`, built from the rank in `__init__`
            for name in ranked_attribute_names(self.model, self.model.frame.self_name):
                self._per_rank.setdefault(key, {})[name] = frozenset({GLOBAL})

    def leave_If(self, original_node: cst.If) -> None:
        """`if rank != 0: dist.barrier()`: the other ranks wait there until rank 0 has passed
        the matching barrier, so what follows in the block runs on rank 0 first."""
        if not _calls_barrier(self.model, original_node.body):
            return
        test = classify(original_node.test, self.ranks.facts)
        if test.true_never_zero and not test.true_only_zero and self._blocks:
            self._waiting.add(id(self._blocks[-1]))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if environment_key(node) in RANK_ENVIRONMENT:
            self._distributed_frames.add(self.model.frame.key)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.model.qualified(node.func)
        key = self.model.frame.key
        writer = self._writer(node, qualified)
        if writer is not None:
            if not self.ranks.only_first_replica:
                self._note_save(node, *writer)
            return
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == ACCELERATE_SAVE_STATE:
            self._save_states.append((key, self.ranks.only_first_replica))
        if qualified is None:
            if environment_key(node) in RANK_ENVIRONMENT:
                self._distributed_frames.add(key)
            if last_name(node) == ACCELERATE_SAVE_HOOK and node.args and isinstance(node.args[0].value, cst.Name):
                self._hooks[node.args[0].value.value] = node
            return
        if _is_process_group_api(qualified) or qualified in DDP or qualified in GET_STATE_DICT:
            self._distributed_frames.add(key)
        elif qualified in SPAWN or qualified in START_PROCESSES:
            self._distributed_frames.add(key)
            target = argument_for(node, SPAWN, "fn")
            if target is not None and isinstance(target.value, cst.Name):
                self._spawned.add(target.value.value)
        elif self.model.project is not None and not self.ranks.only_first_replica:
            per_rank = self._per_rank.get(key, {})
            paths = self._rank_paths.get(key, {})
            if not any(  # `save(state, f"ckpt_{rank}.pt")`, or a name bound to one
                paths.get(dotted_name(arg.value) or "", frozenset()) & REPLICA_DIMENSIONS
                or (_builds_path(arg.value) and rank_mentions(arg.value, per_rank) & REPLICA_DIMENSIONS)
                for arg in node.args
            ):
                self._helper_calls.append((node, key, qualified))

    def _writer(self, node: cst.Call, qualified: str | None) -> tuple[str, cst.Arg | None] | None:
        """(how the message names it, the file or folder it writes) for a call that writes a
        model's or a dataset's files; None for any other call."""
        if qualified in TORCH_SAVE:
            return TORCH_SAVE.name, argument_for(node, TORCH_SAVE, "f")
        if qualified in SAFETENSORS_SAVE:
            return qualified.rpartition(".")[2], argument_for(node, SAFETENSORS_SAVE, "filename")  # type: ignore[union-attr]
        if qualified in TORCHAUDIO_SAVE:
            return qualified, argument_for(node, TORCHAUDIO_SAVE, "uri")
        if qualified in DOWNLOADING_DATASETS:
            download = argument_for(node, DOWNLOADING_DATASETS, "download")
            if download is None or not _is_true(download.value):
                return None
            return f"{qualified.rpartition('.')[2]}(download=True)", argument_for(node, DOWNLOADING_DATASETS, "root")  # type: ignore[union-attr]
        written = dotted_name(node.func)
        download = argument_for(node, DOWNLOADING_DATASETS, "download")
        if written and download is not None and _is_true(download.value) and self.model.project is not None:
            if _downloading_subclass(self.model.project, written) is not None:  # a project subclass hands it on
                return f"{written.rpartition('.')[2]}(download=True)", argument_for(node, DOWNLOADING_DATASETS, "root")
        func = node.func
        # a model's method (`model.save_pretrained`), or a library class's (`Pipeline.save_lora_weights`)
        if isinstance(func, cst.Attribute) and func.attr.value in SAVE_PRETRAINED.spellings:
            if argument_for(node, SAVE_PRETRAINED, "is_main_process") is not None or has_star_arguments(node):
                return None  # the caller says which process writes
            if self._saves_through_accelerate(node):
                return None  # the weights go through Accelerate's save, on the main process only
            if self._writes_no_weights(func.value) or dotted_name(func.value) in self._no_weights.get(self.model.frame.key, ()):
                return None  # a configuration's or tokenizer's small files, or no save_pretrained at all
            if self._project_method(func):
                return None  # the project's own method, which says itself who writes (trlx's trainers)
            return func.attr.value, argument_for(node, SAVE_PRETRAINED, "save_directory")
        return None

    def _writes_no_weights(self, value: cst.BaseExpression) -> bool:
        """A tokenizer's or configuration's save_pretrained writes small files, each in one write
        (`_writes_small_files`); a Hugging Face Trainer has none: the call raises, writing nothing."""
        return _writes_small_files(value) or isinstance(value, cst.Call) and self.model.qualified(value.func) in HF_TRAINER

    def _saves_through_accelerate(self, node: cst.Call) -> bool:
        """`save_function=accelerator.save` (an Accelerator built here), and no
        `safe_serialization=True`, which writes the safetensors file without it."""
        function = argument_for(node, SAVE_PRETRAINED, "save_function")
        if function is None or not isinstance(function.value, cst.Attribute) or function.value.attr.value != ACCELERATE_SAVE:
            return False
        safe = argument_for(node, SAVE_PRETRAINED, "safe_serialization")
        return self.wrapped.is_accelerator(function.value.value) and (safe is None or not _is_true(safe.value))

    def _project_method(self, func: cst.Attribute) -> bool:
        """`self.save_pretrained(...)` or `self.model.save_pretrained(...)` reaches a method the
        project defines (on the class, a base, or the class of the object a name or attribute holds)."""
        project, written = self.model.project, dotted_name(func)
        if project is None or written is None:
            return False
        self_class = self.model.frame.self_class
        cls = self_class.name.value if self_class is not None else None
        return project.program.target(project.module, self.model.frame.key, cls, written) is not None

    def _data_parallel_only(self) -> bool:
        """The statement runs only where an `if isinstance(model, nn.DataParallel):` found a
        DataParallel model (not also DDP, `isinstance(m, (DataParallel, DDP))`): the wrapper
        of one process. A DDP model is no DataParallel, so no rank of a DDP job takes the
        branch (SimCLR's `save_model` saves `model.module` there, the DDP model in `else:`)."""
        for _, test, way in self.ranks.conditions:
            func = test.func if isinstance(test, cst.Call) else None
            if not way or not isinstance(func, cst.Name) or func.value != "isinstance" or len(test.args) != 2:  # type: ignore[union-attr]
                continue
            classes = test.args[1].value
            named = [element.value for element in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
            qualified = [self.model.qualified(cls) for cls in named]
            if all(name in DATA_PARALLEL for name in qualified):
                return True
        return False

    def _note_save(self, node: cst.Call, writer: str, destination: cst.Arg | None) -> None:
        key = self.model.frame.key
        if destination is None or self._data_parallel_only():
            return
        named = rank_mentions(destination.value, self._per_rank.get(key, {}))
        if named & REPLICA_DIMENSIONS:
            return  # one file per replica
        name = dotted_name(destination.value)  # `buffer`, `tmp`, `tmp.name`
        if name is not None and name.split(".")[0] in self._buffers.get(key, ()) or self._process_unique(destination.value):
            return
        download = writer.endswith("(download=True)")
        if download and (self._first or any(id(block) in self._waiting for block in self._blocks)):
            return  # rank 0 downloads first, the others find the files
        fetched = (key, writer, _code(destination.value))
        if download and fetched in self._downloaded:
            return  # the same files, which this process's first build of the dataset fetched
        self._downloaded.add(fetched)
        saved = argument_for(node, TORCH_SAVE, "obj") if writer == TORCH_SAVE.name else None
        state = self._rank_zero_state(saved.value) if saved is not None else None
        self._saves.append(
            _Save(
                node, key, writer, self.ranks.uncalled_guard, self._attribute(name), MODEL in named, state, download,
                bool(self.ranks.conditions), next((test for _, test, way in self.ranks.conditions if _when_missing(test, way)), None),
                self.launches.after_start,
            )
        )

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._save_state_on_every_rank():
            self._hooks = {}  # the hooks run where save_state runs: on rank 0 alone
        launched = self.launches.every_rank | set(self._hooks)
        if self.launches.callback_hooks and (self._saves or self._helper_calls) and self.runs_link() is not None:
            launched |= set(self.launches.callback_hooks)  # the Trainer's events, where ranks run the file
        project = self.model.project
        elsewhere = project is not None and project.run_by_ranks
        # a command of the project runs this file with a launcher of several processes: its
        # module code runs on every rank, whatever the file shows
        commanded = project is not None and bool(self._saves or self._helper_calls) and project.launch_line(own=True, written=True) is not None
        started = {save.frame for save in self._saves if save.after_start}
        if not (self._saves or self._helper_calls) or not (self._distributed_frames or launched or elsewhere or commanded or started):
            return
        if project is not None and project.accelerate_by_hand:
            return  # an Accelerate program no document launches: the one process `python` starts writes it
        shows = self._distributed_frames | self.ranks.rank_aware_frames | self._spawned | launched | ({None} if commanded else set())
        paths = _EveryRank(self.ranks, shows, frozenset(self.launches.callback_hooks) & launched)
        # past a Trainer's `fit` that ran the script again on every device, its frame is every rank's
        past_start = _EveryRank(self.ranks, shows | started, frozenset(self.launches.callback_hooks) & launched) if started else paths
        found = {id(save.node): (past_start if save.after_start else paths).path(save.frame) for save in self._saves}
        one_process = self._beside_distributed_branch([save for save in self._saves if save.conditional and found[id(save.node)] is not None])
        one_process |= self._rank_zero_first([(save, found[id(save.node)]) for save in self._saves if found[id(save.node)] is not None])
        for save in self._saves:
            if save.attribute in self._per_rank_attributes:
                continue
            path = found[id(save.node)]
            if path is None and elsewhere and save.frame not in paths.guarded:
                self._report_elsewhere(save)
            elif path is not None and id(save.node) not in one_process:
                # the rank-0 test of the launcher the file uses, where it uses no torch.distributed
                hook = (save.frame or "").rpartition(".")[2] in self._hooks
                guard = self.launches.guard(save.frame, elsewhere=not self._distributed_frames or hook) or self.launches.file_guard
                message = _message(save, guard)
                self.report(save.node, message, chain=self._chain(save.frame, path, save, message))
        for node, frame, qualified in self._helper_calls:
            path = paths.path(frame)
            if path is not None:
                where = saving_helper(self.model.project, qualified)  # type: ignore[arg-type]
                if where is not None:
                    guard = self.launches.guard(frame, elsewhere=not self._distributed_frames) or self.launches.file_guard
                    test = "if dist.get_rank() == 0:" if guard is None else guard
                    message = _HELPER_MESSAGE.format(qualified.rpartition(".")[2], where, test)
                    chain = self._chain(frame, path, None, message, node)
                    self.report(node, message, chain=chain[:-1] + [Link(StepKind.HARM, _harm(message), where)])

    def _save_state_on_every_rank(self) -> bool:
        """Whether every rank may call `accelerator.save_state(...)`, and so run the functions
        registered as its pre-hooks: unless each call of the file is under a rank-0 test, or in a
        function only rank 0 calls (diffusers' `if accelerator.is_main_process:`; not with `or
        accelerator.distributed_type == DistributedType.DEEPSPEED`, under which every rank saves).
        A file that calls it nowhere leaves it to another module: every rank, as before."""
        rank_zero = self.ranks.functions_only_rank_zero_calls(replicas=True)
        return not self._save_states or not all(first or frame in rank_zero for frame, first in self._save_states)

    def _beside_distributed_branch(self, saves: list[_Save]) -> set[int]:
        """The saves (node ids) in the branch of an `if` on a flag whose other branch makes a
        call only a distributed run makes (`distributed_branch_besides`): TransReID's `if
        cfg.MODEL.DIST_TRAIN: if dist.get_rank() == 0: torch.save(...) else: torch.save(...)`,
        whose `else` is the run of one process."""
        project = self.model.project
        if project is None or not saves:
            return set()
        spans = self.model.spans([save.node for save in saves])
        return {
            id(save.node) for save in saves
            if distributed_branch_besides(project.program, project.context, project.module, save.frame, spans[id(save.node)][0][0]) is not None
        }

    def _rank_zero_first(self, found: list) -> set[int]:
        """The saves (node ids) that rank 0 makes first and the other ranks skip: a step of
        their path from code every rank runs (or the save) is in a rank-0-first block
        (`first_served`), and that step or a later one is written only where an `if` found the
        file missing or stale (`cache_gated`). The label cache of YOLOv5's dataset, built in
        `with torch_distributed_zero_first(rank):`, which the other ranks load once rank 0 has
        written it."""
        project = self.model.project
        if project is None or not found:
            return set()
        program, name = project.program, project.module
        spans = self.model.spans([node for save, path in found for node in (save.node, *(site.node for site in path))])
        tree, served = program.tree(name), set()
        for save, path in found:
            steps = [(site.caller, spans[id(site.node)][0][0]) for site in path] + [(save.frame, spans[id(save.node)][0][0])]
            for index, (frame, line) in enumerate(steps):
                after = first_served(project, name, frame, line)
                if after is not None:
                    if any(cache_gated(tree, at, after if later == index else 0) for later, (_, at) in enumerate(steps[index:], index)):
                        served.add(id(save.node))
                    break
        return served

    def _report_elsewhere(self, save: _Save) -> None:
        """A save in a function that other modules run on every rank (`ranks_run`): a dataset
        class's cache that every rank builds, a helper every rank calls under an `if` of its own."""
        project = self.model.project
        record = project.program.function(project.module, save.frame) if save.frame is not None else None
        if record is not None and record.escapes.plain_saves and not save.conditional and not record.method:
            return  # reported where every rank calls it (`saving_helper`; a method is reported here)
        steps = ranks_run(project, save.frame)
        if not steps or self._written_first(save):
            return
        kind, text, place = steps[-1]
        note = f"every rank {text} at {place}, from {steps[0][2]}" if len(steps) > 1 else f"{text} at {place}"
        if save.model_parallel or save.download or save.rank_zero_state is not None:
            message = re.sub(r" runs on every (data-parallel )?rank", rf"\g<0> ({note})", _message(save, None), count=1)
        else:
            message = _on_cache_miss(_ELSEWHERE_MESSAGE.format(save.writer, note), save)
        chain = [Link(kind, f"every rank {text} here" if kind is StepKind.REACHES else text, place) for kind, text, place in steps]
        self.report(save.node, message, chain=[*chain, *_cache_miss_links(save), Link(StepKind.HARM, _harm(message), save.node)])

    def _written_first(self, save: _Save) -> bool:
        """Whether rank 0 writes the save's file before the other ranks, which then find it: the
        save runs in a rank-0-first block, itself or through every call of its function
        (`first_served`), and only where an `if` found the file missing or stale (`cache_gated`),
        at the save or, where the block is among its callers, at each call of its function
        (yolov5_rotation's `cache_labels`, which the dataset's constructor calls only without a
        matching cache, built in `with torch_distributed_zero_first(rank):` by another module)."""
        project = self.model.project
        program, context, module = project.program, project.context, project.module
        spans = self.model.spans([save.node])
        line = spans[id(save.node)][0][0]
        after = first_served(project, module, save.frame, line, ranks=True)
        if after is None:
            return False
        if cache_gated(program.tree(module), line, after):
            return True
        sites = [site for site, _ in _callers(program, context, module, save.frame)] if not after else []
        return bool(sites) and all(cache_gated(program.tree(site.caller), site.line) for site in sites)

    def _chain(self, frame: str | None, path: list[RegionCall], save: _Save | None, message: str, node=None) -> list[Link]:
        """Who runs the save (every rank, from where), how it gets there (the calls outside any
        rank-0 test), where a state dict only rank 0 receives is made, and the harm."""
        name = (frame or "").rpartition(".")[2]
        if name in self._hooks:
            registered = self._hooks[name]
            chain = [Link(StepKind.RUNS, f"accelerator.save_state() runs {name}() on every process: it is registered here", registered)]
        else:
            runs = self.runs_link()
            chain = [runs] if runs is not None else []
            if frame in self.launches.callback_hooks:
                fired = self.launches.fired_by.get(frame, "the Trainer")
                chain.append(Link(StepKind.RUNS, f"{fired} fires {name}() on every process", self.launches.callback_hooks[frame]))
        chain += [Link(StepKind.REACHES, f"every rank calls {site.callee.rpartition('.')[2]}() here, outside a rank-0 test", site.node) for site in path]
        if save is not None and save.rank_zero_state is not None:
            chain.append(Link(StepKind.MADE, "only rank 0 receives this full state dict; the others get an empty one", save.rank_zero_state))
        chain += _cache_miss_links(save) if save is not None else []
        chain.append(Link(StepKind.HARM, _harm(message), save.node if save is not None else node))
        return chain


class _EveryRank:
    """Which frames of a file every rank runs: code that shows it runs distributed (or that a
    launcher runs on every rank) and is reached outside a rank-0 guard (or has no caller here),
    or that is called from such code unguarded. A function a spawn of processes starts is run
    by every process it starts, whoever else calls it (`if launcher == "slurm": worker(None)`
    beside `mp.spawn(worker)`). `path` gives, for a frame, the calls from such code to it
    (outermost first), or None."""

    def __init__(self, ranks: RankRegions, shows: set, framework_called: frozenset = frozenset()) -> None:
        self.shows = shows
        # what a framework calls on every process itself is not rank-0's for a guarded call here
        self.guarded = ranks.functions_only_rank_zero_calls(replicas=True) - framework_called
        self.framework_called = framework_called
        self.started = ranks.started
        self.callers: dict[str, list[RegionCall]] = {}
        for site in ranks.call_sites:
            self.callers.setdefault(site.callee, []).append(site)
        self.memo: dict[str | None, list[RegionCall] | None] = {}

    def path(self, key: str | None) -> list[RegionCall] | None:
        if key is None:
            return [] if None in self.shows else None
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = None  # a cycle proves nothing
        if key in self.guarded:
            return None
        unguarded = [site for site in self.callers.get(key, ()) if not site.first_replica]
        found: list[RegionCall] | None = None
        if key in self.shows:
            entered = key not in self.callers or key in self.framework_called or key in self.started
            found = [] if unguarded or entered else None
        else:
            for site in unguarded:
                outer = self.path(site.caller)
                if outer is not None:
                    found = [*outer, site]
                    break
        self.memo[key] = found
        return found


@dataclass(frozen=True)
class _Save:
    """A write every rank may run: the call, its function, how the message names the writer
    (`torch.save`, `save_pretrained`, `CIFAR10(download=True)`), the rank predicate an enclosing
    `if` names without calling it, the `self` attribute it writes to as (class, name), whether
    its file's name tells only model-parallel ranks apart, where a state dict only rank 0
    receives is made, whether it downloads a dataset, and whether an `if` of its function is
    around it."""

    node: cst.Call
    frame: str | None
    writer: str
    uncalled: str | None
    attribute: tuple[str, str] | None
    model_parallel: bool
    rank_zero_state: cst.CSTNode | None
    download: bool
    conditional: bool
    # the test of an `if` around it that takes this way where the file is missing (`if
    # os.path.exists(cache): load, else: build and save`): a cache, which every rank finds
    # missing on a first run
    cache_miss: cst.BaseExpression | None = None
    # after the `fit` of a Lightning Trainer that runs the script again on every device, in the
    # same frame (ddplint.analyses.launches: Launches.after_start): every rank runs it
    after_start: bool = False


def _message(save: _Save, guard: str | None) -> str:
    test = guard or "if dist.get_rank() == 0:"
    if save.rank_zero_state is not None:
        message = _RANK_ZERO_STATE_MESSAGE.format(test)
    elif save.download:
        message = _DOWNLOAD_MESSAGE.format(save.writer, test)
    elif save.model_parallel:
        message = _MODEL_PARALLEL_MESSAGE.format(save.writer)
    elif save.writer == TORCH_SAVE.name:
        message = _MESSAGE.format(test)
    elif save.writer in SAVE_PRETRAINED.spellings:
        message = _PRETRAINED_MESSAGE.format(save.writer, test)
    else:
        message = _WRITER_MESSAGE.format(save.writer, test)
    message = _on_cache_miss(message, save)
    return f"{message}; `{save.uncalled}` is not called, so the test is always true" if save.uncalled else message


def _on_cache_miss(message: str, save: _Save) -> str:
    """The message, saying for a save made where the file is missing that every rank finds it
    missing on a first run (they all test it before any of them writes it)."""
    return message.replace(" and all of them write", f" {_CACHE_MISS} and all of them write", 1) if save.cache_miss is not None else message


def _cache_miss_links(save: _Save) -> list[Link]:
    """The step where every rank, on a first run, tests for the file before any has written it."""
    if save.cache_miss is None:
        return []
    return [Link(StepKind.REACHES, _CACHE_TEST, save.cache_miss)]


def _when_missing(test: cst.BaseExpression, way: bool) -> bool:
    """Whether code reached where `test` came out `way` may run because a file is missing:
    `os.path.exists(p)` false, `not p.is_file()` true, one such part of an `and`/`or`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _when_missing(test.expression, not way)
    if isinstance(test, cst.BooleanOperation):
        return _when_missing(test.left, way) or _when_missing(test.right, way)
    return not way and isinstance(test, cst.Call) and last_name(test.func) in _EXISTENCE_TESTS


def _writes_small_files(expr: cst.BaseExpression) -> bool:
    """A tokenizer, processor, configuration or diffusers noise scheduler (by the name it is kept
    under, `model.config`, `noise_scheduler`, or the class it is built from,
    `AutoTokenizer.from_pretrained(...)`, `T5Config(...)`, `DDPMScheduler(...)`): its
    save_pretrained writes small files, each in one write (a scheduler's only its JSON
    configuration)."""
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained":
            func = func.value
        name = last_name(func) or ""
        return name.endswith(("Tokenizer", "TokenizerFast", "Config", "Processor", "FeatureExtractor", "Scheduler"))
    receiver = (last_name(expr) or "").lower()
    return any(receiver == small or receiver.endswith(f"_{small}") for small in SMALL_FILE_WRITERS)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _harm(message: str) -> str:
    """What a message of this rule says is wrong: the text before its advice."""
    return message.partition("; ")[0]


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _calls_barrier(model, suite: cst.BaseSuite) -> bool:
    """The block calls a barrier of torch.distributed in its own statements."""
    lines = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
    for line in lines:
        for small in getattr(line, "body", ()) if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ():
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                if COLLECTIVES.get(model.qualified(small.value.func) or "") == "barrier":
                    return True
    return False


# -- questions only this rule asks of the program model -------------------------------------


MAX_FIRST_DEPTH = 4  # callers followed from a save to a rank-0-first block; deeper is unknown


def first_served(view, module: str, key: str | None, line: int, depth: int = 0, ranks: bool = False) -> int | None:
    """Whether line `line` of function `key` of `module` (None: module code) runs on rank 0
    before the other ranks and not at once with them: it lies inside `with <manager>:` of a
    rank-0-first block (`rank_zero_first`; the line its body starts at), or its function is run
    only by calls that do (YOLOv5's dataset built in `with torch_distributed_zero_first(rank):`
    by `create_dataloader`, whose constructor caches its labels: 0), each call of it followed
    (`_callers`: a class's construction for its `__init__`). None where not, or no call is known.
    `ranks`: only the calls that every rank may make count (`_ranks_run` finds a way from the
    code that joins the ranks to them; not YOLOv5's wandb logger's, made on rank 0)."""
    program, context = view.program, view.context
    block = _in_first_block(program, context, module, key, line)
    if block is not None or key is None or depth >= MAX_FIRST_DEPTH:
        return block
    sites = [
        site for site, _ in _callers(program, context, module, key)
        if not ranks or _ranks_run(view, site.caller, site.caller_key, 0, frozenset(), site.line) is not None
        and not context.guarded_at(site.caller, site.caller_key, site.line, replicas=True)
    ]
    if sites and all(first_served(view, site.caller, site.caller_key, site.line, depth + 1, ranks) is not None for site in sites):
        return 0
    return None


def _in_first_block(program, context, module: str, key: str | None, line: int) -> int | None:
    """The first line of the body of a `with` of function `key` of `module` around `line` whose
    manager runs its body on rank 0 first (`rank_zero_first`); None where there is none."""
    scope = program.definition(module, key) if key else program.tree(module)
    record = program.function(module, key) if key else None
    for node in ast.walk(scope) if scope is not None else ():
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.body[0].lineno <= line <= (node.end_lineno or 0):
            for item in node.items:
                called = dotted(item.context_expr.func) if isinstance(item.context_expr, ast.Call) else None
                if called and rank_zero_first(program, context, module, record.cls if record is not None else None, called):
                    return node.body[0].lineno
    return None


def rank_zero_first(program, context, module: str, cls: str | None, called: str) -> bool:
    """Whether `with called(...):` in `module` runs its body on rank 0 first and on the other
    ranks after rank 0 has left it: a project context manager whose other ranks wait at a
    barrier before its `yield` that rank 0 does not reach, and whose rank 0 alone reaches one
    after it (YOLOv5's `torch_distributed_zero_first`: `if local_rank not in [-1, 0]:
    dist.barrier()`, `yield`, `if local_rank == 0: dist.barrier()`), whatever its name; a
    library's by the catalog's names (`accelerator.main_process_first()`)."""
    target = program.resolve(module, called, cls)
    if target is None:
        return program.split(program.qualify(module, called) or called, module) is None and called.endswith(RANK_ZERO_FIRST)
    definition = program.definition(target.module, target.key)
    yields = [node.lineno for node in ast.walk(definition) if isinstance(node, ast.Yield)] if definition is not None else []
    summary = program.summary(target.module)
    record = summary.context.get(target.key) if summary is not None and len(yields) == 1 else None
    barriers = [
        call.line for call in (record.calls if record is not None else ())
        if COLLECTIVES.get(program.qualify(target.module, call.callee) or "") == "barrier"
    ]
    waits = any(
        line < yields[0] and not context.every_rank_at(target.module, target.key, line)
        and not context.guarded_at(target.module, target.key, line) for line in barriers
    )
    return waits and any(line > yields[0] and context.guarded_at(target.module, target.key, line) for line in barriers)


def cache_gated(tree: ast.AST | None, line: int, after: int = 0) -> bool:
    """Whether `line` runs only where an `if` of `tree` found the file it tests missing (the
    `else:` of `if os.path.isfile(cache):`), or found it and a further `if` inside found its
    content stale (`if cache["hash"] != get_hash(files): cache = self.cache_labels(path)`): a
    process that finds the file another has written and that matches loads it, writing nothing.
    Only an `if` from line `after` on counts (one inside a rank-0-first block that starts there)."""
    for node in ast.walk(tree) if tree is not None else ():
        missing = _missing_way(node.test) if isinstance(node, ast.If) and node.lineno >= after else None
        if missing is None:
            continue
        found, absent = (node.orelse, node.body) if missing else (node.body, node.orelse)
        if any(_spans(statement, line) for statement in absent):
            return True
        if any(isinstance(inner, ast.If) and _spans(inner, line) and inner is not node for statement in found for inner in ast.walk(statement)):
            return True
    return False


def _spans(node: ast.AST, line: int) -> bool:
    return node.lineno <= line <= (node.end_lineno or node.lineno)  # type: ignore[attr-defined]


def _missing_way(test: ast.expr) -> bool | None:
    """The way `test` takes where the file it tests for is missing (`os.path.exists(p)`: False,
    `not p.is_file()`: True); None for a test of anything else."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        way = _missing_way(test.operand)
        return None if way is None else not way
    if isinstance(test, ast.Call) and (dotted(test.func) or "").rpartition(".")[2] in _EXISTENCE_TESTS:
        return False
    return None


MAX_HELPER_DEPTH = 3  # save helpers followed through the helpers they call; deeper is unknown


def saving_helper(view, qualified: str | None):
    """Where the function of another project module that `qualified` names (as the view's module
    imports it) calls `torch.save` under no `if`, saying nothing of ranks, itself or through such
    helpers it calls (ddplint.model.files.settle_save): every process that calls it writes the
    file. None otherwise; only modules that may save, by their text and imports, are read."""
    if not qualified:
        return None
    program = view.program
    found = program.split(view.absolute(qualified), view.module)
    if found is None or not found[1] or "." in found[1] or found[0] == view.module:
        return None
    target = program.resolve(found[0], found[1], None) if program.may_save(found[0]) else None
    return _saving(program, target.module, target.key, 0) if target is not None and not target.bound else None


def _saving(program, module: str, key: str, depth: int):
    if depth > MAX_HELPER_DEPTH or not program.may_save(module):
        return None
    record = program.function(module, key)
    for call in record.escapes.plain_saves if record is not None else ():
        if program.values.is_save(module, call.callee):
            return program.place(module, call.line)
        inner = program.resolve(module, call.callee, None)
        where = _saving(program, inner.module, inner.key, depth + 1) if inner is not None and not inner.bound else None
        if where is not None:
            return where
    return None


def _defs_and_calls(statement: cst.FunctionDef | cst.ClassDef) -> tuple[dict[str, list[str]], dict[str, list[cst.Call]]]:
    """(function key -> its parameters, `self` left out; key -> its calls) of a top-level
    function (its calls `name(...)`) or class (its methods, and its calls `self.name(...)`),
    as `_rank_named_parameters` reads them."""
    defs: dict[str, list[str]] = {}
    calls: dict[str, list[cst.Call]] = {}
    if isinstance(statement, cst.FunctionDef):
        defs[statement.name.value] = [p.name.value for p in statement.params.params]
        for node in nodes_under(statement, cst.Call):
            if isinstance(node.func, cst.Name):
                calls.setdefault(node.func.value, []).append(node)
        return defs, calls
    cls = statement.name.value
    for item in statement.body.body:
        if isinstance(item, cst.FunctionDef):
            defs[f"{cls}.{item.name.value}"] = [p.name.value for p in item.params.params][1:]
    for node in nodes_under(statement, cst.Call):
        if isinstance(node.func, cst.Attribute) and dotted_name(node.func.value) == "self":
            calls.setdefault(f"{cls}.{node.func.attr.value}", []).append(node)
    return defs, calls


def _rank_named_parameters(module: cst.Module) -> dict[str, set[str]]:
    """Function key (`name`, `Class.name`) -> its parameters that every call of it in `module`
    (`name(...)` for a function, `self.name(...)` in its class for a method; one call at least)
    passes a path built naming a replica's rank, by position or keyword (music-translation's
    `save_model(filename)`, called only with `f"lastmodel_{self.args.rank}.pth"`)."""
    defs: dict[str, list[str]] = {}  # key -> its parameters, `self` left out
    calls: dict[str, list[cst.Call]] = {}
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            own_defs, own_calls = _defs_and_calls(statement)
            defs.update(own_defs)
            for key, made in own_calls.items():
                calls.setdefault(key, []).extend(made)
    found: dict[str, set[str]] = {}
    for key, params in defs.items():
        made = calls.get(key, [])
        for index, name in enumerate(params):
            passed = [next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
                      if index >= len(call.args) or call.args[index].keyword is not None or call.args[index].star
                      else call.args[index].value for call in made]
            if made and all(
                value is not None and _builds_path(value) and rank_mentions(value) & REPLICA_DIMENSIONS for value in passed
            ):
                found.setdefault(key, set()).add(name)
    return found


def loader_parameters(view, key: str | None) -> dict:
    """The parameters of the view's function `key` that some call hands a DataLoader drawing
    from a DistributedSampler (the program model's Loader): name -> Loader."""
    program = view.program
    return program.held(program.parameters, (view.module, key), Loader) if key else {}


def keeps_rank_part(program, module: str, key: str | None, cls: str | None, written: str) -> bool:
    """Whether calling `written` (in function `key` of `module`) builds an object of a project
    class whose `__init__` keeps only its rank's part of the data: it assigns to `self` a
    subscript indexed by the rank (`self.rows = rows[rank::world_size]`), or the result of a
    project function that returns one (VideoSys's `self.data = split_df_by_rank(self.data)`,
    which returns `df.iloc[rank * chunk:(rank + 1) * chunk]`). Each rank then iterates other rows."""
    target = program.target(module, key, cls, written)
    if target is None or not target.key.endswith(".__init__"):
        return False
    init = program.definition(target.module, target.key)
    if init is None:
        return False
    for node in ast.walk(init):
        if not isinstance(node, ast.Assign) or not any(isinstance(t, ast.Attribute) for t in node.targets):
            continue
        value = node.value
        if isinstance(value, ast.Subscript) and _indexed_by_rank(value, _rank_names(init)):
            return True
        callee = dotted(value.func) if isinstance(value, ast.Call) else None
        inner = program.resolve(target.module, callee, None) if callee is not None else None
        helper = program.definition(inner.module, inner.key) if inner is not None and not inner.bound else None
        if helper is not None and any(
            isinstance(ret, ast.Return) and isinstance(ret.value, ast.Subscript) and _indexed_by_rank(ret.value, _rank_names(helper))
            for ret in ast.walk(helper)
        ):
            return True
    return False


def _rank_names(function: ast.AST) -> set[str]:
    """Locals of `function` bound to the rank: `rank = dist.get_rank()`, `rank, world = ...rank...`."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and _names_rank(node.value, set()):
            names |= {n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _names_rank(expr: ast.AST, ranks: set[str]) -> bool:
    """`expr` reads the rank: a call of `get_rank`, a name in `ranks`, or a name or attribute
    holding "rank" (`args.rank`; as ddplint.analyses.ranks.rank_mentions counts it)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and (node.id in ranks or "rank" in node.id.lower()):
            return True
        if isinstance(node, ast.Attribute) and "rank" in node.attr.lower():
            return True
    return False


def _indexed_by_rank(subscript: ast.Subscript, ranks: set[str]) -> bool:
    """`rows[rank::world]`, `df.iloc[rank * chunk:(rank + 1) * chunk]`: a slice whose bounds read the rank."""
    return isinstance(subscript.slice, ast.Slice) and _names_rank(subscript.slice, ranks)


# The step where ranks start by building an Accelerator: only a launcher starts its processes.
_ACCELERATE_ROOT = "every rank runs this: `accelerate launch` runs the code that builds an Accelerator"

MAX_CALLER_DEPTH = 6  # callers followed from a save to the code that joins the ranks; deeper is unknown


def ranks_run(view, key: str | None) -> list[tuple[StepKind, str, Place]] | None:
    """How every rank comes to run function `key` of the view's module: the code that joins
    the ranks (a function that calls init_process_group or builds an Accelerator, itself or
    through a project function it calls, or a script whose code does), then each call from
    there to `key` outside any rank-0 test (an object's construction for its `__init__`, and
    for the `download`/`process` of a PyTorch Geometric dataset, which its constructor runs; a
    class a module holds, chosen by name at run time, for each of that module's classes), as
    (kind, text, place) steps; None where no such path is found."""
    return _ranks_run(view, view.module, key, 0, frozenset())


def _ranks_run(view, module: str, key: str | None, depth: int, seen: frozenset, line: int | None = None):
    """`ranks_run` for function `key` of `module`, asked through `view` (any module's view of the project)."""
    if (module, key) in seen or depth > MAX_CALLER_DEPTH:
        return None
    program, context = view.program, view.context
    root = _joins_ranks(program, context, module, key, line)
    if root is not None:
        # a script every documented run starts as one process has one rank, whatever it joins
        script = view.seen_from(module)
        one = script.runs_as_one_process(pools=False, accelerator=root[1].startswith(_ACCELERATE_ROOT))
        return None if one or line is not None and _plain_runs_only(script, key, line) else [root]
    for site, how in _callers(program, context, module, key):
        if context.guarded_at(site.caller, site.caller_key, site.line, replicas=True):
            continue
        if distributed_branch_besides(program, context, site.caller, site.caller_key, site.line) is not None:
            continue  # `else:` of `if args.dist:` whose body builds the DistributedSampler: one process
        outer = _ranks_run(view, site.caller, site.caller_key, depth + 1, seen | {(module, key)}, site.line)
        if outer is not None:
            return [*outer, (StepKind.REACHES, how, program.place(site.caller, site.line))]
    return None


def runs_taking(view, key: str | None, line: int) -> list | None:
    """The documented runs of `view`'s module's own file (ProjectView.launches, `own`, with a
    launcher and plain `python`) that may take the way to `line` of function `key` (None: the
    module's own code) through the `if`s around it, each test read with the options that run
    passes (the word written after the option's string, the last one, not a shell variable;
    `store_true` and `store_false` flags by their presence), else the value each has unless passed (its declared
    default). A test of an option not shown (`declared_option`), or that the run passes in a
    way not read, may go either way. None where the file has no documented run."""
    runs = view.runs(own=True)
    if not runs:
        return None
    guards = []
    for guard in view.context.guards_at(view.module, key or "", line):
        try:
            guards.append((ast.parse(guard.test, mode="eval").body, guard.sense))
        except SyntaxError:
            continue

    def passed(command: str):
        def option(name: str) -> object:
            declared = declared_option(view, name)
            if declared is None or declared is UNKNOWN:
                return NOT_SHOWN
            strings, value = declared
            flag = isinstance(value, bool)
            written = [
                found.group(1) for string in strings
                for found in re.finditer(rf"(?<![\w-]){re.escape(string)}(?![\w-])(?:(?:=|[ \t]+)([^\s\\]+))?", command)
            ]
            if not written:
                return NOT_SHOWN if value is None or value is NOT_SHOWN else value
            if flag:
                return not value
            last = (written[-1] or "").strip("'\"")
            # a string option given a literal word, not a shell variable or a placeholder (`$STAGE`, `<stage>`)
            return last if isinstance(value, str) and last and not any(mark in last for mark in "$`{<") else NOT_SHOWN
        return option

    return [run for run in runs if not any(test_value(test, passed(run.command)) is (not sense) for test, sense in guards)]


def _plain_runs_only(view, key: str | None, line: int) -> bool:
    """Whether the documented runs of `view`'s script that may take the way to `line` of
    function `key` (`runs_taking`: by the options each passes) all start it with plain `python`
    (none with a launcher, and one at least takes it: a way no documented run takes is the
    user's to take), and it starts no processes itself: one process runs that code
    (scope-recommendation's `--train_stage SFT_Merge`, run only by `python train.py`). Only for
    a script the project's launch commands run by its name, others with options of their own
    (a script no launch names is `Project.one_process_run`'s to judge)."""
    if not view.launches(own=True):
        return False
    runs = runs_taking(view, key, line)
    return bool(runs) and all(run.launcher == "python" for run in runs) and view.starts_no_processes(pools=False)


def distributed_branch_besides(program, context, module: str, key: str | None, line: int) -> int | None:
    """The line of a call that only a distributed run can make (a DistributedSampler built, a
    model wrapped in DistributedDataParallel, the process group started) in the other branch
    of an `if` on a flag around `line` of function `key` of `module`, where the branch of `line`
    makes none (`if args.dist: ... DistributedSampler(train_set) ... else: train_set =
    COCOSegmentation(...)`; an early `return` leaves the rest of the block to the other way):
    the flag tells the distributed run from the run of one process, so `line` is not shown to
    run on every rank. None where there is none."""
    summary = program.summary(module)
    record = summary.context.get(key or "") if summary is not None else None
    guards = context.guards_around(module, key)
    for index, guard in enumerate(guards if record is not None else ()):
        if not guard.first <= line <= guard.last or not _is_flag(guard.test):
            continue
        other = _other_branch(guards, index)
        if other is not None and _distributed_call(program, module, record.calls, guard) is None:
            found = _distributed_call(program, module, record.calls, other)
            if found is not None:
                return found
    return None


def _distributed_call(program, module: str, calls, guard) -> int | None:
    """The line of the first of `calls` in the lines of `guard` that only a distributed run makes
    (without a process group, `dist.get_rank()` and the collectives raise)."""
    for call in calls:
        if guard.first <= call.line <= guard.last:
            qualified = program.qualify(module, call.callee)
            if qualified in DISTRIBUTED_SAMPLER or qualified in DDP or qualified in GROUP_STARTS or qualified in GET_RANK or qualified in COLLECTIVES:
                return call.line
    return None


def _is_flag(test: str) -> bool:
    """Whether an `if` test (its source text) is a flag: a name or attribute, or its negation
    (`args.dist`, `not distributed`), not a comparison (`args.dataset == "coco"`)."""
    try:
        expr = cst.parse_expression(test)
    except cst.ParserSyntaxError:
        return False
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        expr = expr.expression
    return isinstance(expr, (cst.Name, cst.Attribute))


def _other_branch(guards: tuple, index: int):
    """The guard of the other branch of the `if` whose branch `guards[index]` is: the program
    model writes an `if`'s guards one after the other, its body's (true) first."""
    guard = guards[index]
    partner = index + 1 if guard.sense else index - 1
    other = guards[partner] if 0 <= partner < len(guards) else None
    if other is None or other.test != guard.test or other.sense == guard.sense:
        return None
    body, rest = (guard, other) if guard.sense else (other, guard)
    return other if body.last < rest.first else None


def _joins_ranks(program, context, module: str, key: str | None, line: int | None = None):
    """The RUNS step where function `key` (None: the module's own code) joins the ranks, itself
    or through a project function it calls, for its code at `line` (None: any): not in the
    other branch of an `if` from `line` (`if stage == 'train': trainer = Trainer(args)` /
    `elif stage == 'merge': ... trainer.merge()` builds its own); None where it does not."""
    record = program.function(module, key) if key is not None else program.module_code(module)
    if record is None:
        return None
    guards = context.guards_around(module, key)
    groups = [group for group in record.process_groups if line is None or not _exclusive(guards, group.line, line)]
    if groups:
        return StepKind.RUNS, "every rank runs this: it joins the process group here", program.place(module, groups[0].line)
    summary = program.summary(module)
    calls = summary.context.get(key or "") if summary is not None else None
    cls = record.cls if key is not None else None
    for call in calls.calls if calls is not None else ():
        if line is not None and _exclusive(guards, call.line, line):
            continue
        if call.callee.rpartition(".")[2] in ACCELERATOR.last_names:
            return StepKind.RUNS, _ACCELERATE_ROOT, program.place(module, call.line)
        target = program.resolve(module, call.callee, cls)
        inner = program.function(target.module, target.key) if target is not None else None
        if inner is not None and inner.process_groups:
            where = program.place(target.module, inner.process_groups[0].line)
            text = f"every rank runs this: it joins the process group through {call.callee}() ({where})"
            return StepKind.RUNS, text, program.place(module, call.line)
        built = _builds_accelerator(program, target) if target is not None else None
        if built is not None:  # `trainer = SFTTrainer(args)`, whose constructor builds the Accelerator
            text = f"{_ACCELERATE_ROOT} through {call.callee}() ({built})"
            return StepKind.RUNS, text, program.place(module, call.line)
    return None


def _exclusive(guards: tuple, one: int, other: int) -> bool:
    """Whether lines `one` and `other` are in the two branches of one `if`: no run gets to both."""
    for index, guard in enumerate(guards):
        partner = _other_branch(guards, index)
        if partner is not None and guard.first <= one <= guard.last and partner.first <= other <= partner.last:
            return True
    return False


def _builds_accelerator(program, target) -> Place | None:
    """Where the project function `target` builds an Accelerator itself; None where it does not."""
    summary = program.summary(target.module)
    calls = summary.context.get(target.key) if summary is not None else None
    built = next((call for call in calls.calls if call.callee.rpartition(".")[2] in ACCELERATOR.last_names), None) if calls is not None else None
    return program.place(target.module, built.line) if built is not None else None


def _callers(program, context, module: str, key: str | None):
    """(call site, what the call does) for each call that runs function `key` of `module`."""
    if key is None:
        return
    cls, _, method = key.rpartition(".")
    if cls and (method == "__init__" or method in BUILD_TIME_METHODS and _derives(program, module, cls, BUILD_TIME_DATASETS)):
        for site, built in _constructions(program, context, module, cls):
            yield site, f"builds a {built}" if method == "__init__" else f"builds a {built}, whose constructor runs {method}()"
        return
    for site in context.call_sites(module, key) or ():
        yield site, f"calls {method or key}()"


def _ancestors(program, module: str, cls: str):
    """The project classes `cls` of `module` derives from, itself first, as (module, class), and
    the qualified names of its other bases, as (None, name)."""
    pending, seen = [(module, cls)], set()
    while pending and len(seen) <= 16:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        yield current
        summary = program.summary(current[0]) if current[0] is not None else None
        record = summary.classes.get(current[1]) if summary is not None else None
        for base in record.bases if record is not None else ():
            found = program.class_of(current[0], base)
            pending.append(found if found is not None else (None, program.qualify(current[0], base) or base))


def _derives(program, module: str, cls: str, bases) -> bool:
    """Whether project class `cls` of `module` derives from one of `bases` (catalog spellings)."""
    return any(owner is None and name in bases for owner, name in _ancestors(program, module, cls))


def _constructions(program, context, module: str, cls: str):
    """(call site, the class built) for each construction of `cls` or a project subclass of it:
    `JointDataset(...)`, also where packages re-export it (`from pkg import GLUETaskDataset`
    in a script, `pkg/__init__.py` importing it from `pkg/data/__init__.py`, which imports it
    from its module: ddplint.model.context.Context.possible_callers), and a class `module`
    holds chosen by name (`getattr(datasets, name)(...)`)."""
    for caller in context.possible_callers(module):
        summary = program.summary(caller)
        for caller_key, record in (summary.context.items() if summary is not None else ()):
            for call in record.calls:
                built = _built(program, caller, call.callee, module, cls)
                if built is not None:
                    yield CallSite(caller, caller_key or None, call.line), built


def _built(program, caller: str, callee: str, module: str, cls: str) -> str | None:
    """What the call of `callee` in `caller` builds, where that is `cls` of `module`, a subclass
    of it, or any class of `module` chosen by name; None otherwise."""
    if callee.endswith(".*"):
        qualified = program.qualify(caller, callee[:-2])
        found = program.split(qualified, caller) if qualified else None
        if found is None and qualified == module:
            found = (module, "")
        return f"class of {callee[:-2]} chosen by name" if found is not None and found[0] == module and not found[1] else None
    made = program.class_of(caller, callee)
    return made[1] if made is not None and (module, cls) in _ancestors(program, *made) else None


def _downloading_subclass(project, written: str) -> str | None:
    """The torchvision dataset (qualified) that the project class `written` (as this module
    writes it) derives from, at any depth, when every `__init__` on the way hands its `download`
    argument on to its base's (`super().__init__(root, download=download)`, or its `**kwargs`
    where it names no `download` of its own; a class without one inherits its base's): built
    with `download=True`, it downloads like that base. None for any other class, or an
    `__init__` that keeps it."""
    program = project.program
    found, depth = program.class_of(project.module, written), 0
    if found is None:
        return None
    module, name = found
    while depth <= 8:
        summary = program.summary(module)
        init = program.definition(module, f"{name}.__init__")
        if summary is None or name not in summary.classes or init is not None and not _hands_download(init):
            return None
        nxt = None
        for base in summary.classes[name].bases:
            if program.qualify(module, base) in DOWNLOADING_DATASETS:
                return program.qualify(module, base)
            nxt = nxt or program.class_of(module, base)
        if nxt is None:
            return None
        (module, name), depth = nxt, depth + 1
    return None


def _hands_download(init: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the `__init__` passes its `download` parameter, or its `**kwargs` where it has no
    `download` parameter, to its base's `__init__` (`super().__init__`, `Base.__init__`)."""
    names = {arg.arg for arg in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)}
    star = init.args.kwarg.arg if init.args.kwarg is not None and "download" not in names else None
    for node in ast.walk(init):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr != "__init__":
            continue
        given = [*node.args, *(keyword.value for keyword in node.keywords if keyword.arg in (None, "download"))]
        if any(isinstance(value, ast.Name) and value.id in ({"download"} & names) | {star} for value in given):
            return True
    return False

