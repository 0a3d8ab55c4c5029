from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from ddplint.analyses.configs import CONFIG_LOADERS
from ddplint.analyses.options import Branch, ParserOptions
from ddplint.analyses.ranks import RANK_FUNCTIONS, RANK_NAMES, RankRegions, environment_key
from ddplint.core.diagnostics import StepKind
from ddplint.core.torch_api import (
    ACCELERATE_DEVICE_SPECIFIC, ACCELERATE_SET_SEED, ACCELERATE_SPLIT_METHOD, ACCELERATOR, ALL_GENERATORS, BROADCAST, CLICK_OPTIONS, DDP, ENV_PACKAGES, ENV_RESET,
    DATALOADER, ENV_SEED, FABRIC, GET_WORKER_INFO, WORKER_ID_ATTRIBUTE, FABRIC_SEED_METHOD, GENERATOR_SEED_METHOD, NOT_DRAWS, NUMPY_RANDOM, PYTHON_RANDOM_DRAWS, RANK_ENVIRONMENT, SEED_CALLS, generators_seeded,
    LIGHTNING_HPARAMS, LIGHTNING_MODULE, LIGHTNING_SEED_WORKERS, NN_MODULE, SAME_VALUE_METHODS, SEED_MARKERS, SEQUENTIAL, TORCH_DRAWS, TORCH_GENERATOR,
    TORCHVISION_COMPOSE, TORCHVISION_IMAGE_FOLDER, TORCHVISION_RANDOM_TRANSFORMS,
)
from ddplint.model.records import CallResult, Instance, Loader, Place
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.prefilter.screens import dotted
from ddplint.prefilter.triggers import CallTrigger
from ddplint.rules.rule import Clean, Flagged, Framework, Link, Rule
from ddplint.semantic.edits import argument_for, keyword_argument
from ddplint.semantic.model import dotted_name
from ddplint.semantic.walk import NodeMemo, children

# Calls that iterate their first argument's items as they come: `enumerate(tqdm(loader))`.
_PASS_THROUGH = frozenset({"enumerate", "tqdm", "tqdm.tqdm", "iter"})
# Calls whose result is as rank-free as their argument: `int(args.seed)`.
CONVERSIONS = frozenset({"int", "float", "str", "abs"})
DRAW_GENERATOR = "generator"  # a draw given its own generator does not use the seeded one
RANK_WORDS = ("rank", "process_index")
CONSTRUCTOR = "__init__"  # a seed there runs whenever an object of its class is built
# the golden message of an example, up to the draw it names
_SEEDED = (
    "the same seed on every rank feeds the random draws of each training step (noise, timesteps, indices): every "
    "rank draws the same values; add the rank to this seed (seed + rank; Accelerate: set_seed(seed, "
    "device_specific=True)), keeping a shared seed only for model initialisation "
)


@dataclass
class _Bound:
    name: str
    frame: str | None
    cls: str | None
    value: cst.BaseExpression
    order: int
    default_fill: bool  # under `if <name> is None:`: it only fills in a missing option


@dataclass
class _Seed:
    call: cst.Call
    value: cst.BaseExpression | None
    generators: frozenset[str]
    frame: str | None
    cls: str | None
    order: int
    specific: bool = False  # Accelerate's device_specific=True: it adds the process index
    through: str | None = None  # the project function that seeds with its parameter (`seed_everything`)
    branches: tuple[Branch, ...] = ()  # the `if`s around it (`if args.seed is not None:`)
    private: str | None = None  # the name of the generator of its own it seeds (`g.manual_seed(seed)`)


@dataclass
class _LoopCall:
    call: cst.Call
    callee: str | None
    loops: tuple[int, ...]  # ids of the loops around it, outermost first
    frame: str | None
    order: int
    periodic: bool = False  # under an `if` that takes a modulo (`if step % args.sample_every == 0:`)


class SharedSeedDataPath(Rule):
    """
    Seeding every rank with one value makes every rank's random generator produce the same
    sequence. That is what model initialisation wants (every replica starts from the same
    weights), but it is wrong for the draws that make each rank's training data: the diffusion
    noise and timesteps a training step draws, the random indices or masks it samples, the
    rollouts an environment produces. With one seed, every rank draws the same values on every
    step: the ranks train on the same noise for their different images (or the same rollouts),
    so the extra ranks add far less information than they cost. Nothing fails; the run just
    learns like a smaller one. Lightning's `seed_everything`, Accelerate's and Hugging Face's
    `set_seed` seed torch, numpy and Python's `random` with the same value on every rank
    (Accelerate adds the process index only with `device_specific=True`).

    Measured on CPU with gloo, two ranks (ddplint/harness/scenarios/ddp027/experiment_shared_seed.py):
    after `torch.manual_seed(42)` on both ranks, the timesteps (`torch.randint`) and the noise
    (`torch.randn`) of each of five training steps are identical on the two ranks; with
    `torch.manual_seed(42 + rank)` they differ on every step.

    Fires when a seeding call (`torch.manual_seed`, `numpy.random.seed`, `random.seed`, Lightning's and
    Fabric's `seed_everything`, Accelerate's `set_seed` without `device_specific=True`,
    `transformers.set_seed`, or a project function that seeds with its parameter alone:
    `seed_everything(seed)` calling `torch.manual_seed(seed)`, not one that first binds it to
    something else, `seed = seed + distributed_rank()`, followed through the program
    model across modules; called without it, `set_seed()`, it seeds with the parameter's default) with a value that is the same on every rank (a literal, a
    command-line option or configuration value, a module constant, or a local name bound to one;
    or a parameter of its function that click fills from the command line, `@click.option("--seed",
    default=42)`, or that every call of the function in the project fills so: passes it one,
    leaves it at a literal default, or unpacks a configuration file it loads into it,
    `main(**OmegaConf.load(args.config))`, the same file on every rank; a key read from an option
    or configuration mapping, `config.get("seed", None)`; or what a project function gives back
    when each of its returns is such a parameter, a tensor rank 0 broadcast to every rank, or
    under `if world_size == 1:`: open-mmlab's `config.seed = init_random_seed(config.get("seed"))`,
    the configuration's seed or else rank 0's random one; nothing with a rank,
    process index or rank variable in it) runs on every rank, and later in
    the same function (or in a function of the module that it calls after the seed, as a script
    seeding in module code then calling `train()` does, unless that function seeds again
    first; or in a method of a project class, in any module, called after the seed on an object
    of it made in that function: `task = Experiment(args)`, then `task.train()`, or named nowhere:
    `Trainer(fabric, config).train_loop()`, unless the
    method seeds before its loop) a training loop (the innermost loop that runs a backward)
    draws from the generator it seeded on every step: a torch, numpy or Python `random` draw (`random.random`,
    `randint`, `uniform`, `choice`, `shuffle`, `sample`, `gauss`, ..., also imported by name) in the loop, or in a project
    function the loop calls (followed through the program model, across modules, up to four
    calls deep; a call of a module object, `loss = model(x)` or `self.augment(batch)`, runs the
    `forward` of its project nn.Module class, known when every binding of the name makes one:
    `Net(...)`, through `DDP(...)`, `accelerator.prepare(...)`, `.to(device)` or `.cuda()`, a
    `self.sub = Sub(...)` of the class, or each module of an `nn.Sequential(...)`; a method with
    no training loop of its own is followed into the methods of its object it calls), or in a function defined inside the seeding function that the loop calls (a
    step written as `def process_iteration():` in the epoch loop, whose backward makes the loop
    a training loop), or in the `__getitem__` of a project Dataset class whose object a
    DataLoader built in that function reads while the training loop iterates it (also when the
    loop is in a function defined inside the seeding one that reads its DataLoader as a closure,
    `def train(epoch):` called from main()'s epoch loop, or in a project function, in any module,
    that the seeding function calls after the seed, up to four calls down through functions that
    seed nothing, and that iterates a DataLoader the program model knows it is handed or given
    back wherever it was built, `train_one_epoch(model, data_loader, ...)` or `loader =
    make_loader(dataset)`, a DataLoader over a DistributedSampler (`Loader` values), with its
    Dataset an object of a project class made where the loader is built or handed to it (also
    through a project function each of whose returns makes one: `dataset = build_dataset(args)`
    returning `Clips(...)` or `Flips(...)`, each of which must draw), or
    torchvision's ImageFolder given a `transform=` that draws: a torchvision random transform
    (`RandomResizedCrop`, `RandomHorizontalFlip`, `ColorJitter`, ...: each call draws from torch's
    generator), a `transforms.Compose([...])` holding one, or an object of a project class
    whose `__call__` draws, also through a transform it keeps on `self`, `self.global_transfo1 =
    transforms.Compose([...])` in DINO's `DataAugmentationDINO`; a class picked by a name known only at
    run time, `getattr(datasets, config["dataset"])(...)`, counts when
    the project module holds nothing but classes and each of them with a `__getitem__` draws so;
    one picked by an option, `Dataset = COCO if cfg.dataset == "coco" else VOC`, counts when the
    class every documented run picks, or else each of them, draws so). Without worker
    processes (`num_workers` left out or 0) each rank's own process draws the augmentations from
    the seeded generators: Python's `random` only when the seed seeded it (`random.seed`,
    `seed_everything`, `set_seed`, a project helper calling `random.seed` with its parameter);
    `torch.manual_seed` and `numpy.random.seed` leave it as Python seeded it from the OS in each
    process. With workers, when the seed seeds torch's generator and the
    DataLoader is given no `worker_init_fn` and no `generator=`: each pass over it draws the
    workers' base seed from torch's default generator (`_BaseDataLoaderIter.__init__` in
    torch/utils/data/dataloader.py: `torch.empty((), dtype=torch.int64).random_(generator=
    loader.generator)`), the same on every rank after the same seed and the same draws, and
    worker k seeds torch and Python's `random` with `base_seed + k` and numpy with
    `_generate_state(base_seed, k)` (`_worker_loop` in torch/utils/data/_utils/worker.py, torch
    1.9 and later; `seed = base_seed + worker_id; random.seed(seed); torch.manual_seed(seed)` in
    torch 2.13), so a torch seed alone makes the workers' Python draws alike too: worker k of
    every rank draws the same augmentations for its different images (a worker count given by an option counts when every documented run starts workers,
    its default and each value a launch command passes; a worker count the function cannot know counts only the draws from generators the
    seed itself seeded, which hold either way). Also when the seed is in a function of the
    module that a DataLoader there is given as `worker_init_fn` (`np.random.seed(opt.seed +
    worker_id)`, the worker id counting as the same on every rank: worker k of every rank runs it
    with k), the DataLoader is not shown to start no workers (the function runs first in each
    worker), its Dataset's `__getitem__` draws from a generator it seeds, and a training loop
    after it iterates it, in the function that builds it or one it calls (a `Loader` value):
    worker k of every rank draws the same augmentations. Also when a function seeds generators
    with the DataLoader worker's id alone (`np.random.seed(get_worker_info().id)` in a Dataset's
    `__getitem__` on its worker's first item: `get_worker_info()` is None outside a worker, and its
    `id` is k in worker k of every rank's DataLoader) and then draws from them, itself or in a
    project function it calls after the seed (the sample's augmentation): worker k of every rank
    draws the same augmentation stream. Also when a gym or gymnasium environment built in the function is reset with
    `reset(seed=...)` of such a value and stepped there: every rank's environments emit the same
    observations. Also when the seed is in the `__init__` of a project class and a function of
    its module builds an object of that class and then calls a method of it whose training loop
    draws so (`trainer = Trainer(args)`, then `trainer.train()`), unless that function seeds the
    same generators again between the two. Also when a generator of its own (`g = torch.Generator(device=d).manual_seed(23123134)`,
    or `g.manual_seed(args.seed)`) is seeded with such a value on every rank and a training loop
    after it in the same function hands it to a torch draw on every step (`torch.rand(n,
    generator=g)`: the conditioning-dropout mask, the noise, the timesteps), or iterates a DataLoader
    with worker processes given it as `generator=` (PyTorch's reproducibility recipe, `g.manual_seed(0)`):
    each pass draws the workers' base seed from it, so worker k of every rank seeds torch, numpy
    and random alike and its Dataset's `__getitem__` draws the same augmentations (also with a
    `worker_init_fn` of the module that reseeds from `torch.initial_seed()` without the rank);
    reported at its `manual_seed`. Also when the `__init__` of a LightningModule seeds (its
    `self.hparams`, the arguments `save_hyperparameters()` kept, counting as configuration) and a
    function of its module builds it and has a Trainer fit it: the Trainer runs its
    `training_step` on every rank, every step. A Trainer's fit also iterates the DataLoader its
    module's `train_dataloader` builds on every rank: after `seed_everything(seed)` (without
    `workers=True`, whose worker_init_fn adds the rank), its Dataset's `__getitem__` draws alike
    in worker k of every rank (or in each rank's own process without workers); the module may be
    a class the fitting function is handed, `model = model_class(**vars(args))`, when its
    default and what every call passes are project classes and each of them draws so.

    Not flagged: a seed with the rank in it (`seed + rank`, `args.seed + dist.get_rank()`, `seed +
    fabric.global_rank`, `device_specific=True`, a variable one branch binds to the rank: nanoGPT's
    `seed_offset = ddp_rank` under `if ddp:` and `seed_offset = 0` under its `else:`); a seed only
    rank 0 runs; a seed no documented run makes (`if args.seed is not None:`, the Hugging Face
    examples' idiom, where `--seed` defaults to None and no launch command of the project passes
    it: each rank keeps its own unseeded generator); a seed whose value the function cannot
    know (a parameter no call shows, a call); seeding for model initialisation only (no draw in the training
    loop after it); a shared seed that only
    orders the data before a sampler splits it across ranks (dataset shuffles, bucket orders and
    DistributedSampler's seed happen outside the training loop); a draw in the training loop whose result the
    loop hands to Accelerate's `split_between_processes` (`batch = random.sample(prompts, k)`:
    every rank samples the same batch so that each takes its own slice of it); a draw given its own `generator=` (judged by that
    generator's seed); a draw only under a periodic branch of the training loop (`if it %
    conf.eval_every_iter == 0: do_evaluation(...)`: validation or plotting, not a step's data);
    model-parallel seeds (Megatron's adds the pipeline or model-parallel rank); a generator of its own
    seeded per rank, or whose draws only initialise the model, come only under a periodic branch
    (`if step % args.sample_every == 0:`: sampling, validation) or feed a pipeline
    (`pipeline(prompt, generator=g)`). Not followed yet:
    the draws of a Lightning `training_step` where the module a Trainer fits is named only in a
    configuration file, an object of a class whose `__init__` seeds (or a method `__init__`
    calls) built in another module or picked by a configuration (`hydra.utils.get_class`), a
    DataLoader the program model does not follow (no DistributedSampler, built from a
    configuration), a seed from the worker id bound to a name first (`wid = info.id`), a `worker_init_fn` of another
    module than its DataLoader's, or over a Dataset a configuration picks, a Python generator of its own
    (`rng = random.Random(seed)`), and a torch generator of its own handed to a project function
    or kept on `self` for another method.

    No fix: add the rank to the seed of the data draws (`torch.manual_seed(seed + rank)` after
    building the model; Accelerate: `set_seed(seed, device_specific=True)`), or give the data
    draws a generator of their own seeded per rank; which one keeps initialisation identical is
    the program's choice.
    """

    code = "DDP027"
    name = "shared-seed-data-path"
    needs_ranks = True
    frameworks = (Framework.DDP, Framework.ACCELERATE, Framework.LIGHTNING, Framework.FABRIC, Framework.HUGGING_FACE)
    message = (
        "the same seed on every rank feeds the random draws of each training step (noise, timesteps, indices): "
        "every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
        "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation"
    )
    env_message = (
        "environments reset with the same seed on every rank emit the same observations: every rank collects "
        "the same rollouts; add the rank to the seed (seed + rank * num_envs)"
    )
    generator_message = (
        "a generator seeded with the same value on every rank feeds the random draws of each training step "
        "(noise, timesteps, masks): every rank draws the same values; add the rank to its seed (seed + rank)"
    )
    # `also`: ranks run it (met in any module of a distributed project).
    # (or a Lightning Trainer's DDP strategy, which runs the script on every device)
    # a generator of its own is seeded by its method, and made by `torch.Generator(...)` first: that
    # call admits the file (a `.manual_seed(` of anything would admit every file seeding CUDA)
    trigger = CallTrigger(SEED_CALLS | TORCH_GENERATOR, methods=(FABRIC_SEED_METHOD, ENV_RESET), also=(SEED_MARKERS,))
    # the seed is often in a script that reaches the ranks' launcher only through a helper
    opened_by = frozenset((ProjectFact.DISTRIBUTED, ProjectFact.SEED_HELPER))
    # a helper called through its module (`utils.fix_random_seeds(seed)`), which the screen cannot bind
    unscreened_by = frozenset((ProjectFact.SEED_HELPER,))
    analyses = (RankRegions, ParserOptions)

    flagged_examples = (
        Flagged(
            # The seed is a parameter: every call of the function fills it from the configuration
            # file it loads (the same file on every rank), or passes it an option.
            """
            import argparse
            import torch
            from accelerate import Accelerator
            from accelerate.utils import set_seed
            from omegaconf import OmegaConf

            def main(loader, model, optimizer, seed=None):
                accelerator = Accelerator()
                if seed is not None:
                    set_seed(seed)
                    ^
                for latents in loader:
                    timesteps = torch.randint(0, 1000, (latents.shape[0],))
                    accelerator.backward(model(latents, timesteps).mean())
                    optimizer.step()

            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--config", default="configs/train.yaml")
                args = parser.parse_args()
                main(**OmegaConf.load(args.config))
            """,
            messages=(_SEEDED + "(torch.randint in the training loop below)",),
        ),
        Flagged(
            # click fills the parameter from the command line: the same value on every rank.
            """
            import click
            import torch
            import torch.distributed as dist

            @click.command()
            @click.option("--seed", default=42, help="Seed for rng")
            def main(seed):
                dist.init_process_group("nccl")
                torch.manual_seed(seed)
                ^
                for images in loader:
                    lam = torch.rand(1)
                    model(lam * images).mean().backward()
                    optimizer.step()
            """,
            messages=(_SEEDED + "(torch.rand in the training loop below)",),
        ),
        Flagged(
            # Seeded in module code; the training loop is in train(), which the script calls after.
            """
            import torch
            import torch.distributed as dist

            SEED = 42
            torch.manual_seed(SEED)
            ^

            def train(model, loader, optimizer):
                for images in loader:
                    noise = torch.randn_like(images)
                    model(images + noise).mean().backward()
                    optimizer.step()

            if __name__ == "__main__":
                dist.init_process_group("nccl")
                train(model, loader, optimizer)
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randn_like in the training loop of train(), called below)"
            ),
        ),
        Flagged(
            # The epoch loop calls the function that trains; a seed before an earlier one is overridden.
            """
            import numpy as np
            import torch.distributed as dist

            def train_epoch(model, loader, optimizer):
                for images in loader:
                    lam = np.random.beta(1.0, 1.0)
                    model(lam * images).mean().backward()
                    optimizer.step()

            def main():
                np.random.seed(1)
                dist.init_process_group("nccl")
                np.random.seed(0)
                ^
                for epoch in range(10):
                    train_epoch(model, loader, optimizer)
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(numpy.random.beta in the training loop of train_epoch(), called below)"
            ),
        ),
        Flagged(
            # Lightning's DDP strategy runs the script on every device; the module it fits draws
            # its noise in training_step, from the generator the shared seed set.
            """
            import lightning as L
            import torch

            class Denoiser(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    noise = torch.randn_like(batch)
                    return self.net(batch + noise).pow(2).mean()

            def main():
                L.seed_everything(42)
                ^
                model = Denoiser()
                trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp")
                trainer.fit(model)
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randn_like at example.py:6, in Denoiser.training_step, which trainer.fit runs each step)"
            ),
        ),
        Flagged(
            # The base's training_step draws through methods it leaves abstract: a call of
            # `self.sample_timesteps(...)` runs the one subclass's override, which draws.
            """
            from abc import ABC, abstractmethod

            import torch
            from pytorch_lightning.core import LightningModule
            from pytorch_lightning.trainer import Trainer, seed_everything

            class Diffusion(LightningModule, ABC):
                @abstractmethod
                def sample_timesteps(self, n):
                    raise NotImplementedError

                def training_step(self, batch, batch_idx):
                    t = self.sample_timesteps(batch.shape[0])
                    return self.net(batch, t).pow(2).mean()

            class FrameDiffusion(Diffusion):
                def sample_timesteps(self, n):
                    return torch.randint(0, 1000, size=(n,))

            def main(config):
                seed_everything(config.seed, workers=True)
                ^
                model = FrameDiffusion(config)
                trainer = Trainer(gpus=config.gpus, strategy="ddp")
                trainer.fit(model)
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randint at example.py:18, in FrameDiffusion.training_step, which trainer.fit runs each step)"
            ),
        ),
        Flagged(
            # The LightningModule seeds in its `__init__` with a saved hyperparameter (the
            # configuration every rank loads); the Trainer then fits it, and its training_step
            # draws the noise of each step from that generator on every rank.
            """
            import lightning as L
            import torch

            class Vocoder(L.LightningModule):
                def __init__(self, **hparams):
                    super().__init__()
                    self.save_hyperparameters()
                    torch.manual_seed(self.hparams.train.seed)
                    ^

                def training_step(self, batch, batch_idx):
                    noise = torch.randn_like(batch)
                    return self.net(batch + noise).pow(2).mean()

            def train(hparams):
                trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp")
                model = Vocoder(**hparams)
                trainer.fit(model)
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randn_like at example.py:11, in Vocoder.training_step, which trainer.fit runs each step on "
                "this object)"
            ),
        ),
        Flagged(
            # The training loop is a method of a project class, run through an object of it.
            """
            import torch
            from accelerate import Accelerator

            class Experiment:
                def __init__(self, args):
                    self.accelerator = Accelerator()
                    self.steps = args.steps

                def fit(self, model, loader, optimizer):
                    for images in loader:
                        t = torch.randint(0, self.steps, (images.shape[0],))
                        self.accelerator.backward(model(images, t).mean())
                        optimizer.step()

            def main(args):
                torch.manual_seed(7)
                ^
                runner = Experiment(args)
                runner.fit(build_model(), build_loader(), None)
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randint at example.py:11, in the training loop of Experiment.fit(), called below)"
            ),
        ),
        Flagged(
            # The same through an object named nowhere: the class is made and its loop run at once.
            """
            import lightning as L
            import torch

            class Trainer:
                def __init__(self, fabric, model, loader):
                    self.fabric, self.model, self.loader = fabric, model, loader

                def train_loop(self):
                    for latents in self.loader:
                        noise = torch.randn_like(latents)
                        self.fabric.backward(self.model(latents + noise).mean())

            def main(config, model, loader):
                fabric = L.Fabric(devices=-1, strategy="ddp")
                fabric.launch()
                fabric.seed_everything(config.seed)
                ^
                Trainer(fabric, model, loader).train_loop()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randn_like at example.py:10, in the training loop of Trainer.train_loop(), called below)"
            ),
        ),
        Flagged(
            # The seed is in the constructor; the loop in another method of the same object,
            # which the entry point calls after building it.
            """
            import torch
            from accelerate import Accelerator
            from accelerate.utils import set_seed

            class VideoTrainer:
                def __init__(self, args, model, loader):
                    self.accelerator = Accelerator()
                    set_seed(args.seed)
                    ^
                    self.model, self.loader = model, loader

                def train(self):
                    for latents in self.loader:
                        noise = torch.randn_like(latents)
                        self.accelerator.backward(self.model(latents + noise).mean())

            def main(args, model, loader):
                trainer = VideoTrainer(args, model, loader)
                trainer.train()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randn_like at example.py:13, in the training loop of VideoTrainer.train(), which main() "
                "calls on this object)"
            ),
        ),
        Flagged(
            # A seeding helper called without its argument seeds with its default, on every rank.
            """
            import random
            import torch
            import torch.distributed as dist

            def set_seed(seed=42):
                random.seed(seed)
                torch.manual_seed(seed)

            def main(model, loader, optimizer):
                dist.init_process_group("nccl")
                set_seed()
                ^
                for step, (images, labels) in enumerate(loader):
                    loss = model(images + 0.1 * torch.randn_like(images), labels)
                    loss.backward()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randn_like in the training loop below)"
            ),
        ),
        Flagged(
            # A seed agreed across the ranks (the configuration's, or else rank 0's broadcast:
            # open-mmlab's `init_random_seed`) is the same on every rank by design.
            """
            import numpy as np
            import torch
            import torch.distributed as dist

            def init_random_seed(seed=None, device="cuda"):
                if seed is not None:
                    return seed
                rank, world_size = dist.get_rank(), dist.get_world_size()
                seed = np.random.randint(2**31)
                if world_size == 1:
                    return seed
                if rank == 0:
                    random_num = torch.tensor(seed, dtype=torch.int32, device=device)
                else:
                    random_num = torch.tensor(0, dtype=torch.int32, device=device)
                dist.broadcast(random_num, src=0)
                return random_num.item()

            def main(config, model, loader, optimizer):
                dist.init_process_group("nccl")
                config.seed = init_random_seed(config.get("seed", None))
                torch.manual_seed(config.seed)
                ^
                for images in loader:
                    timesteps = torch.randint(0, 1000, (images.shape[0],))
                    model(images, timesteps).mean().backward()
                    optimizer.step()
            """,
            messages=_SEEDED + "(torch.randint in the training loop below)",
        ),
        Flagged(
            # A DataLoader without workers runs the Dataset's __getitem__ in each rank's own
            # process: its augmentations draw from the stream the shared seed set.
            """
            import numpy as np
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            class Skeletons(Dataset):
                def __init__(self, data):
                    self.data = data

                def __len__(self):
                    return len(self.data)

                def __getitem__(self, index):
                    sample = self.data[index]
                    if np.random.rand() < 0.5:
                        sample = np.flip(sample, axis=0)
                    return sample

            def main(args, model, optimizer):
                np.random.seed(42)
                ^
                dist.init_process_group("nccl")
                dataset = Skeletons(np.load(args.data))
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset), batch_size=args.batch_size)
                for epoch in range(args.epochs):
                    for batch in enumerate(loader):
                        model(batch).mean().backward()
                        optimizer.step()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(numpy.random.rand at example.py:14, in Skeletons.__getitem__, which the training loop's DataLoader "
                "runs in this process (no workers) each step)"
            ),
        ),
        Flagged(
            # With worker processes, each pass over the DataLoader draws the workers' base seed
            # from torch's generator: the same on every rank after the same seed, so worker k of
            # every rank seeds numpy alike and draws the same crops for different images.
            """
            import numpy as np
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            class Crops(Dataset):
                def __getitem__(self, index):
                    top = np.random.randint(0, 32)
                    return self.images[index][top:top + 224]

            def main(args, model, optimizer):
                torch.manual_seed(args.seed)
                ^
                dist.init_process_group("nccl")
                workers = 8
                dataset = Crops(np.load(args.data))
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset), num_workers=workers)
                while True:
                    for images in loader:
                        optimizer.zero_grad()
                        model(images).sum().backward()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(numpy.random.randint at example.py:8, in Crops.__getitem__, which the training loop's DataLoader "
                "workers run each step, seeded from torch's generator alike on every rank)"
            ),
        ),
        Flagged(
            # The loader is handed to the function whose loop trains: the program model follows
            # it there, and its workers still take their base seed from torch's seeded generator.
            """
            import random
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            class Clips(Dataset):
                def __getitem__(self, index):
                    start = random.randint(0, 100)
                    return self.clips[index][start:start + 200]

            def train_one_epoch(model, loader, optimizer):
                for clips in loader:
                    optimizer.zero_grad()
                    model(clips).mean().backward()
                    optimizer.step()

            def main(model, optimizer):
                dist.init_process_group("nccl")
                torch.manual_seed(1234)
                ^
                dataset = Clips()
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset), num_workers=16)
                for epoch in range(10):
                    train_one_epoch(model, loader, optimizer)
            """,
            messages=(
                _SEEDED + "(random.randint at example.py:8, in Clips.__getitem__, which the workers of the DataLoader "
                "built at example.py:21 run each step of the training loop of train_one_epoch(), seeded from torch's "
                "generator alike on every rank)",
            ),
        ),
        Flagged(
            # Python's `random` is seeded by `random.seed` (here through a project helper): a
            # DataLoader without workers runs __getitem__'s flips in each rank's own process,
            # from the stream the shared seed set.
            """
            import random
            import numpy as np
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            def fix_seeds(seed=0):
                random.seed(seed)
                np.random.seed(seed)
                torch.manual_seed(seed)

            class Poses(Dataset):
                def __getitem__(self, index):
                    drop = random.random() < 0.2  # drop a body part from this clip
                    return self.clips[index] * (self.parts != random.randrange(5) if drop else 1)

            def main(args, model, optimizer):
                dist.init_process_group("nccl")
                fix_seeds()
                ^
                dataset = Poses(np.load(args.data))
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset), batch_size=32)
                for epoch in range(args.epochs):
                    for clips in loader:
                        model(clips).mean().backward()
                        optimizer.step()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(random.random at example.py:14, in Poses.__getitem__, which the training loop's DataLoader "
                "runs in this process (no workers) each step)"
            ),
        ),
        Flagged(
            # With workers, worker k seeds Python's `random` with base_seed + k, and the base seed
            # comes from torch's generator: a torch seed alone makes the crops alike on every rank.
            """
            import random
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            class StereoPairs(Dataset):
                def __getitem__(self, index):
                    left, right = self.pairs[index]
                    x = random.randint(0, left.shape[-1] - 256)
                    return left[..., x:x + 256], right[..., x:x + 256]

            def main(args, model, optimizer):
                torch.manual_seed(args.seed)
                ^
                dist.init_process_group("nccl")
                dataset = StereoPairs()
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset), num_workers=2)
                for left, right in loader:
                    optimizer.zero_grad()
                    model(left, right).mean().backward()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(random.randint at example.py:9, in StereoPairs.__getitem__, which the training loop's DataLoader "
                "workers run each step, seeded from torch's generator alike on every rank)"
            ),
        ),
        Flagged(
            # The Dataset comes from a project function that returns an object of a project
            # class on each of its paths (`build_dataset(args)`): each class it may be draws, in
            # the workers that torch's seeded generator seeds alike on every rank.
            """
            import random
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            class Crops(Dataset):
                def __getitem__(self, index):
                    x = random.randint(0, 32)
                    return self.images[index][..., x:x + 224]

            class Flips(Crops):
                def __getitem__(self, index):
                    return self.images[index].flip(-1) if random.random() < 0.5 else self.images[index]

            def build_dataset(args):
                if args.flip:
                    return Flips()
                return Crops()

            def main(args, model, optimizer):
                torch.manual_seed(args.seed)
                ^
                dist.init_process_group("nccl")
                dataset = build_dataset(args)
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset), num_workers=4)
                for images in loader:
                    optimizer.zero_grad()
                    model(images).mean().backward()
            """,
            messages=(
                _SEEDED + "(random.random at example.py:13, in Flips.__getitem__ (or another of the 2 Dataset classes "
                "it may be: each draws so), which the training loop's DataLoader workers run each step, seeded from "
                "torch's generator alike on every rank)",
            ),
        ),
        Flagged(
            # A draw of Python's `random` in the loop, its function imported by name.
            """
            import random
            from random import uniform
            import torch.distributed as dist
            import torch.nn.functional as F

            def train(args, model, loader, optimizer):
                dist.init_process_group("nccl")
                random.seed(args.seed)
                ^
                for images in loader:
                    scale = uniform(0.5, 1.5)
                    model(F.interpolate(images, scale_factor=scale)).mean().backward()
                    optimizer.step()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(random.uniform in the training loop below)"
            ),
        ),
        Flagged(
            # The step is a function defined inside the epoch loop: its noise is drawn each step.
            """
            import os
            import torch
            import torch.distributed as dist

            def main():
                torch.manual_seed(42)
                ^
                dist.init_process_group("nccl", rank=int(os.environ["RANK"]))
                for epoch in range(10):
                    def process_iteration():
                        noise = torch.randn(images.shape[0], 100, 1, 1)
                        loss = model(noise).mean()
                        loss.backward()
                    for images in loader:
                        process_iteration()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randn through process_iteration() in the training loop below)"
            ),
        ),
        Flagged(
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            def main(args):
                dist.init_process_group("nccl")
                rank = dist.get_rank()
                torch.manual_seed(args.seed)
                ^
                model = DDP(build_unet().to(rank), device_ids=[rank])
                for images in loader:
                    t = torch.randint(0, 1000, (images.shape[0],), device=rank)
                    noise = torch.randn_like(images)
                    loss = (model(add_noise(images, noise, t), t) - noise).pow(2).mean()
                    loss.backward()
                    optimizer.step()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randint in the training loop below)"
            ),
        ),
        Flagged(
            """
            import torch
            from accelerate import Accelerator
            from accelerate.utils import set_seed

            SEED = 42

            def train(args):
                accelerator = Accelerator()
                seed = SEED if args.seed is None else args.seed
                set_seed(seed)
                ^
                for epoch in range(args.epochs):
                    for batch in loader:
                        loss = diffusion_loss(model, batch)
                        accelerator.backward(loss)
                        optimizer.step()

            def diffusion_loss(model, latents):
                noise = torch.randn_like(latents)
                timesteps = sample_timesteps(latents.shape[0])
                return (model(latents + noise, timesteps) - noise).pow(2).mean()

            def sample_timesteps(n):
                return torch.randint(0, 1000, (n,))
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.randn_like at example.py:18, reached from the training loop each step)"
            ),
        ),
        Flagged(
            # A project helper that seeds the generators with its parameter seeds them with the
            # value it is handed.
            """
            import random
            import numpy as np
            import torch
            import torch.distributed as dist

            def seed_everything(seed):
                random.seed(seed)
                np.random.seed(seed % 2**32)
                torch.manual_seed(seed)

            def main(args, loader, model, optimizer):
                dist.init_process_group("nccl")
                seed_everything(args.seed)
                ^
                for images in loader:
                    keep = torch.rand(images.shape[0]) < args.keep
                    model(images[keep]).mean().backward()
                    optimizer.step()
            """,
            messages=(
                "the same seed on every rank feeds the random draws of each training step (noise, timesteps, "
                "indices): every rank draws the same values; add the rank to this seed (seed + rank; Accelerate: "
                "set_seed(seed, device_specific=True)), keeping a shared seed only for model initialisation "
                "(torch.rand in the training loop below)"
            ),
        ),
        Flagged(
            """
            import gymnasium as gym
            import torch.distributed as dist

            def collect(args, policy, rank):
                dist.init_process_group("gloo")
                envs = gym.vector.SyncVectorEnv([make_env(args.env_id, args.seed + rank * 4 + i) for i in range(4)])
                obs, _ = envs.reset(seed=args.seed)
                         ^
                for step in range(args.num_steps):
                    obs, reward, done, truncated, info = envs.step(policy(obs))
            """,
            messages=(
                "environments reset with the same seed on every rank emit the same observations: every rank "
                "collects the same rollouts; add the rank to the seed (seed + rank * num_envs)"
            ),
        ),
        Flagged(
            # A generator of its own, seeded with a constant, draws the conditioning-dropout mask
            # of every step; the global seed is never set (no run passes --seed).
            """
            import argparse
            import torch
            from accelerate import Accelerator
            from accelerate.utils import set_seed

            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--seed", type=int, default=None)
                args = parser.parse_args()
                accelerator = Accelerator()
                generator = torch.Generator(device=accelerator.device).manual_seed(23123134)
                                                                       ^
                if args.seed is not None:
                    set_seed(args.seed)
                for step, latents in enumerate(loader):
                    random_p = torch.rand(latents.shape[0], device=latents.device, generator=generator)
                    conditioning = cond * (random_p >= 0.1)
                    accelerator.backward(model(latents, conditioning).mean())
                    optimizer.step()
            """,
            messages=(
                "a generator seeded with the same value on every rank feeds the random draws of each training "
                "step (noise, timesteps, masks): every rank draws the same values; add the rank to its seed "
                "(seed + rank) (torch.rand(generator=generator) in the training loop below)"
            ),
        ),
        Flagged(
            # A Dataset that seeds numpy in each DataLoader worker with the worker id alone, then
            # draws its augmentation: worker k of every rank seeds k, so the workers of all ranks
            # draw the same scales item after item.
            """
            import numpy as np
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, get_worker_info

            class Pairs(Dataset):
                def __init__(self):
                    self.seeded = False

                def __getitem__(self, index):
                    if not self.seeded:
                        worker_info = get_worker_info()
                        if worker_info is not None:
                            np.random.seed(worker_info.id)
                            ^
                            self.seeded = True
                    scale = np.random.uniform(0.5, 2.0)
                    return index * scale

            def main(model):
                dist.init_process_group("nccl")
                loader = DataLoader(Pairs(), num_workers=4)
                for batch in loader:
                    model(batch).mean().backward()
            """,
            messages=(_SEEDED + "(numpy.random.uniform after this seed, in worker k of every rank)",),
        ),
        Flagged(
            # PyTorch's reproducibility recipe on every rank: the DataLoader draws its workers'
            # base seed from the generator it is given, seeded with 0 on every rank, so worker k of
            # every rank seeds torch and random with the same base_seed + k (and seed_worker reseeds
            # them from that): the workers of all ranks rotate their different images alike.
            """
            import random
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            class Lanes(Dataset):
                def __getitem__(self, index):
                    angle = random.uniform(-10.0, 10.0)
                    return self.images[index], angle

            def seed_worker(worker_id):
                worker_seed = torch.initial_seed() % 2**32
                random.seed(worker_seed)

            def train(model, optimizer):
                dist.init_process_group("nccl")
                dataset = Lanes()
                g = torch.Generator()
                g.manual_seed(0)
                  ^
                loader = DataLoader(dataset, sampler=DistributedSampler(dataset), num_workers=4,
                                    worker_init_fn=seed_worker, generator=g)
                for epoch in range(10):
                    for images, angles in loader:
                        model(images, angles).mean().backward()
                        optimizer.step()
            """,
            messages=(
                "a generator seeded with the same value on every rank feeds the random draws of each training step "
                "(noise, timesteps, masks): every rank draws the same values; add the rank to its seed (seed + rank) "
                "(random.uniform at example.py:8, in Lanes.__getitem__, which the training loop's DataLoader workers "
                "run each step, seeded from `g` alike on every rank)"
            ),
        ),
    )
    clean_examples = (
        Clean(
            # The DataLoader's generator is seeded alike, but a worker_init_fn adds the rank to
            # what each worker draws from, or the loader starts no workers (the generator then
            # only orders the indices, and the sampler splits them across ranks).
            """
            import random
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            class Lanes(Dataset):
                def __getitem__(self, index):
                    return self.images[index], random.uniform(-10.0, 10.0)

            def seed_worker(worker_id):
                random.seed(torch.initial_seed() % 2**32 + dist.get_rank())

            def train(model, optimizer, workers):
                g = torch.Generator().manual_seed(0)
                lanes = Lanes()
                dist.init_process_group("nccl")
                per_rank = DataLoader(lanes, num_workers=4, generator=g, worker_init_fn=seed_worker,
                                      sampler=DistributedSampler(lanes))
                no_workers = DataLoader(lanes, sampler=DistributedSampler(lanes), generator=g)
                for images, angles in per_rank:
                    model(images, angles).mean().backward()
                for images, angles in no_workers:
                    model(images, angles).mean().backward()
            """
        ),
        Clean(
            # The worker id with the rank added, the id of another object than the worker's
            # information, and a seed from the worker id that nothing after it draws from.
            """
            import random
            import numpy as np
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, get_worker_info

            class Pairs(Dataset):
                def __getitem__(self, index):
                    worker_info = get_worker_info()
                    if worker_info is not None:
                        np.random.seed(worker_info.id + 8 * dist.get_rank())
                    return index * np.random.uniform(0.5, 2.0)

            class Clips(Dataset):
                def __getitem__(self, index):
                    np.random.seed(self.clip.id)
                    return index * np.random.uniform(0.5, 2.0)

            class Crops(Dataset):
                def __getitem__(self, index):
                    crop = np.random.randint(0, 8)
                    worker_info = get_worker_info()
                    if worker_info is not None:
                        random.seed(worker_info.id)
                    return index + crop

            def main(model):
                dist.init_process_group("nccl")
                for dataset in (Pairs(), Clips(), Crops()):
                    for batch in DataLoader(dataset, num_workers=4):
                        model(batch).mean().backward()
            """
        ),
        Clean(
            # An abstract method two subclasses override: which one runs depends on the object,
            # and the one the Trainer fits here draws nothing.
            """
            from abc import ABC, abstractmethod

            import lightning as L
            import torch

            class Schedule(L.LightningModule, ABC):
                @abstractmethod
                def timesteps(self, n):
                    ...

                def training_step(self, batch, batch_idx):
                    return self.net(batch, self.timesteps(batch.shape[0])).mean()

            class Random(Schedule):
                def timesteps(self, n):
                    return torch.randint(0, 1000, (n,))

            class Fixed(Schedule):
                def timesteps(self, n):
                    return torch.arange(n) % 1000

            def main():
                L.seed_everything(42)
                trainer = L.Trainer(devices=4, strategy="ddp")
                trainer.fit(Fixed())
            """
        ),
        Clean(
            # A seed in the constructor, but the caller seeds again with the rank before the
            # training method runs; and a method whose loop draws nothing.
            """
            import numpy as np
            import torch.distributed as dist

            class Runner:
                def __init__(self, cfg, net, data):
                    dist.init_process_group("nccl")
                    np.random.seed(cfg.seed)
                    self.net, self.data = net, data

                def fit(self):
                    for x in self.data:
                        keep = np.random.rand(len(x)) < 0.9
                        self.net(x[keep]).sum().backward()

                def tune(self):
                    for x in self.data:
                        self.net(x).sum().backward()

            def main(cfg, net, data):
                runner = Runner(cfg, net, data)
                np.random.seed(cfg.seed + dist.get_rank())
                runner.fit()

            def finetune(cfg, net, data):
                Runner(cfg, net, data).tune()
            """
        ),
        Clean(
            # DataLoader workers seeded from torch's generator, which no seed here makes alike
            # (numpy's only), or seeded by a worker_init_fn or a generator= of the program's own;
            # a worker count unknown (0 leaves numpy unseeded in this process); and a seed
            # given the rank leaves each rank its own stream.
            """
            import numpy as np
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset

            class Crops(Dataset):
                def __getitem__(self, index):
                    return self.images[index][np.random.randint(0, 8):]

            def with_workers(args, model, optimizer):
                np.random.seed(42)
                dist.init_process_group("nccl")
                loader = DataLoader(Crops(), num_workers=4)
                for batch in loader:
                    model(batch).mean().backward()

            def seed_worker(worker_id):
                np.random.seed(torch.initial_seed() % 2**32 + dist.get_rank())

            def seeded_otherwise(args, model, optimizer):
                torch.manual_seed(42)
                dist.init_process_group("nccl")
                g = torch.Generator()
                g.manual_seed(42 + dist.get_rank())
                by_init_fn = DataLoader(Crops(), num_workers=4, worker_init_fn=seed_worker)
                by_generator = DataLoader(Crops(), num_workers=4, generator=g)
                from_an_option = DataLoader(Crops(), num_workers=args.workers)
                for batch in by_init_fn:
                    model(batch).mean().backward()
                for batch in by_generator:
                    model(batch).mean().backward()
                for batch in from_an_option:
                    model(batch).mean().backward()

            def with_rank(args, model, optimizer):
                dist.init_process_group("nccl")
                np.random.seed(42 + dist.get_rank())
                loader = DataLoader(Crops())
                for batch in loader:
                    model(batch).mean().backward()
            """
        ),
        Clean(
            # A DataLoader handed to the function that trains: its workers seeded per rank by a
            # worker_init_fn, or the function seeds again with the rank before its loop.
            """
            import random
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset, DistributedSampler

            class Clips(Dataset):
                def __getitem__(self, index):
                    start = random.randint(0, 100)
                    return self.clips[index][start:start + 200]

            def seed_worker(worker_id):
                random.seed(torch.initial_seed() % 2**32 + dist.get_rank())

            def train_one_epoch(model, loader, optimizer):
                for clips in loader:
                    model(clips).mean().backward()
                    optimizer.step()

            def reseeded(model, loader, optimizer):
                torch.manual_seed(1234 + dist.get_rank())
                for clips in loader:
                    model(clips).mean().backward()

            def main(model, optimizer):
                dist.init_process_group("nccl")
                torch.manual_seed(1234)
                dataset = Clips()
                seeded = DataLoader(dataset, sampler=DistributedSampler(dataset), num_workers=16, worker_init_fn=seed_worker)
                plain = DataLoader(dataset, sampler=DistributedSampler(dataset), num_workers=16)
                for epoch in range(10):
                    train_one_epoch(model, seeded, optimizer)
                    reseeded(model, plain, optimizer)
            """
        ),
        Clean(
            # Python's `random` left as the OS seeded it in each process (torch.manual_seed and
            # np.random.seed do not seed it) with no workers; workers seeded by a worker_init_fn
            # of the program's own; a seed of Python's `random` given the rank.
            """
            import random
            import numpy as np
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Dataset

            class Flips(Dataset):
                def __getitem__(self, index):
                    clip = self.clips[index]
                    return clip[:, ::-1] if random.random() < 0.5 else clip

            def not_python_seeded(args, model, optimizer):
                dist.init_process_group("nccl")
                np.random.seed(args.seed)
                torch.manual_seed(args.seed)
                loader = DataLoader(Flips())
                for clips in loader:
                    scale = random.uniform(0.8, 1.2)
                    model(scale * clips).mean().backward()

            def seed_worker(worker_id):
                random.seed(torch.initial_seed() % 2**32 + dist.get_rank())

            def workers_seeded_per_rank(args, model, optimizer):
                dist.init_process_group("nccl")
                torch.manual_seed(args.seed)
                loader = DataLoader(Flips(), num_workers=4, worker_init_fn=seed_worker)
                for clips in loader:
                    model(clips).mean().backward()

            def with_rank(args, model, optimizer):
                dist.init_process_group("nccl")
                random.seed(args.seed + dist.get_rank())
                loader = DataLoader(Flips())
                for clips in loader:
                    model(clips[:, random.randrange(4):]).mean().backward()
            """
        ),
        Clean(
            # The function the seeding code calls, and the method it calls on an object of a
            # project class, seed again with the rank before their loops.
            """
            import torch
            import torch.distributed as dist

            def train(model, loader, optimizer):
                torch.manual_seed(1234 + dist.get_rank())
                for images in loader:
                    model(images + torch.randn_like(images)).mean().backward()
                    optimizer.step()

            class Finetuner:
                def __init__(self, model, optimizer):
                    self.model, self.optimizer = model, optimizer

                def run(self, loader):
                    torch.manual_seed(99 + dist.get_rank())
                    for batch in loader:
                        self.model(batch + torch.randn_like(batch)).mean().backward()
                        self.optimizer.step()

            def main(model, loader, optimizer):
                dist.init_process_group("nccl")
                torch.manual_seed(1234)
                train(model, loader, optimizer)
                finetuner = Finetuner(model, optimizer)
                finetuner.run(loader)
            """
        ),
        Clean(
            # Only rank 0 runs the player (its only call is under `if global_rank == 0:`): one
            # process collects the rollouts and hands them to the trainers; called on every rank,
            # its reset would be flagged.
            """
            import gymnasium as gym
            import torch
            from torch.distributed.algorithms.join import Join

            def player(args, policy):
                envs = gym.vector.SyncVectorEnv([make_env(args.env_id, args.seed + i) for i in range(4)])
                obs = torch.tensor(envs.reset(seed=args.seed)[0])
                for step in range(args.num_steps):
                    obs, reward, done, truncated, info = envs.step(policy(obs))

            def trainer(model, optimizer, loader):
                with Join([model]):
                    for batch in loader:
                        model(batch).sum().backward()
                        optimizer.step()

            def main(args, policy, collective):
                global_rank = collective.rank
                if global_rank == 0:
                    player(args, policy)
                else:
                    trainer(policy, None, [])
            """
        ),
        Clean(
            # A project helper that adds the rank itself, or is handed a seed with the rank in it;
            # a helper that seeds with something other than its parameter is not followed.
            """
            import torch
            import torch.distributed as dist

            def seed_per_rank(seed):
                torch.manual_seed(seed + dist.get_rank())

            def seed_all(seed):
                torch.manual_seed(seed)

            def seed_fixed(seed):
                torch.manual_seed(1234)

            def main(args, loader, model, optimizer):
                dist.init_process_group("nccl")
                rank = dist.get_rank()
                seed_per_rank(args.seed)
                seed_all(args.seed + rank)
                seed_fixed(args.seed)
                for images in loader:
                    model(images + torch.randn_like(images)).mean().backward()
                    optimizer.step()
            """
        ),
        Clean(
            # Every rank draws the same sample of prompts on purpose, and Accelerate's
            # split_between_processes hands each rank its own slice of it.
            """
            import random
            import torch
            from accelerate import Accelerator

            def main(config, prompts, model, optimizer):
                accelerator = Accelerator()
                torch.manual_seed(config.get("seed", 0))
                random.seed(config.get("seed", 0))
                for step in range(config.steps):
                    batch = random.sample(prompts, k=64)
                    with accelerator.split_between_processes(batch) as mine:
                        loss = model(mine)
                    accelerator.backward(loss)
                    optimizer.step()
            """
        ),
        Clean(
            # A project function that returns its own draw (each rank's own value), or rank 0's
            # broadcast plus the rank, gives each rank its own seed.
            """
            import random
            import torch
            import torch.distributed as dist

            def fresh_seed(seed=None):
                if seed is not None:
                    return seed
                return random.randint(0, 2**31)

            def offset_seed(seed):
                value = torch.tensor(seed)
                dist.broadcast(value, src=0)
                return value.item() + dist.get_rank()

            def main(model, loader, optimizer):
                dist.init_process_group("nccl")
                torch.manual_seed(fresh_seed())
                for images in loader:
                    model(images + torch.randn_like(images)).mean().backward()
                    optimizer.step()

            def other(args, model, loader, optimizer):
                dist.init_process_group("nccl")
                torch.manual_seed(offset_seed(args.seed))
                for images in loader:
                    model(images + torch.randn_like(images)).mean().backward()
                    optimizer.step()
            """
        ),
        Clean(
            # The rank is in the seed, or the seed only makes the replicas start equal.
            """
            import torch
            import torch.distributed as dist
            from accelerate import Accelerator
            from accelerate.utils import set_seed

            def with_rank(args, loader, model, optimizer):
                rank = dist.get_rank()
                torch.manual_seed(args.seed + rank)
                for images in loader:
                    noise = torch.randn_like(images)
                    model(images + noise).mean().backward()
                    optimizer.step()

            def device_specific(args, loader, model, optimizer):
                accelerator = Accelerator()
                set_seed(args.seed, device_specific=True)
                for images in loader:
                    accelerator.backward(model(images + torch.randn_like(images)).mean())

            def initialisation_only(args, loader):
                dist.init_process_group("nccl")
                torch.manual_seed(args.seed)
                model = build_model()
                optimizer = torch.optim.AdamW(model.parameters())
                for images, labels in loader:
                    torch.nn.functional.cross_entropy(model(images), labels).backward()
                    optimizer.step()

            def reseeded_per_rank(args, loader):
                dist.init_process_group("nccl")
                torch.manual_seed(args.seed)  # the same initial weights on every rank
                model = build_model()
                torch.manual_seed(args.seed + dist.get_rank())  # each rank its own noise
                for images in loader:
                    model(images + torch.randn_like(images)).mean().backward()

            def seed_from_caller(seed, loader, model):
                dist.init_process_group("nccl")
                torch.manual_seed(seed)
                for images in loader:
                    model(images + torch.randn_like(images)).mean().backward()

            def seeded_by_its_caller(seed, loader, model):
                dist.init_process_group("nccl")
                torch.manual_seed(seed)
                for images in loader:
                    model(images + torch.randn_like(images)).mean().backward()

            def launch(args, loader, model):
                seeded_by_its_caller(args.seed + int(os.environ["RANK"]), loader, model)

            def offset_in_the_distributed_branch(ddp, loader, model):
                if ddp:
                    dist.init_process_group("nccl")
                    seed_offset = dist.get_rank()
                else:
                    seed_offset = 0
                torch.manual_seed(1337 + seed_offset)
                for images in loader:
                    model(images + torch.randn_like(images)).mean().backward()
            """
        ),
        Clean(
            # A shared seed that orders the data before a sampler splits it across ranks.
            """
            import random
            import numpy as np
            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler

            def main(args):
                dist.init_process_group("nccl")
                random.seed(args.seed)
                np.random.seed(args.seed)
                torch.manual_seed(args.seed)
                files = sorted(list_files(args.data))
                random.shuffle(files)
                order = torch.randperm(len(files))
                sampler = DistributedSampler(Files(files, order), seed=args.seed)
                loader = DataLoader(Files(files, order), sampler=sampler, batch_size=8)
                for epoch in range(args.epochs):
                    sampler.set_epoch(epoch)
                    for images, labels in loader:
                        g = torch.Generator().manual_seed(args.seed + dist.get_rank())
                        noise = torch.randn(images.shape, generator=g)
                        model(images + noise).mean().backward()
                        optimizer.step()
            """
        ),
        Clean(
            # Seeded only when --seed is given, and no launch command gives it (its default is
            # None): every rank keeps its own unseeded generator.
            """
            import argparse
            import torch
            from accelerate import Accelerator
            from accelerate.utils import set_seed

            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--seed", type=int, default=None)
                parser.add_argument("--deterministic", action="store_true")
                args = parser.parse_args()
                accelerator = Accelerator()
                if args.seed is not None:
                    set_seed(args.seed)
                if args.deterministic:
                    torch.manual_seed(0)
                for latents in loader:
                    noise = torch.randn_like(latents)
                    accelerator.backward((model(latents + noise) - noise).pow(2).mean())
                    optimizer.step()
            """
        ),
        Clean(
            # Only rank 0 samples with the shared seed; a seed option filled in per process.
            """
            import random
            import torch
            import torch.distributed as dist

            def train(args, loader, model, optimizer):
                dist.init_process_group("nccl")
                if dist.get_rank() == 0:
                    torch.manual_seed(0)
                if args.seed is None:
                    args.seed = random.randint(0, 2**32)
                torch.manual_seed(args.seed if args.seed_data else random.randint(0, 9))
                for images in loader:
                    model(images + torch.randn_like(images)).mean().backward()
                    optimizer.step()
            """
        ),
        Clean(
            # Generators of their own: one seeded per rank draws the step's timesteps; those seeded
            # alike only initialise the model, make the periodic samples or feed a pipeline.
            """
            import torch
            import torch.distributed as dist

            def train(args, loader, model, optimizer, pipeline):
                dist.init_process_group("nccl")
                rank = dist.get_rank()
                init = torch.Generator().manual_seed(0)
                model.init_weights(torch.randn(16, 16, generator=init))
                g = torch.Generator(device="cuda")
                g.manual_seed(args.seed + rank)
                sampling = torch.Generator().manual_seed(1234)
                validation = torch.Generator(device="cuda").manual_seed(args.seed)
                for step, images in enumerate(loader):
                    t = torch.randint(0, 1000, (images.shape[0],), generator=g)
                    model(images, t).mean().backward()
                    optimizer.step()
                    if step % args.sample_every == 0:
                        save(model(torch.randn(4, 16, generator=sampling)))
                        save(pipeline(args.prompt, generator=validation).images)
            """
        ),
    )

    def __init__(self, model) -> None:
        super().__init__(model)
        self._order = 0
        self._bound: list[_Bound] = []
        self._seeds: list[_Seed] = []
        self._resets: list[_Seed] = []
        self._loop_calls: list[_LoopCall] = []
        self._loops: dict[int, tuple[int, str | None, tuple[int, ...]]] = {}  # id -> (start, frame, outer loops)
        self._training: set[int] = set()  # loops that run a backward
        self._iterated: dict[int, cst.BaseExpression] = {}  # a `for` loop's id -> what it iterates
        self._fabrics: set[str] = set()
        self._envs: set[tuple[str | None, str]] = set()
        self._stepped: set[tuple[str | None, str]] = set()
        self._statements: set[int] = set()  # calls that are a whole statement (`seed_everything(seed)`)
        # calls of a plain name (`train(args)` after the seed, `train_epoch(...)` in the epoch loop)
        self._named_calls: list[_LoopCall] = []
        # calls of a method of a named object outside loops, with that name and the method:
        # `task.train()`; `trainer.fit(model, ...)`, with the name of what it fits and None
        self._object_calls: list[tuple[_LoopCall, str | None]] = []
        # Functions defined inside a function, by (the outer function's key, their name): whether
        # they run a backward, and the draws they make (`def process_iteration():` in the epoch loop)
        self._inner: dict[tuple[str | None, str], tuple[list[bool], list[str]]] = {}
        # `for` loops of a function defined inside another that iterate a name of the outer
        # function (a closure), by id: the outer function's key
        self._closed_over: dict[int, str | None] = {}
        # DataLoader calls given a function of this module as `worker_init_fn`, by its name
        self._worker_inits: dict[str, list[cst.Call]] = {}
        # every call of a function, in order (the draws after a seed from the worker id)
        self._function_calls: list[_LoopCall] = []
        # names a loop hands to Accelerate's split_between_processes, with the function and the loops
        self._split: list[tuple[str | None, str, tuple[int, ...]]] = []

    # -- the walk -----------------------------------------------------------------------------

    def _cls(self) -> str | None:
        self_class = self.model.frame.self_class
        return self_class.name.value if self_class is not None else None

    def _loop(self, node: cst.For | cst.While) -> None:
        self._order += 1
        outer = tuple(id(loop) for loop in self.model.loops if loop is not node)
        self._loops[id(node)] = (self._order, self.model.frame.key, outer)

    def visit_For(self, node: cst.For) -> None:
        self._loop(node)
        self._iterated[id(node)] = node.iter
        iterated = _unwrapped(node.iter)
        frame = self.model.frame
        if isinstance(iterated, cst.Name) and frame.is_function and frame.parent is not None and frame.parent.is_function:
            owner = self.model.binding_scope(iterated.value)
            if owner is not None and owner is not self.model.scope and owner is self.model.scope.parent:
                self._closed_over[id(node)] = frame.parent.key  # `def train(epoch):` reading main()'s loader

    def visit_While(self, node: cst.While) -> None:
        self._loop(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._order += 1
        frame = self.model.frame.key
        qualified = self.model.qualified(node.value.func) if isinstance(node.value, cst.Call) else None
        for target in node.targets:
            name = dotted_name(target.target)
            if name is None:
                continue
            fills = any(_tests_none(branch.test, name) for branch in self.model.ifs)
            self._bound.append(_Bound(name, frame, self._cls(), node.value, self._order, fills))
            if qualified in FABRIC:
                self._fabrics.add(name)
            if qualified is not None and any(qualified in package for package in ENV_PACKAGES):
                self._envs.add((frame, name))

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self._statements.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        self._order += 1
        frame, func = self.model.frame.key, node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        inner = self._inner_function()
        if method == "backward":
            self._training.update(id(loop) for loop in self.model.loops)
            if inner is not None:
                inner[0][0] = True
        if self.model.get(RankRegions).only_rank_zero:
            return
        qualified = self.model.qualified(func)
        init = argument_for(node, DATALOADER, "worker_init_fn") if qualified in DATALOADER else None
        if init is not None and isinstance(init.value, cst.Name):
            self._worker_inits.setdefault(init.value.value, []).append(node)
        if inner is not None and qualified is not None and keyword_argument(node, DRAW_GENERATOR) is None:
            inner[1].append(qualified)
        if self.model.loops:
            loops = tuple(id(loop) for loop in self.model.loops)
            callee = dotted_name(func)
            called = self._inner.get((frame, callee)) if callee is not None else None
            if called is not None and called[0][0]:
                self._training.update(loops)  # the loop calls an inner function that runs the backward
            periodic = any(_periodic(branch.test) for branch in self.model.ifs)
            self._loop_calls.append(_LoopCall(node, callee, loops, frame, self._order, periodic))
        if method == ACCELERATE_SPLIT_METHOD and node.args and isinstance(node.args[0].value, cst.Name) and self.model.loops:
            self._split.append((frame, node.args[0].value.value, tuple(id(loop) for loop in self.model.loops)))
        if frame is not None:
            self._function_calls.append(_LoopCall(node, dotted_name(func), (), frame, self._order))
        if isinstance(func, cst.Name):
            self._named_calls.append(_LoopCall(node, func.value, (), frame, self._order))
        elif method == "fit" and node.args and isinstance(node.args[0].value, cst.Name) and not self.model.loops:
            self._object_calls.append((_LoopCall(node, node.args[0].value.value, (), frame, self._order), None))
        elif method is not None and isinstance(func.value, cst.Name) and not self.model.loops:
            self._object_calls.append((_LoopCall(node, func.value.value, (), frame, self._order), method))
        elif method is not None and isinstance(func.value, cst.Call) and not self.model.loops:
            # a method of an object made here and named nowhere: `Trainer(fabric, config).train_loop()`
            self._object_calls.append((_LoopCall(node, None, (), frame, self._order), method))
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        if receiver is not None and (frame, receiver) in self._envs:
            if method == "step":
                self._stepped.add((frame, receiver))
            elif method == ENV_RESET and keyword_argument(node, ENV_SEED) is not None:
                value = keyword_argument(node, ENV_SEED).value  # type: ignore[union-attr]
                self._resets.append(_Seed(node, value, frozenset(), frame, self._cls(), self._order))
        private = self._private_generator(node, method, receiver)
        if private is not None:  # `g = torch.Generator(device=d).manual_seed(seed)`
            value = node.args[0].value if node.args and not node.args[0].star else None
            self._seeds.append(_Seed(node, value, frozenset(), frame, self._cls(), self._order, private=private,
                                     branches=self.model.get(ParserOptions).branches()))
            return
        seeded = self._seeded(node, method, receiver)
        helper = self._seed_helper(node) if seeded is None else None
        if helper is not None:  # a project function that seeds generators with one of its parameters
            position, parameter, seeded = helper
            given = keyword_argument(node, parameter)
            positional = [a for a in node.args if a.keyword is None]
            value = given.value if given else positional[position].value if position < len(positional) and not any(
                a.star for a in positional[: position + 1]) else None
            if value is None and not given and len(positional) <= position and not any(a.star for a in node.args):
                value = self._helper_default(node, parameter)  # `set_seed()` of `def set_seed(seed=42):`
            self._seeds.append(_Seed(node, value, seeded, frame, self._cls(), self._order, through=dotted_name(func),
                                     branches=self.model.get(ParserOptions).branches()))
        elif seeded is not None:
            value = node.args[0].value if node.args and not node.args[0].star else None
            given = keyword_argument(node, "seed")
            specific = keyword_argument(node, ACCELERATE_DEVICE_SPECIFIC)
            per_process = specific is not None and not (isinstance(specific.value, cst.Name) and specific.value.value == "False")
            seed = _Seed(node, given.value if given else value, seeded, frame, self._cls(), self._order, per_process,
                         branches=self.model.get(ParserOptions).branches())
            self._seeds.append(seed)

    def _inner_function(self) -> tuple[list[bool], list[str]] | None:
        """What is known of the function being walked when it is defined inside another one."""
        frame = self.model.frame
        if not frame.is_function or frame.parent is None or not frame.parent.is_function:
            return None
        return self._inner.setdefault((frame.parent.key, frame.node.name.value), ([False], []))  # type: ignore[union-attr]

    def _seeded(self, call: cst.Call, method: str | None, receiver: str | None) -> frozenset[str] | None:
        """The generators a seeding call seeds; None for other calls."""
        if method == FABRIC_SEED_METHOD and receiver in self._fabrics:
            return ALL_GENERATORS
        qualified = self.model.qualified(call.func)
        return generators_seeded(qualified)

    def _private_generator(self, call: cst.Call, method: str | None, receiver: str | None) -> str | None:
        """The name of the generator of its own that `call` seeds: `g = torch.Generator().manual_seed(s)`,
        or `g.manual_seed(s)` of a `g` this function last bound to one; None for other calls."""
        if method != GENERATOR_SEED_METHOD:
            return None
        if self._makes_generator(call.func.value):  # type: ignore[attr-defined]
            return next((bound.name for bound in reversed(self._bound) if bound.value is call), None)
        frame = self.model.frame.key
        bound = [b for b in self._bound if b.name == receiver and b.frame == frame and b.value is not call]
        return receiver if bound and self._makes_generator(bound[-1].value) else None

    def _makes_generator(self, expr: cst.BaseExpression) -> bool:
        """`torch.Generator(...)`, seeded or not (`torch.Generator().manual_seed(0)`)."""
        if not isinstance(expr, cst.Call):
            return False
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value == GENERATOR_SEED_METHOD:
            return self._makes_generator(func.value)
        return self.model.qualified(func) in TORCH_GENERATOR

    def _seed_helper(self, call: cst.Call) -> tuple[int, str, frozenset[str]] | None:
        """A call, as a statement of its own, of a project function that seeds generators with
        one of its parameters (see `seeding_helper`)."""
        project, callee = self.model.project, dotted_name(call.func)
        if project is None or callee is None or id(call) not in self._statements:
            return None
        return seeding_helper(project.program, project.module, self.model.frame.key, self._cls(), callee)

    def _helper_default(self, call: cst.Call, parameter: str) -> cst.BaseExpression | None:
        """The literal number the seeding helper `call` reaches gives `parameter` by default, as
        an expression (`def set_seed(seed=42):` called as `set_seed()`); None when not a literal."""
        project, callee = self.model.project, dotted_name(call.func)
        program = project.program if project is not None else None
        target = program.target(project.module, self.model.frame.key, self._cls(), callee) if program and callee else None
        definition = program.definition(target.module, target.key) if target is not None else None
        if definition is None:
            return None
        arguments = definition.args
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
        pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
        default = next((d for a, d in pairs if a.arg == parameter), None)
        if isinstance(default, ast.Constant) and type(default.value) is int:
            return cst.Integer(str(default.value))
        return None

    # -- the judgement --------------------------------------------------------------------------

    def leave_Module(self, original_node: cst.Module) -> None:
        alone = self.model.get(RankRegions).functions_only_rank_zero_calls()  # one process: nothing to share
        options = self.model.get(ParserOptions)
        # `if args.seed is not None:` where no launch command passes --seed (default None): never seeded
        self._seeds = [seed for seed in self._seeds if not options.never_runs(seed.branches)]
        for seed in self._seeds:
            if seed.specific or seed.frame in alone or self._same_on_every_rank(seed.value, seed) is not True:
                continue
            if seed.private is not None:
                self._judge_private(seed)
            else:
                self._judge_seed(seed)
        for reset in self._resets:
            receiver = dotted_name(reset.call.func.value)  # type: ignore[attr-defined]
            if reset.frame in alone:
                continue
            if (reset.frame, receiver) in self._stepped and self._same_on_every_rank(reset.value, reset) is True:
                runs = self.runs_link()
                if runs is None:
                    continue  # nothing shows several ranks running this file
                chain = [
                    Link(StepKind.MADE, f"`{receiver}` is reset here with a seed that is the same on every rank", reset.call),
                    runs,
                    Link(StepKind.HARM, "its environments then emit the same observations on every rank: the "
                         "rollouts every rank trains on are copies", reset.call),
                ]
                self.report(reset.call, self.env_message, chain=chain)

    def _judge_seed(self, seed: _Seed) -> None:
        if seed.frame in self._worker_inits:
            self._judge_worker_seed(seed)
            return
        if self._worker_id(seed):
            self._judge_worker_id_seed(seed)
            return
        # The training loop is in the seed's function after it, or in a function of this module
        # that the seed's function calls after it (`torch.manual_seed(SEED)`, then `train(model)`).
        places = [(seed.frame, seed.order, None)] + [
            (call.callee, 0, call) for call in self._named_calls
            if call.frame == seed.frame and call.order > seed.order and not self._reseeded(seed, call.order)
        ]
        for frame, after, via in places:
            loops = self._innermost_training_loops(seed, frame, after)
            for call in self._loop_calls:
                if call.frame != frame or call.periodic or not any(loop in call.loops for loop in loops):
                    continue  # (a periodic call, `if it % n == 0: evaluate()`, draws no step's data)
                found = self._draw(call, seed)
                if found is not None:
                    self._report_seed(seed, call, found, via)
                    return
            for loop in loops:
                if self._loader_draw(seed, loop, frame, via):
                    return
        for frame, after, via in places:
            for call, method in self._object_calls:
                if call.frame != frame or call.order <= after or frame == seed.frame and self._reseeded(seed, call.order):
                    continue
                stepped = self._object_step(call, method, seed)
                if stepped is not None:
                    self._report_object(seed, call, method, *stepped, via)
                    return
        if self._handed_loader(seed):
            return
        self._judge_constructor(seed)

    def _judge_worker_seed(self, seed: _Seed) -> None:
        """A seed in a `worker_init_fn`: each worker process of a DataLoader given it runs it
        first, so worker k of every rank seeds alike (`_filled`: the worker id is k on every
        rank). Reported when a training loop iterates such a DataLoader (with workers) whose
        Dataset's `__getitem__` draws from a generator it seeds (`worker_seed_draw`)."""
        project = self.model.project
        if project is None:
            return
        program = project.program
        for loader in self._worker_inits[seed.frame]:  # type: ignore[index]
            line = self.model.spans([loader])[id(loader)][0][0]
            found = worker_seed_draw(program, project.module, line, seed.generators, self._documented_workers)
            if found is None:
                continue
            name, place, what, made, workers, callee = found
            loop = f"the training loop of {callee}()" if callee else "the training loop below it"
            steps = [
                Link(StepKind.REACHES, f"the DataLoader built at {made} runs this worker_init_fn first in each of its "
                     f"{f'{workers} ' if workers else ''}worker processes (worker k of every rank with the same id k), then {name}.__getitem__, "
                     f"which draws {what}", made),
                Link(StepKind.REACHES, f"{loop} iterates that DataLoader on every step", made),
            ]
            self._report_draws(seed, steps, what, place, f"{what} at {place}, in {name}.__getitem__, which worker k of "
                               f"every rank runs after this worker_init_fn, each step of {loop}")
            return

    def _worker_id(self, seed: _Seed) -> bool:
        """Whether the seed's value reads the DataLoader worker's id (`get_worker_info().id`, or
        `.id` of a name its function bound to `get_worker_info()` before it): code that runs in
        worker k of a DataLoader, where the id is k on every rank."""
        if seed.value is None or seed.frame is None:
            return False
        for node in [seed.value, *_operands(seed.value)]:
            if not (isinstance(node, cst.Attribute) and node.attr.value == WORKER_ID_ATTRIBUTE):
                continue
            held = node.value
            if isinstance(held, cst.Name):
                bound = self._last_bound(held.value, seed.frame, seed.order)
                held = bound if bound is not None else held
            if isinstance(held, cst.Call) and self.model.qualified(held.func) in GET_WORKER_INFO:
                return True
        return False

    def _judge_worker_id_seed(self, seed: _Seed) -> None:
        """A seed from the worker id alone in a function a DataLoader worker runs (a Dataset's
        `__getitem__` that seeds on its worker's first item: `np.random.seed(get_worker_info().id)`):
        worker k of every rank seeds its generators with k, so what the function draws after
        the seed (the sample's augmentation) is the same in worker k of every rank. Reported at
        the first draw after the seed in that function, from the generators it seeds
        (the call itself, or a project function it reaches: `_draw`)."""
        for call in self._function_calls:
            if call.frame != seed.frame or call.order <= seed.order:
                continue
            found = self._draw(call, seed)
            if found is None:
                continue
            what, place = found
            steps = [Link(StepKind.REACHES, "this runs in each DataLoader worker process (it reads get_worker_info()), "
                          f"worker k of every rank with the same id k; after the seed it draws {what}", call.call)]
            where = f"{what} after this seed, in worker k of every rank" if place is None else \
                f"{what} at {place}, reached after this seed in worker k of every rank"
            self._report_draws(seed, steps, what, place if place is not None else call.call, where)
            return

    def _judge_constructor(self, seed: _Seed) -> None:
        """A seed in the `__init__` of a project class: reported when a function of this module
        builds an object of that class (`trainer = Trainer(args)`) and then calls a method of it
        whose training loop draws from the seeded generators each step (`trainer.train()`), or,
        for a LightningModule, fits it (`trainer.fit(model)`: the Trainer's step loop runs its
        `training_step` on every rank), unless that function seeds the same generators again
        between the two."""
        if seed.cls is None or seed.frame != f"{seed.cls}.{CONSTRUCTOR}":
            return
        for call, method in self._object_calls:
            if method == CONSTRUCTOR or method is None and not self._lightning_class(seed.cls) or any(
                other.frame == call.frame and other.order < call.order and other.generators >= seed.generators
                for other in self._seeds
            ):
                continue  # a fit, or the caller seeds again (maybe with the rank) before the call
            stepped = self._object_step(call, method, seed, only=seed.cls)
            if stepped is not None:
                self._report_object(seed, call, method, *stepped, None, built=True)
                return

    def _loader_draw(self, seed: _Seed, loop: int, frame: str | None, via: _LoopCall | None) -> bool:
        """Report `seed` when training loop `loop` iterates a DataLoader this function builds over
        an object of a project Dataset class whose `__getitem__` draws from a generator the
        seed makes alike on every rank (`_loader_generators`): each rank's main process, or
        worker k of each rank, draws the same augmentations, step by step. Whether it reported."""
        project, iterated = self.model.project, _unwrapped(self._iterated.get(loop))
        if project is None or not isinstance(iterated, cst.Name):
            return False
        start = self._loops[loop][0]
        if loop in self._closed_over:  # the loader of the function around: as bound when it calls this one
            if via is None or via.frame != self._closed_over[loop]:
                return False
            frame, start = via.frame, via.order
        loader = self._last_bound(iterated.value, frame, start)
        if not isinstance(loader, cst.Call) or self.model.qualified(loader.func) not in DATALOADER:
            return False
        workers = self._worker_count(loader, frame, start)
        generators = self._loader_generators(seed, loader, workers)
        dataset = argument_for(loader, DATALOADER, "dataset")
        made = dataset.value if dataset is not None else None
        if isinstance(made, cst.Name):
            made = self._last_bound(made.value, frame, start)
        classes = self._dataset_classes(made, frame, start) if generators else []
        draws = [reached_draw(project.program, module, None, cls, "self.__getitem__", generators, {}, 0) for module, cls in classes]
        if not draws or None in draws:
            return False  # every class the name may pick must draw
        (place, what), name = draws[0], classes[0][1]  # type: ignore[misc]
        picked = f" (or another of the {len(classes)} Dataset classes it may be: each draws so)" if len(classes) > 1 else ""
        if workers == 0:
            runs = f"a DataLoader without worker processes over a {name}{picked}: each rank's own process runs"
            where = "runs in this process (no workers) each step"
        else:
            some = " (if any)" if workers is None else ""
            source = f"the generator `{seed.private}` it is given" if seed.private else "torch's seeded generator"
            runs = (f"a DataLoader over a {name}{picked} whose worker processes{some} draw their base seed from {source} "
                    "on each pass, the same on every rank; worker k seeds torch, numpy and random with it and k, and runs")
            alike = f"`{seed.private}`" if seed.private else "torch's generator"
            where = f"workers run each step, seeded from {alike} alike on every rank"
        steps = [
            *([Link(StepKind.REACHES, f"then calls {via.callee}(), whose training loop runs with the seeded generators", via.call)] if via else []),
            Link(StepKind.REACHES, f"the training loop iterates {runs} {name}.__getitem__, which draws {what}, "
                 "on every step", loader),
        ]
        self._report_draws(seed, steps, what, place, f"{what} at {place}, in {name}.__getitem__{picked}, which the "
                           f"training loop's DataLoader {where}")
        return True

    def _handed_loader(self, seed: _Seed) -> bool:
        """Report `seed` when, after it, its function (or a project function it calls after it,
        in any module, followed up to MAX_DEPTH calls down through functions that seed nothing)
        runs a training loop over a DataLoader the program model knows it iterates wherever it
        was built and handed on (`train_one_epoch(model, data_loader, ...)`, a loader a project
        function builds and returns: `Loader` values, ddplint.model.program), whose
        `__getitem__` draws from the generators the seed makes alike on every rank
        (`handed_loader_draw`). Whether it reported."""
        project = self.model.project
        if project is None:
            return False
        program = project.program
        line = self.model.spans([seed.call])[id(seed.call)][0][0]
        key = seed.frame or ""
        record = program.function(project.module, key) if key else program.module_code(project.module)
        if record is None:
            return False
        later = [other.call for other in self._seeds if other is not seed and other.frame == seed.frame
                 and other.order > seed.order and other.private is None and other.generators >= seed.generators]
        stop = min((self.model.spans([c])[id(c)][0][0] for c in later), default=None)  # seeded again (maybe per rank)
        found = handed_loader_draw(program, project.module, key, record, line, stop, lambda loader: _loader_dataset_draw(
            program, loader, seed.generators, self._documented_workers))
        if found is None:
            return False
        name, place, what, made, workers, callee = found
        loop = f"the training loop of {callee}()" if callee else "the training loop below"
        if workers == 0:
            runs = "without worker processes: each rank's own process runs"
            where = f"which the DataLoader built at {made} runs in this process (no workers) each step of {loop}"
        else:
            some = " (if any)" if workers is None else ""
            runs = (f"whose worker processes{some} draw their base seed from torch's seeded generator on each pass, "
                    "the same on every rank; worker k seeds torch, numpy and random with it and k, and runs")
            where = (f"which the workers of the DataLoader built at {made} run each step of {loop}, seeded from "
                     "torch's generator alike on every rank")
        steps = [Link(StepKind.REACHES, f"{loop} iterates the DataLoader built at {made} over a {name}, {runs} "
                      f"{name}.__getitem__, which draws {what}, on every step", made)]
        self._report_draws(seed, steps, what, place, f"{what} at {place}, in {name}.__getitem__, {where}")
        return True

    def _documented_workers(self, module: str, expr: ast.expr) -> int | None:
        """The worker count an option (`args.num_workers`) gives in every documented run (see
        `_one_kind`), read in this module, or as another module of the project writes it."""
        try:
            written = cst.parse_expression(ast.unparse(expr))
        except (cst.ParserSyntaxError, ValueError):
            return None
        options = self.model.get(ParserOptions)
        project = self.model.project
        if project is not None and module == project.module:
            return _one_kind(options.documented_values(written))
        value = options.documented_in(module, written)
        return value if type(value) is int else None

    def _dataset_classes(self, made: cst.BaseExpression | None, frame: str | None, before: int) -> list[tuple[str, str]]:
        """(module, class) of the project Dataset classes whose object `made` (what a DataLoader
        reads) may be: the class its call names (or the classes a project function it calls
        makes on its returns, `_made_by`), also through a local name of function `frame`
        bound before `before` to a class or to a choice of classes (`Dataset = COCO if
        cfg.dataset == 'coco' else VOC`: the one every documented run picks, else each), or,
        for `getattr(datasets, config["name"])(...)`, every class with a `__getitem__` that
        project module `datasets` holds (none when it binds anything but classes:
        `Program.module_classes`). Empty where one of them is not a project class."""
        project = self.model.project
        func = made.func if isinstance(made, cst.Call) and project is not None else None
        if func is None:
            return []
        program = project.program
        if not (isinstance(func, cst.Call) and dotted_name(func.func) == "getattr" and len(func.args) == 2):
            named = [func]
            if isinstance(func, cst.Name) and program.class_of(project.module, func.value) is None:
                bound = self._last_bound(func.value, frame, before)
                named = self._picked(bound) if bound is not None else named  # else a project function's call
            cls = frame.rpartition(".")[0] or None if frame is not None else None
            made = [_made_by(program, project.module, frame, cls, dotted_name(name) or "") for name in named]
            return [] if not made or [] in made else list(dict.fromkeys(c for classes in made for c in classes))
        holder = dotted_name(func.args[0].value)
        qualified = program.qualify(project.module, holder) if holder is not None else None
        found = program.split(qualified, project.module) if qualified is not None else None
        classes = program.module_classes(found[0]) if found is not None and not found[1] else None
        return [cls for cls in classes or () if program.target(cls[0], None, cls[1], "self.__getitem__") is not None]

    def _picked(self, value: cst.BaseExpression | None) -> list[cst.BaseExpression]:
        """What a name bound to `value` may hold: `value` itself, or for `A if test else B` the
        branch every documented run takes (ParserOptions.holds_in_every_run), else both."""
        if not isinstance(value, cst.IfExp):
            return [value] if value is not None else []
        holds = self.model.get(ParserOptions).holds_in_every_run(value.test)
        branches = [value.body] if holds is True else [value.orelse] if holds is False else [value.body, value.orelse]
        return [picked for branch in branches for picked in self._picked(branch)]

    def _worker_count(self, loader: cst.Call, frame: str | None, before: int) -> int | None:
        """The worker processes DataLoader call `loader` starts: 0 when `num_workers` is left out,
        the integer it is given (itself or through a local name bound before `before`), else None."""
        given = argument_for(loader, DATALOADER, "num_workers")
        value = given.value if given is not None else cst.Integer("0")
        if isinstance(value, cst.Name):
            value = self._last_bound(value.value, frame, before)
        if isinstance(value, cst.Attribute):  # an option: the values its documented runs give it
            return _one_kind(self.model.get(ParserOptions).documented_values(value))
        return int(value.value, 0) if isinstance(value, cst.Integer) else None

    def _loader_generators(self, seed: _Seed, loader: cst.Call, workers: int | None) -> frozenset[str]:
        """The generators a DataLoader's `__getitem__` draws from alike on every rank after `seed`.
        Without workers, those the seed seeded (the main process runs it). With workers, each
        pass over the loader draws the workers' base seed from torch's default generator (the
        DataLoader iterator's `_base_seed`), and worker k seeds torch and random with base_seed + k
        and numpy from both (torch >= 1.9, `_utils/worker.py`'s `_worker_loop`): all three alike on
        every rank when the seed seeded torch's, unless a `worker_init_fn` or a `generator=` of
        the program's own decides it. A worker count unknown: what both cases share. For a
        generator of its own (`seed.private`) given as the DataLoader's `generator=`: each pass
        draws the base seed from it (`_BaseDataLoaderIter.__init__`: `.random_(generator=
        loader.generator)`), so with workers all three alike, unless a `worker_init_fn` that may
        add the rank reseeds them (`_rank_free_init`)."""
        if seed.private is not None:
            given = argument_for(loader, DATALOADER, DRAW_GENERATOR)
            init = argument_for(loader, DATALOADER, "worker_init_fn")
            if not workers or given is None or dotted_name(given.value) != seed.private or \
                    init is not None and not self._rank_free_init(init.value):
                return frozenset()
            return ALL_GENERATORS
        if workers == 0:
            return seed.generators
        if "torch" not in seed.generators or any(
            argument_for(loader, DATALOADER, name) is not None for name in ("worker_init_fn", "generator")
        ):
            return frozenset()
        return ALL_GENERATORS if workers is not None else seed.generators

    def _rank_free_init(self, init: cst.BaseExpression) -> bool:
        """Whether a `worker_init_fn` is a function of this module none of whose seeds adds the
        rank (`np.random.seed(torch.initial_seed() % 2**32)`: the worker's base_seed + k, the same
        in worker k of every rank when the base seed is)."""
        if not isinstance(init, cst.Name) or self.model.project is None:
            return False
        if self.model.project.program.definition(self.model.project.module, init.value) is None:
            return False
        return not any(other.frame == init.value and self._same_on_every_rank(other.value, other) is False
                       for other in self._seeds)

    def _last_bound(self, name: str, frame: str | None, before: int) -> cst.BaseExpression | None:
        """The value `name` was last bound to in function `frame` before `before`; None if none."""
        bound = [b for b in self._bound if b.name == name and b.frame == frame and b.order < before]
        return bound[-1].value if bound else None

    def _judge_private(self, seed: _Seed) -> None:
        """A generator of its own seeded alike on every rank: reported when a training loop of its
        function after the seed hands it to a draw on every step (`torch.rand(n, generator=g)`);
        a draw only a periodic branch makes (sampling, validation) is not the step's data."""
        name = seed.private
        loops = sorted(self._innermost_training_loops(seed, seed.frame, seed.order), key=lambda loop: self._loops[loop][0])
        for loop in loops:
            start = self._loops[loop][0]
            if any(b.name == name and b.frame == seed.frame and seed.order < b.order < start for b in self._bound):
                continue  # bound anew before the loop
            for call in self._loop_calls:
                given = keyword_argument(call.call, DRAW_GENERATOR)
                if (loop not in call.loops or call.periodic or given is None or dotted_name(given.value) != name
                        or self.model.qualified(call.call.func) not in TORCH_DRAWS or self._switched_off(call)):
                    continue
                runs = self.runs_link()
                if runs is None:
                    return  # nothing shows several ranks running this file
                what = self.model.qualified(call.call.func)
                chain = [
                    Link(StepKind.MADE, f"seeds the generator `{name}` with a value that is the same on every rank", seed.call),
                    runs,
                    Link(StepKind.REACHES, f"the training loop hands `{name}` to {what} on every step", call.call),
                    Link(StepKind.HARM, f"{what} draws the same values on every rank: the ranks train on the same "
                         "noise, timesteps or masks", call.call),
                ]
                where = f"{what}(generator={name}) in the training loop below"
                self.report(seed.call.func.attr, f"{self.generator_message} ({where})", chain=chain)  # type: ignore[attr-defined]
                return
            if self._loader_draw(seed, loop, seed.frame, None):
                return  # the DataLoader it iterates draws its workers' base seed from the generator

    def _object_step(self, call: _LoopCall, method: str | None, seed: _Seed,
                     only: str | None = None) -> tuple[str, tuple[Place, str]] | None:
        """The class of the object `call.callee` names, bound in the same function to a project
        class's object before the call (or, without a name, made by the call's receiver:
        `Trainer(fabric, config).train_loop()`), and the draw the call makes each training step: for
        `trainer.fit(model)` (no `method`), the draw model's `training_step` makes; for
        `task.train()`, the draw the training loop of that method makes (itself or through the project functions it
        calls). With `only`, the object must be of that class of this module (the seed's own)."""
        project = self.model.project
        if project is None:
            return None
        program = project.program
        # every binding before the call: `model = A(cfg)` in one branch, `B(cfg)` in another; or
        # the call that made an object named nowhere (`Trainer(fabric, config).train_loop()`)
        makers = [(call.call.func.value, None)] if call.callee is None else [  # type: ignore[attr-defined]
            (bound.value, bound.cls) for bound in self._bound
            if bound.name == call.callee and bound.frame == call.frame and bound.order <= call.order
        ]
        for value, within in makers:
            callee = dotted_name(value.func) if isinstance(value, cst.Call) else None
            handed = self._handed_classes(call.frame, callee) if method is None and callee is not None else None
            if handed:  # `model = model_class(**vars(args))`: each LightningModule class it is handed
                draws = [self._fit_draw(module, cls, seed) for module, cls in handed]
                if None not in draws:
                    return handed[0][1], draws[0]  # type: ignore[return-value]
                continue
            made = program.class_of(project.module, callee) if callee is not None else None
            if made is None:  # a class of a package, reached through its re-export: its `__init__`
                init = program.resolve(project.module, callee, within) if callee is not None else None
                made = (init.module, init.key.rpartition(".")[0]) if init is not None and init.key.endswith(".__init__") else None
            if made is None:
                continue
            module, cls = made
            if only is not None and (module, cls) != (project.module, only):
                continue
            if method is None:
                found = self._fit_draw(module, cls, seed)
            else:
                found = training_loop_draw(program, module, cls, f"self.{method}", seed.generators)
            if found is not None:
                return cls, found
        return None

    def _fit_draw(self, module: str, cls: str, seed: _Seed) -> tuple[Place, str] | None:
        """The draw a Trainer fitting an object of LightningModule `cls` makes each step after
        `seed`: in its `training_step`, or in the workers (or, without any, each rank's own
        process) of the DataLoader its `train_dataloader` builds (`lightning_loader_draw`),
        unless `seed_everything(..., workers=True)` has Lightning seed each worker with the rank."""
        program = self.model.project.program  # type: ignore[union-attr]
        found = reached_draw(program, module, None, cls, "self.training_step", seed.generators, {}, 0)
        if found is not None:
            return found
        per_worker = keyword_argument(seed.call, LIGHTNING_SEED_WORKERS)
        if per_worker is not None and not (isinstance(per_worker.value, cst.Name) and per_worker.value.value == "False"):
            return None
        loaded = lightning_loader_draw(program, module, cls, seed.generators, self._documented_workers)
        return (loaded[1], f"{loaded[2]} in {loaded[0]}.__getitem__ (its train_dataloader)") if loaded else None

    def _handed_classes(self, frame: str | None, name: str) -> list[tuple[str, str]] | None:
        """(module, class) of each project class parameter `name` of function `frame` (of this
        module, outside classes) holds: its default where a call leaves it out, and what each
        call of the function in the project passes it (`run_cli(Fused, "exp")`); None where one
        of them is not a project class or a call is unknown."""
        project = self.model.project
        if project is None or frame is None or "." in frame:
            return None
        program = project.program
        function = program.definition(project.module, frame)
        if function is None or name not in [a.arg for a in _arguments(function)]:
            return None
        positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        defaults = dict(zip(reversed(positional), reversed(function.args.defaults)))
        sites = program.context.call_sites(project.module, frame)
        found: list[tuple[str, str] | None] = []
        for site in sites or ():
            tree = program.tree(site.caller)
            calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.lineno == site.line
                     and _last(node.func) == frame] if tree is not None else []
            if len(calls) != 1 or any(isinstance(a, ast.Starred) for a in calls[0].args) or \
                    any(k.arg is None for k in calls[0].keywords):
                return None
            given = next((k.value for k in calls[0].keywords if k.arg == name), None)
            index = positional.index(name) if name in positional else len(calls[0].args)
            given = calls[0].args[index] if given is None and index < len(calls[0].args) else given
            caller = site.caller if given is not None else project.module
            given = given if given is not None else defaults.get(name)
            written = dotted(given) if given is not None else None
            found.append(program.class_of(caller, written) if written is not None else None)
        if not sites or None in found:
            return None
        return list(dict.fromkeys(found))  # type: ignore[arg-type]

    def _report_object(self, seed: _Seed, call: _LoopCall, method: str | None, cls: str, found: tuple[Place, str],
                       via: _LoopCall | None, built: bool = False) -> None:
        place, what = found
        if built and method is None:  # a LightningModule seeding in its constructor, then fitted
            does = ""
            step = (f"the Trainer fits a {cls} (whose {CONSTRUCTOR} seeds) here: it runs {cls}.training_step on "
                    "every rank, every step")
            where = f"{what} at {place}, in {cls}.training_step, which trainer.fit runs each step on this object"
        elif built:  # the seed is in the constructor of the object whose method `call` runs
            does = ""
            caller = f"{call.frame}()" if call.frame else "the module's code"
            step = (f"{caller} builds a {cls} (whose {CONSTRUCTOR} seeds) and then calls {cls}.{method}() on it, "
                    f"on every rank: its training loop draws {what} each step")
            where = f"{what} at {place}, in the training loop of {cls}.{method}(), which {caller} calls on this object"
        elif method is None:
            does = "which fits the model"
            step = f"the Trainer fits a {cls} here: it runs {cls}.training_step on every rank, every step"
            where = f"{what} at {place}, in {cls}.training_step, which trainer.fit runs each step"
        else:
            does = f"which calls {cls}.{method}()"
            step = f"calls {cls}.{method}() here, on every rank: its training loop draws {what} each step"
            where = f"{what} at {place}, in the training loop of {cls}.{method}(), called below"
        steps = [
            *([Link(StepKind.REACHES, f"then calls {via.callee}(), {does}", via.call)] if via else []),
            Link(StepKind.REACHES, step, call.call),
        ]
        self._report_draws(seed, steps, what, place, where)

    def _report_seed(self, seed: _Seed, call: _LoopCall, found: tuple[str, Place | None], via: _LoopCall | None) -> None:
        what, place = found
        if via is None:
            where = f"{what} in the training loop below" if place is None else f"{what} at {place}, reached from the training loop each step"
        else:
            loop = f"the training loop of {via.callee}(), called below"
            where = f"{what} in {loop}" if place is None else f"{what} at {place}, reached from {loop}, each step"
        steps = [
            *([Link(StepKind.REACHES, f"then calls {via.callee}(), whose training loop runs with the seeded generators", via.call)] if via else []),
            Link(StepKind.REACHES, f"the training loop calls this on every step; it draws {what} from the seeded generator", call.call),
        ]
        self._report_draws(seed, steps, what, place if place is not None else call.call, where)

    def _report_draws(self, seed: _Seed, steps: list[Link], what: str, drawn, where: str) -> None:
        """Report `seed` with its chain: the seed, who runs it, `steps` to the draw, and the draw."""
        runs = self.runs_link()
        if runs is None:
            return  # nothing shows several ranks running this file
        through = f" (through {seed.through}(), which seeds them with its parameter)" if seed.through else ""
        seeded = f"the generator `{seed.private}`" if seed.private else ", ".join(sorted(seed.generators)) + through
        chain = [
            Link(StepKind.MADE, f"seeds {seeded} with a value that is the same on every rank", seed.call),
            runs,
            *steps,
            Link(StepKind.HARM, f"{what} draws the same values on every rank: the ranks train on the same "
                 "noise, timesteps or indices", drawn),
        ]
        if seed.private is not None:  # reported at its `manual_seed`
            self.report(seed.call.func.attr, f"{self.generator_message} ({where})", chain=chain)  # type: ignore[attr-defined]
            return
        self.report(seed.call, f"{self.message} ({where})", chain=chain)

    def _reseeded(self, seed: _Seed, before: int) -> bool:
        """Whether another seed of the same generators follows `seed` in its function before `before`."""
        return any(
            other is not seed and other.frame == seed.frame and seed.order < other.order < before
            and other.private == seed.private and other.generators >= seed.generators
            for other in self._seeds
        )

    def _innermost_training_loops(self, seed: _Seed, frame: str | None, after: int) -> set[int]:
        """The loops of function `frame` after `after` (the seed's order in its own function, 0
        in a function it calls) that run a backward and hold no other such loop, unless
        another seed of the same generators comes between in that function (`seed + rank`
        after the model is built)."""
        found = {loop for loop in self._training if self._loops[loop][1] == frame and self._loops[loop][0] > after}
        outer = {parent for loop in found for parent in self._loops[loop][2]}
        if frame == seed.frame:
            return {loop for loop in found - outer if not self._reseeded(seed, self._loops[loop][0])}
        return {loop for loop in found - outer if not any(
            other.frame == frame and other.order < self._loops[loop][0] and other.generators >= seed.generators
            for other in self._seeds
        )}

    def _draw(self, call: _LoopCall, seed: _Seed) -> tuple[str, Place | None] | None:
        """What the loop's call draws from a generator the seed seeded: the call itself (no
        place), or a draw in a project function it reaches (its place); None otherwise."""
        qualified = self.model.qualified(call.call.func)
        if qualified is not None and _is_draw(qualified, seed.generators):
            if keyword_argument(call.call, DRAW_GENERATOR) or self._switched_off(call) or self._split_after(call):
                return None
            return qualified, None
        inner = self._inner.get((call.frame, call.callee)) if call.callee is not None else None
        drawn = next((name for name in inner[1] if _is_draw(name, seed.generators)), None) if inner is not None else None
        if drawn is not None:
            return f"{drawn} through {call.callee}()", None
        project = self.model.project
        if project is None or call.callee is None:
            return None
        found = reached_draw(project.program, project.module, call.frame, seed.cls, call.callee, seed.generators, {}, 0)
        return (found[1], found[0]) if found is not None else None

    def _split_after(self, call: _LoopCall) -> bool:
        """Whether the loop hands what the draw `call` gives (the name it binds) to Accelerate's
        `split_between_processes`: every rank draws the same sample (`batch = random.sample(prompts,
        k)`) so that each takes its own slice of it, which is what the shared seed is for."""
        names = {bound.name for bound in self._bound if bound.value is call.call and bound.frame == call.frame}
        return any(frame == call.frame and name in names and set(loops) & set(call.loops)
                   for frame, name, loops in self._split)

    def _switched_off(self, call: _LoopCall) -> bool:
        """Whether every call like `call` in its function sits in code no documented run takes
        (`if args.augment == "mixup":` of an option no command passes: ProcessContext.switched_off_at)."""
        project = self.model.project
        if project is None or call.frame is None or call.callee is None:
            return False
        program = project.program
        record = program.function(project.module, call.frame)
        lines = [called.line for called in record.invocations if called.callee == call.callee] if record is not None else []
        return bool(lines) and all(program.context.switched_off_at(project.module, call.frame, line) for line in lines)

    def _same_on_every_rank(self, expr: cst.BaseExpression | None, at: _Seed, depth: int = 0) -> bool | None:
        """Whether `expr` has the same value on every rank where `at` reads it: True, False
        (it holds the rank), or None (unknown: a parameter, a call)."""
        if expr is None or depth > 4:
            return None
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
            return True
        if _mentions_rank(expr):
            return False
        if isinstance(expr, cst.Call):
            name = dotted_name(expr.func)
            if environment_key(expr) is not None:
                return environment_key(expr) not in RANK_ENVIRONMENT
            if name in CONVERSIONS and len(expr.args) == 1:
                return self._same_on_every_rank(expr.args[0].value, at, depth + 1)
            if _mapping_read(expr):  # `config.get("seed", None)`: as `config["seed"]`
                return True
            return self._agreed(expr, at, depth)
        if isinstance(expr, (cst.Name, cst.Attribute)):
            return self._bound_value(expr, at, depth)
        if isinstance(expr, cst.Subscript):
            if environment_key(expr) is not None:
                return environment_key(expr) not in RANK_ENVIRONMENT
            held = expr.value
            while isinstance(held, cst.Subscript):
                held = held.value
            return None if isinstance(held, cst.Call) else True  # `np.random.get_state()[1][0]`: what a call gives
        parts = [self._same_on_every_rank(part, at, depth + 1) for part in _operands(expr)]
        if not parts:
            return None
        return False if False in parts else None if None in parts else True

    def _agreed(self, call: cst.Call, at: _Seed, depth: int) -> bool | None:
        """Whether what a call of a project function gives back is the same on every rank,
        where each of its returns is (`agreed_returns`) one of its parameters (then as what the
        call gives that parameter), a tensor rank 0 broadcast to every rank, or under
        `if world_size == 1:` (one process): open-mmlab's `init_random_seed`. None otherwise."""
        project, callee = self.model.project, dotted_name(call.func)
        if project is None or callee is None:
            return None
        program = project.program
        target = program.target(project.module, at.frame, at.cls, callee)
        definition = program.definition(target.module, target.key) if target is not None and "." not in target.key else None
        if definition is None:
            return None
        returned = agreed_returns(definition, lambda written: program.qualify(target.module, written) in BROADCAST)
        if returned is None:
            return None
        verdicts = [self._same_on_every_rank(_given(call, definition, name), at, depth + 1) for name in returned]
        return False if False in verdicts else None if None in verdicts else True

    def _bound_value(self, expr: cst.Name | cst.Attribute, at: _Seed, depth: int) -> bool | None:
        name = dotted_name(expr)
        if name is None:
            return None
        bound = [b for b in self._bound if b.name == name and b.frame == at.frame and b.order < at.order and not b.default_fill]
        if bound:
            last = self._same_on_every_rank(bound[-1].value, at, depth + 1)
            if last is True and any(self._same_on_every_rank(b.value, at, depth + 1) is False for b in bound[:-1]):
                # `seed_offset = ddp_rank` under `if ddp:`, `seed_offset = 0` under its `else:`
                # (nanoGPT): the branch a distributed run takes holds the rank
                return False
            return last
        if isinstance(expr, cst.Name):
            constant = self.model.constant(name)
            return self._same_on_every_rank(constant, at, depth + 1) if constant is not None else self._filled(name, at)
        if name.startswith(f"self.{LIGHTNING_HPARAMS}.") and self._lightning_class(at.cls):
            return True  # the arguments its constructor saved (`save_hyperparameters()`): the configuration
        if name.startswith("self."):
            elsewhere = [b for b in self._bound if b.name == name and b.cls == at.cls and b.cls is not None]
            values = [self._same_on_every_rank(b.value, at, depth + 1) for b in elsewhere]
            return None if not values or None in values else all(values)
        return True  # an option or configuration value: the same command line and files on every rank

    def _lightning_class(self, cls: str | None) -> bool:
        """Whether `cls`, a class of this module, is a LightningModule (or derives from one)."""
        project = self.model.project
        return cls is not None and project is not None and project.program.derives_from(project.module, cls, LIGHTNING_MODULE)

    def _filled(self, name: str, at: _Seed) -> bool | None:
        """For a parameter `name` of the seed's function: whether what fills it is the same on
        every rank. True for a command-line option click declares for it (`@click.option("--seed",
        default=42)`), and where every call of the function in the project passes it a literal or an
        option or configuration value (`train(args.seed)`), leaves it at a literal default, or
        fills it from a configuration file it loads (`main(**OmegaConf.load(args.config))`: the same
        file on every rank); False where one passes something with a rank in it; None otherwise."""
        project = self.model.project
        if project is None or at.frame is None:
            return None
        program = project.program
        function = program.definition(project.module, at.frame)
        if function is None or name not in {argument.arg for argument in _arguments(function)}:
            return None
        if any(_click_declared(program, project.module, decorator) == name for decorator in function.decorator_list):
            return True
        if at.frame in self._worker_inits and _arguments(function)[0].arg == name:
            return True  # a worker_init_fn's worker id: k in worker k of every rank
        passed = program.context.passed_or_default(project.module, at.frame, name)
        verdicts = [_passed_verdict(text) for _, text, _ in passed] if passed is not None else \
            _configured(program, project.module, at.frame, function, name)
        if not verdicts:
            return None
        return False if False in verdicts else None if None in verdicts else True


# -- questions only this rule asks of the program model -------------------------------------

MAX_DEPTH = 4  # project functions followed below the loop's call; deeper is unknown


def reached_draw(program, module: str, key: str | None, cls: str | None, callee: str,
                 generators: frozenset[str], memo: dict, depth: int) -> tuple[Place, str] | None:
    """Where the project function that calling `callee` in function `key` of `module` reaches
    draws from one of `generators` (torch's, numpy's global state) without a generator of its
    own, itself or through the project functions it calls; None when it does not or is unknown."""
    if depth >= MAX_DEPTH or program.summary(module) is None:
        return None
    target = program.target(module, key, cls, callee)
    for reached in [target] if target is not None else forwards_called(program, module, key, cls, callee):
        if reached.function not in memo:
            memo[reached.function] = None  # a recursion through it draws nothing more
            record = program.function(reached.module, reached.key)
            calls = record.invocations if record is not None else ()
            memo[reached.function] = _drawn_among(program, reached.module, reached.key, record, calls, generators, memo, depth)
        if memo[reached.function] is not None:
            return memo[reached.function]
    return None


def forwards_called(program, module: str, key: str | None, cls: str | None, callee: str) -> list:
    """The `forward` methods that calling the module object `callee` (`model`, `self.augment`) in
    function `key` of `module` runs: nn.Module's `__call__` runs its class's forward, and
    nn.Sequential's forward calls each module it holds in turn. The object is known from what
    the name is bound to (a local or module-level name, a parameter the program follows, or a
    `self` attribute of the class): an object of a project nn.Module class, also through what
    hands the module back (a DDP wrap, `accelerator.prepare`, `.to(device)`, `.cuda()`).
    Empty when a binding is unknown, or two bindings make different objects."""
    memo = ("forwards called", module, key, cls, callee)  # read once: the server asks on every keystroke
    if memo not in program.memos.read:
        record = program.function(module, key) if key else None
        owner = record.cls if record is not None else cls
        head, _, attribute = callee.partition(".")
        if not attribute:
            classes = _ModuleObjects(program, module, key).named(head)
        elif head == "self" and owner is not None and "." not in attribute:
            classes = _ModuleObjects(program, module, key).attribute(owner, attribute)
        else:
            classes = None
        forwards = [program.resolve(made[0], f"{made[1]}().forward", None) for made in sorted(classes or ())]
        program.memos.read[memo] = [forward for forward in forwards if forward is not None]
    return program.memos.read[memo]


class _ModuleObjects:
    """The project nn.Module classes whose objects the names of one function (or of the
    module's code) hold, read from the function's `ast`: a set of (module, class), empty when the
    name only re-binds itself (`model = DDP(model)`), None when unknown."""

    def __init__(self, program, module: str, key: str | None) -> None:
        self.program, self.module, self.key = program, module, key
        self.function = program.definition(module, key) if key else None
        self.seen: set[str] = set()

    def named(self, name: str) -> set | None:
        if name in self.seen:
            return set()  # `model = DDP(model)`: the other bindings say what it is
        self.seen.add(name)
        scope = self.function if self.function is not None and _binds(self.function, name) else None
        if scope is None and self.function is not None and name in {a.arg for a in _arguments(self.function)}:
            value = self.program.parameters.get((self.module, self.key), {}).get(name)
            made = getattr(value, "wraps", None) or ((value.module, value.cls) if isinstance(value, Instance) else None)
            return {made} if made is not None and self._module_class(*made) else None
        scope = scope or self.program.tree(self.module)
        bindings = [(node.value, at) for node in _statements(scope) for target in _targets(node)
                    for at in _positions(target, name)]
        return self._alike([self.classes_of(value, at) for value, at in bindings])

    def attribute(self, cls: str, name: str) -> set | None:
        tree = self.program.tree(self.module)
        owner = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None) if tree else None
        made = []
        for method in owner.body if owner is not None else ():
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside = _ModuleObjects(self.program, self.module, f"{cls}.{method.name}")  # its names are its own
                made += [inside.classes_of(node.value, at) for node in _statements(method) for target in _targets(node)
                         for at in _positions(target, name, holder="self")]
        return self._alike(made)

    @staticmethod
    def _alike(alternatives: list) -> set | None:
        """The object every binding makes; None when one is unknown or two differ."""
        made = [found for found in alternatives if found != set()]
        if not alternatives or None in made or any(found != made[0] for found in made):
            return None
        return made[0] if made else set()

    def classes_of(self, value: ast.expr, at: int | None = None) -> set | None:
        """The project nn.Module classes whose objects `value` (its item `at`) may make."""
        if at is not None:  # one of several names bound at once: `model, optimizer = accelerator.prepare(model, optimizer)`
            if isinstance(value, (ast.Tuple, ast.List)) and at < len(value.elts):
                return self.classes_of(value.elts[at])
            return self.classes_of(value.args[at]) if self._prepares(value) and at < len(value.args) else None
        if isinstance(value, ast.Name):
            return self.named(value.id)
        if isinstance(value, ast.IfExp):
            return self._alike([self.classes_of(value.body), self.classes_of(value.orelse)])
        if not isinstance(value, ast.Call):
            return None
        written = dotted(value.func)
        made = self.program.class_of(self.module, written) if written is not None else None
        if made is not None:
            return {made} if self._module_class(*made) else None
        qualified = self.program.qualify(self.module, written) if written is not None else None
        if qualified in SEQUENTIAL:  # each module it holds runs; one it cannot place draws nothing known
            held = [found for item in value.args for found in self._held(item)]
            return set().union(*[found for found in held if found]) if held else None
        if isinstance(value.func, ast.Attribute) and value.func.attr in SAME_VALUE_METHODS:
            return self.classes_of(value.func.value)
        handed = value.args[0] if value.args and not isinstance(value.args[0], ast.Starred) else None
        if handed is not None and (qualified in DDP or self._prepares(value) and len(value.args) == 1):
            return self.classes_of(handed)
        return None

    def _held(self, item: ast.expr) -> list:
        """What an argument of nn.Sequential gives it: a module, or the modules of a list
        (`nn.Sequential(*augments)`: its literal items and what `augments.append(...)` adds,
        where a documented run takes that line)."""
        if not isinstance(item, ast.Starred):
            return [self.classes_of(item)]
        if not isinstance(item.value, ast.Name) or self.function is None:
            return [None]
        name, found = item.value.id, []
        for node in _statements(self.function):
            for target in _targets(node):
                if _positions(target, name) == [None]:
                    found += [self.classes_of(e) for e in node.value.elts] if isinstance(node.value, ast.List) else [None]
            call = node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
            if (call is not None and dotted(call.func) == f"{name}.append" and len(call.args) == 1
                    and not self.program.context.switched_off_at(self.module, self.key, call.lineno)):
                found.append(self.classes_of(call.args[0]))
        return found

    def _prepares(self, value: ast.expr) -> bool:
        """`accelerator.prepare(...)` of an `accelerator` bound to Accelerate's Accelerator."""
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute) or value.func.attr != "prepare":
            return False
        receiver = dotted(value.func.value)
        scopes = [scope for scope in (self.function, self.program.tree(self.module)) if scope is not None]
        return receiver is not None and any(
            isinstance(node.value, ast.Call) and self.program.qualify(self.module, dotted(node.value.func) or "") in ACCELERATOR
            for scope in scopes for node in _statements(scope) for target in _targets(node)
            if _positions(target, receiver) == [None]
        )

    def _module_class(self, module: str, cls: str) -> bool:
        return self.program.derives_from(module, cls, NN_MODULE | LIGHTNING_MODULE)


def _statements(scope: ast.AST):
    """The nodes of a function or module, not those of the functions and classes it defines."""
    pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        pending.extend(ast.iter_child_nodes(node))


def _targets(node: ast.AST) -> list:
    if isinstance(node, ast.Assign):
        return node.targets
    return [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []


def _positions(target: ast.expr, name: str, holder: str | None = None) -> list:
    """Where `target` binds `name` (`self.name` with `holder`): [None] for the whole value, [i]
    for the i-th of a tuple target, [] where it does not."""
    def names(node: ast.expr) -> bool:
        if holder is not None:
            return isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name) and node.value.id == holder
        return isinstance(node, ast.Name) and node.id == name
    if names(target):
        return [None]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [i for i, item in enumerate(target.elts) if names(item)]
    return []


def _binds(function: ast.AST, name: str) -> bool:
    return any(_positions(target, name) for node in _statements(function) for target in _targets(node))


def _arguments(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list:
    arguments = function.args
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]


def training_loop_draw(program, module: str, cls: str, callee: str, generators: frozenset[str],
                       depth: int = 0) -> tuple[Place, str] | None:
    """Where the method `callee` (`self.train`) of project class `cls` of `module` draws from
    one of `generators` in its training loop (an innermost loop that runs a backward) on every
    step, itself or through the project functions the loop calls, when nothing seeds before that
    loop in the method; None when it does not or is unknown. A method with no training loop of
    its own is followed into the methods of its object it calls (`self.train()` running
    `self._run_one_epoch(epoch)` each epoch), once, up to the first that seeds."""
    target = program.target(module, None, cls, callee)
    record = program.function(target.module, target.key) if target is not None else None
    if record is None:
        return None
    training = [loop for loop in record.loops if loop.trains]
    for call in record.invocations if not training and depth == 0 and record.cls is not None else ():
        if _seeding(program, target.module, call.callee):
            return None  # seeded again before (maybe with the rank)
        found = training_loop_draw(program, target.module, record.cls, call.callee, generators, depth + 1) \
            if call.callee.startswith("self.") else None
        if found is not None:
            return found
    for loop in training:
        if any(other is not loop and loop.first <= other.first and other.last <= loop.last for other in training):
            continue  # an outer loop: its inner training loop is the step
        if any(call.line < loop.first and _seeding(program, target.module, call.callee) for call in record.invocations):
            continue  # seeded again before the loop (maybe with the rank)
        calls = [call for call in record.invocations if loop.first <= call.line <= loop.last]
        found = _drawn_among(program, target.module, target.key, record, calls, generators, {}, 0)
        if found is not None:
            return found
    return None


def handed_loader_draw(program, module: str, key: str, record, after: int, before: int | None, judge) -> tuple | None:
    """For line `after` of function `key` of `module` (whose summary is `record`; `before`: the
    line where it seeds again, if it does): what `judge` gives (with the function whose loop
    it is, or None for `key` itself) for the first DataLoader the program model knows (a
    `Loader` value: built wherever, handed on as an argument or returned) that a training loop
    after that line iterates, in `key` or in a project function it calls after it (followed up
    to MAX_DEPTH calls down, through functions that seed nothing), and `judge` accepts
    (`_loader_dataset_draw`: its Dataset draws alike on every rank); None otherwise."""
    again = [call.line for call in record.invocations if call.line > after
             and _seeds_again(program, module, key or None, record.cls, call.callee)]
    before = min([*again, *([before] if before is not None else [])], default=None)  # seeded again (maybe per rank)
    pending = [(module, key, record, None, 0)]
    seen: set[tuple[str, str]] = set()
    while pending:
        here, at, function, callee, depth = pending.pop(0)
        if (here, at) in seen:
            continue
        seen.add((here, at))
        own = callee is None
        for loop in _innermost_training(function):
            if own and (loop.first <= after or before is not None and loop.first >= before):
                continue
            if not own and any(call.line < loop.first and _seeds_again(program, here, at, function.cls, call.callee)
                               for call in function.invocations):
                continue  # seeded again before the loop (maybe with the rank)
            for source in loop.sources:
                found = judge(program.evaluate(here, at, source))
                if found is not None:
                    return (*found, callee)
        if depth >= MAX_DEPTH:
            continue
        for call in function.invocations:
            if own and (call.line <= after or before is not None and call.line >= before):
                continue
            target = program.target(here, at or None, function.cls, call.callee)
            reached = program.function(target.module, target.key) if target is not None else None
            if reached is None or any(_seeds_again(program, target.module, target.key, reached.cls, c.callee)
                                      for c in reached.invocations):
                continue  # unknown, or it seeds again (maybe with the rank)
            pending.append((target.module, target.key, reached, call.callee if own else callee, depth + 1))
    return None


def _seeds_again(program, module: str, key: str | None, cls: str | None, callee: str) -> bool:
    """Whether calling `callee` in function `key` of `module` seeds a generator: a seeding call,
    or a project function that makes one (`fix_random_seeds(seed + rank)`, whatever it is given)."""
    if _seeding(program, module, callee):
        return True
    target = program.target(module, key or None, cls, callee)
    record = program.function(target.module, target.key) if target is not None else None
    return record is not None and any(_seeding(program, target.module, call.callee) for call in record.invocations)


def _innermost_training(record) -> list:
    """The loops of a function's summary that run a backward and hold no other such loop."""
    training = [loop for loop in record.loops if loop.trains]
    return [loop for loop in training if not any(
        other is not loop and loop.first <= other.first and other.last <= loop.last for other in training)]


def _loader_dataset_draw(program, loader, generators: frozenset[str], workers_of) -> tuple | None:
    """(the Dataset class, the place of its draw, what it draws, the DataLoader's place, its worker
    count) where `loader`, a `Loader` value of the program model, is a DataLoader call whose
    Dataset is an object of a project class (made in the function that builds the loader, or
    handed to it) whose `__getitem__` draws from a generator the seed makes alike on every rank:
    the seeded ones without workers, all three with workers seeded from torch's generator and no
    `worker_init_fn` or `generator=` (see SharedSeedDataPath._loader_generators); None otherwise."""
    made = getattr(loader, "made_at", None)
    found = _loader_call(program, made, workers_of) if isinstance(loader, Loader) and made is not None else None
    if found is None:
        return None
    module, tree, call, workers = found
    given = {k.arg for k in call.keywords}
    if workers == 0:
        drawn = generators
    elif "torch" not in generators or "worker_init_fn" in given or "generator" in given:
        return None
    else:
        drawn = ALL_GENERATORS if workers is not None else generators
    draw = _dataset_draw(program, module, tree, call, drawn)
    return (*draw, made, workers) if draw is not None else None


def worker_seed_draw(program, module: str, line: int, generators: frozenset[str], workers_of) -> tuple | None:
    """For a `worker_init_fn` that seeds `generators` alike on every rank, given to the DataLoader
    call at `line` of `module`: (the Dataset class, the place of its draw, what it draws, the
    DataLoader's place, its worker count, the function whose training loop iterates it or None
    for the one that builds it) where the DataLoader is not shown to start no workers (a
    worker_init_fn runs only in workers; one set at run time, `num_workers=opt.nThreads` after
    `opt.nThreads //= num_gpu`, counts: the program hands it the function for them), its Dataset's `__getitem__` draws from one of
    `generators`, and a training loop after it iterates it (a `Loader` of the program model, in
    the function that builds it or one it calls: `handed_loader_draw`); None otherwise."""
    made = program.place(module, line)
    found = _loader_call(program, made, workers_of)
    if found is None or found[3] == 0:
        return None  # no workers: the worker_init_fn never runs (a count set at run time counts: the program gives one)
    _, tree, call, workers = found
    draw = _dataset_draw(program, module, tree, call, generators)
    function = _enclosing_function(tree, line)
    record = program.function(module, function[0]) if function is not None else None
    if draw is None or record is None:
        return None
    iterated = handed_loader_draw(program, module, function[0], record, line, None,  # type: ignore[index]
                                  lambda loader: () if isinstance(loader, Loader) and loader.made_at == made else None)
    return (*draw, made, workers, iterated[-1]) if iterated is not None else None


def lightning_loader_draw(program, module: str, cls: str, generators: frozenset[str], workers_of) -> tuple | None:
    """(the Dataset class, the place of its draw, what it draws) for the one DataLoader call the
    `train_dataloader` of LightningModule `cls` of `module` (or of a base) makes, which the
    Trainer's fit loop iterates on every rank (with a DistributedSampler put in), where its
    Dataset's `__getitem__` draws from a generator `generators` make alike on every rank: the
    seeded ones without workers; with workers and a seed of torch's, all three (each pass draws
    the workers' base seed from torch's generator: `_loader_dataset_draw`); None otherwise."""
    target = program.target(module, None, cls, "self.train_dataloader")
    definition = program.definition(target.module, target.key) if target is not None else None
    if definition is None:
        return None
    calls = [node for node in ast.walk(definition) if isinstance(node, ast.Call)
             and program.qualify(target.module, dotted(node.func) or "") in DATALOADER]
    found = _loader_call(program, program.place(target.module, calls[0].lineno), workers_of) if len(calls) == 1 else None
    if found is None:
        return None
    owner, tree, call, workers = found
    if workers != 0 and ("torch" not in generators or any(k.arg in ("worker_init_fn", DRAW_GENERATOR) for k in call.keywords)):
        return None
    return _dataset_draw(program, owner, tree, call, generators if workers == 0 else ALL_GENERATORS if workers else generators)


def _loader_call(program, made: Place, workers_of) -> tuple[str, ast.Module, ast.Call, int | None] | None:
    """(its module, that module's tree, the call, its worker count: 0 without `num_workers`, an
    option's count in every documented run by `workers_of`, None where unknown) of the
    DataLoader call at `made`, read by keyword only; None where it is not one such call."""
    module = program.module_at(made)
    tree = program.tree(module) if module is not None else None
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.lineno == made.line
             and program.qualify(module, dotted(node.func) or "") in DATALOADER] if tree is not None else []
    if len(calls) != 1 or any(isinstance(a, ast.Starred) for a in calls[0].args) or any(k.arg is None for k in calls[0].keywords):
        return None
    call = calls[0]
    if len(call.args) > 1:
        return None  # a positional batch size, shuffle, sampler...: read by keyword only
    count = next((k.value for k in call.keywords if k.arg == "num_workers"), None)
    if count is None:
        workers: int | None = 0
    elif isinstance(count, ast.Constant) and type(count.value) is int:
        workers = count.value
    else:
        workers = workers_of(module, count) if isinstance(count, ast.Attribute) else None
    return module, tree, call, workers  # type: ignore[return-value]


def _dataset_draw(program, module: str, tree: ast.Module, call: ast.Call, drawn: frozenset[str]) -> tuple | None:
    """(the Dataset class, the place of its draw, what it draws) where the Dataset of DataLoader
    call `call` of `module` is torchvision's ImageFolder with a transform that draws, or an
    object of project classes each of whose `__getitem__` draws from one of `drawn`."""
    dataset = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "dataset"), None)
    function = _enclosing_function(tree, call.lineno)
    folder = _image_folder_draw(program, module, function, dataset, drawn)
    if folder is not None:
        return ("ImageFolder", *folder)
    classes = _dataset_made(program, module, function, dataset)
    if not classes:
        return None
    draws = [reached_draw(program, owner, None, cls, "self.__getitem__", drawn, {}, 0) for owner, cls in classes]
    if None in draws:
        return None  # every class it may be must draw
    place, what = draws[0]  # type: ignore[misc]
    return classes[0][1], place, what


def _image_folder_draw(program, module: str, function, dataset: ast.expr | None,
                       generators: frozenset[str]) -> tuple[Place, str] | None:
    """Where the torchvision ImageFolder that `dataset` (in `function`, (key, definition)) is
    made by draws through the `transform=` it is given, which its __getitem__ applies to each
    sample (`_transform_draw`); None when it is not one, or that is unknown."""
    if isinstance(dataset, ast.Name) and function is not None:
        values = _bound_in(function[1], dataset.id)
        dataset = values[0] if values is not None and len(values) == 1 else None
    if not isinstance(dataset, ast.Call) or program.qualify(module, dotted(dataset.func) or "") not in TORCHVISION_IMAGE_FOLDER:
        return None
    given = next((k.value for k in dataset.keywords if k.arg == "transform"), None)
    index = TORCHVISION_IMAGE_FOLDER.position("transform")
    if given is None and index is not None and len(dataset.args) > index:
        given = dataset.args[index]
    return _transform_draw(program, module, function[1] if function else None, given, generators, 0)


def _bound_in(definition: ast.AST, name: str) -> list[ast.expr] | None:
    """The values `name` is bound to in a function (by `=`); None where it is also bound
    otherwise (unpacked, a loop target, a parameter) or not at all."""
    values = [node.value for node in _statements(definition) for target in _targets(node)
              if isinstance(target, ast.Name) and target.id == name]
    others = any(isinstance(t, (ast.Tuple, ast.List, ast.Starred)) and any(isinstance(e, ast.Name) and e.id == name
                 for e in ast.walk(t)) for node in _statements(definition) for t in _targets(node))
    loops = any(isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.comprehension)) and any(
        isinstance(e, ast.Name) and e.id == name for e in ast.walk(getattr(node, "target", node))) for node in _statements(definition)
        if not isinstance(node, ast.With))
    parameter = isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in {a.arg for a in _arguments(definition)}
    return values if values and not others and not loops and not parameter else None


def _transform_draw(program, module: str, definition, expr: ast.expr | None, generators: frozenset[str],
                    depth: int) -> tuple[Place, str] | None:
    """Where calling the transform `expr` (in `definition`, a function or None) draws from one
    of `generators`: a torchvision random transform (`RandomResizedCrop(224)`, torch's
    generator), a torchvision Compose holding one (also through a name bound in the function
    to one), or an object of a project class whose `__call__` draws (`reached_draw`); None
    when it draws nothing or is unknown."""
    if depth > MAX_DEPTH or expr is None:
        return None
    if isinstance(expr, ast.Name) and definition is not None:
        values = _bound_in(definition, expr.id)
        found = [_transform_draw(program, module, definition, value, generators, depth + 1) for value in values or ()]
        return found[0] if found and None not in found else None  # every binding must draw
    if not isinstance(expr, ast.Call):
        return None
    written = dotted(expr.func) or ""
    qualified = program.qualify(module, written)
    if qualified in TORCHVISION_RANDOM_TRANSFORMS:
        return (program.place(module, expr.lineno), qualified) if "torch" in generators else None
    if qualified in TORCHVISION_COMPOSE:
        listed = expr.args[0] if expr.args else next((k.value for k in expr.keywords if k.arg == "transforms"), None)
        for item in listed.elts if isinstance(listed, (ast.List, ast.Tuple)) else ():
            found = _transform_draw(program, module, definition, item, generators, depth + 1)
            if found is not None:
                return found  # Compose calls every transform it holds, on each sample
        return None
    made = program.class_of(module, written) if written else None
    return reached_draw(program, made[0], None, made[1], "self.__call__", generators, {}, depth + 1) if made else None


def _attribute_draw(program, module: str, cls: str, attribute: str, generators: frozenset[str]) -> tuple[Place, str] | None:
    """Where calling `self.<attribute>` in a method of project class `cls` of `module` draws:
    each binding of it in the class's methods (`self.global_transfo1 = transforms.Compose([...])`
    in `__init__`) is a transform that draws (`_transform_draw`); None otherwise."""
    tree = program.tree(module)
    owner = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None) if tree else None
    found = []
    for method in owner.body if owner is not None else ():
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [_transform_draw(program, module, method, node.value, generators, 1) for node in _statements(method)
                      for target in _targets(node) if _positions(target, attribute, holder="self") == [None]]
    return found[0] if found and None not in found else None


def _enclosing_function(tree: ast.Module, line: int) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """(its key, its definition) of the innermost top-level function or method holding `line`."""
    found = None
    for node in tree.body:
        inner = [(f"{node.name}.{m.name}", m) for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))] \
            if isinstance(node, ast.ClassDef) else [(node.name, node)] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        for key, function in inner:
            if function.lineno <= line <= (function.end_lineno or function.lineno):
                found = (key, function)
    return found


def _dataset_made(program, module: str, function, dataset: ast.expr | None) -> list[tuple[str, str]]:
    """(module, class) of the project classes whose object `dataset` (a DataLoader's dataset in
    `function`, (key, definition) or None for module code) holds: the class a call names, or
    for a name, the class of each binding in the function (every one must be a call of a project
    class, or of a project function whose returns make one: `_made_by`), or what the program model knows its parameter holds (`Instance`); empty
    where any of that is unknown."""
    key = function[0] if function is not None else None
    cls = key.rpartition(".")[0] or None if key is not None else None
    if isinstance(dataset, ast.Call):
        return _made_by(program, module, key, cls, dotted(dataset.func) or "")
    if not isinstance(dataset, ast.Name) or function is None:
        return []
    key, definition = function
    values = [node.value for node in _statements(definition) for target in _targets(node)
              if isinstance(target, ast.Name) and target.id == dataset.id]
    if any(isinstance(t, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == dataset.id for e in ast.walk(t))
           for node in _statements(definition) for t in _targets(node)):
        return []  # also bound by unpacking: unknown
    if values:
        made = [_made_by(program, module, key, cls, dotted(v.func) or "") if isinstance(v, ast.Call) else [] for v in values]
        return [] if [] in made else list(dict.fromkeys(c for classes in made for c in classes))
    if dataset.id in {a.arg for a in _arguments(definition)}:
        value = program.parameters.get((module, key), {}).get(dataset.id)
        return [(value.module, value.cls)] if isinstance(value, Instance) else []
    return []


def _made_by(program, module: str, key: str | None, cls: str | None, callee: str, depth: int = 0) -> list[tuple[str, str]]:
    """(module, class) of each project class whose object calling `callee` in function `key`
    (of class `cls`) of `module` may make: the class it names, or, for a project function
    (`dataset = build_dataset(cfg)`), the classes its returns make, each return a call of a
    class or of such a function (up to MAX_DEPTH down; `if cfg.name == "voc": return VOC(...)`
    gives both). Empty where any return is something else or the function may return nothing."""
    found = program.class_of(module, callee) if callee else None
    if found is not None or not callee or depth > MAX_DEPTH:
        return [found] if found is not None else []
    target = program.target(module, key, cls, callee)
    record = program.function(target.module, target.key) if target is not None else None
    if record is None or record.other_returns or not record.returns:
        return []
    classes: list[tuple[str, str]] = []
    for source in record.returns:
        made = _made_by(program, target.module, target.key, record.cls, source.callee, depth + 1) \
            if isinstance(source, CallResult) else []
        if not made:
            return []
        classes += [c for c in made if c not in classes]
    return classes


def _drawn_among(program, module: str, key: str, record, calls, generators: frozenset[str], memo: dict,
                 depth: int) -> tuple[Place, str] | None:
    """The first of `calls` (of function `key` of `module`, whose record is `record`) that draws
    from one of `generators` without a generator of its own, itself or through the project
    functions it calls (`reached_draw`), with where that draw is."""
    for call in calls:
        qualified = program.qualify(module, call.callee)
        if qualified is not None and _is_draw(qualified, generators):
            if program.context.switched_off_at(module, key, call.line):
                continue  # under a branch no documented run takes
            if not _own_generator(program, module, call.line, qualified):
                return program.place(module, call.line), qualified
            continue
        found = reached_draw(program, module, key, record.cls, call.callee, generators, memo, depth + 1)
        head, _, attribute = call.callee.partition(".")
        if found is None and head == "self" and attribute.isidentifier() and record.cls is not None:
            found = _attribute_draw(program, module, record.cls, attribute, generators)  # a transform it holds
        if found is not None:
            return found
    return None


def seeding_helper(program, module: str, key: str | None, cls: str | None, callee: str) -> tuple[int, str, frozenset[str]] | None:
    """(its position, its name, the generators seeded) of the parameter with which the project
    function that calling `callee` in function `key` of `module` reaches seeds generators
    (`def seed_everything(seed): torch.manual_seed(seed); np.random.seed(seed % 2**32)`): each
    seeding call there is given that parameter, alone or in arithmetic with literals, and
    none anything else (`seed + rank` seeds each rank its own way); Accelerate's `set_seed` may
    add the process index. None when it seeds nothing, or it is unknown."""
    if program.summary(module) is None:
        return None
    target = program.target(module, key, cls, callee)
    record = program.function(target.module, target.key) if target is not None else None
    if record is None or not any(_seeding(program, target.module, called.callee) for called in record.invocations):
        return None
    memo = ("seeding helper", target.module, target.key)  # read once: the server asks on every keystroke
    if memo not in program.memos.read:
        program.memos.read[memo] = _seeded_with(program, target.module, record)
    found = program.memos.read[memo]
    if found is None:
        return None
    parameter, generators = found
    arguments = record.arguments(target.bound)
    return (arguments.index(parameter), parameter, generators) if parameter in arguments else None


def _seeding(program, module: str, written: str | None) -> frozenset[str] | None:
    """The generators a call of `written` (as `module` writes it) seeds; None if it seeds none."""
    qualified = program.qualify(module, written) if written else None
    return generators_seeded(qualified)


def _seeded_with(program, module: str, record) -> tuple[str, frozenset[str]] | None:
    """(the parameter, the generators) with which the function of `record` seeds (see
    `seeding_helper`), read from its `ast`."""
    tree = program.tree(module)
    function = next((
        node for node in ast.walk(tree) if tree is not None
        and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == record.line
    ), None)
    if function is None:
        return None
    parameter, generators = None, set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        written = dotted(node.func)
        seeded = _seeding(program, module, written)
        if seeded is None:
            continue
        if program.qualify(module, written) in ACCELERATE_SET_SEED:
            return None  # device_specific may add the process index
        argument = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "seed"), None)
        names = {n.id for n in ast.walk(argument) if isinstance(n, ast.Name)} if argument is not None and _plain_arithmetic(argument) else set()
        if len(names) != 1 or (parameter is not None and names != {parameter}) or not names <= set(record.params):
            return None
        parameter = names.pop()
        generators |= seeded
    if parameter is not None and _rebound_otherwise(function, parameter):
        return None  # `seed = seed + distributed_rank()` first: not the value it is given
    return (parameter, frozenset(generators)) if parameter is not None else None


def _rebound_otherwise(function: ast.AST, name: str) -> bool:
    """Whether `function` binds `name` again to anything but arithmetic of `name` and literals
    (`seed = seed % 2**32` keeps the value it was given; `seed += rank` does not)."""
    for node in ast.walk(function):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)) else []
        if not any(isinstance(t, ast.Name) and t.id == name for target in targets for t in ast.walk(target)):
            continue
        value = None if isinstance(node, ast.For) else node.value
        if value is None or not _plain_arithmetic(value) or \
                {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} - {name}:
            return True
    return False


def _plain_arithmetic(expr: ast.expr) -> bool:
    """Names and literals combined by arithmetic (`seed`, `seed % 2**32`): names only as `ast.Name`."""
    return all(
        isinstance(n, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.expr_context))
        for n in ast.walk(expr)
    )


def _own_generator(program, module: str, line: int, qualified: str) -> bool:
    """Whether the draw of `qualified` at `line` of `module` is given a generator of its own."""
    key = ("calls given a generator", module)  # read once: the server asks on every keystroke
    if key not in program.memos.read:
        calls: dict[tuple[int, str | None], bool] = {}
        tree = program.tree(module)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Call):
                calls.setdefault((node.lineno, _last(node.func)), any(k.arg == DRAW_GENERATOR for k in node.keywords))
        program.memos.read[key] = calls
    return program.memos.read[key].get((line, qualified.rpartition(".")[2]), False)


def _click_declared(program, module: str, decorator: ast.expr) -> str | None:
    """The parameter a click decorator fills from the command line (`@click.option("--seed")`:
    "seed"; an explicit name without dashes wins, else the first `--` name, else the first)."""
    if not isinstance(decorator, ast.Call) or program.qualify(module, dotted(decorator.func) or "") not in CLICK_OPTIONS:
        return None
    names = [a.value for a in decorator.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    plain = [n for n in names if not n.startswith("-")]
    dashed = [n for n in names if n.startswith("--")] or [n for n in names if n.startswith("-")]
    chosen = plain[0] if plain else dashed[0].lstrip("-").replace("-", "_").lower() if dashed else None
    return chosen if chosen and chosen.isidentifier() else None


def _passed_verdict(text: str) -> bool | None:
    """Whether an argument's source text is the same on every rank: a literal number or string,
    or an option or configuration value (`args.seed`, `cfg.train.seed`); False with a rank in it;
    None otherwise (a name of the caller's, a call, None)."""
    try:
        expr = cst.parse_expression(text)
    except cst.ParserSyntaxError:
        return None
    if _mentions_rank(expr):
        return False
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    return True if isinstance(expr, cst.Attribute) and dotted_name(expr) is not None else None


def _configured(program, module: str, key: str, function: ast.FunctionDef | ast.AsyncFunctionDef,
                name: str) -> list[bool | None]:
    """For a top-level function whose calls may fill parameter `name` from `**mapping`: the
    verdict (`_passed_verdict`) on what each call in the project gives it, True where the call
    unpacks a configuration file it loads (`main(**OmegaConf.load(args.config))`: the same file on
    every rank) and passes `name` no other way, and where the parameter's default (used when the
    file lacks the key) is a literal; [None] where a call is not found or gives it otherwise."""
    sites = program.context.call_sites(module, key) if "." not in key else None
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    defaults = dict(zip(reversed(positional), reversed(function.args.defaults)))
    defaults.update((a.arg, d) for a, d in zip(function.args.kwonlyargs, function.args.kw_defaults) if d is not None)
    default = defaults.get(name)
    if not sites or default is not None and not isinstance(default, ast.Constant):
        return [None]
    verdicts: list[bool | None] = []
    for site in sites:
        tree = program.tree(site.caller)
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.lineno == site.line
                 and _last(node.func) == key] if tree is not None else []
        if len(calls) != 1:
            return [None]
        call = calls[0]
        given = next((k.value for k in call.keywords if k.arg == name), None)
        index = positional.index(name) if name in positional else len(call.args)
        if given is None and index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
            given = call.args[index]
        if given is not None:
            verdicts.append(_passed_verdict(ast.unparse(given)))
            continue
        unpacked = [k.value for k in call.keywords if k.arg is None]
        loaded = [value for value in unpacked if isinstance(value, ast.Call)
                  and program.qualify(site.caller, dotted(value.func) or "") in CONFIG_LOADERS]
        verdicts.append(True if unpacked and len(loaded) == len(unpacked) and not any(
            isinstance(a, ast.Starred) for a in call.args) else None)
    return verdicts


def _mapping_read(call: cst.Call) -> bool:
    """`config.get("seed")` or `config.get("seed", None)`: a key of an option or configuration
    mapping read as `config["seed"]` would be (the same command line and files on every rank)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "get" and dotted_name(func.value) is not None):
        return False
    values = [argument.value for argument in call.args]
    if not 1 <= len(values) <= 2 or any(argument.keyword is not None or argument.star for argument in call.args):
        return False
    default = values[1] if len(values) == 2 else None
    return isinstance(values[0], cst.SimpleString) and (
        default is None or isinstance(default, (cst.Integer, cst.Float, cst.SimpleString))
        or isinstance(default, cst.Name) and default.value == "None"
    )


def agreed_returns(function: ast.FunctionDef | ast.AsyncFunctionDef, broadcast) -> list[str] | None:
    """The parameters a function may give back, when each of its returns, outside loops, gives
    back a parameter that nothing binds before it (`if seed is not None: return seed`), a
    tensor (or its `.item()`) that a broadcast (`broadcast(written)` true of the call's name)
    filled before it and nothing bound again since (`dist.broadcast(random_num, src=0)`; `return
    random_num.item()`: rank 0's value on every rank), or sits under `if world_size == 1:` (one
    process: nothing to agree with). None when a return gives anything else, or there is none."""
    parameters = {argument.arg for argument in _arguments(function)}
    bindings: dict[str, list[int]] = {}
    broadcasts: dict[str, list[int]] = {}
    for node in _statements(function):
        for target in _targets(node) + ([node.target] if isinstance(node, (ast.AugAssign, ast.For)) else []):
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bindings.setdefault(name.id, []).append(node.lineno)
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name) and broadcast(dotted(node.func) or ""):
            broadcasts.setdefault(node.args[0].id, []).append(node.lineno)
    returned: list[str] = []
    found = False

    def walk(statements, looped: bool) -> bool:
        nonlocal found
        for statement in statements:
            if isinstance(statement, ast.Return):
                found = True
                value = statement.value
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "item" \
                        and not value.args:
                    value = value.func.value
                if looped or not isinstance(value, ast.Name):
                    return False
                line, name = statement.lineno, value.id
                if name in parameters and not any(bound < line for bound in bindings.get(name, ())):
                    returned.append(name)
                    continue
                filled = [at for at in broadcasts.get(name, ()) if at < line]
                if not filled or any(max(filled) < bound < line for bound in bindings.get(name, ())):
                    return False
            elif isinstance(statement, ast.If):
                if not _one_process_test(statement.test) and not walk(statement.body, looped):
                    return False
                if not walk(statement.orelse, looped):
                    return False
            elif isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
                if not walk(statement.body, True) or not walk(statement.orelse, True):
                    return False
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                if not walk(statement.body, looped):
                    return False
            elif isinstance(statement, ast.Try):
                for block in (statement.body, *[handler.body for handler in statement.handlers], statement.orelse, statement.finalbody):
                    if not walk(block, looped):
                        return False
        return True

    if not walk(function.body, False) or not found:
        return None
    return list(dict.fromkeys(returned))


def _one_process_test(test: ast.expr) -> bool:
    """`world_size == 1` (also `self.world_size == 1`): the branch a run of one process takes."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    left, right = test.left, test.comparators[0]
    return (dotted(left) or "").rpartition(".")[2].lower() == "world_size" and isinstance(right, ast.Constant) and right.value == 1


def _given(call: cst.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> cst.BaseExpression | None:
    """What `call` gives parameter `name` of `function`: its argument, or a literal default
    (as an expression); None when unknown (a starred argument, a default that is not a literal)."""
    if any(argument.star for argument in call.args):
        return None
    keyword = keyword_argument(call, name)
    if keyword is not None:
        return keyword.value
    positional = [argument.arg for argument in (*function.args.posonlyargs, *function.args.args)]
    given = [argument.value for argument in call.args if argument.keyword is None]
    if name in positional and positional.index(name) < len(given):
        return given[positional.index(name)]
    pairs = list(zip(reversed(positional), reversed(function.args.defaults)))
    pairs += [(a.arg, d) for a, d in zip(function.args.kwonlyargs, function.args.kw_defaults) if d is not None]
    default = next((d for arg, d in pairs if arg == name), None)
    if isinstance(default, ast.Constant) and isinstance(default.value, (int, float, str)) and not isinstance(default.value, bool):
        return cst.parse_expression(repr(default.value))
    return None


def _last(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _is_draw(qualified: str, generators: frozenset[str]) -> bool:
    if qualified in TORCH_DRAWS:
        return "torch" in generators
    if qualified in PYTHON_RANDOM_DRAWS:
        return "random" in generators
    return qualified in NUMPY_RANDOM and qualified.rpartition(".")[2] not in NOT_DRAWS and "numpy" in generators


def _one_kind(values) -> int | None:
    """For the worker counts an option gets in the documented runs (its default, then what each
    launch command passes, as text): 0 when every run starts none, the smallest when every run
    starts some (each such run seeds its workers alike), None when runs differ or one is not an
    integer (UNKNOWN included)."""
    counts = [value if type(value) is int else int(value) if isinstance(value, str) and value.isdigit() else None
              for value in (values if isinstance(values, tuple) else (None,))]
    if None in counts or not counts:
        return None
    return 0 if not any(counts) else min(counts) if all(counts) else None  # type: ignore[type-var]


def _unwrapped(iterated: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """What a loop over `iterated` reads item by item: `loader` of `enumerate(tqdm(loader))`."""
    while isinstance(iterated, cst.Call) and iterated.args and dotted_name(iterated.func) in _PASS_THROUGH:
        iterated = iterated.args[0].value
    return iterated


def _mentions_rank(expr: cst.CSTNode) -> bool:
    """Whether an expression reads a rank: a name or attribute called like one (`rank`,
    `args.local_rank`, `accelerator.process_index`), or a call of a rank function."""
    if isinstance(expr, cst.Name):
        lowered = expr.value.lower()
        return expr.value in RANK_NAMES or any(word in lowered for word in RANK_WORDS)
    if isinstance(expr, cst.Call) and (dotted_name(expr.func) or "").rpartition(".")[2] in RANK_FUNCTIONS:
        return True
    return any(_mentions_rank(child) for child in children(expr))


def _operands(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values an arithmetic or conditional expression combines."""
    if isinstance(expr, cst.BinaryOperation):
        return [expr.left, expr.right]
    if isinstance(expr, cst.UnaryOperation):
        return [expr.expression]
    if isinstance(expr, cst.IfExp):
        return [expr.body, expr.orelse]
    return []


# `_takes_modulo` of each branch's test, kept across lints: asked of every `if` around each
# call in a loop, on every lint (in the language server a test the edit did not touch is the
# same object from one lint to the next).
_modulo = NodeMemo()


def _periodic(test: cst.BaseExpression) -> bool:
    return _modulo.get(test, None, lambda: _takes_modulo(test))  # type: ignore[return-value]


def _takes_modulo(test: cst.BaseExpression) -> bool:
    """Whether a branch's test takes a modulo: `step % args.sample_every == 0`, a periodic branch."""
    if isinstance(test, cst.BinaryOperation) and isinstance(test.operator, cst.Modulo):
        return True
    return any(_takes_modulo(child) for child in children(test))


def _tests_none(test: cst.BaseExpression, name: str) -> bool:
    """`<name> is None`: the branch fills in an option the user left out."""
    return (
        isinstance(test, cst.Comparison)
        and dotted_name(test.left) == name
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    )
