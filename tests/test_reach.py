"""ddplint/model/reach.py: which code of a training project its entry points reach."""

from __future__ import annotations

import ast
from pathlib import Path

from ddplint.model import project

TRAIN = "import torch.distributed as dist\nfrom pkg import helpers\n\nif __name__ == '__main__':\n    dist.init_process_group('gloo')\n    helpers.used()\n"
HELPERS = "def used():\n    pass\n\ndef unused():\n    pass\n\ndef _private():\n    pass\n\nclass Named:\n    pass\n\nclass Unnamed:\n    pass\n\nx = Named\n"


def _reach(tmp_path: Path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return project.build(str(tmp_path)).reach


def test_in_a_training_project_only_what_no_entry_point_names_never_runs(tmp_path):
    reach = _reach(tmp_path, {".git": "", "train.py": TRAIN, "pkg/__init__.py": "", "pkg/helpers.py": HELPERS,
                              "pkg/orphan.py": "def f():\n    pass\n",
                              "tools/inspect.py": "import torch\nstate = torch.load('x.pt')\nprint(sorted(state))\n",
                              "tests/test_x.py": "from pkg.helpers import _private\n"})
    assert reach.training and not reach.installs_packages
    assert not reach.never_runs("pkg.helpers", (("used", False, False),))
    assert reach.never_runs("pkg.helpers", (("unused", False, False),))
    assert not reach.never_runs("pkg.helpers", (("_private", False, False),))  # a test calls it
    assert not reach.never_runs("pkg.helpers", (("Named", True, False), ("method", False, False)))
    assert reach.never_runs("pkg.helpers", (("Unnamed", True, False), ("method", False, False)))
    assert not reach.never_runs("pkg.helpers", (("unused", False, True),))  # a decorator may register it
    assert not reach.never_runs("pkg.helpers", ())  # the module's own code: it is imported
    assert reach.never_runs("pkg.orphan", ())  # nothing imports it
    assert not reach.never_runs("inspect", ())  # a script without a guard: `python tools/inspect.py`
    assert not reach.never_runs("train", ())  # an entry point's own code
    assert reach.never_runs("train", (("anything", False, False),))  # nothing in it or elsewhere names it
    assert not reach.never_runs("train", (("used", False, False),))  # named by the code that runs


def test_an_entry_scripts_definition_named_only_by_a_command_or_a_dispatcher_runs(tmp_path):
    launched = _reach(tmp_path / "launched", {".git": "", "train.py": TRAIN + "\ndef finetune():\n    pass\n",
                                              "pkg/__init__.py": "", "pkg/helpers.py": HELPERS,
                                              "run.sh": "torchrun -m train && python -c 'import train; train.finetune()'\n"})
    assert not launched.never_runs("train", (("finetune", False, False),))
    fired = _reach(tmp_path / "fired", {".git": "", "train.py": TRAIN + "\ndef finetune():\n    pass\n\nfire.Fire()\n",
                                        "pkg/__init__.py": "", "pkg/helpers.py": HELPERS})
    assert not fired.never_runs("train", (("finetune", False, False),))


def test_a_library_keeps_its_public_names_and_a_project_without_training_scripts_keeps_all(tmp_path):
    library = _reach(tmp_path / "lib", {"pyproject.toml": "[project]\nname = 'pkg'\n", "train.py": TRAIN,
                                        "pkg/__init__.py": "", "pkg/helpers.py": HELPERS})
    assert library.installs_packages
    assert not library.never_runs("pkg.helpers", (("unused", False, False),))  # its users may call it
    assert library.never_runs("pkg.helpers", (("_other", False, False),))
    scripts = _reach(tmp_path / "scripts", {".git": "", "run.py": "if __name__ == '__main__':\n    pass\n",
                                            "pkg/__init__.py": "", "pkg/helpers.py": HELPERS})
    assert not scripts.training and not scripts.never_runs("pkg.helpers", (("unused", False, False),))


def test_a_module_an_import_by_string_may_reach_is_kept(tmp_path):
    reach = _reach(tmp_path, {".git": "", "train.py": TRAIN + "importlib.import_module('pkg.' + 'plugins')\nNAME = 'plugins'\n",
                              "pkg/__init__.py": "", "pkg/helpers.py": HELPERS, "pkg/plugins.py": "def f():\n    pass\n"})
    assert not reach.never_runs("pkg.plugins", ())


def test_a_module_named_only_as_a_word_runs_only_where_code_that_runs_imports_by_string(tmp_path):
    """MDEL's `lora-x/config.py`: nothing imports it, and `config` is only a word the training
    code says (`config = load()`): with no import by a built name in the code that runs, it never
    runs; a notebook that says the name keeps it (notebooks' imports are not followed)."""
    files = {".git": "", "train.py": TRAIN + "config = {}\n", "pkg/__init__.py": "", "pkg/helpers.py": HELPERS,
             "config.py": "def parse():\n    pass\n"}
    assert _reach(tmp_path / "words", files).never_runs("config", ())
    dynamic = {**files, "pkg/helpers.py": HELPERS + "import importlib\n"}
    assert not _reach(tmp_path / "dynamic", dynamic).never_runs("config", ())
    # an import the model cannot resolve (a folder put on sys.path at run time) may reach it
    unresolved = {**files, "pkg/helpers.py": HELPERS + "from training.config import parse\n"}
    assert not _reach(tmp_path / "unresolved", unresolved).never_runs("config", ())
    inside = {**files, "pkg/helpers.py": HELPERS + "def load():\n    from config import *\n"}
    assert not _reach(tmp_path / "inside", inside).never_runs("config", ())


def test_launch_commands_make_a_training_project_whose_scripts_are_entry_points(tmp_path):
    # pretrain/main.py has no __main__ guard and no module imports it: only the launch command
    # runs it, and what it imports is reached through it.
    reach = _reach(tmp_path, {".git": "", "run.sh": "torchrun --nproc_per_node 8 pretrain/main.py --epochs 10\n",
                              "pretrain/main.py": "from trainer import Trainer\nTrainer().fit()\n",
                              "trainer.py": "class Trainer:\n    def fit(self):\n        pass\n\nclass Unused:\n    pass\n"})
    assert reach.training and "main" in reach.entries
    assert not reach.never_runs("trainer", (("Trainer", True, False), ("fit", False, False)))
    assert reach.never_runs("trainer", (("Unused", True, False), ("fit", False, False)))


def test_a_module_variable_bound_once_to_the_rank_guards_the_module_code_of_another_module(tmp_path):
    """`current_rank = torch.distributed.get_rank()` at the top level makes `if current_rank == 0:`
    a rank-0 guard of the module's own code, where the cross-module context judges a call's guards;
    a function's parameter of the same name is another variable."""
    train = (
        "import torch\nfrom helpers import *\n\n"
        "def restore(path, current_rank):\n    if current_rank == 0:\n        print(path)\n\n"
        "torch.distributed.init_process_group('nccl')\ncurrent_rank = torch.distributed.get_rank()\n"
        "for epoch in range(3):\n    if current_rank == 0:\n        log_model(epoch)\n"
        "    if epoch == 0:\n        log_model(epoch)\n"
    )
    (tmp_path / ".git").write_text("")
    (tmp_path / "train.py").write_text(train)
    (tmp_path / "helpers.py").write_text("import torch\n\ndef log_model(epoch):\n    torch.save({}, f'{epoch}.pt')\n")
    index = project.build(str(tmp_path))
    context = index.module_view("train").context
    sites = context.call_sites("helpers", "log_model")
    assert [site.line for site in sites] == [12, 14]  # through the star import
    assert context.guarded_at("train", None, 12) and not context.guarded_at("train", None, 14)


def test_a_command_names_a_script_by_a_path_relative_to_another_folder(tmp_path):
    # TRAIN.md runs it from an experiment's folder: `../../tools/train.py` is tools/train.py
    root = tmp_path
    for name, text in {
        ".git": "", "tools/train.py": "import torch.distributed as dist\ndist.init_process_group('nccl')\n",
        "experiments/a/TRAIN.md": "```bash\npython -m torch.distributed.launch --nproc_per_node=8 \\\n    ../../tools/train.py --cfg config.yaml\n```\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    view = project.build(str(root)).view(str(root / "tools" / "train.py"))
    assert [command.place.path for command in view.launches()] == ["experiments/a/TRAIN.md"]


def test_a_command_runs_the_script_its_path_names_from_the_documents_folder(tmp_path):
    # recipe_a/run.sh's `utils/train.py` is recipe_a/utils/train.py, not the recipe_b file whose
    # path also ends so; a command in a document with no such file beside it may run either
    for name, text in {
        ".git": "", "recipe_a/utils/train.py": "print('a')\n", "recipe_b/utils/train.py": "print('b')\n",
        "recipe_a/run.sh": "srun --ntasks=8 python utils/train.py data/\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    built = project.build(str(tmp_path))
    a, b = (built.view(str(tmp_path / recipe / "utils" / "train.py")) for recipe in ("recipe_a", "recipe_b"))
    assert [command.place.path for command in a.launches()] == ["recipe_a/run.sh"] and b.launches() == []
    (tmp_path / "README.md").write_text("```\ntorchrun --nproc_per_node=4 utils/train.py\n```\n")
    built = project.build(str(tmp_path))
    b = built.view(str(tmp_path / "recipe_b" / "utils" / "train.py"))
    assert [command.place.path for command in b.launches()] == ["README.md"]


def test_a_bare_script_name_is_the_closest_file_of_that_name_at_or_above_the_commands_folder(tmp_path):
    # scripts/stage1/train.sh runs from the root: its bare `main.py` is the root's, not tools/main.py
    # below it; tools/run.sh's bare `main.py` is the one beside it
    launch = "python -m torch.distributed.launch --nproc_per_node=8 main.py\n"
    for name, text in {
        ".git": "", "main.py": "import torch\n", "tools/main.py": "import torch\n",
        "scripts/stage1/train.sh": launch, "tools/run.sh": launch,
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    built = project.build(str(tmp_path))
    assert [command.place.path for command in built.view(str(tmp_path / "main.py")).launches()] == ["scripts/stage1/train.sh"]
    assert [command.place.path for command in built.view(str(tmp_path / "tools" / "main.py")).launches()] == ["tools/run.sh"]


def test_a_launch_line_of_its_own_file_and_of_more_than_one_written_process(tmp_path):
    files = {".git": "", "finetune.py": "import helpers\n\nif __name__ == '__main__':\n    helpers.run()\n",
             "helpers.py": "def run():\n    pass\n", "one.sh": "torchrun --nproc_per_node=1 finetune.py\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    built = project.build(str(tmp_path))
    script, helpers = built.view(str(tmp_path / "finetune.py")), built.view(str(tmp_path / "helpers.py"))
    assert script.launch_line() is not None  # a template for more GPUs, for a script written for DDP
    assert script.launch_line(own=True, written=True) is None  # one process as written
    (tmp_path / "four.sh").write_text("torchrun --nproc_per_node=4 finetune.py\n")
    built = project.build(str(tmp_path))
    script, helpers = built.view(str(tmp_path / "finetune.py")), built.view(str(tmp_path / "helpers.py"))
    assert script.launch_line(own=True, written=True) is not None
    assert helpers.launch_line() is not None and helpers.launch_line(own=True) is None  # run by an importer only


_ONE_CARD = {
    ".git": "",
    "engine/__init__.py": "",  # an empty package file names no module
    "engine/trainer.py": (
        "import torch\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n\n"
        "def fit(net, batches, optimizer, gpu):\n"
        "    ddp = DDP(net.to(gpu), device_ids=[gpu])\n"
        "    for x, y in batches:\n"
        "        loss = torch.nn.functional.mse_loss(ddp.module.encode(x), y)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
    ),
    "run.py": (
        "import argparse\nimport torch.distributed as dist\nfrom engine.trainer import fit\n\n"
        "if __name__ == '__main__':\n"
        "    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--local_rank', type=int, default=0)\n"
        "    args = parser.parse_args()\n"
        "    dist.init_process_group('nccl')\n"
        "    fit(None, [], None, args.local_rank)\n"
    ),
    "single_gpu.sh": "python -m torch.distributed.launch --nnodes 1 --nproc_per_node 1 run.py --lr 0.1\n",
}


def _codes(root: Path) -> list[tuple[str, str]]:
    import ddplint.api

    return sorted((Path(d.path).name, d.code) for r in ddplint.api.lint_paths([str(root)]) for d in r.diagnostics)


def test_a_script_launched_only_as_one_process_has_no_second_rank(tmp_path):
    for name, text in _ONE_CARD.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    built = project.build(str(tmp_path))
    assert built.launched_alone("run") and built.view(str(tmp_path / "engine" / "trainer.py")).one_rank
    # the forward through `.module` loses no all-reduce in a world of one rank; the launcher
    # still passes --local-rank to the parser
    assert _codes(tmp_path) == [("run.py", "DDP012")]
    (tmp_path / "four_gpus.sh").write_text("torchrun --nproc_per_node=4 run.py\n")
    assert ("trainer.py", "DDP019") in _codes(tmp_path)


def test_a_launch_of_a_script_held_in_a_variable_may_run_it_with_more(tmp_path):
    for name, text in _ONE_CARD.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "any.sh").write_text("torchrun --nproc_per_node=8 $SCRIPT\n")
    assert not project.build(str(tmp_path)).launched_alone("run")
    assert ("trainer.py", "DDP019") in _codes(tmp_path)


def test_a_module_whose_only_top_level_call_sets_up_an_imported_module_is_no_script(tmp_path):
    """SRD-Depth's `trainer2.py`: a copy of the trainer that nothing imports, whose top level only
    defines the Trainer and calls `wandb.init(project=...)` on an imported module. Importing it
    would do that; running it as a script would do nothing more, so it is no entry point and its
    code never runs. Its twin that a document tells the user to import (`from trainer import
    Trainer` in the README's distributed recipe) may run; so does a script whose top-level calls
    hand over its own names (`main()`, `print(helper(x))`) and a file of calls alone."""
    trainer = "import torch\nimport wandb\n\nwandb.init(project='p', entity='e')\n\nclass Trainer:\n    def load(self):\n        return torch.load('x.pt')\n"
    files = {".git": "", "train.py": TRAIN + "    from trainer_single_gpu import Trainer\n", "pkg/__init__.py": "",
             "pkg/helpers.py": HELPERS, "trainer_single_gpu.py": trainer, "trainer.py": trainer, "trainer2.py": trainer,
             "README.md": "Distributed training: in train.py write\n```py\nfrom trainer import Trainer\n```\n"
                          "```py\nfrom torch.utils.data import DataLoader\n```\n", "data.py": trainer,
             "tools/stats.py": "import torch\n\ndef helper(x):\n    return x\n\nprint(helper(torch.load('x.pt')))\n",
             "tools/fetch.py": "import urllib.request\nurllib.request.urlretrieve('http://x', 'x.pt')\n",
             "tools/launch.py": "import os\n\ndef unused():\n    pass\n\nos.system('torchrun train.py')\n",
             "tools/cli.py": "import fire\n\ndef finetune():\n    pass\n\nfire.Fire()\n"}
    reach = _reach(tmp_path, files)
    assert reach.never_runs("trainer2", ())
    assert reach.never_runs("trainer2", (("Trainer", True, False), ("load", False, False)))
    assert not reach.never_runs("trainer", (("Trainer", True, False), ("load", False, False)))
    assert not reach.never_runs("trainer_single_gpu", (("Trainer", True, False), ("load", False, False)))
    assert reach.never_runs("data", ())  # the document imports torch.utils.data, not the project's data.py
    assert not reach.never_runs("stats", ())
    assert not reach.never_runs("fetch", ())
    assert not reach.never_runs("launch", ())  # running a command is a script's work
    assert not reach.never_runs("cli", (("finetune", False, False),))  # a dispatcher runs its functions


def test_a_lightning_cli_in_subclass_mode_runs_any_project_lightning_module(tmp_path):
    main = ("import torch.distributed as dist\nfrom lightning.pytorch.cli import LightningCLI\nfrom pkg.models import *\n\n"
            "if __name__ == '__main__':\n    LightningCLI({}subclass_mode_model=True)\n")
    models = ("import lightning as L\nimport torch.nn as nn\n\nclass Base(L.LightningModule):\n    pass\n\n"
              "class LoRA(Base):\n    pass\n\nclass Block(nn.Module):\n    pass\n")
    files = {".git": "", "pkg/__init__.py": "", "pkg/models.py": models}
    cli = _reach(tmp_path / "cli", {**files, "main.py": main.format("")})
    assert reach_keeps(cli, "LoRA") and reach_keeps(cli, "Base")  # `--model LoRA` picks it
    assert not reach_keeps(cli, "Block")  # no LightningModule: nothing names it
    fixed = _reach(tmp_path / "fixed", {**files, "main.py": main.format("Base, ").replace("subclass_mode_model=True", "")})
    assert not reach_keeps(fixed, "LoRA")  # the CLI runs Base alone


def reach_keeps(reach, cls: str) -> bool:
    return not reach.never_runs("pkg.models", ((cls, True, False), ("on_save_checkpoint", False, False)))


def test_a_copy_of_a_helper_whose_name_only_reaches_another_copy_never_runs(tmp_path):
    """Two folders keep copies of the same helper module (`a/utils/misc.py`, `b/bmb/misc.py`, each folder on its own `sys.path`),
    each exporting `auto_resume` in `__all__`; the one script that calls `auto_resume` imports
    its own folder's copy: the name it uses is bound to that copy's function, not the other's.
    A copy's own `__all__` naming it is no call. Where the script may reach the other copy
    (it imports it too), or the copy calls it itself, it may run."""
    misc = "__all__ = ['auto_resume']\n\ndef auto_resume(args):\n    return args\n"
    launched = "import torch.distributed as dist\n{imports}\n\nif __name__ == '__main__':\n    dist.init_process_group('nccl')\n    auto_resume(None)\n"
    files = {".git": "", "a/utils/__init__.py": "from .misc import *\n", "a/utils/misc.py": misc,
             "a/train.py": launched.format(imports="from utils import *"),
             "b/bmb/__init__.py": "from .misc import *\n", "b/bmb/misc.py": misc,
             "b/train.py": "import torch.distributed as dist\nfrom bmb import *\n\nif __name__ == '__main__':\n    dist.init_process_group('nccl')\n"}
    reach = _reach(tmp_path / "copies", {**files, "c/tools/__init__.py": "", "c/tools/misc.py": misc})
    assert not reach.never_runs("utils.misc", (("auto_resume", False, False),))
    assert reach.never_runs("bmb.misc", (("auto_resume", False, False),))
    # a third copy nothing imports: the reached imports that say `misc` are resolved to the others
    assert reach.never_runs("tools.misc", ())
    both = _reach(tmp_path / "both", {**files, "a/train.py": launched.format(imports="from utils import *\nfrom bmb import misc")})
    assert not both.never_runs("bmb.misc", (("auto_resume", False, False),))
    calls = _reach(tmp_path / "calls", {**files, "b/bmb/misc.py": misc + "\ndef resume_all(args):\n    return auto_resume(args)\n",
                                        "b/train.py": files["b/train.py"] + "    resume_all(None)\n"})
    assert not calls.never_runs("bmb.misc", (("auto_resume", False, False),))


def test_a_method_of_a_plain_class_that_nothing_calls_never_runs(tmp_path):
    """VidCrowd's `Fitter.load`: the class runs (`Fitter(...).fit(...)`), but its `load` is called
    only in a commented-out line; `torch.load` and `np.load` are functions of imported modules,
    no call of the method. Kept: a method called on an instance, one a base class of torch may
    call back (`forward` of an nn.Module), one a lookup by a built name may reach, a dunder."""
    train = (
        "import torch\nimport numpy as np\nimport torch.distributed as dist\n\n"
        "class Fitter:\n    def fit(self):\n        return np.load('x.npy')\n\n"
        "    def load(self, path):\n        return torch.load(path)\n\n"
        "    def __repr__(self):\n        return 'f'\n\n"
        "class Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n"
        "class Child(Fitter):\n    def resume(self, path):\n        return torch.load(path)\n\n"
        "if __name__ == '__main__':\n    dist.init_process_group('gloo')\n    fitter = Fitter()\n"
        "    # fitter.load('last.bin')\n    fitter.fit()\n    Child()\n    Net()\n"
    )
    reach = _reach(tmp_path / "dead", {".git": "", "train.py": train})
    assert reach.never_runs("train", (("Fitter", True, False), ("load", False, False)))
    assert reach.never_runs("train", (("Child", True, False), ("resume", False, False)))
    assert not reach.never_runs("train", (("Fitter", True, False), ("fit", False, False)))
    assert not reach.never_runs("train", (("Fitter", True, False), ("__repr__", False, False)))
    assert not reach.never_runs("train", (("Net", True, False), ("forward", False, False)))
    assert not reach.never_runs("train", (("Fitter", True, False), ("load", False, True)))  # decorated
    called = train.replace("# fitter.load", "fitter.load")
    assert not _reach(tmp_path / "called", {".git": "", "train.py": called}).never_runs("train", (("Fitter", True, False), ("load", False, False)))
    built = train + "    getattr(fitter, 'lo' + 'ad' if True else 'x')\n    child = Child()\n    getattr(child, f'res{1}')('p')\n"
    assert not _reach(tmp_path / "built", {".git": "", "train.py": built}).never_runs("train", (("Fitter", True, False), ("load", False, False)))
    assert not _reach(tmp_path / "built", {".git": "", "train.py": built}).never_runs("train", (("Child", True, False), ("resume", False, False)))
    # a lookup on a Fitter, which is no Child, finds no Child's method
    other = train + "    getattr(fitter, f'res{1}')('p')\n"
    assert _reach(tmp_path / "other", {".git": "", "train.py": other}).never_runs("train", (("Child", True, False), ("resume", False, False)))
    # a notebook calls it where it imports the module; one with its own `Fitter` does not
    notebook = '{"cells": [{"cell_type": "code", "source": ["%matplotlib inline\\n", "HEAD", "f = Fitter()\\n", "f.load(\'x\')\\n"]}]}'
    kept = _reach(tmp_path / "imports", {".git": "", "train.py": train, "nbs/try.ipynb": notebook.replace("HEAD", "from train import Fitter\\n")})
    assert not kept.never_runs("train", (("Fitter", True, False), ("load", False, False)))
    own = _reach(tmp_path / "own", {".git": "", "train.py": train, "nbs/try.ipynb": notebook.replace("HEAD", "class Fitter: pass\\n")})
    assert own.never_runs("train", (("Fitter", True, False), ("load", False, False)))
    # another script's `fitter.load(...)` calls its own class: it imports nothing of train.py
    other = train.replace("# fitter.load", "fitter.load")
    apart = _reach(tmp_path / "apart", {".git": "", "train.py": train, "train_b.py": other})
    assert apart.never_runs("train", (("Fitter", True, False), ("load", False, False)))
    assert not apart.never_runs("train_b", (("Fitter", True, False), ("load", False, False)))
    # a base written as a call or a subscript (`make_base()`, `Base[T]`) is a class nothing here
    # shows: a framework's callback of it may call the method
    for base in ("make_base()", "Generic[int]"):
        made = train.replace("class Child(Fitter):", f"class Child(Fitter, {base}):")
        assert not _reach(tmp_path / f"made{len(base)}", {".git": "", "train.py": made}).never_runs(
            "train", (("Child", True, False), ("resume", False, False))), base


CHECKPOINT = (
    "import json\nimport torch\n\n"
    "class Dict(dict):\n    def __init__(self, data=None):\n        if data is not None:\n            self.load(data)\n\n"
    "    def load(self, data):\n        for name, value in data.items():\n            if name in self:\n                self[name].load(value)\n\n"
    "    def __getattr__(self, item):\n        return self[item] if item in self else getattr(super(Dict, self), item)\n\n"
    "class Configuration(Dict):\n    def load(self, path):\n        super(Configuration, self).load(json.load(open(path)))\n\n"
    "class Checkpoint:\n    def __init__(self, folder, model):\n        self.folder, self.model = folder, model\n\n"
    "    def load(self, epoch):\n        self.model.load_state_dict(torch.load(f'{self.folder}/{epoch}.pt'))\n\n"
    "    def save(self, epoch):\n        torch.save(self.model.state_dict(), f'{self.folder}/{epoch}.pt')\n"
)
CHECKPOINT_TRAIN = (
    "import torch.distributed as dist\nfrom utils import Checkpoint, Configuration\n\n"
    "def main(model):\n    config = Configuration('cfg.json')\n    checker = Checkpoint(config.folder, model)\n"
    "    for epoch in range(3):\n        if dist.get_rank() == 0:\n            checker.save(epoch)\n\n"
    "if __name__ == '__main__':\n    dist.init_process_group('nccl')\n    main(None)\n"
)


def test_a_method_called_by_its_name_only_on_objects_of_other_classes_never_runs(tmp_path):
    """LatentNeuralOperator's `Checkpoint.load`: the script builds a Checkpoint into a name it
    only calls `save` on; every `.load(...)` of the program is a call on an object of another
    class (`self.load` in `Dict`, `super(...).load` in `Configuration`, `self[name].load` on a
    value no Checkpoint can be: none is ever handed anywhere). Kept where an object of the
    class may be the receiver: called on the name that holds one, handed on (then any receiver
    of unknown type may be one), a class deriving from both (`self` of the mixin may be one), a
    Checkpoint that hands itself on, a name said as a string (`getattr(obj, "load")`) or built
    at run time on one (`getattr(checker, "lo" + kind)`; `getattr(super(Dict, self), item)`
    looks a name up on a Dict)."""
    scope = (("Checkpoint", True, False), ("load", False, False))
    files = {".git": "", "utils.py": CHECKPOINT, "train.py": CHECKPOINT_TRAIN}
    reach = _reach(tmp_path / "apart", files)
    assert reach.never_runs("utils", scope)
    assert not reach.never_runs("utils", (("Checkpoint", True, False), ("save", False, False)))
    assert not reach.never_runs("utils", (("Dict", True, False), ("load", False, False)))
    kept = {
        "called": {"train.py": CHECKPOINT_TRAIN.replace("checker.save(epoch)", "checker.load(epoch)")},
        "handed on": {"train.py": CHECKPOINT_TRAIN.replace("checker.save(epoch)", "print(checker)")},
        "built fresh": {"train.py": CHECKPOINT_TRAIN.replace("checker.save(epoch)", "Checkpoint('x', model).load(epoch)")},
        "class attribute": {"train.py": CHECKPOINT_TRAIN.replace("checker.save(epoch)", "Checkpoint.load(checker, epoch)")},
        "in a registry": {"train.py": CHECKPOINT_TRAIN + "KINDS = {'ckpt': Checkpoint}\n"},
        "mixin": {"utils.py": CHECKPOINT + "\nclass Both(Dict, Checkpoint):\n    pass\n",
                  "train.py": CHECKPOINT_TRAIN.replace("Checkpoint(config.folder, model)", "Both(config.folder, model)").replace(
                      "import Checkpoint", "import Both")},
        "self handed on": {"utils.py": CHECKPOINT.replace("self.folder, self.model = folder, model",
                                                          "self.folder, self.model = folder, model\n        KEPT.append(self)")},
        "string": {"train.py": CHECKPOINT_TRAIN.replace("checker.save(epoch)", "getattr(checker, 'load')(epoch)")},
        "renamed import": {"train.py": CHECKPOINT_TRAIN.replace("import Checkpoint,", "import Checkpoint as Ckpt,").replace(
            "checker = Checkpoint(", "checker = Ckpt(").replace("checker.save(epoch)", "config.runs[0].load(epoch)")},
        "class attribute holder": {"train.py": CHECKPOINT_TRAIN + "\nclass Runner:\n    checker = Checkpoint('x', None)\n"},
        "built lookup": {"train.py": CHECKPOINT_TRAIN.replace("checker.save(epoch)", "getattr(checker, 'lo' + config.kind)(epoch)")},
        "module-level holder": {"train.py": CHECKPOINT_TRAIN + "checker = Checkpoint('x', None)\n",
                                "other.py": "from train import checker\nchecker.load(1)\n",
                                "run.py": "import torch.distributed as dist\nimport other\n\n"
                                          "if __name__ == '__main__':\n    dist.init_process_group('nccl')\n"},
    }
    for case, change in kept.items():
        changed = _reach(tmp_path / case.replace(" ", "_"), {**files, **change})
        assert not changed.never_runs("utils", scope), case


def test_a_script_that_starts_the_process_group_at_its_top_level_makes_a_training_project(tmp_path):
    """VidCrowd's scripts have no `__main__` guard and no launcher: each calls
    `init_process_group` in its own top-level code, as a guarded script would under the guard."""
    script = "import torch.distributed as dist\n\ndef helper():\n    pass\n\ndist.init_process_group('gloo')\n"
    assert _reach(tmp_path / "top", {".git": "", "train.py": script}).training
    inside = "import torch.distributed as dist\n\ndef setup():\n    dist.init_process_group('gloo')\n\nsetup()\n"
    assert not _reach(tmp_path / "inside", {".git": "", "train.py": inside}).training


def test_a_definition_under_a_top_level_test_that_spawns_makes_no_training_project(tmp_path):
    """pytorch-ignite's `if has_xla_support:` defines a class whose methods spawn, and its
    `spawn(...)` helper calls a backend's `spawn`: defining them starts nothing, so the library
    keeps every function reachable."""
    library = (
        "import torch.distributed as dist\nimport torch.multiprocessing as mp\n\nhas_xla = False\n\n"
        "if has_xla:\n    class Xla:\n        def spawn(self, fn):\n            mp.spawn(fn)\n\n"
        "def spawn(fn):\n    for model in []:\n        model.spawn(fn)\n"
    )
    assert not _reach(tmp_path / "defs", {".git": "", "dist_utils.py": library}).training
    started = library + "\nif not has_xla:\n    dist.init_process_group('gloo')\n"
    assert _reach(tmp_path / "started", {".git": "", "dist_utils.py": started}).training


def test_top_level_work_written_after_a_semicolon_on_a_string_or_as_a_loop_makes_a_script(tmp_path):
    """A module nothing imports is read for top-level work only when its text may hold some (a
    screen on its lines before any parse): work that starts mid-line after `;`, a call on a string
    literal, a loop or a `with` still makes it a script; definitions and imports alone do not."""
    helper = "import torch\n\ndef load():\n    return torch.load('x.pt')\n"
    files = {".git": "", "train.py": TRAIN, "pkg/__init__.py": "", "pkg/helpers.py": HELPERS,
             "semicolon.py": helper + "import sys; load()\n",
             "formatted.py": helper + "'{}'.format(load())\n",
             "loop.py": helper + "for _ in range(2):\n    load()\n",
             "opened.py": helper + "with open('x') as handle:\n    load()\n",
             "definitions.py": helper + "'''a note; with a semicolon\nfor nothing'''\nclass Holder:\n    value = load\n"}
    reach = _reach(tmp_path, files)
    for script in ("semicolon", "formatted", "loop", "opened"):
        assert not reach.never_runs(script, (("load", False, False),)), script
    assert reach.never_runs("definitions", ())


def _parses(monkeypatch) -> list[str]:
    """The texts `ast.parse` is given from now on (the program model's trees)."""
    parsed: list[str] = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *args, **kwargs: parsed.append(text) or real(text, *args, **kwargs))
    return parsed


def test_whether_one_module_is_an_entry_point_is_read_from_that_module_alone(tmp_path, monkeypatch):
    """`is_entry` answers as `entries` holds, but from the one module's text and tree: a question
    about one script (is it an entry, run as one process?) parses no other module nothing imports
    (torch's own tree: 650 of them, 7 s of DDP027's 10 s on sample-torch)."""
    tools = {f"tools/tool{index}.py": f"import sys\n\nprint(sys.argv, {index})\n" for index in range(20)}
    guarded = "def main():\n    pass\n\nif __name__ == '__main__':\n    main()\n"
    files = {".git": "", "train.py": TRAIN, "pkg/__init__.py": "", "pkg/helpers.py": HELPERS, "guarded.py": guarded, **tools}
    reach = _reach(tmp_path, files)
    parsed = _parses(monkeypatch)
    assert reach.is_entry("tool3") and reach.is_entry("train") and reach.is_entry("guarded") and not reach.is_entry("pkg.helpers")
    assert [text for text in parsed if "print(sys.argv" in text] == [tools["tools/tool3.py"]]
    assert sorted(module for module in reach.project.modules if reach.is_entry(module)) == sorted(reach.entries)
    assert len(reach.entries) == 22


def test_only_a_module_whose_text_names_a_start_of_ranks_is_parsed_for_one_at_its_top_level(tmp_path, monkeypatch):
    """`training` parses a module that says distribution only where its text names a start of
    ranks (`init_process_group`, `spawn`, ...) as Python reads names: a fullwidth letter is its
    ASCII one (NFKC), `dist.\uff49nit_process_group` starts the group."""
    quiet = {f"pkg/m{index}.py": f"import torch.distributed as dist\n\ndef rank{index}():\n    return dist.get_rank()\n" for index in range(10)}
    started = "import torch.distributed as dist\n\ndef helper():\n    pass\n\ndist.init_process_group('gloo')\n"
    reach = _reach(tmp_path / "plain", {".git": "", "pkg/__init__.py": "", **quiet, "tools/train.py": started})
    parsed = _parses(monkeypatch)
    assert reach.training
    assert parsed == [started]
    wide = started.replace("init_process_group", "\uff49nit_process_group")
    assert _reach(tmp_path / "wide", {".git": "", "pkg/__init__.py": "", **quiet, "tools/train.py": wide}).training
    assert not _reach(tmp_path / "none", {".git": "", "pkg/__init__.py": "", **quiet}).training


def test_a_method_of_a_class_that_no_running_code_builds_never_runs(tmp_path):
    """A one-process base trainer whose `_resume` loads without map_location: its only subclass
    is a `Trainer` no script builds (every run builds the distributed trainer, on another base),
    so neither class is ever instantiated and none of their methods runs, though the base's own
    `__init__` names `self._resume` and the subclass imports the base by name. Kept: a class
    (or a subclass) that running code builds, names as a value (a classmethod's receiver, a
    renamed import, a string a registry may look up), or that a lookup by a name built at run
    time may pick: `getattr` on its module bound as an object, `globals()[name]` in a module
    whose namespace holds it."""
    base = (
        "import torch\n\nclass BaseTrainer:\n    def __init__(self, resume=None):\n"
        "        if resume:\n            self._resume(resume)\n\n"
        "    def _resume(self, path):\n        return torch.load(path)\n\n"
        "class DistBase:\n    def __init__(self, resume=None):\n        self.state = torch.load(resume, map_location='cpu')\n"
    )
    single = "from base import BaseTrainer\n\nclass Trainer(BaseTrainer):\n    def epoch(self):\n        return 1\n"
    dist_trainer = "from base import DistBase\n\nclass DistTrainer(DistBase):\n    def epoch(self):\n        return 2\n"
    train = (
        "import torch.distributed as dist\nfrom trainer import DistTrainer\n\n"
        "if __name__ == '__main__':\n    dist.init_process_group('nccl')\n    DistTrainer('last.pt').epoch()\n"
    )
    files = {".git": "", "base/__init__.py": "from .base_trainer import *\n", "base/base_trainer.py": base,
             "trainer/__init__.py": "from .single import *\nfrom .dist_trainer import *\n",
             "trainer/single.py": single, "trainer/dist_trainer.py": dist_trainer, "run/train.py": train}
    unbuilt = (("BaseTrainer", True, False), ("_resume", False, False))
    reach = _reach(tmp_path / "unbuilt", files)
    assert reach.never_runs("base.base_trainer", unbuilt)
    assert reach.never_runs("base.base_trainer", (("BaseTrainer", True, False), ("__init__", False, False)))
    assert reach.never_runs("trainer.single", (("Trainer", True, False), ("epoch", False, False)))
    assert not reach.never_runs("base.base_trainer", (("DistBase", True, False), ("__init__", False, False)))
    assert not reach.never_runs("trainer.dist_trainer", (("DistTrainer", True, False), ("epoch", False, False)))
    assert not reach.never_runs("base.base_trainer", (("BaseTrainer", True, False), ("_resume", False, True)))  # decorated
    assert not reach.never_runs("base.base_trainer", (("BaseTrainer", True, False),))  # the class body runs
    kept = {
        "built": {"run/train.py": train.replace("DistTrainer\n\n", "DistTrainer, Trainer\n\n") + "    Trainer()\n"},
        "classmethod": {"run/train.py": train + "    from base import BaseTrainer\n    BaseTrainer.make()\n"},
        "renamed": {"run/train.py": train + "    from trainer import Trainer as T\n"},
        "registry": {"run/train.py": train + "    REGISTRY = {'single': 'Trainer'}\n"},
        "module object": {"run/train.py": train + "    import trainer\n    getattr(trainer, kind)()\n"},
        "own namespace": {"trainer/dist_trainer.py": dist_trainer + "from .single import *\n\ndef make(kind):\n    return globals()[kind]()\n"},
        "dynamic import": {"run/train.py": train + "    import importlib\n    mod = importlib.import_module(kind)\n    getattr(mod, name)()\n"},
    }
    for case, change in kept.items():
        changed = _reach(tmp_path / case.replace(" ", "_"), {**files, **change})
        assert not changed.never_runs("base.base_trainer", unbuilt), case
    # a dynamic import whose result is read by a literal name reaches only that name
    literal = {"run/train.py": train + "    import importlib\n    importlib.import_module(kind).SummaryWriter('x')\n    getattr(args, key)\n"}
    assert _reach(tmp_path / "literal", {**files, **literal}).never_runs("base.base_trainer", unbuilt)


TWICE = """import torch
import torch.distributed as dist


def load(model, path):
    model.load_state_dict(torch.load(path))
{between}

def load(config, model, path):
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return config


def reduce(tensor):
    dist.all_reduce(tensor)
"""

TWICE_TRAIN = """import torch.distributed as dist

from utils import load


def main(model):
    dist.init_process_group("nccl")
    load(None, model, "w.pt")


if __name__ == "__main__":
    main(None)
"""


def test_a_function_defined_again_later_is_replaced_before_any_call_reaches_it(tmp_path, run):
    """RepVGG's utils.py defines load_checkpoint twice: Python binds the name to the second
    when the module finishes importing, so every call through the name (from another module,
    from a function that runs after import) reaches the second. The first runs only where a
    call between the two definitions, at import, reaches it; the program model resolves calls
    and definitions to the last."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(TWICE_TRAIN)
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node=4 train.py\n")
    run.cwd = tmp_path
    for between, reported in (("", False), ("\nload(None, 'w.pt')\n", True)):
        (tmp_path / "utils.py").write_text(TWICE.format(between=between))
        output = run("check", "--no-cache", "--select", "DDP004", ".").stdout
        assert ("utils.py:6:" in output) == reported, (between, output)
    program = project.build(str(tmp_path)).program
    assert program.definition("utils", "load").lineno == 9 + between.count("\n")
    assert program.function("utils", "load").arguments(False)[:3] == ("config", "model", "path")


def test_a_replaced_functions_default_is_still_made_when_its_def_runs(tmp_path, run):
    """A function defined again below is never called, but its `def` statement still runs at
    import: the default `torch.zeros(1).cuda()` of the first definition is made then, on every
    process that imports the module. Only the replaced body is out of reach."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(
        "import torch\n\n\ndef scale(x, factor=torch.ones(1).cuda()):\n    return x * factor\n\n\n"
        "def scale(x, factor=2.0):\n    return x * factor\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch.distributed as dist\n\nfrom helpers import scale\n\n\ndef main():\n"
        "    dist.init_process_group('nccl')\n    print(scale(3))\n\n\nif __name__ == '__main__':\n    main()\n"
    )
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node=4 train.py\n")
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP001", ".").stdout
    assert "helpers.py:4:" in output, output
