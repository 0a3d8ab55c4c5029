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
# Objects whose state dict holds Python numbers only: a learning-rate scheduler (`base_lrs`,
# `last_epoch`, ...) and a gradient scaler (`scale`, `_growth_tracker`: floats and ints).
LR_SCHEDULERS = Package("torch.optim.lr_scheduler")
# Hugging Face's learning-rate scheduler factories: each returns a torch LambdaLR, whose state
# dict holds Python numbers.
SCHEDULER_FACTORIES = api(*(
    f"transformers{where}.{name}"
    for where in ("", ".optimization")
    for name in (
        "get_scheduler", "get_constant_schedule", "get_constant_schedule_with_warmup",
        "get_linear_schedule_with_warmup", "get_cosine_schedule_with_warmup",
        "get_cosine_with_hard_restarts_schedule_with_warmup", "get_polynomial_decay_schedule_with_warmup",
        "get_inverse_sqrt_schedule", "get_wsd_schedule", "get_cosine_with_min_lr_schedule_with_warmup",
        "get_reduce_on_plateau_schedule",
    )
))
# torch's reducers that pickle a tensor's storage as a shared-memory handle another process
# opens (`reduce_storage`, `reduce_tensor`, ...): registered on a pickler by hand, they share a
# tensor with unrelated processes, which only the file_system strategy's named files allow.
STORAGE_REDUCTIONS = Package("torch.multiprocessing.reductions")
GRAD_SCALERS = api(
    "torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler",
    "torch.amp.grad_scaler.GradScaler",
)
# apex.amp's loader of its own state: its loss scalers' Python numbers, no tensor.
AMP_STATE_LOADERS = api("apex.amp.load_state_dict", "apex.amp.frontend.load_state_dict")


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
# Other writers of a model's files. safetensors' writers (`save_model` takes the model first);
# Hugging Face's `save_pretrained(save_directory, is_main_process=True, ...)`, a method of models,
# configurations and tokenizers: `is_main_process=` says which process writes; a configuration's or
# a tokenizer's writes small JSON files in one call each, and so does a diffusers noise scheduler's
# (SchedulerMixin.save_pretrained writes only scheduler_config.json; an LR scheduler has no such
# method) (`SMALL_FILE_WRITERS`, by the name the object is kept under). Accelerate calls the hooks registered with
# `register_save_state_pre_hook` from `save_state`, on every process.
SAFETENSORS_SAVE = api(
    "safetensors.torch.save_file", "safetensors.torch.save_model", "safetensors.numpy.save_file",
    params="tensors filename metadata",
)
# torchaudio's writer of an audio file (`torchaudio.save("val_0.wav", wave, sample_rate=sr)`).
TORCHAUDIO_SAVE = api(
    "torchaudio.save",
    params="uri src sample_rate channels_first format encoding bits_per_sample buffer_size backend compression",
)
# diffusers' `save_lora_weights(save_directory, ..., is_main_process=True)` writes the same way.
# `save_function=` writes the weights in its place (transformers before 4.35, or given
# `safe_serialization=False`; the safetensors default bypasses it): Accelerate's
# `accelerator.save` writes on the main process only. A Hugging Face Trainer (`HF_TRAINER`) has
# no `save_pretrained`: the call raises before anything is written.
SAVE_PRETRAINED = api(
    "save_pretrained", "save_lora_weights", params="save_directory",
    keyword_only="is_main_process save_function safe_serialization",
)
ACCELERATE_SAVE = "save"
SMALL_FILE_WRITERS = ("config", "tokenizer", "processor", "feature_extractor", "generation_config", "scheduler")
# A function registered with `accelerator.register_save_state_pre_hook(f)` runs inside each
# `accelerator.save_state(...)`, in the process that calls it.
ACCELERATE_SAVE_HOOK = "register_save_state_pre_hook"
ACCELERATE_SAVE_STATE = "save_state"
# torchvision's datasets that fetch their files with `download=True` into `root`: each process
# that builds one checks the folder and downloads what is missing.
DOWNLOADING_DATASETS = api(
    *(
        f"torchvision.datasets.{name}"
        for name in (
            "MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST", "CIFAR10", "CIFAR100", "SVHN", "STL10", "CelebA",
            "Caltech101", "Caltech256", "Flowers102", "Food101", "OxfordIIITPet", "StanfordCars", "FGVCAircraft",
            "DTD", "GTSRB", "EuroSAT", "Country211", "PCAM", "Omniglot", "SEMEION", "USPS", "VOCSegmentation",
            "VOCDetection", "SBDataset", "Places365", "INaturalist", "LFWPeople", "LFWPairs", "RenderedSST2",
            "SUN397", "Imagenette",
        )
    ),
    params="root", keyword_only="download",
)
# FSDP's and DCP's full state dicts that only rank 0 receives (the other ranks get an empty dict):
# `FullStateDictConfig(rank0_only=True)` given to `FSDP.state_dict_type(model, type, config)`, and
# `get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))`.
FULL_STATE_DICT_CONFIG = api(
    "torch.distributed.fsdp.FullStateDictConfig", "torch.distributed.fsdp.api.FullStateDictConfig",
    params="offload_to_cpu rank0_only",
)
STATE_DICT_OPTIONS = api(
    "torch.distributed.checkpoint.state_dict.StateDictOptions",
    keyword_only="full_state_dict cpu_offload ignore_frozen_params keep_submodule_prefixes strict broadcast_from_rank0",
)
GET_STATE_DICT = api(
    "torch.distributed.checkpoint.state_dict.get_model_state_dict",
    "torch.distributed.checkpoint.state_dict.get_optimizer_state_dict",
    "torch.distributed.checkpoint.state_dict.get_state_dict",
    keyword_only="submodules options",
)
STATE_DICT_TYPE = "state_dict_type"  # FSDP.state_dict_type(module, state_dict_type, state_dict_config, ...)
# PyTorch Geometric's datasets run their subclass's `download()` and `process()` from their
# constructor when the files they look for are missing; `process()` saves the processed ones.
BUILD_TIME_DATASETS = api(
    "torch_geometric.data.InMemoryDataset", "torch_geometric.data.Dataset",
    "torch_geometric.data.in_memory_dataset.InMemoryDataset", "torch_geometric.data.dataset.Dataset",
)
BUILD_TIME_METHODS = ("download", "process")
# Context managers that run their block on rank 0 first and on the other ranks after it (by the
# end of their name): Accelerate's and Transformers' `main_process_first()`,
# `local_main_process_first()`, Fabric's `rank_zero_first()`, YOLO's `torch_distributed_zero_first(rank)`.
RANK_ZERO_FIRST = ("main_process_first", "zero_first")

# -- data loading ---------------------------------------------------------------------------
DATALOADER = api(
    "torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader",
    params="dataset batch_size shuffle sampler batch_sampler num_workers collate_fn pin_memory "
    "drop_last timeout worker_init_fn multiprocessing_context generator",
    keyword_only="prefetch_factor persistent_workers pin_memory_device in_order",
)
# The information of the DataLoader worker process that calls it (None in the main process):
# `.id` is the worker's index k, the same in worker k of every rank's DataLoader.
GET_WORKER_INFO = api("torch.utils.data.get_worker_info", "torch.utils.data._utils.worker.get_worker_info")
WORKER_ID_ATTRIBUTE = "id"
# PyTorch Geometric's loaders of graph lists subclass torch's DataLoader: they make their own
# collate_fn and hand every other keyword (sampler, batch_sampler, drop_last, num_workers) to it
# unchanged, so they draw from the sampler they are given. `DataLoader(dataset, batch_size=1,
# shuffle=False, follow_batch=None, exclude_keys=None, **kwargs)`, `DenseDataLoader` and
# `DataListLoader(dataset, batch_size=1, shuffle=False, **kwargs)` (torch_geometric 2.8.1,
# loader/dataloader.py, dense_data_loader.py, data_list_loader.py; `torch_geometric.data` keeps
# deprecated aliases). Not TemporalDataLoader: it batches a range of its own in order.
GRAPH_LOADERS = api(
    "torch_geometric.loader.DataLoader", "torch_geometric.loader.dataloader.DataLoader",
    "torch_geometric.loader.DenseDataLoader", "torch_geometric.loader.dense_data_loader.DenseDataLoader",
    "torch_geometric.loader.DataListLoader", "torch_geometric.loader.data_list_loader.DataListLoader",
    "torch_geometric.data.DataLoader", "torch_geometric.data.DenseDataLoader", "torch_geometric.data.DataListLoader",
    params="dataset batch_size shuffle",
    keyword_only="sampler batch_sampler num_workers pin_memory drop_last timeout worker_init_fn "
    "multiprocessing_context generator prefetch_factor persistent_workers pin_memory_device in_order",
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
# Loader makers that are methods of a library's objects, by method name, with the package whose
# classes make the receiver (bound to a call of one, or a parameter annotated with one).
# ColossalAI's booster plugins (TorchDDPPlugin, GeminiPlugin, LowLevelZeroPlugin,
# HybridParallelPlugin, their base DPPluginBase, colossalai/booster/plugin):
# `plugin.prepare_dataloader(dataset, batch_size, shuffle=False, seed=1024, drop_last=False, ...)`
# builds a DataLoader over a DistributedSampler of the data-parallel ranks, shuffling as
# `shuffle` says (by default not), reached as `loader.sampler`.
PLUGIN_LOADER = api(
    "prepare_dataloader", params="dataset batch_size shuffle seed drop_last pin_memory num_workers distributed_sampler_cls",
)
PLUGIN_LOADER_SHUFFLE = "shuffle"
LOADER_PLUGINS = Package("colossalai.booster.plugin")
RANDOM_SPLIT = api(
    "torch.utils.data.random_split", "torch.utils.data.dataset.random_split",
    params="dataset lengths generator",
)
MANUAL_SEED = api("torch.manual_seed", "torch.random.manual_seed", params="seed")
# scikit-learn's split draws numpy's global generator unless handed `random_state` (its arrays
# are `*arrays`, so every other parameter is keyword-only); Hugging Face datasets'
# `Dataset.train_test_split` derives its generator from numpy's global state unless handed
# `seed` or `generator`.
SKLEARN_SPLIT = api(
    "sklearn.model_selection.train_test_split", "sklearn.model_selection._split.train_test_split",
    keyword_only="test_size train_size random_state shuffle stratify",
)
DATASETS_SPLIT_METHOD = "train_test_split"
DATASETS = Package("datasets")

# -- processes ------------------------------------------------------------------------------
SET_SHARING_STRATEGY = api("torch.multiprocessing.set_sharing_strategy", params="new_strategy")
# spawn is start_processes with start_method="spawn": the two take the same parameters.
_SPAWN_PARAMS = "fn args nprocs join daemon start_method"
SPAWN = api("torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn", params=_SPAWN_PARAMS)
START_PROCESSES = api(
    "torch.multiprocessing.start_processes", "torch.multiprocessing.spawn.start_processes", params=_SPAWN_PARAMS
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
# Calls that start the process group: torch's own and DeepSpeed's, which calls it (and reads
# the launcher's environment) for the script.
GROUP_STARTS = frozenset(INIT_PROCESS_GROUP) | {"deepspeed.init_distributed", "deepspeed.comm.init_distributed"}
GET_RANK = api("torch.distributed.get_rank", "torch.distributed.distributed_c10d.get_rank", params="group")
GET_WORLD_SIZE = api(
    "torch.distributed.get_world_size", "torch.distributed.distributed_c10d.get_world_size", params="group"
)
# (OpenMMLab's `MMDistributedDataParallel`, of mmcv < 2 and of mmengine, derives from it: the same
# wrapper, its model kept as `module`; mmcv's `MMDataParallel` is a one-process DataParallel.)
DDP = api(
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
    "mmcv.parallel.MMDistributedDataParallel", "mmcv.parallel.distributed.MMDistributedDataParallel",
    "mmengine.model.MMDistributedDataParallel", "mmengine.model.wrappers.MMDistributedDataParallel",
    "mmengine.model.wrappers.distributed.MMDistributedDataParallel",
    params="module device_ids output_device dim broadcast_buffers init_sync process_group bucket_cap_mb "
    "find_unused_parameters check_reduction gradient_as_bucket_view static_graph",
)
# The one-process wrapper that splits each batch over the GPUs of one process: a DDP model is
# no instance of it (`isinstance(ddp_model, DataParallel)` is False).
DATA_PARALLEL = api(
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel",
    params="module device_ids output_device dim",
)


def _distributed(*names: str) -> tuple[str, ...]:
    """Each of `names` under each of the DISTRIBUTED_MODULES."""
    return tuple(f"{module}.{name}" for name in names for module in DISTRIBUTED_MODULES)


# Collectives that combine per-rank results into one (a metric, a gathered list).
# torchvision datasets whose test split (`train=False`) has a fixed size: 10,000 images each.
TEST_SPLIT_SIZES = {
    f"torchvision.datasets.{name}": 10_000 for name in ("MNIST", "FashionMNIST", "KMNIST", "CIFAR10", "CIFAR100")
}

COMBINING_COLLECTIVES = frozenset(_distributed(
    "all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_object", "all_gather_into_tensor",
    "all_gather_single", "all_gather_coalesced", "gather", "gather_object", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "reduce_scatter_single",
))  # fmt: skip
# The collective that copies one rank's tensor into the same tensor on every rank.
BROADCAST = frozenset(_distributed("broadcast"))
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
# mpi4py's collectives on the world communicator, which every process must also call (OpenAI's
# guided-diffusion family broadcasts checkpoints with `MPI.COMM_WORLD.bcast`): each to its own
# name, which only the same MPI call matches.
MPI_COLLECTIVES = {
    f"mpi4py.MPI.COMM_WORLD.{method}": f"MPI {method}"
    for method in ("bcast", "Bcast", "allreduce", "Allreduce", "allgather", "Allgather", "gather", "Gather",
                   "reduce", "Reduce", "scatter", "Scatter", "alltoall", "Alltoall", "barrier", "Barrier")
}
COLLECTIVES = {
    **{spelling: "barrier" if name.endswith("barrier") else name for name in COLLECTIVE_NAMES for spelling in _distributed(name)},
    **STATE_GATHERING,
    **MPI_COLLECTIVES,
}
DISTRIBUTED_IS_AVAILABLE = api("torch.distributed.is_available")
# Questions about the process group that hold in one process as well: calling one says nothing of
# ranks running the code (a script that tests `dist.is_initialized()` and never starts a group is
# one process).
DISTRIBUTED_QUERIES = api(*_distributed(
    "is_available", "is_initialized", "is_nccl_available", "is_gloo_available", "is_mpi_available",
    "is_ucc_available", "is_torchelastic_launched", "is_backend_available",
))
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
# A Lightning Trainer given the DDP strategy by name, as its script is written (ddplint.analyses.launches).
LIGHTNING_DDP_TEXT = ('strategy="ddp', "strategy='ddp", "DDPStrategy(")
SEED_MARKERS = (*DISTRIBUTED_MARKERS, *LIGHTNING_DDP_TEXT)  # DDP027: the ranks run the seed
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
# The CLI builds the Trainer from `trainer_defaults` (a dict of its arguments) and the command line.
# Lightning's DDP strategy class (`strategy=DDPStrategy(...)`, also a project subclass of it): its
# default start method, "popen", is the subprocess launcher that runs the script again per device.
LIGHTNING_DDP_STRATEGY = api(
    "pytorch_lightning.strategies.DDPStrategy", "pytorch_lightning.strategies.ddp.DDPStrategy",
    "lightning.pytorch.strategies.DDPStrategy", "lightning.pytorch.strategies.ddp.DDPStrategy",
)
# The Trainer methods that start its run, and with it the launcher's processes
# (lightning/pytorch/trainer: each goes through `call._call_and_handle_interrupt`, which calls
# `trainer.strategy.launcher.launch(...)`).
LIGHTNING_RUNS = frozenset({"fit", "validate", "test", "predict"})
LIGHTNING_CLI = api(
    "lightning.pytorch.cli.LightningCLI", "lightning.pytorch.LightningCLI", "pytorch_lightning.cli.LightningCLI",
    "pytorch_lightning.utilities.cli.LightningCLI",
    keyword_only="trainer_defaults",
)
LIGHTNING_MODULE = api(
    "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
    "pytorch_lightning.core.module.LightningModule", "pytorch_lightning.core.lightning.LightningModule",
    "lightning.LightningModule", "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
    "lightning.pytorch.core.module.LightningModule",
)
# What a LightningModule's `save_hyperparameters()` keeps of its constructor's arguments: `self.hparams`.
LIGHTNING_HPARAMS = "hparams"
# `seed_everything(seed, workers=True)`: Lightning's worker_init_fn then seeds each DataLoader worker
# from its base seed, its id and the global rank.
LIGHTNING_SEED_WORKERS = "workers"
# A LightningDataModule's hooks (`setup`, `train_dataloader`) run on every rank the Trainer starts too.
LIGHTNING_DATA_MODULE = api(
    "pytorch_lightning.LightningDataModule", "pytorch_lightning.core.LightningDataModule",
    "pytorch_lightning.core.datamodule.LightningDataModule", "lightning.LightningDataModule",
    "lightning.pytorch.LightningDataModule", "lightning.pytorch.core.LightningDataModule",
    "lightning.pytorch.core.datamodule.LightningDataModule",
)
# pytorch-ignite's Engine is built with a process function and calls it as
# `process_function(engine, batch)` once for every batch of `engine.run(data)` (ignite/engine/engine.py,
# `self._process_function(self, self.state.batch)` in its iteration loop): that function's body is a
# loop body over the data, run by every rank that runs the engine.
IGNITE_ENGINE = api(
    "ignite.engine.Engine", "ignite.engine.engine.Engine", "ignite.engine.DeterministicEngine",
    "ignite.engine.deterministic.DeterministicEngine", params="process_function",
)
# An ignite metric attached to an engine (`Loss(...).attach(evaluator, "nll")`) updates on each
# batch of `engine.run(data)` and computes when the run completes (ignite/metrics/metric.py,
# `Metric.attach`); in a distributed run its compute combines every rank's state: most metrics
# wrap `compute` in `sync_all_reduce` (`idist.all_reduce` when `idist.get_world_size() > 1`,
# which a process group the script made itself sets), EpochMetric all-gathers, and MetricsLambda
# computes over metrics that do. GpuInfo reports this GPU's memory only.
IGNITE_METRICS = Package("ignite.metrics")
IGNITE_UNCOMBINED_METRICS = frozenset({"ignite.metrics.GpuInfo", "ignite.metrics.gpu_info.GpuInfo"})
IGNITE_ENGINE_RUN = "run"
# Hugging Face's Trainer fires its callbacks' events (`on_save`, `on_train_end`, ...) on every
# process it runs in; `state.is_world_process_zero` says which one is the main process. The
# Trainer starts no processes: its launcher (torchrun, deepspeed, accelerate) does.
TRAINER_CALLBACK = api("transformers.TrainerCallback", "transformers.trainer_callback.TrainerCallback")
TRAINER_CALLBACK_EVENT = "on_"
# MosaicML Composer's Trainer runs every Callback it is handed on every rank (its Engine calls each
# callback's method for each Event, composer/core/engine.py); `dist.get_global_rank() == 0`
# (composer.utils.dist) says which one is rank 0. The Trainer starts no processes: the `composer`
# launcher does.
COMPOSER_CALLBACK = api("composer.Callback", "composer.core.Callback", "composer.core.callback.Callback")
# Lightning's Trainer calls every hook of each Callback it is handed on every rank
# (`_call_callback_hooks`, lightning/pytorch/trainer/call.py: `fn(trainer, trainer.lightning_module, ...)`
# in each process); `trainer.is_global_zero` says which one is rank 0. Its hooks are the `on_*` methods.
LIGHTNING_CALLBACK = api(
    "pytorch_lightning.Callback", "pytorch_lightning.callbacks.Callback", "pytorch_lightning.callbacks.base.Callback",
    "pytorch_lightning.callbacks.callback.Callback", "lightning.Callback", "lightning.pytorch.Callback",
    "lightning.pytorch.callbacks.Callback", "lightning.pytorch.callbacks.callback.Callback",
)
LIGHTNING_CALLBACK_HOOK = "on_"
COMPOSER_CALLBACK_EVENTS = frozenset({
    "init", "before_load", "after_load", "fit_start", "iteration_start", "epoch_start", "before_dataloader",
    "after_dataloader", "batch_start", "before_train_batch", "before_forward", "after_forward", "before_loss",
    "after_loss", "before_backward", "after_backward", "after_train_batch", "batch_end", "batch_checkpoint",
    "epoch_end", "epoch_checkpoint", "iteration_end", "iteration_checkpoint", "fit_end", "eval_before_all",
    "eval_start", "eval_batch_start", "eval_before_forward", "eval_after_forward", "eval_batch_end", "eval_end",
    "eval_after_all", "eval_standalone_start", "eval_standalone_end", "predict_start", "predict_batch_start",
    "predict_before_forward", "predict_after_forward", "predict_batch_end", "predict_end", "close",
})
COMPOSER_DIST = "composer.utils.dist"
COMPOSER_GLOBAL_RANK = "get_global_rank"
# The Trainer calls these methods of itself on every process (`_save_checkpoint` calls
# `save_model`, which writes only where `args.should_save`): a subclass that overrides one
# writes from every process unless it tests the rank itself. Not `_save`: `save_model` calls
# it only under `if self.args.should_save:` (process 0), on every backend...
HF_TRAINER = api("transformers.Trainer", "transformers.trainer.Trainer", "trl.SFTTrainer", "trl.DPOTrainer")
HF_TRAINER_EVERY_PROCESS = frozenset({"save_model", "_save_checkpoint"})
# ... but a project may call `_save` itself, on every process (LLaVA's
# `safe_save_model_for_hf_trainer`: `trainer._save(output_dir, state_dict=state_dict)`).
HF_TRAINER_SAVE = "_save"
WORLD_PROCESS_ZERO = "is_world_process_zero"
# The hook the Trainer runs on one process per node (local rank 0, `prepare_data_per_node`'s
# default) or on global rank 0, with a barrier after it: where downloads and caches are written.
LIGHTNING_RANK_ZERO_HOOKS = frozenset({"prepare_data"})
# The LightningModule methods the Trainer calls itself (besides `on_*`, `*_step`, `*_epoch_end`,
# `*_dataloader` and `configure_*`): another method runs only where a hook or other code calls it.
LIGHTNING_HOOKS = frozenset(
    {
        "__init__", "forward", "setup", "teardown", "backward", "optimizer_step", "optimizer_zero_grad",
        "lr_scheduler_step", "clip_gradients", "transfer_batch_to_device", "freeze", "unfreeze",
        "state_dict", "load_state_dict", "log_grad_norm",
    }
)
LIGHTNING_HOOK_AFFIXES = (("on_", "configure_"), ("_step", "_step_end", "_epoch_end", "_dataloader"))


def lightning_hook(name: str) -> bool:
    """Whether the Trainer calls a LightningModule's method of this name itself."""
    prefixes, suffixes = LIGHTNING_HOOK_AFFIXES
    return name in LIGHTNING_HOOKS or name.startswith(prefixes) or name.endswith(suffixes)


# -- frameworks whose objects communicate across ranks: Accelerate, DeepSpeed, FSDP ----------
# An Accelerator given one of these plugins runs DeepSpeed, FSDP or Megatron-LM instead of DDP:
# what it prepares is no DDP model, and saving or gathering its state is a collective.
ACCELERATOR_SHARDING_PLUGINS = ("deepspeed_plugin", "fsdp_plugin", "megatron_lm_plugin")
# The same, chosen at launch: an Accelerate configuration file's `distributed_type` (what
# `accelerate launch --config_file x.yaml` runs), or the launch flags that pick a backend.
ACCELERATE_CONFIG_KEY = "distributed_type"
ACCELERATE_SHARDED_TYPES = frozenset({"DEEPSPEED", "FSDP", "MEGATRON_LM"})
ACCELERATE_DDP_TYPES = frozenset({"MULTI_GPU", "MULTI_NPU", "MULTI_XPU", "MULTI_MLU", "MULTI_MUSA", "MULTI_HPU", "MULTI_SDAA"})
ACCELERATE_SHARDED_FLAGS = ("--use_deepspeed", "--use_fsdp", "--use_megatron_lm")
ACCELERATE_DDP_FLAGS = ("--multi_gpu",)
DEEPSPEED_INITIALIZE = api(
    "deepspeed.initialize", params="args model optimizer model_parameters training_data lr_scheduler",
)
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
# Hugging Face's `TrainingArguments.should_save`: true on the one process that writes checkpoints,
# process 0 (local process 0 of each node with `save_on_each_node`), by what the Trainer keeps the
# arguments as (`self.args.should_save`, `trainer.args.should_save`, `training_args.should_save`).
# A TrainerControl's `should_save` (`self.control.should_save`) says when to save, not who.
# The Trainer's own tests, `is_world_process_zero()` and `is_local_process_zero()`, are main-process
# predicates by name (ddplint.analyses.ranks).
TRAINING_ARGS_SHOULD_SAVE = "should_save"
TRAINING_ARGS_NAMES = frozenset({"args", "training_args"})
LAUNCH_POINT_TEXT = ("Accelerator(", f".{FABRIC_LAUNCH}(", "LightningModule", "LightningDataModule")
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
# DeepSpeed's launcher running a script (`deepspeed --num_gpus 8 train.py`) or a module
# (`deepspeed --include localhost:0,1 --module start_training`): it passes `--local_rank=N` with
# an underscore.
DEEPSPEED_LAUNCHER = re.compile(
    r"(?<![\w.-])deepspeed[ \t]+(?:[^\n]*?[ \t])?(?:[\w./${}-]*\.py\b|(?:--module|-m)[ \t]+[\w.]+)"
)


@dataclass(frozen=True)
class Launcher:
    """A command that starts a script's processes, as a shell script or document writes it: the
    text a document running it contains (`needles`), the pattern of its command, the option it
    appends to every process's arguments (None: none), whether it sets the LOCAL_RANK variable,
    and the flags with which it passes no option but sets LOCAL_RANK (`--use_env`)."""

    name: str
    needles: tuple[str, ...]
    pattern: re.Pattern
    option: str | None
    sets_local_rank: bool
    quiet: tuple[str, ...] = ()
    # The flags that give the number of processes it starts in all. Only Accelerate's and
    # srun's are read: `accelerate launch --num_processes=1` is how a script that must run as
    # one process is documented, and `srun -n1` asks SLURM for one task, while a `torchrun
    # --nproc_per_node 1` in a shell script is as often a template to raise to the machine's
    # GPUs (Chinese-LLaMA-Alpaca's run_pt.sh).
    count_flags: tuple[str, ...] = ()
    # Whether the processes it starts form one MPI world (mpi4py's COMM_WORLD): always (None),
    # with one of these flags (srun's `--mpi=pmix` picks its MPI plugin), or never (empty).
    mpi_flags: tuple[str, ...] | None = ()
    # Whether its needle is also a common word (`composer`: "the composer model",
    # `composer_to_hf.py`): then text names the launcher only where its pattern matches.
    worded: bool = False

    def names(self, text: str) -> bool:
        """Whether `text` (a line, a code span) names this launcher."""
        return any(needle in text for needle in self.needles) and (not self.worded or self.pattern.search(text) is not None)

    def starts_mpi_world(self, command: str) -> bool:
        """Whether `command` starts its processes as the ranks of one MPI world."""
        return self.mpi_flags is None or any(re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", command) for flag in self.mpi_flags)

    def passes(self, command: str) -> str | None:
        """The option this launcher appends when it runs `command` (None: none)."""
        return None if any(flag in command for flag in self.quiet) else self.option

    def processes(self, command: str) -> int | None:
        """How many processes `command` starts, where its flags say so with a number (None: no
        such flag, or its value is a variable)."""
        for flag in self.count_flags:
            separator = r"(?:=|[ \t]+)" if flag.startswith("--") else r"(?:=|[ \t]*)"  # `-n1`, `-n 1`
            match = re.search(rf"(?<![\w-]){re.escape(flag)}{separator}(\S+)", command)
            if match is not None:
                value = match.group(1).strip("'\"")
                return int(value) if value.isdigit() else None
        return None


# `accelerate launch train.py` (also `python -m accelerate.commands.launch`): it passes no option
# and sets LOCAL_RANK, as torchrun does.
ACCELERATE_LAUNCHER = re.compile(r"(?<![\w.-])accelerate[ \t]+launch(?![\w.-])|accelerate\.commands\.launch\b")


def _launcher_word(*words: str) -> re.Pattern:
    """A launcher run by its own name (`srun ...`), not as part of another word or path."""
    return re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, words)) + r")(?![\w.-])")


# MosaicML Composer's launcher running a script (`composer train.py cfg.yaml`, `composer -n 8
# --node_rank 0 $DIR/train.py`): one process per GPU of the node by default (`-n`/`--nproc`), each
# with RANK, LOCAL_RANK and WORLD_SIZE set; it passes no option. Only a command that names a
# script after the launcher's own options is one: the word alone is as often prose ("the
# composer model").
COMPOSER_LAUNCHER = re.compile(
    r"(?<![\w./$-])composer(?:[ \t]+-{1,2}[\w-]+(?:(?:=|[ \t]+)(?!-)[^\s\\]+)?)*[ \t]+[\w./${}+-]*\.py(?![\w.-])"
)


# The launchers, in the order a command running one inside another (`srun torchrun train.py`)
# is taken for: the inner one, which starts the script, first. torch.distributed.launch passes
# `--local-rank=N` since PyTorch 2.0 (`--local_rank=N` before), none with `--use_env`; torchrun
# (also `python -m torch.distributed.run`) passes none and sets LOCAL_RANK; DeepSpeed's passes
# `--local_rank=N`, none with `--no_local_rank`; SLURM's `srun`, Horovod's `horovodrun` and MPI's
# `mpirun` pass none and set no LOCAL_RANK (their own variables: SLURM_LOCALID, ...).
LAUNCHERS = {
    launcher.name: launcher
    for launcher in (
        Launcher(OLD_LAUNCHER_MODULE, (OLD_LAUNCHER_MODULE,), OLD_LAUNCHER, "--local-rank", True, ("--use_env", "--use-env")),
        Launcher("torchrun", ("torchrun", TORCHRUN), re.compile(r"(?<![\w.-])torchrun(?![\w.-])|" + re.escape(TORCHRUN) + r"\b"), None, True),
        Launcher("deepspeed", ("deepspeed",), DEEPSPEED_LAUNCHER, "--local_rank", True, ("--no_local_rank",)),
        Launcher("accelerate", ("accelerate",), ACCELERATE_LAUNCHER, None, True, (), ("--num_processes", "--num-processes")),
        Launcher("composer", ("composer",), COMPOSER_LAUNCHER, None, True, (), ("-n", "--nproc"), worded=True),
        Launcher("horovodrun", ("horovodrun",), _launcher_word("horovodrun"), None, False),
        Launcher("mpirun", ("mpirun", "mpiexec"), _launcher_word("mpirun", "mpiexec"), None, False, mpi_flags=None),
        Launcher("srun", ("srun",), _launcher_word("srun"), None, False, (), ("--ntasks", "-n"), ("--mpi",)),
    )
}

# The variables in which a launcher hands each process its local rank (its index on its node):
# torchrun's and torch.distributed.launch's LOCAL_RANK, SLURM's, Open MPI's and MPICH's own.
LOCAL_RANK_VARIABLES = frozenset({"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"})

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
# The container whose forward calls each module it holds, in turn, on its input.
SEQUENTIAL = api("torch.nn.Sequential", "torch.nn.modules.container.Sequential")
# Returns the module it is given, with its batch norms replaced: on the device the module was on.
# Methods of a module that return the object they are called on: `Net().cuda(rank)` is the `Net`.
SAME_VALUE_METHODS = frozenset(("cuda", "to", "float", "half", "bfloat16", "double", "train", "requires_grad_"))
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
# Tensors made on the host unless a `device=` says otherwise, by the name a call ends in (a
# function summary reads no imports): factories of a size, and tensors made from Python data
# (`torch.tensor(ids)`: a list of numbers gives a CPU tensor). `torch.cuda.FloatTensor` is not
# one: its module says CUDA.
HOST_FACTORIES = frozenset({
    "zeros", "ones", "empty", "full", "arange", "rand", "randn", "randint", "randperm", "linspace", "logspace", "eye",
})
DATA_TENSORS = frozenset({
    "tensor", "as_tensor", "from_numpy", "Tensor", "LongTensor", "FloatTensor", "IntTensor", "BoolTensor",
    "ByteTensor", "DoubleTensor", "HalfTensor",
})
# Methods that give a tensor on the device their receiver is on (or a Python value).
SAME_DEVICE_METHODS = frozenset({
    "detach", "clone", "float", "half", "double", "long", "int", "bool", "bfloat16", "contiguous", "view",
    "reshape", "flatten", "squeeze", "unsqueeze", "numpy", "tolist", "item", "copy", "items", "values", "keys",
})
# Concatenations whose result is on the device of what they join.
JOINING_FUNCTIONS = frozenset({"cat", "stack", "concat", "concatenate", "hstack", "vstack"})
DEVICE_COUNT = api("torch.cuda.device_count")
# The index of the process's current CUDA device: the local rank once the set-up binds it.
CURRENT_DEVICE = api("torch.cuda.current_device")
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

# -- sharded data parallelism: FSDP1 (the wrapper) and FSDP2 (`fully_shard`) ----------------
# FSDP1 replaces the module's parameters by flat parameters unless `use_orig_params=True`; FSDP2
# replaces each by a DTensor parameter. Either way an optimizer built before the wrap holds
# parameters that no longer receive gradients.
FSDP = api(
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
    params="module process_group sharding_strategy cpu_offload auto_wrap_policy backward_prefetch mixed_precision "
    "ignored_modules param_init_fn device_id sync_module_states forward_prefetch limit_all_gathers use_orig_params "
    "ignored_states device_mesh",
)
FSDP_USE_ORIG_PARAMS = "use_orig_params"
FSDP_SHARDING_STRATEGY = "sharding_strategy"
# The FSDP1 sharding strategy under which every rank keeps whole parameters and gradients.
FSDP_NO_SHARD = "NO_SHARD"
FULLY_SHARD = api(
    "torch.distributed.fsdp.fully_shard", "torch.distributed.fsdp._fully_shard.fully_shard",
    "torch.distributed.fsdp._fully_shard._fully_shard.fully_shard", "torch.distributed._composable.fsdp.fully_shard",
    "torch.distributed._composable.fsdp.fully_shard.fully_shard",
    params="module", keyword_only="mesh reshard_after_forward shard_placement_fn mp_policy offload_policy ignored_params",
)
# The optimizers torch ships (by package); their first parameter is what they step.
TORCH_OPTIM = Package("torch.optim")
OPTIMIZER_PARAMS = "params"
# Not optimizers, though they live in torch.optim.
NOT_OPTIMIZERS = ("torch.optim.lr_scheduler.", "torch.optim.swa_utils.")
# Module methods that hand out its parameters (what an optimizer is built from).
MODULE_PARAMETERS = "parameters"
PARAMETER_METHODS = frozenset({MODULE_PARAMETERS, "named_parameters"})
CLIP_GRAD_NORM = api(
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.clip_grad_norm",
    "torch.nn.utils.clip_grad.clip_grad_norm",
    params="parameters max_norm norm_type error_if_nonfinite foreach",
)
# FSDP1's own method, which all-reduces the norm over every rank's shard.
FSDP_CLIP_GRAD_NORM = api("torch.distributed.fsdp.FullyShardedDataParallel.clip_grad_norm_", params="max_norm norm_type")

# -- seeds and the random draws they fix ------------------------------------------------------
# Each seeding call and the generators it seeds ("torch": torch's default CPU generator (and the
# CUDA ones), "numpy", "random"). Lightning's `seed_everything`, Accelerate's and Hugging Face's
# `set_seed` seed all three with the same value on every rank (Accelerate's adds the process
# index only with `device_specific=True`).
ALL_GENERATORS = frozenset({"torch", "numpy", "random"})
SEED_EVERYTHING = api(
    "pytorch_lightning.seed_everything", "pytorch_lightning.utilities.seed.seed_everything",
    "pytorch_lightning.trainer.seed_everything",  # re-exported beside Trainer (`from pytorch_lightning.trainer import ...`)
    "lightning.seed_everything", "lightning.pytorch.seed_everything", "lightning.pytorch.utilities.seed.seed_everything",
    "lightning.pytorch.trainer.seed_everything",
    "lightning.fabric.seed_everything", "lightning.fabric.utilities.seed.seed_everything",
    "lightning_fabric.seed_everything", "lightning_fabric.utilities.seed.seed_everything",
    params="seed workers", keyword_only="verbose",
)
ACCELERATE_SET_SEED = api(
    "accelerate.utils.set_seed", "accelerate.utils.random.set_seed", params="seed device_specific deterministic",
)
ACCELERATE_DEVICE_SPECIFIC = "device_specific"
TRANSFORMERS_SET_SEED = api("transformers.set_seed", "transformers.trainer_utils.set_seed", params="seed deterministic")
NUMPY_SEED = api("numpy.random.seed", params="seed")
# Python's `random` module: its seed, and the module-level functions that draw from its one
# hidden `Random` instance (Python 3.10 to 3.13's `random.__all__`, less the seeding, state and
# class names; 3.12's `binomialvariate` too). `torch.manual_seed` and `np.random.seed` leave it alone.
PYTHON_RANDOM_SEED = api("random.seed", params="a version")
PYTHON_RANDOM_DRAWS = api(*(f"random.{name}" for name in (
    "random", "randint", "randrange", "uniform", "choice", "choices", "shuffle", "sample", "gauss", "normalvariate",
    "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate", "betavariate", "paretovariate",
    "weibullvariate", "triangular", "getrandbits", "randbytes", "binomialvariate",
)))
# A Fabric's method that calls `seed_everything` (`fabric.seed_everything(seed)`).
FABRIC_SEED_METHOD = "seed_everything"
# Accelerate's Accelerator method that hands each process its own slice of a list (or tensor) it is
# given: the same list on every rank becomes a different slice on each.
ACCELERATE_SPLIT_METHOD = "split_between_processes"
# A generator of its own, and its method that seeds it (`torch.Generator(device=d).manual_seed(s)`):
# the draws handed it (`generator=`) leave the default generator alone.
TORCH_GENERATOR = api("torch.Generator", "torch._C.Generator", params="device")
GENERATOR_SEED_METHOD = "manual_seed"
SEEDS = {
    MANUAL_SEED: frozenset({"torch"}), NUMPY_SEED: frozenset({"numpy"}), PYTHON_RANDOM_SEED: frozenset({"random"}),
    SEED_EVERYTHING: ALL_GENERATORS, ACCELERATE_SET_SEED: ALL_GENERATORS, TRANSFORMERS_SET_SEED: ALL_GENERATORS,
}


def generators_seeded(qualified: str | None) -> frozenset[str] | None:
    """The global generators a call of `qualified` seeds (`SEEDS`); None for any other call."""
    return next((generators for seeding, generators in SEEDS.items() if qualified in seeding), None)


SEED_CALLS = MANUAL_SEED | NUMPY_SEED | PYTHON_RANDOM_SEED | SEED_EVERYTHING | ACCELERATE_SET_SEED | TRANSFORMERS_SET_SEED
# The seeds of torch's default generator (random_split's, the draws'), and the prefixes of the
# libraries whose seeds never touch it.
TORCH_SEEDS = MANUAL_SEED | SEED_EVERYTHING | ACCELERATE_SET_SEED | TRANSFORMERS_SET_SEED
OTHER_GENERATORS = ("random.", "numpy.", "tensorflow.", "jax.")
# The global generators a split may draw from, by the prefix of the library that holds each: a
# seed of another library's generator leaves it as it was.
GENERATOR_LIBRARIES = {"torch": "torch.", "numpy": "numpy.", "random": "random.", "tensorflow": "tensorflow.", "jax": "jax."}
# Draws from torch's default generator that make data: noise, timesteps, indices, masks.
TORCH_DRAWS = api(
    "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.rand_like", "torch.randn_like",
    "torch.randint_like", "torch.multinomial", "torch.normal", "torch.bernoulli", "torch.poisson",
)
# torchvision's transforms that draw their parameters from torch's default generator on each call
# (torchvision/transforms/transforms.py, 0.8 and later: torch.rand, torch.randint, torch.randperm,
# torch.empty(1).uniform_); RandomChoice and RandomOrder draw from Python's random instead.
_TORCHVISION_RANDOM = (
    "RandomApply", "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomPerspective",
    "RandomResizedCrop", "ColorJitter", "RandomRotation", "RandomAffine", "RandomGrayscale", "RandomErasing",
    "GaussianBlur", "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
    "RandomAutocontrast", "RandomEqualize", "ElasticTransform",
)
TORCHVISION_RANDOM_TRANSFORMS = api(*(f"torchvision.transforms.{prefix}{name}" for name in _TORCHVISION_RANDOM
                                      for prefix in ("", "transforms.")))
# torchvision's Compose: calling it calls each transform of the list it was given, in turn.
TORCHVISION_COMPOSE = api("torchvision.transforms.Compose", "torchvision.transforms.transforms.Compose", params="transforms")
# torchvision's ImageFolder: its __getitem__ hands each sample to its `transform` (datasets/folder.py).
TORCHVISION_IMAGE_FOLDER = api(
    "torchvision.datasets.ImageFolder", "torchvision.datasets.folder.ImageFolder",
    params="root transform target_transform loader is_valid_file allow_empty",
)
# numpy's module-level draws, by the module that holds them (every function there but the
# seeding and generator-making ones draws from the global state).
NUMPY_RANDOM = Package("numpy.random")
NOT_DRAWS = frozenset({
    "seed", "get_state", "set_state", "getstate", "setstate", "RandomState", "default_rng", "Generator", "Random",
    "SystemRandom", "SeedSequence", "PCG64", "MT19937", "BitGenerator",
})  # fmt: skip
# Reinforcement-learning environments (gym, gymnasium): `env.reset(seed=...)` seeds what they
# emit, the data a policy trains on.
ENV_PACKAGES = (Package("gym"), Package("gymnasium"))
ENV_RESET = "reset"
ENV_SEED = "seed"
# click's decorators that fill a command's parameter from the command line (`@click.option("--seed")`).
CLICK_OPTIONS = api("click.option", "click.argument", "click.decorators.option", "click.decorators.argument")

# -- Lightning's logging and the callbacks that read it -----------------------------------------
MODEL_CHECKPOINT = api(
    "pytorch_lightning.callbacks.ModelCheckpoint", "pytorch_lightning.callbacks.model_checkpoint.ModelCheckpoint",
    "lightning.pytorch.callbacks.ModelCheckpoint", "lightning.pytorch.callbacks.model_checkpoint.ModelCheckpoint",
    params="dirpath filename monitor",
)
EARLY_STOPPING = api(
    "pytorch_lightning.callbacks.EarlyStopping", "pytorch_lightning.callbacks.early_stopping.EarlyStopping",
    "lightning.pytorch.callbacks.EarlyStopping", "lightning.pytorch.callbacks.early_stopping.EarlyStopping",
    params="monitor min_delta patience",
)
MONITORING_CALLBACKS = MODEL_CHECKPOINT | EARLY_STOPPING
CALLBACK_MONITOR = "monitor"
# LightningModule.log and log_dict (methods: `self.log(...)`), with their parameters.
LIGHTNING_LOG = api(
    "log", params="name value prog_bar logger on_step on_epoch reduce_fx enable_graph sync_dist sync_dist_group "
    "add_dataloader_idx batch_size metric_attribute rank_zero_only",
)
LIGHTNING_LOG_DICT = api(
    "log_dict", params="dictionary prog_bar logger on_step on_epoch reduce_fx enable_graph sync_dist sync_dist_group "
    "add_dataloader_idx batch_size rank_zero_only",
)
LOG_SYNC_DIST = "sync_dist"
# Lightning 1.x's `Trainer.from_argparse_args(args, **overrides)`: a Trainer set from the command line.
TRAINER_FROM_ARGPARSE = "from_argparse_args"
# A Trainer's method that trains a LightningModule (`trainer.fit(model, ...)`), and its parameter.
TRAINER_FIT = api("fit", params="model train_dataloaders val_dataloaders datamodule ckpt_path")
LOG_RANK_ZERO_ONLY = "rank_zero_only"
# torchmetrics' Metric objects sync their state across ranks themselves when logged.
TORCHMETRICS = Package("torchmetrics")

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


def is_dataset_set_epoch(callee: str) -> bool:
    """`loader.dataset.set_epoch(epoch)`: the dataset's own method, which reaches no sampler."""
    return callee.endswith(".dataset.set_epoch")


# Flags named for distributed training (`args.distributed`, `use_ddp`, `is_use_DDP`): a test of
# one says whether the run is distributed, and an option of one switches distribution on.
DISTRIBUTED_FLAGS = frozenset(
    {"distributed", "is_distributed", "ddp", "use_ddp", "is_ddp", "use_distributed", "multiprocessing_distributed"}
)
_FLAG_PREFIXES = ("is_", "use_", "enable_", "with_")


def distributed_flag(name: str | None) -> bool:
    """A flag named for distributed training: `distributed`, `use_ddp`, `is_use_DDP`,
    `enable_distributed`, `self._distributed` (case, a private attribute's underscores and the
    prefixes `is_`, `use_`, `enable_` aside)."""
    if name is None:
        return False
    name = name.lower().lstrip("_")
    while name.startswith(_FLAG_PREFIXES):
        name = name.split("_", 1)[1]
    return name in DISTRIBUTED_FLAGS or f"use_{name}" in DISTRIBUTED_FLAGS


# The top-level packages whose import makes a module part of a torch program: torch itself and
# the libraries built on it that run torch code for their callers.
TORCH_PACKAGES = frozenset(
    {
        "torch", "torchvision", "torchaudio", "torchtext", "pytorch_lightning", "lightning",
        "lightning_fabric", "accelerate", "deepspeed", "fairscale", "timm",
    }
)


# Text of code that may start processes that tensors cross, which torch.multiprocessing's
# sharing strategy decides how: DataLoader workers (a loader, or a count of workers, named
# anywhere: a loader built from a config or a framework's Trainer takes its count from
# elsewhere), torch.multiprocessing's processes, pools and queues. The project model asks
# whether a program holds any (DDP005); a large file checked in part keeps the statements
# that do (ddplint.engine.lint), so that the answer is the same as for the whole file.
TENSOR_CROSSINGS = (
    "DataLoader", "dataloader", "workers", "Trainer", "spawn(", "Process(", "start_processes(", "Pool(",
    "ProcessPoolExecutor", "Queue(",
)
# torch calls that start nothing and return a count, a flag or None, never a tensor: what a
# launcher may ask before it spawns its ranks (DDP005).
PLAIN_QUERIES = DEVICE_COUNT | CUDA_IS_AVAILABLE | SET_SHARING_STRATEGY | api(
    "torch.multiprocessing.set_start_method", "torch.multiprocessing.get_sharing_strategy", "torch.get_num_threads",
)
