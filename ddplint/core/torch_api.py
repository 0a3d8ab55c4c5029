"""Every API ddplint knows: each spelling that reaches it, and its parameter list; and the torch
packages (`qualified in TORCH_NN`), module names and text that ddplint recognises torch code by.

Rules and analyses compare `model.qualified(call.func) in TORCH_LOAD` and read arguments
with `ddplint.semantic.edits.argument_for(call, TORCH_LOAD, "map_location")`, which finds the position
from the signature: no rule spells a torch name or counts argument positions itself.
Signatures are torch 2.x's (`inspect.signature`), keyword-only parameters after the
positional ones. The catalog imports nothing heavy (no libcst), so that the project index
and the flake8 plugin's prefilter read it too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class API:
    """One callable (or class) under all its public spellings."""

    spellings: frozenset[str]
    params: tuple[str, ...] = ()
    # Parameters that can only be passed by keyword.
    keyword_only: tuple[str, ...] = ()

    def __contains__(self, qualified: object) -> bool:
        return qualified in self.spellings

    def __iter__(self):
        return iter(sorted(self.spellings))

    def __or__(self, other: API) -> API:
        return API(self.spellings | other.spellings)

    @property
    def name(self) -> str:
        """The shortest spelling: the public one (`torch.utils.data.DataLoader`)."""
        return min(self.spellings, key=lambda spelling: (len(spelling), spelling))

    @property
    def last_names(self) -> tuple[str, ...]:
        """The names its spellings end in, as text that calls it contains (`create_loader`)."""
        return tuple(sorted({spelling.rpartition(".")[2] for spelling in self.spellings}))

    def position(self, name: str) -> int | None:
        """Where parameter `name` can be passed positionally; None when only by keyword."""
        return self.params.index(name) if name in self.params else None


def api(*spellings: str, params: str = "", keyword_only: str = "") -> API:
    return API(frozenset(spellings), tuple(params.split()), tuple(keyword_only.split()))


@dataclass(frozen=True)
class Package:
    """A module of torch and the names defined under it: `qualified in TORCH_NN` for
    `torch.nn.Linear` (not for `torch.nn` itself)."""

    name: str

    @property
    def prefix(self) -> str:
        return self.name + "."

    def __contains__(self, qualified: object) -> bool:
        return isinstance(qualified, str) and qualified.startswith(self.prefix)


# -- packages -------------------------------------------------------------------------------
TORCH = Package("torch")
TORCH_CUDA = Package("torch.cuda")
TORCH_DISTRIBUTED = Package("torch.distributed")
TORCH_MULTIPROCESSING = Package("torch.multiprocessing")
TORCH_NN = Package("torch.nn")
TORCH_NN_PARALLEL = Package("torch.nn.parallel")
TORCH_NN_UTILS = Package("torch.nn.utils")
# Where the objects live whose state dicts never carry DDP's `module.` prefix: optimizers,
# learning-rate schedulers, gradient scalers (by name prefix, so `torch.optim.lr_scheduler` too).
OPTIMIZER_MODULES = ("torch.optim", "torch.cuda.amp", "torch.amp")


# -- serialization --------------------------------------------------------------------------
TORCH_LOAD = api(
    "torch.load", "torch.serialization.load",
    params="f map_location pickle_module", keyword_only="weights_only mmap",
)
TORCH_SAVE = api(
    "torch.save", "torch.serialization.save",
    params="obj f pickle_module pickle_protocol _use_new_zipfile_serialization _disable_byteorder_record",
)
CONSUME_PREFIX = api("torch.nn.modules.utils.consume_prefix_in_state_dict_if_present", params="state_dict prefix")

# -- data loading ---------------------------------------------------------------------------
DATALOADER = api(
    "torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader",
    params="dataset batch_size shuffle sampler batch_sampler num_workers collate_fn pin_memory "
    "drop_last timeout worker_init_fn multiprocessing_context generator",
    keyword_only="prefetch_factor persistent_workers pin_memory_device in_order",
)
DATASET = api(
    "torch.utils.data.Dataset", "torch.utils.data.IterableDataset", "torch.utils.data.dataset.Dataset",
    "torch.utils.data.dataset.IterableDataset",
)
SAMPLER = api("torch.utils.data.Sampler", "torch.utils.data.sampler.Sampler")
DISTRIBUTED_SAMPLER = api(
    "torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler",
    params="dataset num_replicas rank shuffle seed drop_last",
)
BATCH_SAMPLER = api(
    "torch.utils.data.BatchSampler", "torch.utils.data.sampler.BatchSampler",
    params="sampler batch_size drop_last",
)
# timm's loader builder: with `distributed` it builds the DataLoader over a sampler of its own,
# a shuffling DistributedSampler where `is_training`, else an OrderedDistributedSampler that pads
# like a DistributedSampler with shuffle=False and drop_last=False. Its later parameters moved
# between timm versions: `distributed` is read by keyword only.
LIBRARY_LOADERS = api(
    "timm.data.create_loader", "timm.data.loader.create_loader",
    params="dataset input_size batch_size is_training", keyword_only="distributed",
)
RANDOM_SPLIT = api(
    "torch.utils.data.random_split", "torch.utils.data.dataset.random_split",
    params="dataset lengths generator",
)
MANUAL_SEED = api("torch.manual_seed", "torch.random.manual_seed", params="seed")

# -- processes ------------------------------------------------------------------------------
SET_SHARING_STRATEGY = api("torch.multiprocessing.set_sharing_strategy", params="new_strategy")
SPAWN = api(
    "torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn",
    params="fn args nprocs join daemon start_method",
)
START_PROCESSES = api(
    "torch.multiprocessing.start_processes", "torch.multiprocessing.spawn.start_processes",
    params="fn args nprocs join daemon start_method",
)
PROCESS = api(
    "multiprocessing.Process", "multiprocessing.context.Process", "torch.multiprocessing.Process",
    params="group target name args kwargs", keyword_only="daemon",
)

# -- torch.distributed ----------------------------------------------------------------------
# The modules that define the process group's API: what `torch.distributed` exports lives in
# `torch.distributed.distributed_c10d`, from which code can import it too. Their subpackages
# (`torch.distributed.checkpoint`, ...) are tools built on it.
DISTRIBUTED_MODULES = (TORCH_DISTRIBUTED.name, "torch.distributed.distributed_c10d")
INIT_PROCESS_GROUP = api(
    "torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group",
    params="backend init_method timeout world_size rank store group_name pg_options device_id",
)
GET_RANK = api("torch.distributed.get_rank", "torch.distributed.distributed_c10d.get_rank", params="group")
GET_WORLD_SIZE = api(
    "torch.distributed.get_world_size", "torch.distributed.distributed_c10d.get_world_size", params="group"
)
DDP = api(
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
    params="module device_ids output_device dim broadcast_buffers init_sync process_group bucket_cap_mb "
    "find_unused_parameters check_reduction gradient_as_bucket_view static_graph",
)


def _distributed(*names: str) -> tuple[str, ...]:
    """Each of `names` under each of the DISTRIBUTED_MODULES."""
    return tuple(f"{module}.{name}" for name in names for module in DISTRIBUTED_MODULES)


# Collectives that combine per-rank results into one (a metric, a gathered list).
COMBINING_COLLECTIVES = frozenset(_distributed(
    "all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_object", "all_gather_into_tensor",
    "all_gather_single", "all_gather_coalesced", "gather", "gather_object", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "reduce_scatter_single",
))  # fmt: skip
# Collectives every rank of the group must call, by their name in torch.distributed (torch 2.13's
# all; `tests/test_catalog.py` compares them with the installed torch's).
COLLECTIVE_NAMES = (
    "barrier", "monitored_barrier", "all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_object",
    "all_gather_into_tensor", "all_gather_single", "all_gather_coalesced", "reduce_scatter",
    "reduce_scatter_tensor", "reduce_scatter_single", "broadcast", "broadcast_object_list", "reduce", "gather",
    "gather_object", "scatter", "scatter_object_list", "all_to_all", "all_to_all_single",
)  # fmt: skip
# Functions of torch.distributed's tools that gather a sharded model's or optimizer's state
# from every rank (all-gathers inside): FSDP's full optimizer state dict, the state-dict API of
# torch.distributed.checkpoint. Each spelling to its name.
_FSDP_CLASSES = ("torch.distributed.fsdp.FullyShardedDataParallel",
                 "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel")
STATE_GATHERING = {
    **{f"{cls}.{name}": name for cls in _FSDP_CLASSES
       for name in ("full_optim_state_dict", "optim_state_dict", "sharded_optim_state_dict")},
    **{f"torch.distributed.checkpoint.state_dict.{name}": name
       for name in ("get_model_state_dict", "get_optimizer_state_dict", "get_state_dict")},
}
# The same, each spelling to what it matches on the other ranks: its own name, and any barrier
# for a barrier; and the state gatherers above.
COLLECTIVES = {
    **{spelling: "barrier" if name.endswith("barrier") else name for name in COLLECTIVE_NAMES for spelling in _distributed(name)},
    **STATE_GATHERING,
}
DISTRIBUTED_IS_AVAILABLE = api("torch.distributed.is_available")
# The module `torchrun` runs.
TORCHRUN = "torch.distributed.run"

# Text that names a DDP entry point: a file that has one is evidently distributed (the code or a
# comment next to it says so). Some pitfalls only matter when several ranks run the same code
# (each rank splitting data its own way, each starting cpu_count() workers), and flagging them in
# single-process scripts would be noise: such a rule puts this tuple among its `needles`
# (`needles = ("random_split", DISTRIBUTED_MARKERS)`), and the project index marks a project
# distributed when one of its modules has it. Lightning code names none of the entry points (its
# Trainer starts DDP), but it reads the rank as `global_rank`. Accelerate code names none either:
# `accelerate launch` runs it on every rank, and building the `Accelerator(...)` says so.
# (Lightning's `Fabric(...)` is built with `devices=1` as often.)
DISTRIBUTED_MARKERS = (
    "torch.distributed",
    "from torch import distributed",
    "DistributedDataParallel",
    "init_process_group",
    "DistributedSampler",
    "LOCAL_RANK",
    "global_rank",
    "Accelerator(",
)
# -- launchers that start the ranks themselves: Lightning, Fabric, Accelerate ----------------
# Code written for them never names a DDP entry point (ddplint.analyses.launches): `accelerate
# launch` runs a script that builds an `Accelerator(...)` on every rank; `fabric.launch()` starts
# the ranks of a multi-device Fabric and every rank runs on from there (`fabric.launch(fn)`: every
# rank runs `fn`); Lightning's Trainer runs a LightningModule's hooks on every rank of the devices
# it is given at run time (`Trainer(devices=1)` or on the CPU alone, one process).
ACCELERATOR = api("accelerate.Accelerator", "accelerate.accelerator.Accelerator")
FABRIC = api(
    "lightning.Fabric", "lightning.fabric.Fabric", "lightning.fabric.fabric.Fabric", "lightning_fabric.Fabric",
    "lightning_fabric.fabric.Fabric",
    keyword_only="accelerator strategy devices num_nodes precision plugins callbacks loggers",
)
LIGHTNING_TRAINER = api(
    "pytorch_lightning.Trainer", "pytorch_lightning.trainer.Trainer", "pytorch_lightning.trainer.trainer.Trainer",
    "lightning.Trainer", "lightning.pytorch.Trainer", "lightning.pytorch.trainer.Trainer",
    "lightning.pytorch.trainer.trainer.Trainer",
    keyword_only="accelerator strategy devices num_nodes",
)
LIGHTNING_MODULE = api(
    "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
    "pytorch_lightning.core.module.LightningModule", "pytorch_lightning.core.lightning.LightningModule",
    "lightning.LightningModule", "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
    "lightning.pytorch.core.module.LightningModule",
)
# -- frameworks whose objects communicate across ranks: Accelerate, DeepSpeed, FSDP ----------
# An Accelerator given one of these plugins runs DeepSpeed, FSDP or Megatron-LM instead of DDP:
# what it prepares is no DDP model, and saving or gathering its state is a collective.
ACCELERATOR_SHARDING_PLUGINS = ("deepspeed_plugin", "fsdp_plugin", "megatron_lm_plugin")
DEEPSPEED_INITIALIZE = api(
    "deepspeed.initialize", params="args model optimizer model_parameters training_data lr_scheduler",
)
FSDP = api(*_FSDP_CLASSES, params="module process_group sharding_strategy cpu_offload auto_wrap_policy")
# What each framework object does that every rank must reach, by method name: an Accelerator's
# barrier and gathers ("accelerate"), and, where a DeepSpeed or FSDP plugin shards the state, its
# saves and state gathers ("accelerate sharded": `save_state` calls the DeepSpeed engine's
# `save_checkpoint`, which starts with a barrier); a DeepSpeed engine's checkpointing; an FSDP
# model's `state_dict()` (a full state dict all-gathers the shards).
FRAMEWORK_COLLECTIVES = {
    "accelerate": frozenset({"wait_for_everyone", "gather", "gather_for_metrics", "reduce", "pad_across_processes"}),
    "accelerate sharded": frozenset({"save_state", "get_state_dict", "save_model"}),
    "deepspeed": frozenset({"save_checkpoint", "load_checkpoint"}),
    "fsdp": frozenset({"state_dict"}),
}
FRAMEWORK_METHODS = frozenset().union(*FRAMEWORK_COLLECTIVES.values())
# A DTensor's method that all-gathers its shards (FSDP2 and tensor parallelism): no other
# library's object has it.
DTENSOR_FULL_TENSOR = "full_tensor"
# Text of a module that makes one of these objects: where the program model starts reading.
FRAMEWORK_MAKER_TEXT = ("Accelerator(", "deepspeed.initialize", "FullyShardedDataParallel")
# The Fabric method that starts the ranks, and text every launch point above contains.
FABRIC_LAUNCH = "launch"
# How code written for each launcher runs a block on rank 0 alone: an Accelerator's property,
# a Fabric's and a Lightning Trainer's, and Lightning's decorator (DDP014's advice).
MAIN_PROCESS = "is_main_process"
GLOBAL_ZERO = "is_global_zero"
RANK_ZERO_ONLY = "rank_zero_only"
LAUNCH_POINT_TEXT = ("Accelerator(", f".{FABRIC_LAUNCH}(", "LightningModule")
# The variables a launcher sets to each rank's own index (torchrun, torch.distributed.launch).
RANK_ENVIRONMENT = frozenset({"RANK", "LOCAL_RANK"})
# What a file's own code shows ranks run it by: a call of a name under torch.distributed or of
# one of these (DDP, a spawn of ranks, a distributed sampler), an import of one of
# `DISTRIBUTED_IMPORTS` or of a name under torch.distributed, a read of a RANK_ENVIRONMENT
# variable; and the launch points of Accelerate, Fabric and Lightning (ddplint.analyses.launches).
DISTRIBUTED_CALLS = DDP | SPAWN | START_PROCESSES | DISTRIBUTED_SAMPLER
DISTRIBUTED_IMPORTS = DDP | SPAWN | START_PROCESSES
# The wider variant, for a rule that judges from a file's own code whether ranks run it rather
# than by an entry point (DDP004's evidence): text every file with such evidence contains. The
# module is reached through a name with "distributed" in it (`import torch.distributed as dist`,
# also `args.distributed`), DDP and the sampler are spelt "Distributed...", the launcher's rank
# variables end in "RANK", torch.multiprocessing starts ranks with `spawn`/`start_processes`,
# and the launch points above name themselves. Each marker but `init_process_group` and
# `global_rank` contains one of these words; code reaches torch's `init_process_group` only
# through a name with "distributed" in it.
DISTRIBUTED_EVIDENCE = ("distributed", "Distributed", "spawn", "start_processes", "RANK", *LAUNCH_POINT_TEXT)
# The narrower variant DDP014 (a save on every rank) needs: a file that builds the DDP model, starts
# the process group or its ranks, reads the local rank or is a launch point. Files that only read
# a rank variable or name a distributed sampler are left out (13 more files of the benchmark
# corpora would be parsed for it, with no finding among them).
SAVE_EVIDENCE = ("distributed", "DistributedDataParallel", "init_process_group", "LOCAL_RANK", "spawn", *LAUNCH_POINT_TEXT)

# The launcher that passed `--local_rank` (since PyTorch 2.0 `--local-rank`), as a script or a
# command names it: `python -m torch.distributed.launch`, not torchrun's `torch.distributed.launcher` API.
OLD_LAUNCHER_MODULE = "torch.distributed.launch"
OLD_LAUNCHER = re.compile(re.escape(OLD_LAUNCHER_MODULE) + "(?!er)")
# DeepSpeed's launcher running a script (`deepspeed --num_gpus 8 train.py`): it passes
# `--local_rank=N` with an underscore.
DEEPSPEED_LAUNCHER = re.compile(r"(?<![\w.-])deepspeed[ \t]+(?:[^\n]*?[ \t])?[\w./${}-]*\.py\b")
# Each launcher, by the text a document that runs it contains, to the pattern of its command.
LAUNCHERS = {OLD_LAUNCHER_MODULE: OLD_LAUNCHER, "deepspeed": DEEPSPEED_LAUNCHER}

# Calls that place gathered results by sample id, so that a padded duplicate lands on its
# original's slot instead of being counted again (`np.unique`, `torch.unique`,
# `features.index_copy_(0, index, gathered)`): by method name, whatever the receiver.
DEDUPLICATING_METHODS = frozenset({"unique", "index_copy", "index_copy_"})

# -- modules, devices, autograd -------------------------------------------------------------
NN_MODULE = api("torch.nn.Module", "torch.nn.modules.module.Module")
PARAMETER = api("torch.nn.Parameter", "torch.nn.parameter.Parameter", params="data requires_grad")
# The torch.nn layers (by class name, prefixes of their variants: `Conv2d`, `BatchNorm1d`) that own
# parameters by default. Activations, dropout, pooling and losses hold none.
PARAMETERISED_LAYERS = (
    "Linear", "Bilinear", "LazyLinear", "Conv", "LazyConv", "Embedding", "BatchNorm", "LazyBatchNorm",
    "SyncBatchNorm", "LayerNorm", "GroupNorm", "RMSNorm", "RNN", "LSTM", "GRU", "MultiheadAttention",
    "Transformer", "PReLU", "Sequential", "ModuleList", "ModuleDict",
)  # fmt: skip
# The torch.nn layers (prefixes of their class names) that hold buffers by default: a batch
# norm's running statistics. DDP's forward broadcasts a model's buffers from rank 0 (the
# `broadcast_buffers` default). The containers hold what they are built with.
BUFFERED_LAYERS = ("BatchNorm", "LazyBatchNorm", "SyncBatchNorm")
CONTAINER_LAYERS = ("Sequential", "ModuleList", "ModuleDict")
# Returns the module it is given, with its batch norms replaced: on the device the module was on.
CONVERT_SYNC_BATCHNORM = api(
    "torch.nn.SyncBatchNorm.convert_sync_batchnorm", "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm",
    params="module process_group",
)
# Loss scalers of libraries that run the backward themselves: `loss_scaler(loss, optimizer, ...)`
# (timm.utils.cuda) calls `backward()` on `loss`, then steps `optimizer` unless `need_update` is
# false. The parameters are those of a call of the object (`__call__`), not of the class.
LOSS_SCALERS = api(
    "timm.utils.NativeScaler", "timm.utils.ApexScaler", "timm.utils.cuda.NativeScaler", "timm.utils.cuda.ApexScaler",
    params="loss optimizer clip_grad clip_mode parameters create_graph need_update",
)
LOSS_SCALER_GATE = "need_update"
BACKWARD = api(
    "torch.autograd.backward", params="tensors grad_tensors retain_graph create_graph grad_variables inputs"
)
TORCH_DEVICE = api("torch.device", params="type index")
DEVICE_COUNT = api("torch.cuda.device_count")
# Ways a process picks its GPU.
DEVICE_BINDINGS = api(
    "torch.cuda.set_device", "torch.cuda.device", "torch.accelerator.set_device_index", "torch.cuda.cudart",
    "torch.set_default_device",
)
NO_GRAD = api("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad")
# Calls that initialise the CUDA driver (cuInit), after which CUDA_VISIBLE_DEVICES is never
# read again in this process. torch/cuda/__init__.py: `is_available()` uses
# `cudaGetDeviceCount`, "which in turn initializes the CUDA Driver API via cuInit"; the others
# call `torch.cuda._lazy_init()`. `device_count()` is deliberately absent: it asks NVML first
# and does not cache its answer before CUDA is initialised, so it honours a later change.
CUDA_INITIALISERS = api(
    "torch.cuda.is_available", "torch.cuda.init", "torch.cuda.set_device", "torch.cuda.current_device",
    "torch.cuda.get_device_name", "torch.cuda.get_device_properties", "torch.cuda.get_device_capability",
    "torch.cuda.synchronize", "torch.cuda.mem_get_info", "torch.cuda.Stream", "torch.cuda.Event",
)

# -- the standard library (and psutil) as DDP code meets it ---------------------------------
DEFAULTDICT = api("collections.defaultdict", params="default_factory")
PICKLE_DUMP = api("pickle.dump", "pickle.dumps")
CPU_COUNT = api("os.cpu_count", "os.process_cpu_count", "multiprocessing.cpu_count", "psutil.cpu_count")
SCHED_GETAFFINITY = api("os.sched_getaffinity", params="pid")
# `ddplint doctor` reads a script's timeout, its command-line parser, and whether it falls back
# to the CPU where CUDA is not available (`device = "cuda" if torch.cuda.is_available() else "cpu"`).
CUDA_IS_AVAILABLE = api("torch.cuda.is_available")
TIMEDELTA = api("datetime.timedelta", params="days seconds microseconds milliseconds minutes hours weeks")
ARGUMENT_PARSER = api("argparse.ArgumentParser", keyword_only="parents")
