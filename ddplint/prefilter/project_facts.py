"""Facts the project index (ddplint.model.project) knows about one module that its own text does
not show: what it imports from other modules of the project, and what other modules do with
what it defines.

The index computes them for every module and knows no rule. A rule whose pitfall can have its
other half in another module says which of them open it (`Rule.opened_by`): on a module with
one of them its needles are not required, and, for those in `Rule.unscreened_by`, its `ast`
screen is not either (for those in `Rule.screened_by`, a weaker one is: `Rule.project_screen`). This module imports nothing, so the flake8 plugin's libcst-free path
(ddplint.prefilter.index) can name the facts too.
"""

from __future__ import annotations

import enum


class ProjectFact(enum.Enum):
    # The project is distributed (some module names a DDP entry point). It stands only for the
    # distributed-markers needle (ddplint.core.torch_api.DISTRIBUTED_MARKERS): a rule it opens still
    # needs its other needles in the module's own text.
    DISTRIBUTED = "the project is distributed"
    CUDA_HELPER = "imports a function that places tensors on CUDA"
    LOADER_CLASS = "imports a DataLoader subclass, or a class whose __init__ builds a DataLoader"
    # `import utils`, then `utils.Loader(...)`: the screens cannot bind the class to DataLoader.
    LOADER_CLASS_MODULE = "imports a project module that defines a DataLoader subclass or builder class"
    SAMPLER_BUILDER = "imports a function that builds a shuffling DistributedSampler"
    ENDLESS_WRAPPER = "imports a generator that iterates its argument again and again, forever"
    SAMPLER_CLASS = "imports a Sampler subclass"
    SEED_HELPER = "imports a function of a project module that may seed a random generator (torch.manual_seed)"
    HOLDS_LOADER = (
        "is handed a DistributedSampler or a DataLoader drawing from one, keeps one on an object, or gets one back "
        "from a project function or method it calls"
    )
    TRAINED_UNPREPARED = (
        "defines a function whose returned DataLoader a module importing it trains on, though it hands that loader, or a "
        "copy, to Accelerate's prepare and keeps not the sharded one prepare returns"
    )
    # It stands only for the needles of a torch.save call (ddplint.model.project._STANDS_FOR): the
    # module must still show its own evidence of running as ranks.
    SAVE_HELPER = "imports a function of a project module that may save with torch.save"
    # It stands only for the needles of a save's distributed evidence (ddplint.core.torch_api.
    # SAVE_EVIDENCE): the rule still needs its writer in the module's own text.
    RUN_BY_RANKS = (
        "it, or a module importing it up to three imports away, starts or joins the ranks, or a launch command of the "
        "project runs it"
    )
    LOADS_WRAPPER_CHECKPOINT = "loads a state dict, and another module saves one from a DDP wrapper or its inner module"
    WRAPPED_CLASS = "defines a class whose objects some module wraps in DDP, or builds into a wrapped object"
    HANDS_INNER_MODULE = "hands a DDP model's inner module to a project function that trains it"
    CALLS_UNWRAPPER = "calls a project function that returns a DDP model's inner module (unwrap_model(model))"
    CALLS_COLLECTIVE_HELPER = "imports a project module that may run a collective every rank must reach (dist.all_reduce)"
    CALLS_WRAP_HELPER = "calls a project function that wraps what it is handed in DDP with device_ids (wrap(model, rank))"
    # It stands only for the needles of distributed evidence (ddplint.core.torch_api.DISTRIBUTED_EVIDENCE): a
    # rule it opens still needs its other needles in the module's own text.
    LOAD_RUN_BY_RANKS = (
        "loads with torch.load, and ranks run it by another module's code: a script that imports it starts them, "
        "or it builds an Accelerator through a project function"
    )
