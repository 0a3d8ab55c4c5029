"""The project index (ddplint/model/project.py): cross-module findings on the small packages in
tests/data/projects/, the same from the CLI and from flake8, and none without the index."""

from __future__ import annotations

import ast
import os
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddplint.model import project
from ddplint.model.loaders import Built, Cycle
from ddplint.model.records import Place
from ddplint.prefilter.project_facts import ProjectFact
from ddplint.rules.ddp001_cuda_tensor_in_default_argument import cuda_function
from ddplint.rules.ddp003_missing_set_epoch import MissingSetEpoch
from ddplint.core.torch_api import DISTRIBUTED_MARKERS

pytestmark = pytest.mark.slow  # CI runs this module on Python 3.11 only (see .ci/run)

PROJECTS = Path(__file__).parent / "data" / "projects"
# Modules made of the lines the index's text patterns look for, for the no-crash property.
_BODY_LINES = [
    "    # DistributedSampler(ds)\n", "    sampler = DistributedSampler(ds)\n", "    loader = DataLoader(ds)\n",
    "    return DataLoader(ds, sampler=sampler), sampler\n", "    return (\n", "        loader,\n", "    )\n",
    "    return sampler\n", "    return loader,  # (\n", "    while True:\n", "        for x in dl:\n",
    "            yield x\n", "    for _ in itertools.count():\n", "    x.cuda()\n", "    helper(x)\n",
    "    return DistributedSampler(ds, shuffle=False)\n", '    """\n', '    "(\n', "    \\\n",
]
_TOP_LINES = [
    "class L(DataLoader):\n    pass\n", "from . import *\n", "import torch.distributed as dist\n",
    "from .utils import (a,\n    b as c)\n", "from .utils import helper\n", "model = DDP(Net())\n",
    "torch.save(model.state_dict(), 'ckpt.pt')\n", "from torch.utils.data import DataLoader, DistributedSampler\n",
    "class W:\n    def __init__(self, **kw):\n        self.l = DataLoader(**kw)\n", "class V:\n    def __init__(self, **kw",
]
_MODULES = st.lists(
    st.one_of(
        st.lists(st.sampled_from(_BODY_LINES), min_size=1, max_size=6).map(lambda body: "def f(ds, dl):\n" + "".join(body)),
        st.sampled_from(_TOP_LINES),
    ),
    min_size=1,
    max_size=6,
).map("".join)
CASES = sorted(path.name for path in PROJECTS.iterdir() if (path / "expected.txt").exists())
_LINE = re.compile(r"^(?P<path>\S+?):(?P<line>\d+):(?P<col>\d+): (?P<code>DDP\d{3}) ?(?P<message>.*?)(?: \[(?:unsafe )?fix\])?$")


def _expected(case: str) -> list[tuple[str, int, int, str, str]]:
    return _expected_in(PROJECTS / case)


def _expected_in(root: Path) -> list[tuple[str, int, int, str, str]]:
    """`path:line:col: CODE text` lines; the text must occur in the finding's message."""
    found = []
    for line in (root / "expected.txt").read_text().splitlines():
        match = _LINE.match(line)
        assert match, line
        found.append((match["path"], int(match["line"]), int(match["col"]), match["code"], match["message"]))
    return sorted(found)


def _findings(output: str) -> list[tuple[str, int, int, str, str]]:
    found = []
    for line in output.splitlines():
        match = _LINE.match(line)
        if match:
            path = match["path"].replace("\\", "/").removeprefix("./")
            found.append((path, int(match["line"]), int(match["col"]), match["code"], match["message"]))
    return sorted(found)


def _copy(case: str, tmp_path: Path) -> Path:
    target = tmp_path / case
    shutil.copytree(PROJECTS / case, target)
    return target


def _matches(found, expected) -> bool:
    return len(found) == len(expected) and all(
        f[:4] == e[:4] and e[4] in f[4] for f, e in zip(found, expected)
    )


@pytest.mark.parametrize("case", CASES)
def test_cross_module_findings_from_the_cli_and_flake8_agree(case, tmp_path, run):
    root = _copy(case, tmp_path)
    expected = _expected(case)
    run.cwd = root
    cli = _findings(run("check", "--no-cache", ".").stdout)
    assert _matches(cli, expected), cli
    plugin = _findings(run("--select", "DDP", ".", tool="flake8").stdout)
    assert plugin == [(p, line, col, code, message) for p, line, col, code, message in cli], plugin


def test_a_nested_project_is_linted_with_its_own_index_and_its_results_follow_its_edits(tmp_path, run):
    """`vendor/tuplewrap` has a pyproject.toml of its own: the CLI run from the outer root lints
    its files with its index, as flake8 and the editor do, and with the results cache on, an
    edit of the module a finding comes from changes the finding."""
    root = _copy("nested_project", tmp_path)
    run.cwd = root
    assert _matches(_findings(run("check", ".").stdout), _expected("nested_project"))
    helper = root / "vendor" / "tuplewrap" / "dist_utils.py"
    helper.write_text(helper.read_text().replace("return DDP(model, device_ids=[local_rank]), device", "return model, device"))
    assert _findings(run("check", ".").stdout) == []


@pytest.mark.parametrize("case", CASES)
def test_without_the_project_the_cross_module_findings_are_gone(case, tmp_path, run):
    root = _copy(case, tmp_path)
    run.cwd = root
    alone = _findings(run("check", "--no-cache", "--no-project", ".").stdout)
    assert not set(alone) & set(_expected(case))
    assert not _findings(run("check", "--no-cache", "--no-project", ".").stdout)


@pytest.mark.parametrize("case", CASES)
def test_the_api_agrees_and_its_flag_turns_the_index_off(case, tmp_path):
    import ddplint.api

    root = _copy(case, tmp_path)
    with_index = [d for r in ddplint.api.lint_paths([str(root)]) for d in r.diagnostics]
    alone = [d for r in ddplint.api.lint_paths([str(root)], project=False) for d in r.diagnostics]
    assert len(with_index) == len(_expected(case)) and not alone


def test_the_index_is_cached_by_content_and_rebuilt_for_a_changed_file(tmp_path):
    root = _copy("cuda_helper", tmp_path)
    cache = tmp_path / "cache"
    first = project.build(str(root), str(cache))
    assert list(cache.glob("project-*.json"))
    again = project.build(str(root), str(cache))
    assert again.digest == first.digest
    utils = root / "trainer" / "utils.py"
    utils.write_text(utils.read_text().replace("x.cuda(non_blocking=True)", "x"))
    changed = project.build(str(root), str(cache))
    assert changed.digest != first.digest
    view = changed.view(str(root / "trainer" / "losses.py"))
    assert cuda_function(view, "trainer.utils.to_gpu") is None


def test_the_needles_the_index_searched_are_reused_once_and_only_for_an_unchanged_file(tmp_path):
    from ddplint.engine.lint import rules_for_text
    from ddplint.rules import all_rules

    root = _copy("sampler_helper", tmp_path)
    data = root / "recipe" / "data.py"
    index = project.build(str(root), None)
    known = index.known_needles(str(data), os.stat(data))
    assert known and known[DISTRIBUTED_MARKERS] is True and known["DistributedSampler"] is True
    text = data.read_text()
    assert rules_for_text(text, all_rules(), known=known) == rules_for_text(text, all_rules())
    assert index.known_needles(str(data), os.stat(data)) is None  # given out once
    index = project.build(str(root), None)
    data.write_text(text + "\n# edited\n")
    assert index.known_needles(str(data), os.stat(data)) is None  # the file changed since


def test_root_discovery_stops_at_the_project_markers(tmp_path):
    (tmp_path / "repo" / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "repo" / "setup.cfg").write_text("")
    assert project.find_root(str(tmp_path / "repo" / "pkg" / "sub")) == str(tmp_path / "repo")
    assert project.common_root([str(tmp_path / "repo" / "pkg"), str(tmp_path / "repo" / "pkg" / "sub")]) == str(
        tmp_path / "repo"
    )


def test_paths_of_unmarked_folders_outside_the_working_folder_are_projects_of_their_own(tmp_path, monkeypatch):
    unpacked, work = tmp_path / "unpacked", tmp_path / "work"
    for folder in (unpacked / "one" / "pkg", unpacked / "two", work / "a", work / "b", tmp_path / "repo" / "sub"):
        folder.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    (tmp_path / "repo" / "sub" / "pyproject.toml").write_text("")
    monkeypatch.chdir(work)
    one, two = str(unpacked / "one"), str(unpacked / "two")
    # Two unpacked repositories side by side: two indexes, not one of everything under unpacked/.
    assert project.paths_by_project([one, two, str(unpacked / "one" / "pkg")]) == [[one, str(unpacked / "one" / "pkg")], [two]]
    # Inside the working folder, which no marker splits, one project as `ddplint check .` has.
    assert project.paths_by_project(["a", "b"]) == [["a", "b"]]
    # A nested project given beside its outer one is in the outer one's walk already.
    repo, sub = str(tmp_path / "repo"), str(tmp_path / "repo" / "sub")
    assert project.paths_by_project([sub, repo]) == [[sub, repo]]
    assert project.paths_by_project([]) == [[]]


def test_two_unpacked_repositories_checked_together_give_what_each_gives_alone(tmp_path, run):
    unpacked = tmp_path / "unpacked"
    for name in ("one", "two"):
        shutil.copytree(PROJECTS / "engine_module", unpacked / name)
        (unpacked / name / "pyproject.toml").unlink()
    (tmp_path / "work").mkdir()
    run.cwd = tmp_path / "work"
    alone = [run("check", "--no-cache", str(unpacked / name)).stdout for name in ("one", "two")]
    together = run("check", "--no-cache", str(unpacked / "one"), str(unpacked / "two")).stdout
    found = _findings(together)
    assert found == _findings(alone[0] + alone[1]) and len(found) == 2 * len(_expected("engine_module")), together


def test_a_nested_project_is_not_read_as_part_of_the_one_around_it(tmp_path):
    root = tmp_path / "repo"
    for folder in ("pkg", "vendor/other", "corpus", "models/ops"):
        (root / folder).mkdir(parents=True)
        (root / folder / "mod.py").write_text("x = 1\n")
    (root / "pyproject.toml").write_text("")
    (root / "vendor" / "other" / ".git").write_text("gitdir: elsewhere\n")  # a submodule
    (root / "corpus" / "pyproject.toml").write_text("")
    (root / "models" / "ops" / "setup.py").write_text("")  # builds an extension the project imports
    found = [os.path.relpath(path, root) for path in project.python_files(str(root))]
    assert found == [os.path.join("models", "ops", name) for name in ("mod.py", "setup.py")] + [os.path.join("pkg", "mod.py")]


def test_a_nested_project_full_of_documents_hides_no_launch_command_of_the_one_around_it(tmp_path, run):
    root = _copy("documented_launcher", tmp_path)
    (root / "scripts").mkdir()
    (root / "run.sh").rename(root / "scripts" / "run.sh")
    corpus = root / "a_corpus"  # sorted before scripts/, with more documents than are searched
    corpus.mkdir()
    (corpus / "pyproject.toml").write_text("")
    for index in range(project.MAX_LAUNCH_DOCUMENTS + 1):
        (corpus / f"r{index}.md").write_text("x\n")
    run.cwd = root
    found = _findings(run("check", "--no-cache", ".").stdout)
    assert [(path, code) for path, _, _, code, _ in found] == [("tools/train.py", "DDP012")], found
    assert "scripts/run.sh:2 launches this script" in found[0][4]


def test_the_plugin_prefilter_with_a_project_does_not_import_libcst(tmp_path):
    import subprocess
    import sys

    from ddplint_test_support import cli_env

    root = _copy("cuda_helper", tmp_path)
    (root / "trainer" / "plain.py").write_text("import os\n\nfrom .utils import place\n\nprint(os.sep)\n")
    code = (
        "import ast, sys\nfrom ddplint.commands.flake8_plugin import Flake8Plugin\n"
        f"path = {str(root / 'trainer' / 'plain.py')!r}\n"
        "text = open(path).read()\n"
        "list(Flake8Plugin(ast.parse(text), text.splitlines(True), path).run())\n"
        "print('libcst' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert result.stdout.strip() == "False", result.stderr


def test_module_facts_read_imports_helpers_and_classes():
    facts = project.module_facts(
        "import torch.distributed as dist, os\n"
        "from .utils import (to_gpu,\n    place as put)  # helpers\n"
        "from base import *\n"
        "def f(x):\n    return x.to('cuda')\n"
        "def g(x):\n    # x.cuda()\n    return x\n"
        "class L(torch.utils.data.DataLoader, Mixin):\n    pass\n"
    )
    assert facts["imports"] == {"dist": "torch.distributed", "os": "os", "to_gpu": ".utils.to_gpu", "put": ".utils.place"}
    assert facts["stars"] == ["base"]
    assert facts["dist"] and facts["functions"]["f"]["cuda"] and "g" not in facts["functions"]
    assert facts["classes"]["L"]["bases"] == ["torch.utils.data.DataLoader", "Mixin"]


def test_module_facts_keep_the_last_import_of_a_name_as_python_binds_it():
    # `import datasets` after `from torchvision import datasets`: the name is the project's
    # module (an `import` read before every `from` made torchvision's win)
    facts = project.module_facts(
        "from torchvision import datasets, models\nimport datasets\nfrom models import Net\n"
        "import models\nfrom torch import nn\n"
    )
    assert facts["imports"]["datasets"] == "datasets" and facts["imports"]["models"] == "models"
    assert facts["imports"]["Net"] == "models.Net" and facts["imports"]["nn"] == "torch.nn"


def test_the_view_finds_classes_that_forward_their_keyword_arguments_to_a_dataloader(tmp_path):
    root = _copy("loader_forwarder", tmp_path)
    (root / "proj" / "wrappers.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "class Chainer(object):\n    def __init__(\n        self,\n        **kwargs,  # to DataLoader(\n    ):\n"
        "        self.loader = torch.utils.data.dataloader.DataLoader(**kwargs)\n"
        "class Pinned:\n    def __init__(self, ds, **kw):\n        self.loader = DataLoader(ds, pin_memory=True, **kw)\n"
        "class Serial:\n    def __init__(self, **kw):\n        kw['num_workers'] = 0\n        self.loader = DataLoader(**kw)\n"
        "class Later:\n    def __init__(self, **kw):\n        self.kw = kw\n    def loader(self):\n        return DataLoader(**self.kw)\n"
        "class Other:\n    def __init__(self, **kw):\n        self.loader = MyDataLoader(**kw)\n"
    )
    view = project.build(str(root)).view(str(root / "proj" / "train.py"))
    assert view.loader_forwarder("proj.wrappers.Chainer") == Place("proj/wrappers.py", 8)
    assert view.loader_forwarder("proj.wrappers.Pinned") == Place("proj/wrappers.py", 11)
    assert not any(view.loader_forwarder(f"proj.wrappers.{name}") for name in ("Serial", "Later", "Other"))


def test_module_facts_mark_sampler_classes_that_pad_their_indices():
    # The padding of torch's DistributedSampler, copied (maskrcnn-benchmark) or written anew.
    facts = project.module_facts(
        "from torch.utils.data import Sampler\n"
        "class Copy(Sampler):\n    def __iter__(self):\n        indices = list(range(10))\n"
        "        indices += indices[: (self.total_size - len(indices))]\n        return iter(indices)\n"
        "class Repeat(Sampler):\n    def __iter__(self):\n        ids = list(range(10))\n"
        "        ids = ids + (ids * 2)[:self.pad]\n        return iter(ids)\n"
        "class Strided(Sampler):\n    def __iter__(self):\n        ids = list(range(10))\n"
        "        ids += extra[:3]\n        return iter(ids[self.rank::self.world])\n"
    )
    assert facts["classes"]["Copy"]["pads"] and facts["classes"]["Repeat"]["pads"]
    assert "pads" not in facts["classes"]["Strided"]


def test_module_facts_read_imports_continued_on_crlf_lines():
    facts = project.module_facts("from .data import build, \\\r\n    create_dataset\r\nimport os\r\n")
    assert facts["imports"] == {"build": ".data.build", "create_dataset": ".data.create_dataset", "os": "os"}


def test_module_facts_take_a_sampler_named_only_in_a_comment_for_none():
    # Found in opacus 1.6.0 examples/: the function returns a DataLoader, and the only
    # "DistributedSampler" of its text is in a comment.
    facts = project.module_facts(
        "from torch.utils.data import DataLoader\n"
        "def build(ds):\n    # a DistributedSampler(ds) would go here\n    return DataLoader(ds, shuffle=True)\n"
    )
    assert facts["functions"] == {}


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_MODULES, st.text(max_size=30))
def test_module_facts_never_raise_on_any_text(module, noise):
    project.module_facts(module + noise)


def test_the_view_answers_for_tuple_builders_and_endless_generators(tmp_path):
    root = _copy("endless_helper", tmp_path)
    (root / "trainer" / "pairs.py").write_text(
        "import itertools\n"
        "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "def build(ds):\n    sampler = DistributedSampler(ds)\n"
        "    return (\n        DataLoader(ds, sampler=sampler),  # (the loader\n        sampler,\n    )\n"
        "def pair(ds):\n    loader = DataLoader(ds, sampler=DistributedSampler(ds))\n    return len(ds), loader\n"
        "def fixed(ds):\n    sampler = DistributedSampler(ds, shuffle=False)\n    return sampler, ds\n"
        "def again(ds):\n    return build(ds)\n"
        "def repeat(n, loader, *rest):\n    for _ in itertools.count():\n        for i, b in enumerate(loader):\n"
        "            yield b\n        for b in loader:\n            yield b\n"
        "def cycle_right(dl):\n    while 1:\n        dl.sampler.set_epoch(0)\n        for x in dl:\n            yield x\n"
        "def once(dl):\n    for x in dl:\n        yield x\n"
        "def after(dl):\n    while True:\n        break\n    for x in dl:\n        yield x\n"
    )
    view = project.build(str(root)).view(str(root / "trainer" / "train.py"))
    assert view.endless_wrapper("trainer.utils.cycle") == Cycle(0, "cycle", Place("trainer/utils.py", 2))
    assert view.endless_wrapper("trainer.pairs.repeat") == Cycle(1, "repeat", Place("trainer/pairs.py", 19))
    for name in ("trainer.data.build_loader", "trainer.pairs.cycle_right", "trainer.pairs.once", "trainer.pairs.after"):
        assert view.endless_wrapper(name) is None
    made = Place("trainer/pairs.py", 5)
    assert view.built_data("trainer.pairs.build") == {"sampler": Built(made, 1, 0), "loader": Built(made, 0, 0)}
    # a builder returning another's tuple: which of its own arguments is the dataset is not known
    assert view.built_data("trainer.pairs.again") == {"sampler": Built(made, 1, None), "loader": Built(made, 0, None)}
    assert view.built_data("trainer.pairs.pair") == {"loader": Built(Place("trainer/pairs.py", 11), 1, 0)}
    assert view.built_data("trainer.pairs.fixed") == {}  # an evaluation sampler: no epochs to set
    assert view.built_data("trainer.data.build_loader") == {"loader": Built(Place("trainer/data.py", 5), None, 0)}
    # it imports only the generator, and has no `for`: the fact opens the rule anyway
    assert ProjectFact.ENDLESS_WRAPPER in view.hints().facts
    assert ProjectFact.ENDLESS_WRAPPER in MissingSetEpoch.opened_by


def test_a_helper_returning_a_loader_and_its_sampler_is_fixed_on_the_unpacked_sampler(tmp_path, run):
    root = _copy("tuple_helper", tmp_path)
    run.cwd = root
    run("check", "--no-cache", "--fix", ".")
    fixed = (root / "recipe" / "train.py").read_text()
    assert "    loader, sampler = build(dataset)\n    for epoch in range(epochs):\n        sampler.set_epoch(epoch)\n" in fixed
    assert "    loader, _ = build(dataset)\n    for epoch in range(epochs):\n        loader.sampler.set_epoch(epoch)\n" in fixed
    assert not _findings(run("check", "--no-cache", ".").stdout)


def test_an_editor_buffer_on_stdin_is_linted_with_its_files_project(tmp_path, run):
    root = _copy("cuda_helper", tmp_path)
    run.cwd = root
    source = (root / "trainer" / "losses.py").read_text()
    with_index = _findings(run("check", "--no-cache", "-", "--stdin-filename", "trainer/losses.py", stdin=source).stdout)
    assert len(with_index) == 3
    alone = run("check", "--no-cache", "--no-project", "-", "--stdin-filename", "trainer/losses.py", stdin=source)
    assert not _findings(alone.stdout)


def test_a_cached_result_is_not_reused_when_another_module_changed(tmp_path, run):
    root = _copy("cuda_helper", tmp_path)
    run.cwd = root
    assert len(_findings(run("check", ".").stdout)) == 3
    assert len(_findings(run("check", ".").stdout)) == 3  # from the cache
    utils = root / "trainer" / "utils.py"
    utils.write_text(utils.read_text().replace("x.cuda(non_blocking=True)", "x"))
    assert not _findings(run("check", ".").stdout)  # losses.py itself did not change


def test_a_cached_result_is_not_reused_when_the_program_model_changed(tmp_path, run):
    """An edit that leaves every module's index facts as they were but changes what the program
    model derives (main.py no longer hands the DDP model to engine.py) is seen by a warm run:
    the saved solution (ddplint.model.solution) is keyed by the files the program read."""
    root = _copy("engine_module", tmp_path)
    run.cwd = root
    cold = _findings(run("check", "--no-cache", ".").stdout)
    assert any(finding[0].endswith("engine.py") for finding in cold)
    assert _findings(run("check", ".").stdout) == cold
    assert _findings(run("check", ".").stdout) == cold  # from the caches, no program built
    main = root / "detr" / "main.py"
    before = project.build(str(root)).modules
    main.write_text(main.read_text().replace("engine.train_one_epoch(model,", "engine.train_one_epoch(net,"))
    assert project.build(str(root)).modules == before  # only the program sees the change
    warm = _findings(run("check", ".").stdout)
    assert warm == _findings(run("check", "--no-cache", ".").stdout)
    assert warm != cold


@pytest.mark.parametrize("case", CASES)
def test_the_prefilters_with_the_project_hints_hide_no_finding(case, tmp_path):
    """Every rule run on every module (no needles, no screens) finds what the filtered run
    finds: the hints make the filters admit the cross-module cases."""
    from ddplint.engine.lint import analyse, parse, prepare, traverse
    from ddplint.rules import all_rules

    root = _copy(case, tmp_path)
    index = project.build(str(root))
    for path in sorted(root.rglob("*.py")):
        view = index.view(str(path))
        text = path.read_text()
        filtered = analyse(text, str(path), all_rules(), project=view).diagnostics
        module = parse(text)
        model, instances = prepare(module, all_rules(), view)
        traverse(module, model, instances)
        unfiltered = sorted(report.rule.code for rule in instances for report in rule.reports)
        assert sorted(d.code for d in filtered) == unfiltered, path


CONTEXT = PROJECTS.parent / "process_context"
CONTEXT_CASES = sorted(path.name for path in CONTEXT.iterdir() if (path / "alone.txt").exists())


@pytest.mark.parametrize("case", CONTEXT_CASES)
def test_who_runs_a_function_is_read_across_modules(case, tmp_path, run):
    """Process context through the program model (ddplint/model/context.py): an imported rank
    predicate judged by its body (`predicate_module`: `utils.is_main_process()` through
    `get_rank() == 0` is a guard, `is_master(args)` returning `args.save_checkpoints` is none),
    a helper module's save whose every caller is rank 0's (`early_return_caller`: the caller
    returns early on the other ranks; its look-alike without that return is flagged), and a
    module-level call under `if master_process:` (`rank_variable`; the barrier its helper
    then runs is rank 0's alone, DDP008), a flag a base class in
    another module sets from the rank, read by a subclass directly and through a local variable
    (`base_class_flag`: one that a base also increments is none), and an Accelerate script,
    which runs on every rank though it names no DDP entry point (`accelerate_accumulation`:
    `num_workers=cpu_count()` and a micro-batch loop of `accelerator.backward` outside
    `accelerator.accumulate` are flagged, the loop inside it is not), a Fabric script and a
    LightningModule, which the library runs on every rank (`fabric_launch`: a save and a load
    after `fabric.launch()` and in the function `fabric.launch(run)` starts are flagged, one under
    `fabric.is_global_zero`, in a `@rank_zero_only` function or after a one-device Fabric's launch
    is not; `lightning_module`: a hook's load and save are flagged, a save under
    `trainer.is_global_zero` or `@rank_zero_only` is not, nor a module whose file builds only a
    CPU Trainer for one device), and a checkpoint the scripts of its folder save only after
    `net.cpu()` (`host_checkpoint`: evaluate.py's load of final.pth is not flagged, that of
    last.pth, saved from CUDA, is, and so is the load of a final.pth that a script in another
    folder saves from CUDA), and an Accelerate script that every documented command starts as
    one process (`one_process_launch`: `accelerate launch --num_processes=1 finetune.py` saves
    alone, and so does a DDP script every command runs with `torchrun --nproc_per_node=1`
    (DDP014 asks for a second rank, as DDP004 does); the same save under `--num_processes 4`
    is flagged), and code under `if <parameter>:` of a
    parameter that defaults to a falsy literal (`switched_off`: the class's `if finetune:` load,
    which no call passes, is not flagged, nor `finish`'s `if export:` save (DDP014: the step is
    the engine's, for every rule); `restore`'s `if resume:` load, which finetune.py passes, is), and a
    function only one-process scripts name (`exported_alone`: the loads of `reload_fitted` and
    `load_weights`, which only export.py calls, are not flagged; `restore`, which train.py calls
    on every rank, is), and a Dataset's lambda defaultdict in a project whose DataLoaders start
    no workers (`workerless_dataset`, DDP002: nothing pickles it), and a base class's flag set
    False where `self.args.gpu != 0` in a distributed run, `args.gpu` being what the script
    assigns the namespace it builds the trainer with, the local rank its callers pass
    (`namespace_flag`: the saves under `if self.verbose:`, the subclass's own and the base
    class's `save()` it calls, are rank 0's; tests/test_program.py has
    the look-alikes that are no guard), and an Accelerate script that no document launches in a
    project whose documents launch its other scripts (`accelerate_by_hand`: finetune.py, which
    only `python finetune.py` can run, one process, neither saves nor loads on several ranks;
    the launched pretrain.py and sweep.py do, and so does ddp_tune.py, unlaunched too, whose own
    process group only a launcher can start). The CLI and flake8 agree on
    expected.txt; without the project (alone.txt) the names decide and the callers are unseen."""
    root = tmp_path / case
    shutil.copytree(CONTEXT / case, root)
    run.cwd = root
    expected = _expected_in(root)
    cli = _findings(run("check", "--no-cache", ".").stdout)
    assert _matches(cli, expected), cli
    assert _findings(run("--select", "DDP", ".", tool="flake8").stdout) == cli
    (root / "expected.txt").write_text((root / "alone.txt").read_text())
    alone = _findings(run("check", "--no-cache", "--no-project", ".").stdout)
    assert _matches(alone, _expected_in(root)), alone


def test_modules_that_run_as_one_process_skip_the_rules_that_need_ranks(tmp_path, run):
    """A test module that starts no processes and a demo script no distributed code reaches run
    as one process, and so does a module only such a script imports: DDP004, DDP010 and DDP014
    say nothing there, in the CLI, in flake8 and with --no-project alike; the distributed entry
    script and the spawning test are still checked."""
    root = tmp_path / "single_process"
    shutil.copytree(PROJECTS.parent / "process_context" / "single_process", root)
    expected = _expected_in(root)
    run.cwd = root
    for args, tool in ((("check", "--no-cache", "."), "ddplint"), (("check", "--no-cache", "--no-project", "."), "ddplint"),
                       (("--select", "DDP", "."), "flake8")):
        found = _findings(run(*args, tool=tool).stdout)
        assert _matches(found, expected), (tool, args, found)
    view = project.build(str(root)).view(str(root / "tests" / "test_checkpoint.py"))
    assert view.single_process
    assert not project.build(str(root)).view(str(root / "tests" / "test_spawned.py")).single_process
    assert project.build(str(root)).view(str(root / "tools" / "demo.py")).single_process
    assert not project.build(str(root)).view(str(root / "train.py")).single_process
    # a helper module that only a one-process script imports (week1/data.py: its random_split
    # is not DDP010's) runs as one process; one that a distributed script imports does not
    assert project.build(str(root)).view(str(root / "week1" / "data.py")).single_process
    assert not project.build(str(root)).view(str(root / "week2" / "data.py")).single_process


def test_a_module_naming_distribution_that_only_one_process_scripts_run_is_single_process(tmp_path, run):
    """model.py imports torch.distributed but starts nothing; main.py, its one user, wraps the
    model in DataParallel and is run by `python main.py`: one process loads the checkpoint, so
    DDP004 says nothing. When main.py starts a process group, or a launcher runs it, it does."""
    model = (
        "import torch\nimport torch.distributed as dist\n\n\nclass Runner:\n    def load(self, path, net):\n"
        "        net.load_state_dict(torch.load(path))\n"
    )
    main = "import torch\nfrom model import Runner\n\nif __name__ == '__main__':\n{body}\n"
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(model)
    (tmp_path / "main.py").write_text(main.format(body="    Runner().load('ckpt.pt', torch.nn.DataParallel(net))"))
    assert project.build(str(tmp_path)).view(str(tmp_path / "model.py")).single_process
    assert _findings(run("check", "--no-cache", "--select", "DDP004", ".").stdout) == []
    (tmp_path / "main.py").write_text(main.format(body="    torch.distributed.init_process_group('nccl')\n    Runner().load('ckpt.pt', net)"))
    assert not project.build(str(tmp_path)).view(str(tmp_path / "model.py")).single_process
    assert [f[3] for f in _findings(run("check", "--no-cache", "--select", "DDP004", ".").stdout)] == ["DDP004"]
    (tmp_path / "main.py").write_text(main.format(body="    Runner().load('ckpt.pt', net)"))
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node 2 main.py\n")
    assert not project.build(str(tmp_path)).view(str(tmp_path / "model.py")).single_process
    assert [f[3] for f in _findings(run("check", "--no-cache", "--select", "DDP004", ".").stdout)] == ["DDP004"]


def test_a_script_whose_trainer_has_the_ddp_strategy_runs_as_ranks(tmp_path, run):
    """genie's train.py: an entry script (`if __name__ == '__main__':`) that imports its
    LightningModule from another module and builds `Trainer(strategy='ddp')`, which runs the
    script again on every device: it is no one-process script, though it names nothing
    distributed and no LightningModule. Its shared seed reaches the draws that the subclass's
    overrides of the base's abstract methods make in training_step (DDP027); with
    `strategy='dp'` it runs as one process."""
    base = (
        "from abc import ABC, abstractmethod\nfrom pytorch_lightning.core import LightningModule\n\n\n"
        "class Diffusion(LightningModule, ABC):\n    @abstractmethod\n    def q(self, x):\n        raise NotImplemented\n\n"
        "    def training_step(self, batch, batch_idx):\n        return self.net(self.q(batch)).mean()\n"
    )
    frames = (
        "import torch\nfrom diffusion.base import Diffusion\n\n\n"
        "class Frames(Diffusion):\n    def q(self, x):\n        return x + torch.randn_like(x)\n"
    )
    for name, text in (("pyproject.toml", ""), ("diffusion/__init__.py", ""), ("diffusion/base.py", base),
                       ("diffusion/frames.py", frames)):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    train = (
        "import argparse\nfrom pytorch_lightning.trainer import Trainer, seed_everything\n"
        "from diffusion.frames import Frames\n\n\n"
        "def main(args):\n    seed_everything(args.seed, workers=True)\n    model = Frames()\n"
        "    trainer = Trainer(gpus=args.gpus, strategy={strategy!r})\n    trainer.fit(model)\n\n\n"
        "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n    parser.add_argument('-g', '--gpus')\n"
        "    parser.add_argument('--seed', type=int, default=100)\n    main(parser.parse_args())\n"
    )
    (tmp_path / "train.py").write_text(train.format(strategy="ddp"))
    run.cwd = tmp_path
    assert not project.build(str(tmp_path)).view(str(tmp_path / "train.py")).single_process
    found = _findings(run("check", "--no-cache", "--select", "DDP027", ".").stdout)
    assert [(f[0], f[1], f[3]) for f in found] == [("train.py", 7, "DDP027")], found
    assert "torch.randn_like at diffusion/frames.py:7, in Frames.training_step" in found[0][4]
    (tmp_path / "train.py").write_text(train.format(strategy="dp"))
    assert project.build(str(tmp_path)).view(str(tmp_path / "train.py")).single_process


def test_a_script_with_a_distributed_mode_of_its_own_is_not_one_process(tmp_path, run):
    """OpenLTM's run.py: every documented run is plain `python run.py --dp`, but `--ddp` (off
    unless passed) starts a process group from torchrun's environment: the option is there to
    be passed, so the script is no one-process run (Project.distributed_modes) and the
    experiment module's checkpoint load runs on every rank (DDP004). A test of the option
    elsewhere than around a group start (`if args.dp:`), an option on by default, or a group
    of one member is no such mode; nor is a launcher's test (`if "RANK" in os.environ:`)."""
    run_py = (
        "import argparse\nimport os\nimport torch.distributed as dist\nfrom exp import Exp\n\n"
        "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--ddp', action='store_true', default={default})\n"
        "    parser.add_argument('--dp', action='store_true', default=False)\n"
        "    args = parser.parse_args()\n"
        "    if args.dp:\n        pass\n"
        "    elif {test}:\n"
        "        dist.init_process_group('nccl', world_size=int(os.environ.get('WORLD_SIZE', '8')){one})\n"
        "    Exp(args).train()\n"
    )
    exp = (
        "import os\n\nimport torch\n\n\nclass Exp:\n    def __init__(self, args):\n        self.args = args\n"
        "        self.model = torch.nn.Linear(2, 2).cuda(int(os.environ['LOCAL_RANK']))\n\n"
        "    def train(self):\n        torch.save(self.model.state_dict(), 'checkpoint.pth')\n"
        "        self.model.load_state_dict(torch.load('checkpoint.pth'))\n"
    )
    run.cwd = tmp_path
    for name, text in (("pyproject.toml", ""), ("exp.py", exp), ("README.md", "Train:\n\n```python -u run.py --dp```\n")):
        (tmp_path / name).write_text(text)
    for default, test, one, mode in (
        ("False", "args.ddp", "", True),
        ("None", "args.ddp and True", "", True),
        ("True", "args.ddp", "", False),  # on unless passed: the documented runs show it
        ("False", "args.ddp", ", rank=0, world_size=1", False),  # a group of one member
        ("False", "'RANK' in os.environ", "", False),  # a launcher's test, not an option
    ):
        (tmp_path / "run.py").write_text(run_py.format(default=default, test=test, one=one).replace(
            "world_size=int(os.environ.get('WORLD_SIZE', '8')), rank=0, world_size=1", "rank=0, world_size=1"))
        index = project.build(str(tmp_path))
        assert bool(index.distributed_modes("run")) is mode and index.one_process_run("run") is not mode, (default, test, one)
        found = [f[3] for f in _findings(run("check", "--no-cache", "--select", "DDP004", ".").stdout)]
        assert found == (["DDP004"] if mode else []), (default, test, one)


def test_a_config_switch_that_a_shipped_config_turns_on_is_a_distributed_mode(tmp_path, run):
    """HRNet-Hand's tools/train.py: the README runs it only as `python tools/train.py --cfg
    experiments/a.yaml`, but `if cfg.DISTRIBUTED:` forms a process group from the launcher's
    environment and binds the device from --local_rank, and a config the project ships sets
    DISTRIBUTED true: a run with that file is several ranks, so the script is no one-process
    run and DDP012 flags the option (under torchrun every rank keeps 0). A nested key counts
    (`cfg.TRAIN.DDP`); where every shipped config leaves the switch off, the documented runs
    are one process and nothing is flagged."""
    train = (
        "import argparse\nimport torch\nimport torch.distributed as dist\nfrom config import cfg\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--cfg', required=True)\n"
        "    parser.add_argument('--local_rank', default=0, type=int)\n    args = parser.parse_args()\n"
        "    cfg.merge_from_file(args.cfg)\n    if {test}:\n        torch.cuda.set_device(args.local_rank)\n"
        "        dist.init_process_group(backend='nccl')\n\n\nif __name__ == '__main__':\n    main()\n"
    )
    run.cwd = tmp_path
    _write_project(tmp_path, {
        "lib/config.py": "from yacs.config import CfgNode\ncfg = CfgNode()\ncfg.DISTRIBUTED = False\n",
        "README.md": "Train:\n\n```\npython tools/train.py --cfg experiments/a.yaml\n```\n",
        "experiments/a.yaml": "DISTRIBUTED: false\nTRAIN:\n  DDP: false\n",
    })
    for test, on, mode in (
        ("cfg.DISTRIBUTED", "DISTRIBUTED: true\n", True),
        ("cfg.TRAIN.DDP", "TRAIN:\n  DDP: true\n", True),
        ("cfg.DISTRIBUTED", "DISTRIBUTED: false\nTRAIN:\n  DDP: true\n", False),  # every shipped config leaves it off
        ("cfg.DDP", "TRAIN:\n  DDP: true\n", False),  # another key path
    ):
        _write_project(tmp_path, {"tools/train.py": train.format(test=test), "experiments/b.yaml": on})
        index = project.build(str(tmp_path))
        assert bool(index.distributed_modes("train")) is mode and index.one_process_run("train") is not mode, (test, on)
        found = [f[:4] for f in _findings(run("check", "--no-cache", "--select", "DDP012", ".").stdout)]
        assert found == ([("tools/train.py", 10, 5, "DDP012")] if mode else []), (test, on)


def test_a_script_the_project_runs_only_with_plain_python_runs_as_one_process(tmp_path, run):
    """test.py joins a process group through utils.py when RANK is set, and saves a checkpoint
    with no rank test; the README runs it only as `python test.py --gpu_id 2,3` (one process, so
    a group of one): DDP014 says nothing. It does when a launcher runs it (by its path or its
    module name), when a launcher command names no script (it may be this one), or when the
    script may start processes (itself, or a Lightning Trainer running its LightningModule)."""
    utils = (
        "import os\nimport torch.distributed as dist\n\n\ndef init_distributed_mode(args):\n"
        "    if 'RANK' in os.environ:\n        dist.init_process_group('nccl')\n"
    )
    test = (
        "import torch\nimport torch.distributed as dist\nimport utils\n{extra}\n\n"
        "if __name__ == '__main__':\n    utils.init_distributed_mode(None)\n    torch.save({{}}, 'best.pth')\n"
    )
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(utils)
    (tmp_path / "test.py").write_text(test.format(extra=""))
    (tmp_path / "README.md").write_text("Evaluate:\n\n```python test.py --pre model.pth --gpu_id 2,3```\n")
    assert project.build(str(tmp_path)).one_process_run("test")
    assert _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout) == []
    # an Accelerator starts no process: under plain python it is one (PTE's train_stepwise.py)
    (tmp_path / "test.py").write_text(test.format(extra="from accelerate import Accelerator\naccelerator = Accelerator()"))
    assert project.build(str(tmp_path)).one_process_run("test")
    assert _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout) == []
    # nor does Hugging Face's Trainer: it runs in the process python starts (ChatAlpaca's train_lora.py)
    (tmp_path / "test.py").write_text(test.format(extra="import transformers\ntrainer = transformers.Trainer(model=None)"))
    assert project.build(str(tmp_path)).one_process_run("test")
    cases = (
        ("", "torchrun --nproc_per_node 2 test.py\n"),  # a launcher runs it too
        ("", "# usage: bash run.sh test.py\ntorchrun --nproc_per_node 2 $1\n"),  # a launcher runs the script it is handed by name
        ("", "torchrun --nproc_per_node 2 $(dirname $0)/test.py\n"),  # a file of its name, by a path not followed
        ("import torch.multiprocessing as mp\nmp.spawn(print, nprocs=2)", ""),  # it starts processes itself
        ("", "srun python -u -m test\n"),  # a launcher runs it by its module name
        ("import pytorch_lightning as pl\n\n\nclass Net(pl.LightningModule):\n    pass\n\n\nnet = Net()", ""),  # a Trainer may run it per device
        ("import pytorch_lightning as pl\ntrainer = pl.Trainer(devices=2)", ""),  # Lightning's Trainer re-runs it per device
    )
    for extra, launch in cases:
        (tmp_path / "test.py").write_text(test.format(extra=extra))
        (tmp_path / "run.sh").write_text(launch)
        assert not project.build(str(tmp_path)).one_process_run("test"), (extra, launch)
        assert [f[3] for f in _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout)] == ["DDP014"], (extra, launch)


def test_a_script_in_a_process_group_of_one_runs_as_one_process(tmp_path, run):
    """Project.one_process_run: test.py starts its own `init_process_group(world_size=1,
    rank=0)` and reads --local_rank; no document runs it, and flops.py, which imports its class,
    is run by the README with plain python (a launch in a comment, a shell-out of mkdir start
    nothing): no launcher passes the option, DDP012 says nothing. It does when the group may have
    more members and when a shell-out may run Python. When no document runs flops.py (what runs
    it is not known) test.py is no one-process run, but its `__main__` block, the only caller of
    main(), still runs only as the script, alone (Project.script_runs_alone): DDP012 stays silent."""
    test = (
        "import argparse\nimport os\nimport torch\nimport torch.distributed as dist\n\n\nclass Tester:\n    pass\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--local_rank', type=int, default=0)\n"
        "    args = parser.parse_args()\n    dist.init_process_group('nccl', init_method='tcp://127.0.0.1:2', {size}rank=0)\n"
        "    torch.cuda.set_device(args.local_rank)\n    os.system({shell} % args.local_rank)\n\n\n"
        "if __name__ == '__main__':\n    main()\n"
    )
    files = {
        "pyproject.toml": "", "run.sh": "torchrun --nproc_per_node 2 train.py\n", "README.md": "FLOPs: `python flops.py`\n",
        "flops.py": "import torch.distributed as dist\nfrom test import Tester\n\nif __name__ == '__main__':\n    print(Tester())\n    # launch(main, 2)\n",
        "train.py": "import torch.distributed as dist\n\nif __name__ == '__main__':\n    dist.init_process_group('nccl')\n",
        "test.py": test.format(size="world_size=1, ", shell="'mkdir out_%d'"),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    run.cwd = tmp_path
    index = project.build(str(tmp_path))
    assert index.one_process_run("test") and index.one_process_run("flops") and not index.one_process_run("train")
    assert index.module_view("test").single_process
    assert _findings(run("check", "--no-cache", "--select", "DDP012", ".").stdout) == []
    cases = (
        ("", "'mkdir out_%d'", files["README.md"]),  # a group of as many as the environment says
        ("world_size=2, ", "'mkdir out_%d'", files["README.md"]),
        ("world_size=1, ", "'python eval.py %d'", files["README.md"]),  # it may start more Python
        ("world_size=1, ", "'mkdir out_%d'", ""),  # flops.py, which imports it, runs as no document says
    )
    for size, shell, readme in cases:
        (tmp_path / "test.py").write_text(test.format(size=size, shell=shell))
        (tmp_path / "README.md").write_text(readme)
        assert not project.build(str(tmp_path)).one_process_run("test"), (size, shell, readme)
        expected = [] if readme == "" else ["DDP012"]  # the block runs alone whoever runs flops.py
        assert [f[3] for f in _findings(run("check", "--no-cache", "--select", "DDP012", ".").stdout)] == expected, (size, shell, readme)


def test_a_split_in_a_helper_is_even_when_every_caller_seeds_alike_first(tmp_path, run):
    """DDP010 across modules: data.py's random_split has no seed of its own, but train.py seeds
    torch with args.seed before it calls make_splits, so every rank splits alike; a caller that
    seeds with the rank, or seeds only after the call, leaves it flagged."""
    data = (
        "import torch.distributed as dist\nfrom torch.utils.data import random_split\n\n\n"
        "def make_splits(dataset):\n    return random_split(dataset, [0.9, 0.1])\n"
    )
    train = (
        "import torch\nimport torch.distributed as dist\nfrom data import make_splits\n\n\n"
        "def main(args, dataset):\n    dist.init_process_group('nccl')\n{before}    train_set, val_set = make_splits(dataset)\n{after}\n\n"
        "if __name__ == '__main__':\n    main(None, None)\n"
    )
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data.py").write_text(data)
    cases = (
        ("    torch.manual_seed(args.seed)\n", "", []),
        ("    torch.manual_seed(args.seed + dist.get_rank())\n", "", ["DDP010"]),
        ("", "    torch.manual_seed(args.seed)\n", ["DDP010"]),
    )
    for before, after, expected in cases:
        (tmp_path / "train.py").write_text(train.format(before=before, after=after))
        found = _findings(run("check", "--no-cache", "--select", "DDP010", ".").stdout)
        assert [f[3] for f in found] == expected, (before, after, found)
    # A module that may call it and does not parse (unread): the calls read decide.
    (tmp_path / "demo.py").write_text("from data import make_splits\n\ndef show(:\n    make_splits(None)\n")
    for before, after, expected in cases:
        (tmp_path / "train.py").write_text(train.format(before=before, after=after))
        found = _findings(run("check", "--no-cache", "--select", "DDP010", ".").stdout)
        assert [f[3] for f in found if f[0] != "demo.py"] == expected, (before, after, found)


def test_a_download_in_a_helper_a_package_re_exports_is_followed_to_its_callers(tmp_path, run):
    """data/sets.py builds CIFAR100(download=True) in a helper that data/__init__.py re-exports;
    train.py, which torchrun starts, calls it on every rank after joining the process group:
    DDP014 at the download, its chain naming the call. A rank-0 test around the call spares it."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "__init__.py").write_text("from .sets import train_set\n")
    (tmp_path / "data" / "sets.py").write_text(
        "from torchvision.datasets import CIFAR100\n\n\ndef train_set(root):\n"
        "    return CIFAR100(root=root, train=True, download=True)\n"
    )
    train = (
        "import torch.distributed as dist\nfrom data import train_set\n\n\ndef main(root):\n"
        "    dist.init_process_group('nccl')\n{call}\n\n\nif __name__ == '__main__':\n    main('data')\n"
    )
    run.cwd = tmp_path
    (tmp_path / "train.py").write_text(train.format(call="    dataset = train_set(root)"))
    found = _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout)
    assert [(f[0], f[1], f[3]) for f in found] == [("data/sets.py", 5, "DDP014")], found
    assert "train.py:7" in found[0][4]
    (tmp_path / "train.py").write_text(train.format(call="    if dist.get_rank() == 0:\n        dataset = train_set(root)"))
    assert _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout) == []


def test_a_star_import_from_a_folder_without_init_reaches_the_helper_it_binds(tmp_path, run):
    """core/data/loaders.py, in folders with no __init__.py (namespace packages, which the index
    names the module `loaders` by), caches its dataset with torch.save when the file is missing;
    train.py builds an Accelerator and calls it through `from core.data.loaders import *`: the
    star import is resolved as an explicit one would be (Program.star_module), so every rank's
    call reaches the save on a first run (minLLMTrain's get_datasets)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "core" / "data").mkdir(parents=True)
    (tmp_path / "core" / "data" / "loaders.py").write_text(
        "import os\n\nimport torch\n\n\ndef get_datasets(directory):\n"
        "    path = os.path.join(directory, 'train.pt')\n    if os.path.exists(path):\n        return torch.load(path)\n"
        "    data = list(range(10))\n    torch.save(data, path)\n    return data\n"
    )
    (tmp_path / "train.py").write_text(
        "from accelerate import Accelerator\nfrom core.data.loaders import *\n\n\ndef main():\n"
        "    accelerator = Accelerator()\n    data = get_datasets(directory='data')\n\n\nmain()\n"
    )
    run.cwd = tmp_path
    found = _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout)
    assert [(f[0], f[1], f[3]) for f in found] == [("core/data/loaders.py", 11, "DDP014")], found
    assert "train.py:7" in found[0][4]


def test_a_sampler_class_of_a_folder_without_init_is_the_project_copy_it_is(tmp_path, run):
    """DDP003: lib/ has no __init__.py (a namespace package, which the index names
    `data.sampler` by its package below lib); lib/data/sampler.py copies DistributedSampler
    (shuffles by self.epoch, pads its indices) and lib/data/build.py builds the loader from it;
    the engine imports `lib.data.build` and trains epochs without set_epoch. The class is found
    as the import finds it (ProjectView.resolve through Program.split): each epoch repeats the
    order (3D-Detection-Code's lib/engine/train.py)."""
    files = {
        "pyproject.toml": "",
        "run.sh": "python -m torch.distributed.launch --nproc_per_node=8 tools/train.py\n",
        "lib/data/__init__.py": "",
        "lib/data/sampler.py": (
            "import math\nimport torch\nfrom torch.utils.data.sampler import Sampler\n\n\n"
            "class DistributedSampler(Sampler):\n    def __init__(self, dataset, num_replicas, rank, shuffle=True):\n"
            "        self.dataset, self.num_replicas, self.rank, self.epoch, self.shuffle = dataset, num_replicas, rank, 0, shuffle\n"
            "        self.num_samples = int(math.ceil(len(dataset) / num_replicas))\n"
            "        self.total_size = self.num_samples * num_replicas\n\n"
            "    def __iter__(self):\n        g = torch.Generator()\n        g.manual_seed(self.epoch)\n"
            "        indices = torch.randperm(len(self.dataset), generator=g).tolist()\n"
            "        indices += indices[:(self.total_size - len(indices))]\n"
            "        return iter(indices[self.rank:self.total_size:self.num_replicas])\n\n"
            "    def set_epoch(self, epoch):\n        self.epoch = epoch\n"
        ),
        "lib/data/build.py": (
            "import torch.utils.data\nfrom lib.data.sampler import DistributedSampler\n\n\n"
            "def build_dataloader(dataset, rank, world_size):\n"
            "    sampler = DistributedSampler(dataset, world_size, rank, shuffle=True)\n"
            "    return torch.utils.data.DataLoader(dataset, batch_size=4, sampler=sampler)\n"
        ),
        "lib/engine/__init__.py": "",
        "lib/engine/train.py": (
            "from lib.data.build import build_dataloader\n\n\n"
            "def train(model, dataset, optimizer, rank, world_size, num_epochs):\n"
            "    loader = build_dataloader(dataset, rank, world_size)\n"
            "    for epoch in range(1, num_epochs + 1):\n        for batch in loader:\n"
            "            model(batch).backward()\n            optimizer.step()\n"
        ),
        "tools/train.py": (
            "import torch.distributed as dist\nfrom lib.engine.train import train\n\n"
            "if __name__ == '__main__':\n    dist.init_process_group('nccl')\n"
            "    train(None, None, None, dist.get_rank(), dist.get_world_size(), 10)\n"
        ),
    }
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    run.cwd = tmp_path
    found = _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)
    assert [(f[0], f[1], f[3]) for f in found] == [("lib/engine/train.py", 6, "DDP003")], found


def test_a_function_only_one_process_scripts_name_runs_alone(tmp_path):
    """ProjectView.runs_alone: named only by a script that starts nothing and imports nothing that
    does; not where a framework may call the method by its name, a decorator may register the
    function, a training script names it too, or a script it is named in imports a launcher."""
    files = {
        "pyproject.toml": "", "run.sh": "torchrun --nproc_per_node 2 train.py\n",
        "train.py": "import torch.distributed as dist\nfrom lib import fit\n\nif __name__ == '__main__':\n"
                    "    dist.init_process_group('nccl')\n    fit()\n",
        "lib.py": "import torch.distributed as dist\nfrom transformers import Trainer\n\n\ndef fit():\n    pass\n\n\n"
                  "def export():\n    pass\n\n\n@register\ndef convert():\n    pass\n\n\n"
                  "class Plain:\n    def dump(self):\n        pass\n\n\nclass Custom(Trainer):\n    def dump(self):\n        pass\n",
        "export.py": "from lib import Custom, Plain, convert, export, fit\n\nif __name__ == '__main__':\n"
                     "    export()\n    convert()\n    fit()\n    Plain().dump()\n    Custom().dump()\n",
        "spawner.py": "import launcher\nfrom lib import Plain\n\nif __name__ == '__main__':\n    launcher.go(Plain)\n",
        "launcher.py": "import torch.multiprocessing as mp\n\n\ndef go(f):\n    mp.spawn(f, nprocs=2)\n\n\ndef unused():\n    pass\n",
        "idle.py": "from launcher import unused\nfrom lib import export\n\nif __name__ == '__main__':\n    unused()\n    export()\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    index = project.build(str(tmp_path))
    view = index.module_view("lib")
    assert index.runs_alone("export") and not index.runs_alone("train") and not index.runs_alone("spawner")
    assert index.runs_alone("idle")  # it imports launcher.py but names nothing that spawns
    assert view.runs_alone((("export", False, False),))
    assert not view.runs_alone((("fit", False, False),))  # train.py calls it on every rank
    assert not view.runs_alone((("convert", False, True),))  # decorated: a registry may call it
    assert view.runs_alone((("Plain", True, False), ("dump", False, False)))
    assert not view.runs_alone((("Custom", True, False), ("dump", False, False)))  # the Trainer may call it
    assert not view.runs_alone((("Plain", True, False),))  # the class body: module code runs it


def test_a_script_the_project_launches_with_deepspeed_keeps_its_local_rank_option(tmp_path, run):
    """DeepSpeed's launcher passes `--local_rank=N`: a script its documents launch with
    `deepspeed` is not told to accept `--local-rank`, though it reads args.local_rank; without
    the project, the read alone is evidence enough."""
    script = (
        "import argparse\n\nimport torch\nimport torch.distributed as dist\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n"
        '    parser.add_argument("--local_rank", type=int, default=-1)\n'
        "    args = parser.parse_args()\n    torch.cuda.set_device(args.local_rank)\n"
        '    dist.init_process_group("nccl")\n\n\nif __name__ == "__main__":\n    main()\n'
    )
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "zero_train.py").write_text(script)
    (tmp_path / "README.md").write_text("Train:\n\n    deepspeed --num_gpus 8 \\\n        zero_train.py --deepspeed_config ds.json\n")
    run.cwd = tmp_path
    assert _findings(run("check", "--no-cache", ".").stdout) == []
    assert _findings(run("--select", "DDP", ".", tool="flake8").stdout) == []
    [(_, line, _, code, _)] = _findings(run("check", "--no-cache", "--no-project", ".").stdout)
    assert (line, code) == (9, "DDP012")
    (tmp_path / "README.md").write_text("Train:\n\n    pip install deepspeed\n    torchrun --nproc_per_node 8 zero_train.py\n")
    [(_, line, _, code, _)] = _findings(run("check", "--no-cache", ".").stdout)
    assert (line, code) == (9, "DDP012")
    # run as a module: `deepspeed --module zero_train` passes --local_rank as well
    (tmp_path / "run.sh").write_text("deepspeed --include localhost:0,1 --module zero_train \\\n    --deepspeed_config ds.json\n")
    (tmp_path / "README.md").write_text("Train with run.sh\n")
    assert _findings(run("check", "--no-cache", ".").stdout) == []


def test_without_a_root_marker_flake8_takes_its_folder_as_the_project_like_the_cli(tmp_path, run):
    """A tree with no pyproject.toml, setup.py or .git (an unpacked archive): `flake8 .` and
    `ddplint check .` both take the folder they run in as the project."""
    root = _copy("engine_module", tmp_path)
    (root / "pyproject.toml").unlink()
    run.cwd = root
    cli = _findings(run("check", "--no-cache", ".").stdout)
    assert _matches(cli, _expected("engine_module")), cli
    assert _findings(run("--select", "DDP", ".", tool="flake8").stdout) == cli


def test_a_model_wrapped_in_another_module_with_find_unused_parameters_is_not_flagged(tmp_path, run):
    # model_builder with `find_unused_parameters=cfg.unused` in engine.py's wrap: silent, in the
    # CLI and flake8 alike; alone, models.py shows no wrap at all, and is silent too. Without the
    # argument the same wrap makes the unused head a finding.
    root = _copy("model_builder_tolerant", tmp_path)
    run.cwd = root
    assert not _findings(run("check", "--no-cache", "--no-project", ".").stdout)
    assert not _findings(run("check", "--no-cache", ".").stdout)
    assert not _findings(run("--select", "DDP", ".", tool="flake8").stdout)
    engine = root / "det" / "engine.py"
    engine.write_text(engine.read_text().replace(", find_unused_parameters=cfg.unused", ""))
    assert [(f[0], f[3]) for f in _findings(run("check", "--no-cache", ".").stdout)] == [("det/models.py", "DDP015")]


def test_a_lambda_defaultdict_returned_to_callers_that_only_read_it_is_not_flagged(tmp_path, run):
    # dict_return with callers that log the dict and send only its size to the ranks; the
    # helper's name says "vocab", so alone it is judged (and flagged) by that name.
    root = _copy("dict_return_logged", tmp_path)
    run.cwd = root
    assert [f[3] for f in _findings(run("check", "--no-cache", "--no-project", ".").stdout)] == ["DDP002"]
    assert not _findings(run("check", "--no-cache", ".").stdout)
    assert not _findings(run("--select", "DDP", ".", tool="flake8").stdout)


def test_a_projects_own_launcher_that_sets_local_rank_passes_no_option(tmp_path, run):
    """utils/launch.py starts a process per GPU and sets `args.local_rank` before each (tape's
    `launch_process_group`): no launcher passes `--local_rank`, so DDP012 has no harm to show.
    Without that loop it has: the parsed value is read and nothing sets it."""
    root = tmp_path / "own_launcher"
    shutil.copytree(CONTEXT / "own_launcher", root)
    run.cwd = root
    assert not _findings(run("check", "--no-cache", ".").stdout)
    launch = root / "utils" / "launch.py"
    launch.write_text(launch.read_text().replace("        args.local_rank = local_rank\n", ""))
    assert [f[:4] for f in _findings(run("check", "--no-cache", ".").stdout)] == [("train.py", 22, 5, "DDP012")]


def test_a_local_rank_of_none_read_only_as_a_switch_is_no_device(tmp_path, run):
    """sockeye: `--local_rank` defaults to None and train.py only tests it against None (the
    DeepSpeed switch, an elif for torchrun); the device comes from LOCAL_RANK, read through a
    constant of another module. Without that read, the guarded branch without else is the only
    place a device could be chosen, and the finding stays."""
    files = {
        "seq/__init__.py": "",
        "seq/constants.py": "DIST_ENV_LOCAL_RANK = 'LOCAL_RANK'\n",
        "seq/utils.py": "import os\nfrom . import constants as C\n\n\ndef get_local_rank():\n    return int(os.environ[C.DIST_ENV_LOCAL_RANK])\n",
        "seq/arguments.py": (
            "import argparse\n\n\ndef parse():\n    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument('--local_rank', type=int, default=None, help='added by deepspeed')\n"
            "    parser.add_argument('--dist', action='store_true')\n    return parser.parse_args()\n"
        ),
        "seq/train.py": (
            "import torch\nimport torch.distributed\nfrom . import arguments, utils\n\n\ndef main():\n"
            "    args = arguments.parse()\n    if args.local_rank is not None:\n        assert not args.dist\n"
            "    if args.local_rank is not None:\n        assert args.local_rank == utils.get_local_rank()\n"
            "    elif args.dist:\n        torch.distributed.init_process_group('nccl')\n"
            "    device = torch.device('cuda', utils.get_local_rank())\n\n\nif __name__ == '__main__':\n    main()\n"
        ),
    }
    (tmp_path / "seq").mkdir()
    for relative, text in files.items():
        (tmp_path / relative).write_text(text)
    (tmp_path / "README.md").write_text("    torchrun --nproc_per_node 8 -m seq.train --dist\n")
    run.cwd = tmp_path
    assert not [f for f in _findings(run("check", "--no-cache", ".").stdout) if f[3] == "DDP012"]
    utils = tmp_path / "seq" / "utils.py"
    utils.write_text(utils.read_text().replace("os.environ[C.DIST_ENV_LOCAL_RANK]", "torch.cuda.current_device()"))
    assert [f[:4] for f in _findings(run("check", "--no-cache", ".").stdout) if f[3] == "DDP012"] == [("seq/arguments.py", 6, 5, "DDP012")]


def test_a_local_rank_the_code_takes_from_slurm_misses_no_launchers_option(tmp_path, run):
    """FiD: src/slurm.py (imported as `import src.slurm`) sets the parsed local_rank from
    SLURM_LOCALID, and no document launches the script with torchrun (none runs it at all): its
    multi-process run is SLURM's. A documented torchrun run leaves it at -1 on every rank, and the finding comes back."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "options.py").write_text(
        "import argparse\n\n\ndef parse():\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--local_rank', type=int, default=-1)\n    return parser.parse_args()\n"
    )
    (source / "slurm.py").write_text(
        "import os\nimport torch\nimport torch.distributed as dist\n\n\ndef init_distributed_mode(params):\n"
        "    if 'SLURM_JOB_ID' in os.environ:\n        params.local_rank = int(os.environ['SLURM_LOCALID'])\n"
        "        dist.init_process_group('nccl', rank=int(os.environ['SLURM_PROCID']), world_size=int(os.environ['SLURM_NTASKS']))\n"
        "    else:\n        params.local_rank = 0\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\nfrom src.options import parse\nimport src.slurm\n\n\ndef main():\n    opt = parse()\n"
        "    src.slurm.init_distributed_mode(opt)\n    torch.cuda.set_device(opt.local_rank)\n"
        "    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2).cuda(), device_ids=[opt.local_rank])\n\n\n"
        "if __name__ == '__main__':\n    main()\n"
    )
    run.cwd = tmp_path
    assert not [f for f in _findings(run("check", "--no-cache", ".").stdout) if f[3] == "DDP012"]
    (tmp_path / "README.md").write_text("    torchrun --nproc_per_node 4 train.py\n")
    assert [f[:4] for f in _findings(run("check", "--no-cache", ".").stdout) if f[3] == "DDP012"] == [("src/options.py", 6, 5, "DDP012")]


def test_a_cached_result_is_not_reused_when_a_callers_guard_changed(tmp_path, run):
    """Who runs a function is part of what the program concluded: when the only caller of a
    save drops its early return on the other ranks, a warm run reports the save in the
    unchanged checkpoint module, as a cold run does."""
    root = tmp_path / "early_return_caller"
    shutil.copytree(CONTEXT / "early_return_caller", root)
    run.cwd = root
    cold = _findings(run("check", "--no-cache", ".").stdout)
    assert _findings(run("check", ".").stdout) == cold
    engine = root / "trainer" / "engine.py"
    guard = "        if self.distributed_rank != 0:\n            return\n"
    assert guard in engine.read_text()
    engine.write_text(engine.read_text().replace(guard, ""))
    warm = _findings(run("check", ".").stdout)
    assert warm == _findings(run("check", "--no-cache", ".").stdout)
    assert warm != cold and any(f[:2] == ("trainer/checkpoint.py", 8) for f in warm)


# train.py hands an evaluation loader to engine.evaluate(), which hands its results to
# utils.combine(): whether that combines them across ranks is read from utils.py only when
# train.py's prefilter hints are worked out, after the program's solution was found.
_EVALUATED_ELSEWHERE = {
    "pyproject.toml": "",
    "train.py": (
        "import torch.distributed as dist\n"
        "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "import engine\n\n\n"
        "def main(model, val_set):\n"
        "    dist.init_process_group(\"nccl\")\n"
        "    val_sampler = DistributedSampler(val_set, shuffle=False)\n"
        "    val_loader = DataLoader(val_set, batch_size=64, sampler=val_sampler)\n"
        "    print(engine.evaluate(model, val_loader))\n"
    ),
    "engine.py": (
        "import torch\n\nimport utils\n\n\n"
        "def evaluate(model, loader):\n"
        "    correct = torch.zeros(2)\n"
        "    for x, y in loader:\n"
        "        correct[0] += (model(x).argmax(1) == y).sum()\n"
        "        correct[1] += len(y)\n"
        "    utils.combine(correct)\n"
        "    return (correct[0] / correct[1]).item()\n"
    ),
    # wait() keeps the index's text fact that utils.py may run a collective the same before and after
    # combine() starts to all-reduce, so that only the program's reading can tell the change
    "utils.py": (
        "import torch.distributed as dist\n\n\n"
        "def wait():\n    dist.barrier()\n\n\n"
        "def combine(total):\n    print(dist.get_rank())\n"
    ),
}


def test_a_file_the_prefilter_skipped_is_checked_again_when_another_module_changes_its_hints(tmp_path, run):
    """With DDP022 alone selected, no needle admits train.py (it names no collective); the
    project's hint that a function of another module evaluates its loader and combines the
    results opens it. That hint reads utils.py, which neither the index's facts nor the
    program's solution cover: when utils.combine() starts to all-reduce, a warm run must open
    train.py again, whose result was cached without it being parsed."""
    for name, text in _EVALUATED_ELSEWHERE.items():
        (tmp_path / name).write_text(text)
    assert not _findings(run("check", "--select", "DDP022", ".").stdout)
    assert not _findings(run("check", "--select", "DDP022", ".").stdout)  # from the cache
    utils = tmp_path / "utils.py"
    before = project.build(str(tmp_path)).modules
    utils.write_text(utils.read_text().replace("print(dist.get_rank())", "dist.all_reduce(total)\n    return total"))
    assert project.build(str(tmp_path)).modules == before  # the index's facts are as they were
    warm = _findings(run("check", "--select", "DDP022", ".").stdout)
    assert warm == _findings(run("check", "--no-cache", "--select", "DDP022", ".").stdout)
    assert [f[:4] for f in warm] == [("train.py", 9, 19, "DDP022")]


def test_the_results_cache_keeps_each_set_of_reads_once_and_drops_a_result_when_one_changes(tmp_path):
    """Every result of a process depends on one of a few growing sets of modules (what the
    program's answers and the hints read): the cache file holds each set once."""
    import json

    from ddplint.engine.cache import Cache
    from ddplint.core.diagnostics import FileResult

    helper = tmp_path / "utils.py"
    helper.write_text("x = 1\n")
    paths = [tmp_path / "a.py", tmp_path / "b.py"]
    cache = Cache(str(tmp_path / "cache"))
    for path in paths:
        path.write_text("pass\n")
        cache.store(str(path), [], os.stat(path), path.read_bytes(), FileResult(str(path), reads=(str(helper),)))
    cache.save()
    assert len(json.loads(Path(cache.path).read_text())["reads"]) == 1
    assert all(Cache(cache.folder).lookup(str(path), [], os.stat(path)) is not None for path in paths)
    helper.write_text("x = 22\n")
    assert all(Cache(cache.folder).lookup(str(path), [], os.stat(path)) is None for path in paths)


def test_code_no_entry_point_of_a_training_project_reaches_gives_no_finding(tmp_path, run):
    """ddplint/model/reach.py: in a project whose scripts start processes, a helper whose only
    caller is commented out and a class nothing names give nothing; a decorated function (a
    registry may call it) and the used helper are flagged, through the CLI and flake8 alike.
    Without the project (nothing is known of callers) every load is flagged."""
    root = _copy("unreached_code", tmp_path)
    run.cwd = root
    expected = [("utils/ckpt.py", 13, 27, "DDP004"), ("utils/ckpt.py", 22, 27, "DDP004")]
    cli = [found[:4] for found in _findings(run("check", "--no-cache", ".").stdout)]
    assert cli == expected
    plugin = [found[:4] for found in _findings(run("--select", "DDP", ".", tool="flake8").stdout)]
    assert plugin == expected
    alone = [found[:4] for found in _findings(run("check", "--no-cache", "--no-project", ".").stdout)]
    assert [line for _, line, _, _ in alone] == [13, 17, 22, 27]


def test_a_trainer_subclass_save_runs_on_every_rank_only_where_the_project_calls_it_there(tmp_path, run):
    """The Hugging Face Trainer calls `_save` from save_model on process 0 alone; a project that
    calls `trainer._save(...)` itself outside any rank test (LLaVA's safe_save_model_for_hf_trainer)
    makes every rank run the override's torch.save."""
    trainer = (
        "import os\nimport torch\nfrom transformers import Trainer\n\n\nclass AdapterTrainer(Trainer):\n"
        "    def _save(self, output_dir=None, state_dict=None):\n"
        "        torch.save(self.model.state_dict(), os.path.join(output_dir, 'adapter.bin'))\n"
    )
    train = (
        "import torch.distributed as dist\nfrom adapter_trainer import AdapterTrainer\n\n\n"
        "def save_for_hf(trainer, output_dir):\n    dist.barrier()\n{call}\n\n\n"
        "def main(model, args):\n    trainer = AdapterTrainer(model=model, args=args)\n    trainer.train()\n"
        "    save_for_hf(trainer, args.output_dir)\n\n\nif __name__ == '__main__':\n    main(None, None)\n"
    )
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node 8 train.py\n")
    (tmp_path / "adapter_trainer.py").write_text(trainer)
    (tmp_path / "train.py").write_text(train.format(call="    trainer._save(output_dir)"))
    found = _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout)
    assert [(f[0], f[1], f[3]) for f in found] == [("adapter_trainer.py", 8, "DDP014")]
    (tmp_path / "train.py").write_text(train.format(call="    if trainer.args.should_save:\n        trainer._save(output_dir)"))
    assert _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout) == []
    (tmp_path / "train.py").write_text(train.format(call="    pass"))
    assert _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout) == []


def test_a_seed_under_a_test_of_an_option_no_launch_command_passes_is_never_made(tmp_path, run):
    """DDP027 and the Hugging Face examples' idiom: train.py seeds only under `if args.seed is
    not None:`, --seed defaults to None and run.sh passes no --seed, so no run seeds and the
    ranks' noise differs: nothing to say. It is flagged when the launch command passes --seed,
    or when the default is a number."""
    train = (
        "import argparse\nimport torch\nfrom accelerate import Accelerator\nfrom accelerate.utils import set_seed\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--seed', type=int, default={default})\n    args = parser.parse_args()\n"
        "    accelerator = Accelerator()\n    if args.seed is not None:\n        set_seed(args.seed)\n"
        "    for latents in loader:\n        noise = torch.randn_like(latents)\n"
        "        accelerator.backward((model(latents + noise) - noise).pow(2).mean())\n\n\n"
        "if __name__ == '__main__':\n    main()\n"
    )
    launch = "accelerate launch --num_processes=8 train.py --lr 1e-4{extra}\n"
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    cases = (("None", "", []), ("None", " --seed 42", ["DDP027"]), ("1234", "", ["DDP027"]))
    for default, extra, expected in cases:
        (tmp_path / "train.py").write_text(train.format(default=default))
        (tmp_path / "run.sh").write_text(launch.format(extra=extra))
        found = [f[3] for f in _findings(run("check", "--no-cache", "--select", "DDP027", ".").stdout)]
        assert found == expected, (default, extra)


def test_a_launch_line_names_a_script_under_a_folder_with_a_plus(tmp_path):
    """DENO4pytorch launches `Demo/Turbulence_3d+t/run_train_DDP.py` by that path: the `+` is
    part of the folder's name, not the start of another path."""
    folder = tmp_path / "Demo" / "Turbulence_3d+t"
    folder.mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("")
    (folder / "run_train_DDP.py").write_text("import torch.distributed as dist\n")
    (tmp_path / "run.sh").write_text("python -m torch.distributed.launch --nproc_per_node=2 Demo/Turbulence_3d+t/run_train_DDP.py\n")
    built = project.build(str(tmp_path))
    module = next(name for name, path in built.relpaths.items() if path.endswith("run_train_DDP.py"))
    assert [command.place.path for command in built.module_view(module).launches(own=True)] == ["run.sh"]
    (tmp_path / "run.sh").write_text("python -m torch.distributed.launch --nproc_per_node=2 Demo/Turbulence_3d/run_train_DDP.py\n")
    assert project.build(str(tmp_path)).module_view(module).launches(own=True) == []


def test_workers_of_the_default_start_method_fork_where_the_project_names_an_older_python(tmp_path, run):
    """A collate_fn nested in main() goes to the DataLoader's workers by pickle only under spawn
    or forkserver (Linux's default from Python 3.14). A project that names only older Pythons for
    its runs (MoE-RBench's `conda create -n moe python=3.9`) forks them: DDP016 says nothing,
    unless the file sets a start method, the loader names a spawn context, or mp.spawn ships it."""
    train = (
        "import torch\nimport torch.distributed as dist\nfrom torch.utils.data import DataLoader\n{extra}\n\n"
        "def main(dataset):\n    dist.init_process_group('nccl')\n\n    def collate(batch):\n        return batch\n\n"
        "    return DataLoader(dataset, num_workers=4, collate_fn=collate{context})\n"
    )
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(train.format(extra="", context=""))
    (tmp_path / "README.md").write_text("```\nconda create -n moe python=3.9\ntorchrun --nproc_per_node 2 train.py\n```\n")
    assert project.build(str(tmp_path)).python_minors == frozenset({9})
    assert _findings(run("check", "--no-cache", "--select", "DDP016", ".").stdout) == []
    # a lower bound names no Python the runs use
    (tmp_path / "README.md").write_text("conda create -n moe python=3.9 && pip install -e .  # needs Python 3.8+\n")
    assert project.build(str(tmp_path)).python_minors == frozenset({9})
    cases = (
        ("torch.multiprocessing.set_start_method('spawn')", "", "python=3.9\n"),
        ("", ", multiprocessing_context='spawn'", "python=3.9\n"),
        ("", "", "Use Python 3.14.\n"),
        ("", "", "Install the requirements (Python 3.8+).\n"),
    )
    for extra, context, readme in cases:
        (tmp_path / "train.py").write_text(train.format(extra=extra, context=context))
        (tmp_path / "README.md").write_text(readme)
        assert [f[3] for f in _findings(run("check", "--no-cache", "--select", "DDP016", ".").stdout)] == ["DDP016"], (extra, context, readme)


def test_a_pinned_torch_older_than_2_9_names_a_python_before_3_14(tmp_path, run):
    """IDvs.MoRec's README pins `torch == 1.7.1+cu110` and names no Python: no release before
    torch 2.9 ships wheels for Python 3.14, so its runs are on 3.13 at most, where Linux forks
    the DataLoader's workers and a nested worker_init_fn is never pickled (DDP016 silent). A
    lower bound (`torch>=1.7`) or a 2.9 pin says nothing of the kind."""
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(
        "import torch\nimport torch.distributed as dist\nfrom torch.utils.data import DataLoader\n\n"
        "def main(dataset):\n    dist.init_process_group('nccl')\n\n    def seed_worker(worker_id):\n        pass\n\n"
        "    return DataLoader(dataset, num_workers=4, worker_init_fn=seed_worker)\n\n\n"
        "if __name__ == '__main__':\n    main(torch.arange(8))\n"
    )
    for pin, minors, flagged in (
        ("- torch == 1.7.1+cu110\n", {13}, False),
        ("conda install pytorch=1.12 -c pytorch\n", {13}, False),
        ("pip install torch>=1.7\n", set(), True),
        ("pip install torch==2.9.0\n", set(), True),
    ):
        (tmp_path / "README.md").write_text(pin + "torchrun --nproc_per_node 2 train.py\n")
        assert project.build(str(tmp_path)).python_minors == frozenset(minors), pin
        found = [f[3] for f in _findings(run("check", "--no-cache", "--select", "DDP016", ".").stdout)]
        assert found == (["DDP016"] if flagged else []), pin
    (tmp_path / "README.md").unlink()
    (tmp_path / "requirements.txt").write_text("torch==2.0.1\n")
    assert project.build(str(tmp_path)).python_minors == frozenset({13})


def test_a_plain_run_written_over_lines_is_one_documented_run(tmp_path):
    """UAlign's readme runs `python ddp_pretrain.py --dim $dim \\` and gives `--accu` lines
    below: the command is every line the backslashes join, and it is one of the script's runs,
    so the options it passes are no longer left at their defaults."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text("import argparse\n")
    (tmp_path / "README.md").write_text("```\npython train.py --dim 8 \\\n    --accu 4 \\\n    --lr 1e-3\n\nnot --seed\n```\n")
    built = project.build(str(tmp_path))
    assert [command.command.split() for command in built.plain_runs] == [
        ["python", "train.py", "--dim", "8", "\\", "--accu", "4", "\\", "--lr", "1e-3"]
    ]
    assert [command.place.line for command in built.module_view("train").runs()] == [2]
    assert not built.describes_option("--accu", "1", "")  # passed by a run, not described
    # a run of a script the project does not hold (renamed since) runs nothing: its options are word to the user
    (tmp_path / "README.md").write_text("```\npython train_old.py --dim 8 \\\n    --accu 4\n```\n")
    assert project.build(str(tmp_path)).describes_option("--accu", "1", "")


def test_a_seeding_helper_called_through_its_module_is_a_seed(tmp_path, run):
    """DINO's idiom: `import utils` ... `utils.fix_random_seeds(args.seed)` seeds torch alike on
    every rank of the torchrun launch, as `from utils import fix_random_seeds` does; a helper of
    that module that seeds nothing is no seed."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(
        "import torch\n\n\ndef fix_random_seeds(seed=31):\n    torch.manual_seed(seed)\n\n\n"
        "def log(text):\n    print(text)\n"
    )
    main = (
        "import torch\nimport torch.distributed as dist\nimport utils\n\n\n"
        "def train(seed, model, loader, optimizer):\n    dist.init_process_group('nccl')\n    utils.{call}(0)\n"
        "    for x in loader:\n        model(x + torch.randint(0, 9, x.shape)).sum().backward()\n        optimizer.step()\n\n\n"
        "if __name__ == '__main__':\n    train(0, None, [], None)\n"
    )
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node 8 main.py\n")
    run.cwd = tmp_path
    for call, expected in (("fix_random_seeds", [("main.py", 8, "DDP027")]), ("log", [])):
        (tmp_path / "main.py").write_text(main.format(call=call))
        found = [(f[0], f[1], f[3]) for f in _findings(run("check", "--no-cache", "--select", "DDP027", ".").stdout)]
        assert found == expected, call


def _seed_findings(run) -> list[tuple[str, int, str]]:
    """(path, line, code) of the DDP027 findings in the run's folder, the same from the CLI and flake8."""
    found = [(f[0], f[1], f[3]) for f in _findings(run("check", "--no-cache", "--select", "DDP027", ".").stdout)]
    assert [(f[0], f[1], f[3]) for f in _findings(run("--select", "DDP027", ".", tool="flake8").stdout)] == found
    return found


def test_a_shared_seed_reaches_the_augmentations_of_dataloader_workers(tmp_path, run):
    """DINO's and iDisc's shape across modules: `utils.fix_random_seeds(args.seed)` seeds torch
    alike on every torchrun rank, and the training loop reads a DataLoader with worker processes
    over a Dataset of datasets.py whose __getitem__ draws its crop from numpy: every pass draws
    the workers' base seed from torch's generator, so worker k of every rank seeds numpy alike
    and crops its different images the same way. A worker_init_fn, or a seed of numpy's
    generator alone (torch's stays unseeded, each rank's own), leaves the chain unshown. The CLI
    and flake8 agree."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(
        "import numpy as np\nimport torch\n\n\ndef fix_random_seeds(seed=31):\n    torch.manual_seed(seed)\n"
        "    np.random.seed(seed)\n\n\ndef seed_numpy(seed):\n    np.random.seed(seed)\n\n\n"
        "def seed_worker(worker_id):\n    np.random.seed(torch.initial_seed() % 2**32)\n"
    )
    (tmp_path / "datasets.py").write_text(
        "import numpy as np\nfrom torch.utils.data import Dataset\n\n\nclass Crops(Dataset):\n"
        "    def __init__(self, images):\n        self.images = images\n\n"
        "    def __len__(self):\n        return len(self.images)\n\n"
        "    def __getitem__(self, index):\n        top = np.random.randint(0, 32)\n"
        "        return self.images[index][top:top + 224]\n"
    )
    main = (
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n\n"
        "import utils\nfrom datasets import Crops\n\n\n"
        "def train(args, images, model, optimizer):\n    dist.init_process_group('nccl')\n    utils.{seed}(args.seed)\n"
        "    dataset = Crops(images)\n"
        "    loader = DataLoader(dataset, sampler=DistributedSampler(dataset), num_workers=8{init})\n"
        "    for epoch in range(args.epochs):\n        for batch in loader:\n"
        "            model(batch).sum().backward()\n            optimizer.step()\n\n\n"
        "if __name__ == '__main__':\n    train(None, [], None, None)\n"
    )
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node 8 main.py\n")
    run.cwd = tmp_path
    for seed, init, expected in (("fix_random_seeds", "", [("main.py", 10, "DDP027")]),
                                 ("fix_random_seeds", ", worker_init_fn=utils.seed_worker", []),
                                 ("seed_numpy", "", [])):
        (tmp_path / "main.py").write_text(main.format(seed=seed, init=init))
        assert _seed_findings(run) == expected, (seed, init)


def test_a_shared_seed_reaches_the_workers_of_a_lightning_modules_train_dataloader(tmp_path, run):
    """BEVDepth's shape: run_cli() of cli.py seeds every rank with `pl.seed_everything(args.seed)`
    (workers=False: Lightning adds no worker_init_fn), builds the LightningModule class it is
    handed (its default, or the one each experiment passes) and has a DDP Trainer fit it. The
    Trainer's loop iterates what the module's train_dataloader() builds: a DataLoader with 4
    workers over a Dataset whose __getitem__ draws its crop from numpy, so every pass draws the
    workers' base seed from torch's generator seeded alike, and worker k of every rank crops
    alike. Silent with `workers=True` (Lightning's worker_init_fn adds the rank), or with a class
    that draws nothing passed by one experiment; without workers, each rank's own process draws
    from the numpy generator seed_everything seeded alike."""
    _write_project(tmp_path, {
        "data.py": (
            "import numpy as np\nfrom torch.utils.data import Dataset\n\n\nclass Crops(Dataset):\n"
            "    def __getitem__(self, index):\n        top = np.random.randint(0, 32)\n"
            "        return self.images[index][top:top + 224]\n\n\n"
            "class Plain(Dataset):\n    def __getitem__(self, index):\n        return self.images[index]\n"
        ),
        "cli.py": (
            "from argparse import ArgumentParser\n\nimport pytorch_lightning as pl\nimport torch\n\n"
            "from data import Crops\n\n\n"
            "class Detector(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
            "        return self.net(batch).mean()\n\n"
            "    def train_dataloader(self):\n        dataset = Crops()\n"
            "        loader = torch.utils.data.DataLoader(dataset, batch_size=4, num_workers={workers})\n"
            "        return loader\n\n\n"
            "def run_cli(model_class=Detector, exp_name='base'):\n    parser = ArgumentParser()\n"
            "    parser.add_argument('--seed', type=int, default=0)\n    args = parser.parse_args()\n"
            "    pl.seed_everything(args.seed{keyword})\n    model = model_class(**vars(args))\n"
            "    trainer = pl.Trainer(accelerator='gpu', devices=8, strategy='ddp')\n    trainer.fit(model)\n"
        ),
        "model.py": (
            "import torch\n\nfrom cli import Detector\nfrom data import Plain\n\n\n"
            "class Fused(Detector):\n    pass\n\n\n"
            "class Still(Detector):\n    def train_dataloader(self):\n"
            "        return torch.utils.data.DataLoader(Plain(), batch_size=4, num_workers=4)\n"
        ),
        "exp.py": "from cli import run_cli\nfrom model import {passed}\n\nif __name__ == '__main__':\n    run_cli({passed}, 'exp')\n",
    })
    run.cwd = tmp_path
    cli, exp = tmp_path / "cli.py", tmp_path / "exp.py"
    texts = {path: path.read_text() for path in (cli, exp)}
    for workers, keyword, passed, expected in (("4", "", "Fused", [("cli.py", 23, "DDP027")]),
                                               ("4", ", workers=True", "Fused", []),
                                               ("4", "", "Still", []),
                                               ("0", "", "Fused", [("cli.py", 23, "DDP027")])):
        cli.write_text(texts[cli].replace("{workers}", workers).replace("{keyword}", keyword))
        exp.write_text(texts[exp].replace("{passed}", passed))
        assert _seed_findings(run) == expected, (workers, keyword, passed)


def test_a_shared_seed_reaches_a_dataset_a_project_function_builds(tmp_path, run):
    """MeshTransformer's shape: main() seeds torch alike on every torchrun rank and iterates the
    DataLoader (16 workers) that make_loader() of data.py builds over `build_dataset(args)`, a
    project function whose every return makes a Dataset whose __getitem__ draws its crop from
    Python's random: worker k of every rank seeds random alike. When one of its returns makes
    a Dataset that draws nothing, or returns what the model cannot follow, it is unknown."""
    (tmp_path / "pyproject.toml").write_text("")
    data = (
        "import random\nfrom torch.utils.data import DataLoader, Dataset, DistributedSampler\n\n\n"
        "class Clips(Dataset):\n    def __getitem__(self, index):\n        start = random.randint(0, 100)\n"
        "        return self.clips[index][start:start + 200]\n\n\n"
        "class Frames(Dataset):\n    def __getitem__(self, index):\n        return self.clips[index]\n\n\n"
        "def build_dataset(args):\n    if args.frames:\n        return {other}\n    dataset = Clips()\n    return dataset\n\n\n"
        "def make_loader(args):\n    dataset = build_dataset(args)\n"
        "    return DataLoader(dataset, sampler=DistributedSampler(dataset), num_workers=16)\n"
    )
    (tmp_path / "main.py").write_text(
        "import torch\nimport torch.distributed as dist\nfrom data import make_loader\n\n\n"
        "def main(args, model, optimizer):\n    dist.init_process_group('nccl')\n    torch.manual_seed(1234)\n"
        "    loader = make_loader(args)\n    for epoch in range(10):\n        for clips in loader:\n"
        "            model(clips).mean().backward()\n            optimizer.step()\n\n\n"
        "if __name__ == '__main__':\n    main(None, None, None)\n"
    )
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node 8 main.py\n")
    run.cwd = tmp_path
    for other, expected in (("Clips(args)", [("main.py", 8, "DDP027")]), ("Frames()", []), ("load(args)", [])):
        (tmp_path / "data.py").write_text(data.format(other=other))
        assert _seed_findings(run) == expected, other


def test_a_shared_seed_reaches_the_workers_of_a_loader_handed_to_another_function(tmp_path, run):
    """DINO's shape: train() seeds torch alike on every rank (`utils.fix_random_seeds(args.seed)`),
    builds the DataLoader (workers from an option whose default is 10) over a Dataset whose
    __getitem__ draws its crop from Python's random, and hands it to train_one_epoch(), whose
    loop iterates it through a project generator (`metric_logger.log_every(data_loader, 10)`):
    each pass draws the workers' base seed from torch's generator, so worker k of every rank
    seeds random alike and crops its different images the same way. Also when a function of
    another module builds and returns the loader and the seeding function's own loop iterates
    it. Silent with a worker_init_fn, a seed of numpy alone (torch's stays each rank's own), a
    Dataset that draws nothing, or a callee that seeds again with the rank before its loop."""
    _write_project(tmp_path, {
        "run.sh": "python -m torch.distributed.launch --nproc_per_node=8 main.py\n",
        "utils.py": (
            "import numpy as np\nimport torch\nimport torch.distributed as dist\n\n\n"
            "def fix_random_seeds(seed=31):\n    torch.manual_seed(seed)\n    np.random.seed(seed)\n\n\n"
            "def seed_numpy(seed):\n    np.random.seed(seed)\n\n\n"
            "def seed_per_rank(seed):\n    torch.manual_seed(seed + dist.get_rank())\n\n\n"
            "def keep(seed):\n    return seed\n\n\n"
            "def seed_worker(worker_id):\n    np.random.seed(torch.initial_seed() % 2**32)\n\n\n"
            "class MetricLogger:\n    def log_every(self, iterable, print_freq):\n        for obj in iterable:\n"
            "            yield obj\n"
        ),
        "data.py": (
            "import random\n\nimport torch\nfrom torch.utils.data import Dataset\n\n\nclass Crops(Dataset):\n"
            "    def __getitem__(self, index):\n        top = random.randint(0, 32)\n"
            "        return self.images[index][top:top + 224]\n\n\nclass Plain(Dataset):\n"
            "    def __getitem__(self, index):\n        return self.images[index]\n\n\n"
            "def make_loader(dataset, workers):\n    sampler = torch.utils.data.DistributedSampler(dataset)\n"
            "    return torch.utils.data.DataLoader(dataset, sampler=sampler, num_workers=4)\n"
        ),
    })
    main = (
        "import argparse\n\nimport torch\nimport torch.distributed as dist\n\nimport utils\nfrom data import Crops, Plain, make_loader\n\n"
        "parser = argparse.ArgumentParser('DINO')\nparser.add_argument('--seed', default=0, type=int)\n"
        "parser.add_argument('--num_workers', default=10, type=int)\n\n\n"
        "def train(args, model, optimizer):\n    dist.init_process_group('nccl')\n    utils.{seed}(args.seed)\n"
        "    dataset = {dataset}()\n    sampler = torch.utils.data.DistributedSampler(dataset, shuffle=True)\n"
        "    data_loader = torch.utils.data.DataLoader(dataset, sampler=sampler, batch_size=64, num_workers=args.num_workers{init})\n"
        "    utils.{between}(args.seed)\n    for epoch in range(100):\n        data_loader.sampler.set_epoch(epoch)\n"
        "        train_one_epoch(model, data_loader, optimizer, args)\n\n\n"
        "def train_one_epoch(model, data_loader, optimizer, args):\n    utils.{again}(args.seed)\n"
        "    metric_logger = utils.MetricLogger()\n"
        "    for it, images in enumerate(metric_logger.log_every(data_loader, 10)):\n"
        "        loss = model(images).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n\n\n"
        "def finetune(args, model, optimizer):\n    dist.init_process_group('nccl')\n    utils.{seed}(args.seed)\n"
        "    loader = make_loader({dataset}(), 4)\n    for images in loader:\n        model(images).mean().backward()\n\n\n"
        "if __name__ == '__main__':\n    args = parser.parse_args()\n    train(args, None, None)\n    finetune(args, None, None)\n"
    )
    run.cwd = tmp_path
    for seed, dataset, init, again, between, expected in (
        ("fix_random_seeds", "Crops", "", "keep", "keep", [("main.py", 16, "DDP027"), ("main.py", 38, "DDP027")]),
        ("fix_random_seeds", "Crops", ", worker_init_fn=utils.seed_worker", "keep", "keep", [("main.py", 38, "DDP027")]),
        ("fix_random_seeds", "Crops", "", "seed_per_rank", "keep", [("main.py", 38, "DDP027")]),
        ("fix_random_seeds", "Crops", "", "keep", "seed_per_rank", [("main.py", 38, "DDP027")]),  # seeded again per rank
        ("seed_numpy", "Crops", "", "keep", "keep", []),
        ("fix_random_seeds", "Plain", "", "keep", "keep", []),
    ):
        (tmp_path / "main.py").write_text(main.format(seed=seed, dataset=dataset, init=init, again=again, between=between))
        assert _seed_findings(run) == expected, (seed, dataset, init, again, between)


def test_a_worker_init_fn_seeding_alike_on_every_rank_reaches_the_dataset_draws(tmp_path, run):
    """HybrIK's shape: the train DataLoader (over a DistributedSampler, with workers) is given a
    worker_init_fn of the module that seeds numpy with an option plus the worker id and no rank,
    and its Dataset's __getitem__ draws from numpy: worker k of every rank starts from the same
    numpy stream and draws the same augmentations for its different images, on every step of the
    training loop the loader is handed to. Reported at the seed in the worker_init_fn. Silent
    with the rank in the seed, a seed from torch's per-worker seed or the state the worker
    inherits, no workers (a worker_init_fn
    runs only in workers), a Dataset that draws nothing, or a generator the Dataset does not draw."""
    _write_project(tmp_path, {"run.sh": "torchrun --nproc_per_node 8 train.py --seed 123\n"})
    main = (
        "import argparse\nimport random\n\nimport numpy as np\nimport torch\nimport torch.distributed as dist\n"
        "from torch.utils.data import DataLoader, Dataset, DistributedSampler\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--seed', default=0, type=int)\n"
        "parser.add_argument('--rank', default=0, type=int)\nopt = parser.parse_args()\n\n\n"
        "def init_fn(worker_id):\n    {generator}.seed({value})\n\n\n"
        "class Crops(Dataset):\n    def __getitem__(self, index):\n        {draw}\n"
        "        return self.images[index] * scale\n\n\n"
        "def train(loader, model, optimizer):\n    for images in loader:\n        model(images).mean().backward()\n"
        "        optimizer.step()\n\n\n"
        "def main(model, optimizer):\n    dist.init_process_group('nccl')\n    dataset = Crops()\n"
        "    sampler = DistributedSampler(dataset)\n"
        "    loader = DataLoader(dataset, sampler=sampler, num_workers={workers}, worker_init_fn=init_fn)\n"
        "    for epoch in range(10):\n        sampler.set_epoch(epoch)\n        train(loader, model, optimizer)\n\n\n"
        "if __name__ == '__main__':\n    main(None, None)\n"
    )
    run.cwd = tmp_path
    draw = "scale = np.random.rand()"
    for generator, value, draw_, workers, expected in (
        ("np.random", "opt.seed + worker_id", draw, "4", [("train.py", 16, "DDP027")]),
        ("np.random", "opt.seed", draw, "4", [("train.py", 16, "DDP027")]),
        ("random", "opt.seed + worker_id", "scale = random.random()", "4", [("train.py", 16, "DDP027")]),
        ("np.random", "opt.seed + worker_id + 100 * opt.rank", draw, "4", []),
        ("np.random", "torch.initial_seed() % 2**32", draw, "4", []),
        ("np.random", "np.random.get_state()[1][0] + worker_id", draw, "4", []),
        ("np.random", "opt.seed + worker_id", draw, "0", []),
        ("np.random", "opt.seed + worker_id", "scale = 1.0", "4", []),
        ("random", "opt.seed + worker_id", draw, "4", []),
    ):
        (tmp_path / "train.py").write_text(main.format(generator=generator, value=value, draw=draw_, workers=workers))
        assert _seed_findings(run) == expected, (generator, value, draw_, workers)


def test_a_seeding_helper_that_adds_the_rank_to_its_parameter_seeds_per_rank(tmp_path, run):
    """MeMOTR's utils.set_seed: `seed = seed + distributed_rank()` before it seeds torch, so a
    call with a shared value seeds each rank its own way; a helper that only converts its
    parameter (`seed = int(seed)`) still seeds alike."""
    _write_project(tmp_path, {"run.sh": "torchrun --nproc_per_node 8 main.py\n"})
    utils = (
        "import torch\nimport torch.distributed as dist\n\n\ndef rank():\n    return dist.get_rank()\n\n\n"
        "def set_seed(seed):\n    seed = {rebind}\n    torch.manual_seed(seed)\n"
    )
    main = (
        "import torch\nimport torch.distributed as dist\nfrom utils import set_seed\n\n\n"
        "def train(model, loader, optimizer):\n    dist.init_process_group('nccl')\n    set_seed(42)\n"
        "    for x in loader:\n        model(x + torch.randn_like(x)).sum().backward()\n        optimizer.step()\n\n\n"
        "if __name__ == '__main__':\n    train(None, [], None)\n"
    )
    (tmp_path / "main.py").write_text(main)
    run.cwd = tmp_path
    for rebind, expected in (("seed + rank()", []), ("seed % 2**32", [("main.py", 8, "DDP027")])):
        (tmp_path / "utils.py").write_text(utils.format(rebind=rebind))
        assert _seed_findings(run) == expected, rebind


def test_a_shared_seed_drawn_only_under_a_periodic_branch_is_no_training_draw(tmp_path, run):
    """glue-factory's train.py: the epoch's shared seed reaches a numpy draw only through the
    validation the training loop runs every `eval_every_iter` steps (`if it % n == 0:`): the
    same plot ids on every rank, not the data of each step. A draw of each step still fires."""
    _write_project(tmp_path, {"run.sh": "torchrun --nproc_per_node 8 main.py\n"})
    main = (
        "import numpy as np\nimport torch\nimport torch.distributed as dist\n\n\n"
        "def evaluate(model, n):\n    ids = np.random.choice(10, n)\n    return ids\n\n\n"
        "def train(args, model, loader, optimizer):\n    dist.init_process_group('nccl')\n"
        "    np.random.seed(args.seed)\n    for epoch in range(10):\n        for it, x in enumerate(loader):\n"
        "            model(x).sum().backward()\n            optimizer.step()\n{call}\n\n\n"
        "if __name__ == '__main__':\n    train(None, None, [], None)\n"
    )
    run.cwd = tmp_path
    for call, expected in (("            if it % args.eval_every == 0:\n                evaluate(model, 4)", []),
                           ("            evaluate(model, 4)", [("main.py", 13, "DDP027")])):
        (tmp_path / "main.py").write_text(main.format(call=call))
        assert _seed_findings(run) == expected, call


def test_a_shared_seed_reaches_the_torchvision_transforms_an_image_folder_applies(tmp_path, run):
    """DINO's main_dino.py: fix_random_seeds(args.seed) seeds torch alike on every rank, the
    Dataset is torchvision's ImageFolder with `transform=DataAugmentationDINO(...)`, a project
    class whose __call__ applies `self.global_transfo1`, a torchvision Compose built in
    __init__ holding RandomResizedCrop (through a local Compose too), and the loader (workers
    from an option) is handed to train_one_epoch. torchvision's random transforms draw from
    torch's generator, which worker k of every rank seeds alike: the same crops on every rank.
    Also for a Compose given directly. Silent for transforms that draw nothing (Resize,
    ToTensor) or with a worker_init_fn."""
    _write_project(tmp_path, {
        "run.sh": "python -m torch.distributed.launch --nproc_per_node=8 main_dino.py\n",
        "utils.py": (
            "import numpy as np\nimport torch\n\n\ndef fix_random_seeds(seed=31):\n    torch.manual_seed(seed)\n"
            "    np.random.seed(seed)\n\n\ndef seed_worker(worker_id):\n    np.random.seed(torch.initial_seed() % 2**32)\n"
        ),
    })
    main = (
        "import argparse\n\nimport torch\nimport torch.distributed as dist\nfrom torchvision import datasets, transforms\n\n"
        "import utils\n\nparser = argparse.ArgumentParser('DINO')\nparser.add_argument('--seed', default=0, type=int)\n"
        "parser.add_argument('--num_workers', default=10, type=int)\n\n\n"
        "class DataAugmentationDINO(object):\n    def __init__(self, scale):\n"
        "        flip = transforms.Compose([transforms.{flip}(p=0.5)])\n"
        "        self.global_transfo1 = transforms.Compose([transforms.{crop}(224), flip, transforms.ToTensor()])\n\n"
        "    def __call__(self, image):\n        return [self.global_transfo1(image)]\n\n\n"
        "def train_dino(args, model, optimizer):\n    dist.init_process_group('nccl')\n    utils.fix_random_seeds(args.seed)\n"
        "    transform = {transform}\n    dataset = datasets.ImageFolder(args.data_path, transform=transform)\n"
        "    sampler = torch.utils.data.DistributedSampler(dataset, shuffle=True)\n"
        "    data_loader = torch.utils.data.DataLoader(dataset, sampler=sampler, num_workers=args.num_workers{init})\n"
        "    for epoch in range(100):\n        train_one_epoch(model, data_loader, optimizer)\n\n\n"
        "def train_one_epoch(model, data_loader, optimizer):\n    for it, (images, _) in enumerate(data_loader):\n"
        "        loss = model(images).mean()\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n\n\n"
        "if __name__ == '__main__':\n    train_dino(parser.parse_args(), None, None)\n"
    )
    run.cwd = tmp_path
    dino, plain = "DataAugmentationDINO((0.4, 1.0))", "transforms.Compose([transforms.{crop}(224), transforms.ToTensor()])"
    for crop, flip, transform, init, expected in (
        ("RandomResizedCrop", "RandomHorizontalFlip", dino, "", [("main_dino.py", 25, "DDP027")]),
        ("Resize", "RandomHorizontalFlip", dino, "", [("main_dino.py", 25, "DDP027")]),  # the flip, through `flip`
        ("RandomResizedCrop", "RandomHorizontalFlip", plain, "", [("main_dino.py", 25, "DDP027")]),
        ("Resize", "CenterCrop", dino, "", []),
        ("Resize", "RandomHorizontalFlip", plain, "", []),
        ("RandomResizedCrop", "RandomHorizontalFlip", dino, ", worker_init_fn=utils.seed_worker", []),
    ):
        text = main.format(flip=flip, crop=crop, transform=transform.format(crop=crop), init=init)
        (tmp_path / "main_dino.py").write_text(text)
        assert _seed_findings(run) == expected, (crop, flip, transform, init)


def test_a_seeding_helper_of_a_namespace_package_is_a_seed(tmp_path, run):
    """3D-Speaker's layout: `speakerlab/` has no `__init__.py` (a namespace package), the script
    `speakerlab/bin/train.py` imports `from speakerlab.utils.utils import set_seed` and the
    Dataset class `from speakerlab.dataset.dataset import ...`; set_seed(args.seed) seeds
    random, numpy and torch alike on every torchrun rank and the 16 loader workers of each rank
    draw their chunk offsets with Python's random from the same base seed. The helper is found
    by its path, as any import of the package is; a helper that seeds nothing is no seed."""
    _write_project(tmp_path, {
        "run.sh": "torchrun --nproc_per_node 4 speakerlab/bin/train.py --config conf/a.yaml\n",
        "speakerlab/utils/utils.py": (
            "import random\n\nimport numpy as np\nimport torch\n\n\ndef set_seed(seed=0):\n    np.random.seed(seed)\n"
            "    random.seed(seed)\n    torch.manual_seed(seed)\n\n\ndef get_logger(path=None):\n    return print\n"
        ),
        "speakerlab/dataset/dataset.py": (
            "import random\n\nfrom torch.utils.data import Dataset\n\n\nclass WavSVDataset(Dataset):\n"
            "    def __getitem__(self, index):\n        start = random.randint(0, 100)\n"
            "        return self.wavs[index][start:start + 200]\n"
        ),
    })
    train = (
        "import argparse\n\nimport torch\nimport torch.distributed as dist\n\n"
        "from speakerlab.utils.utils import {helper}\nfrom speakerlab.dataset.dataset import WavSVDataset\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--seed', default=1234, type=int)\n\n\n"
        "def main(model, optimizer):\n    args = parser.parse_args()\n    dist.init_process_group(backend='nccl')\n"
        "    {helper}(args.seed)\n    train_dataset = WavSVDataset()\n"
        "    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)\n"
        "    train_dataloader = torch.utils.data.DataLoader(train_dataset, sampler=train_sampler, num_workers=16)\n"
        "    for epoch in range(10):\n        train_sampler.set_epoch(epoch)\n"
        "        for x, y in train_dataloader:\n            model(x).mean().backward()\n            optimizer.step()\n\n\n"
        "if __name__ == '__main__':\n    main(None, None)\n"
    )
    run.cwd = tmp_path
    for helper, expected in (("set_seed", [("speakerlab/bin/train.py", 16, "DDP027")]), ("get_logger", [])):
        (tmp_path / "speakerlab" / "bin").mkdir(parents=True, exist_ok=True)
        (tmp_path / "speakerlab" / "bin" / "train.py").write_text(train.format(helper=helper))
        assert _seed_findings(run) == expected, helper


def test_a_dataset_class_a_configuration_picks_draws_when_every_class_of_its_module_does(tmp_path, run):
    """iDisc's shape: `getattr(datasets, config["dataset"])(...)` picks a class of the package
    by a name known only at run time; when every class with a `__getitem__` that the package
    binds draws its augmentations from numpy (the abstract base has none), whichever the name
    picks, worker k of every rank draws alike after the shared torch seed. One class that
    draws nothing, or a function the package binds besides its classes, leaves it unknown."""
    run.cwd = tmp_path
    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node 4 train.py configs/nyu.json\n")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "base.py").write_text(
        "import numpy as np\nfrom torch.utils.data import Dataset\n\n\nclass Base(Dataset):\n"
        "    def augment(self, image):\n        return image[::-1] if np.random.uniform() < 0.5 else image\n"
    )
    (tmp_path / "datasets" / "kitti.py").write_text(
        "from .base import Base\n\n\nclass Kitti(Base):\n    def __getitem__(self, index):\n"
        "        return self.augment(self.images[index])\n"
    )
    package = '"""The datasets."""\nfrom .base import Base\nfrom .kitti import Kitti\nfrom .nyu import Nyu\n{more}\n'
    package += '__all__ = ["Base", "Kitti", "Nyu"]\n'
    (tmp_path / "train.py").write_text(
        "import json\nimport sys\n\nimport torch\nimport torch.distributed as dist\n"
        "from torch.utils.data import DataLoader, DistributedSampler\n\nimport datasets as custom\n\n\n"
        "def main(config, model, optimizer):\n    dist.init_process_group('nccl')\n"
        "    dataset = getattr(custom, config['dataset'])(config['root'])\n"
        "    loader = DataLoader(dataset, sampler=DistributedSampler(dataset), num_workers=8)\n"
        "    while True:\n        for batch in loader:\n            model(batch).sum().backward()\n"
        "            optimizer.step()\n\n\n"
        "if __name__ == '__main__':\n    config = json.load(open(sys.argv[1]))\n    torch.manual_seed(config['seed'])\n"
        "    main(config, None, None)\n"
    )
    for body, more, expected in (("self.augment(self.images[index])", "", [("train.py", 23, "DDP027")]),
                                 ("self.images[index]", "", []),
                                 ("self.augment(self.images[index])", "\n\ndef build(name):\n    return Nyu(name)\n", [])):
        (tmp_path / "datasets" / "nyu.py").write_text(
            "from .base import Base\n\n\nclass Nyu(Base):\n    def __getitem__(self, index):\n"
            f"        return {body}\n"
        )
        (tmp_path / "datasets" / "__init__.py").write_text(package.format(more=more))
        assert _seed_findings(run) == expected, (body, more)


def test_a_shared_seed_reaches_the_draws_of_the_models_forward(tmp_path, run):
    """A diffusion model's idiom: the training loop calls the DDP model, `loss = model(x)`, and
    nn.Module's __call__ runs the forward of the class it wraps, whose submodule (`self.noising
    = Noising()` in __init__) draws the timesteps and the noise: after one seed on every rank,
    every rank draws them alike. A seed with the rank, a forward that draws nothing, or a model
    made by a call the program cannot place leaves it unshown."""
    _write_project(tmp_path, {"run.sh": "torchrun --nproc_per_node 8 main.py\n", "nets.py": (
        "import torch\nfrom torch import nn\n\n\nclass Noising(nn.Module):\n    def forward(self, x):\n"
        "        steps = torch.randint(0, 1000, (x.shape[0],), device=x.device)\n"
        "        return x + torch.randn_like(x) * steps[:, None]\n\n\n"
        "class Steady(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
        "class Denoiser(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.noising = Noising()\n        self.net = nn.Linear(8, 8)\n\n"
        "    def forward(self, x):\n        return (self.net(self.noising(x)) - x).pow(2).mean()\n\n\n"
        "class Plain(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(8, 8)\n"
        "        self.steady = Steady()\n\n    def forward(self, x):\n        return self.net(self.steady(x)).mean()\n"
    )})
    main = (
        "import torch\nimport torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n"
        "from nets import Denoiser, Plain\n\n\ndef build():\n    return Plain()\n\n\n"
        "def train(loader):\n    dist.init_process_group('nccl')\n    torch.manual_seed({seed})\n"
        "    net = {net}\n    model = DDP(net.cuda(), device_ids=[0])\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in loader:\n"
        "        loss = model(x)\n        loss.backward()\n        optimizer.step()\n\n\n"
        "if __name__ == '__main__':\n    train([])\n"
    )
    run.cwd = tmp_path
    for seed, net, expected in (("0", "Denoiser()", [("main.py", 14, "DDP027")]),
                                ("dist.get_rank()", "Denoiser()", []),
                                ("0", "Plain()", []),
                                ("0", "build()", [])):
        (tmp_path / "main.py").write_text(main.format(seed=seed, net=net))
        assert _seed_findings(run) == expected, (seed, net)


def test_a_shared_seed_reaches_augmentation_modules_a_sequential_runs(tmp_path, run):
    """An audio trainer's idiom: the trainer's __init__ gathers augmentation modules in a list,
    `self.augment = nn.Sequential(*augments)`, and its epoch applies `self.augment(batch)` to
    each training batch; nn.Sequential's forward calls each module in turn, and one of them
    draws its permutation from torch's generator: every rank seeded alike permutes alike. A
    list that holds only modules drawing nothing leaves it unshown."""
    _write_project(tmp_path, {"run.sh": "torchrun --nproc_per_node 4 train.py\n", "augment.py": (
        "import torch\nfrom torch import nn\n\n\nclass Mix(nn.Module):\n    def forward(self, batch):\n"
        "        order = torch.argsort(torch.rand(batch.shape[0], device=batch.device))\n"
        "        return batch[order]\n\n\nclass Flip(nn.Module):\n    def forward(self, batch):\n"
        "        return batch.flip(-1)\n"
    )})
    trainer = (
        "import torch\n\nfrom augment import Flip, Mix\n\n\nclass Trainer:\n"
        "    def __init__(self, model, loader, optimizer):\n        self.model, self.loader = model, loader\n"
        "        self.optimizer = optimizer\n        augments = [Flip()]\n        augments.append({extra}())\n"
        "        self.augment = torch.nn.Sequential(*augments)\n\n"
        "    def epoch(self):\n        for batch in self.loader:\n            batch = self.augment(batch)\n"
        "            self.model(batch).mean().backward()\n            self.optimizer.step()\n\n"
        "    def train(self, epochs):\n        for _ in range(epochs):\n            self.epoch()\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\nimport torch.distributed as dist\n\nfrom trainer import Trainer\n\n\n"
        "def run(model, loader, optimizer):\n    dist.init_process_group('nccl')\n    torch.manual_seed(2036)\n"
        "    trainer = Trainer(model, loader, optimizer)\n    trainer.train(10)\n\n\n"
        "if __name__ == '__main__':\n    run(None, [], None)\n"
    )
    run.cwd = tmp_path
    for extra, expected in (("Mix", [("train.py", 9, "DDP027")]), ("Flip", [])):
        (tmp_path / "trainer.py").write_text(trainer.format(extra=extra))
        assert _seed_findings(run) == expected, extra


def test_a_module_level_seed_reaches_the_forward_of_a_model_accelerate_prepares(tmp_path, run):
    """A script's idiom: module code seeds torch with a constant, builds `model = Model()` and
    `model, optimizer = accelerator.prepare(model, optimizer)`, then calls `train()`, whose loop
    calls the module-level `model(x)`: the class's inherited forward hands the batch to a loss
    module kept on `self` that draws the noise. Every rank of `accelerate launch` draws alike."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "run.sh").write_text("accelerate launch --num_processes=4 train.py\n")
    (tmp_path / "losses.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass NoiseLoss(nn.Module):\n    def forward(self, x):\n"
        "        return (x - torch.randn_like(x)).pow(2).mean()\n"
    )
    (tmp_path / "models.py").write_text(
        "from torch import nn\n\nfrom losses import NoiseLoss\n\n\nclass Base(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.loss = NoiseLoss()\n\n"
        "    def forward(self, x):\n        return self.loss(self.body(x))\n\n\n"
        "class Small(Base):\n    def __init__(self):\n        super().__init__()\n        self.body = nn.Linear(4, 4)\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\nfrom accelerate import Accelerator\n\nfrom models import Small as Model\n\n"
        "SEED = 7\ntorch.manual_seed(SEED)\n\nmodel = Model()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "loader = []\naccelerator = Accelerator()\nmodel, optimizer = accelerator.prepare(model, optimizer)\n\n\n"
        "def train():\n    for x in loader:\n        loss = model(x)\n        accelerator.backward(loss)\n"
        "        optimizer.step()\n\n\nif __name__ == '__main__':\n    train()\n"
    )
    run.cwd = tmp_path
    assert _seed_findings(run) == [("train.py", 7, "DDP027")]


def test_ranks_spawned_through_another_modules_helper_are_one_node(tmp_path, run):
    """encodec-pytorch's idiom: `start_dist_train(train, world_size, config)` of utils.py hands
    `train` to `mp.spawn(..., nprocs=world_size)`: every rank is on this machine, so the spawn
    index is the global rank and `init_process_group(rank=local_rank)` is right (DDP013 silent);
    a helper that only calls the function it is given starts no ranks."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(
        "import torch.multiprocessing as mp\n\n\n"
        "def start_dist_train(train_fn, world_size, config):\n    mp.spawn(train_fn, args=(world_size, config), nprocs=world_size)\n\n\n"
        "def call_once(train_fn, world_size, config):\n    train_fn(0, world_size, config)\n"
    )
    main = (
        "import torch.distributed as dist\nfrom utils import {helper}\n\n\n"
        "def train(local_rank, world_size, config):\n"
        "    dist.init_process_group('nccl', init_method='env://', rank=local_rank, world_size=world_size)\n\n\n"
        "if __name__ == '__main__':\n    {helper}(train, 4, None)\n"
    )
    run.cwd = tmp_path
    for helper, expected in (("start_dist_train", []), ("call_once", [("main.py", 6, "DDP013")])):
        (tmp_path / "main.py").write_text(main.format(helper=helper))
        found = [(f[0], f[1], f[3]) for f in _findings(run("check", "--no-cache", "--select", "DDP013", ".").stdout)]
        assert found == expected, helper


def test_a_shell_out_is_read_through_the_variable_that_holds_its_command(tmp_path):
    """`cmd = "mkdir out_%d" % rank` then `os.system(cmd)` starts no Python; a command held in a
    variable that runs Python (or one the code builds from itself, `cmd = cmd.format(...)`,
    without a written start) may start ranks; and `ROIPool(` or `ThreadPool(` starts no process.
    So for a command held in an attribute (`self.cmd = ['java', ...]`, then `Popen(self.cmd)`)."""
    script = (
        "import os\nimport torch.distributed as dist\nfrom torchvision.ops import ROIPool\n\n\n"
        "def main(rank):\n    dist.init_process_group('gloo', init_method='tcp://127.0.0.1:2', world_size=1, rank=0)\n"
        "    pool = ROIPool(7, 1.0)\n    cmd = {command}\n    os.system(cmd)\n\n\n"
        "if __name__ == '__main__':\n    main(0)\n"
    )
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "README.md").write_text("`python test.py`\n")
    for command, alone in (("'mkdir out_%d' % rank", True), ("'python eval.py %d' % rank", False), ("os.environ['CMD']", False)):
        (tmp_path / "test.py").write_text(script.format(command=command))
        assert project.build(str(tmp_path)).one_process_run("test") is alone, command
    scorer = (
        "import subprocess\nimport torch.distributed as dist\n\n\nclass Scorer:\n    def __init__(self):\n"
        "        self.cmd = {command}\n        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE)\n\n\n"
        "def main():\n    dist.init_process_group('gloo', init_method='tcp://127.0.0.1:2', world_size=1, rank=0)\n"
        "    Scorer()\n\n\nif __name__ == '__main__':\n    main()\n"
    )
    for command, alone in (("['java', '-jar', 'scorer.jar', '-']", True), ("['python', 'eval.py']", False)):
        (tmp_path / "test.py").write_text(scorer.format(command=command))
        assert project.build(str(tmp_path)).one_process_run("test") is alone, command


def test_flake8_and_the_editor_see_a_setup_py_folder_below_the_root_as_the_command_line_does(tmp_path):
    """A research repository builds its extension with `models/ops/setup.py`: run from the
    repository (a .git there), the command line lints `models/ops/` in the root's project, and so
    must flake8 and the language server; a nested project (its own pyproject.toml) stays its own,
    and where nothing marks the working folder the file's nearest marker still decides."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "models" / "ops").mkdir(parents=True)
    (repo / "models" / "ops" / "setup.py").write_text("")
    (repo / "models" / "ops" / "functions.py").write_text("")
    (repo / "vendor" / "lib").mkdir(parents=True)
    (repo / "vendor" / "lib" / "pyproject.toml").write_text("")
    (repo / "vendor" / "lib" / "x.py").write_text("")
    assert project.root_seen_from(str(repo / "models" / "ops" / "functions.py"), str(repo)) == str(repo)
    assert project.root_seen_from(str(repo / "vendor" / "lib" / "x.py"), str(repo)) == str(repo / "vendor" / "lib")
    plain = tmp_path / "home"
    (plain / "proj").mkdir(parents=True)
    (plain / "proj" / "setup.py").write_text("")
    (plain / "proj" / "train.py").write_text("")
    assert project.root_seen_from(str(plain / "proj" / "train.py"), str(plain)) == str(plain / "proj")


_LAUNCHER_SWITCHED = '''import argparse
import torch
from torch.utils.data import DataLoader, DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--no_cuda", action="store_true")
    args = parser.parse_args()
    if args.local_rank == -1 or args.no_cuda:
        device = torch.device("cuda")
    else:
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2).cuda())
    for epoch in range(3):
        torch.save(model.state_dict(), "model.bin")


if __name__ == "__main__":
    main()
'''


def test_a_script_that_joins_ranks_only_under_a_launcher_nothing_runs_it_with_is_one_process(tmp_path, run):
    """ERNIE's fine-tuning variants join a process group only where `--local_rank` is set (the
    `else:` of `if args.local_rank == -1 or args.no_cuda:`), and none of the project's launch
    commands runs them (the README runs their twins with plain `python3`): one process, no
    finding. A launcher that runs a script it does not name (`torch.distributed.launch ...
    $PY_FILE`) runs the scripts the project's shell scripts hand it by name, and only those. A
    project that shows no launch at all says nothing of how such a script is run."""
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "code").mkdir()
    for script in ("run_typing.py", "run_typing_new.py", "run_pretrain.py"):
        (tmp_path / "code" / script).write_text(_LAUNCHER_SWITCHED)
    (tmp_path / "README.md").write_text("```\npython3 code/run_typing.py --do_train\n```\n")

    def flagged() -> set[str]:
        return {f[0] for f in _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout)}

    assert flagged() == {"code/run_typing_new.py", "code/run_pretrain.py"}  # no launch shown
    (tmp_path / "pretrain.sh").write_text("torchrun --nproc_per_node 2 code/run_pretrain.py --do_train\n")
    assert flagged() == {"code/run_pretrain.py"}
    (tmp_path / "launch.sh").write_text("python3 -m torch.distributed.launch --nproc_per_node=1 --nnodes=$1 $2 --do_train\n")
    (tmp_path / "pretrain.sh").write_text("./launch.sh 8 code/run_pretrain.py\n")
    assert flagged() == {"code/run_pretrain.py"}


def test_an_epoch_count_left_at_one_repeats_no_order_and_a_template_launch_runs_every_script(tmp_path, run):
    """DDP003: `--epochs` defaults to 1 and no command passes it: one pass, no repeated order;
    a default of 3 is reported. The README's `torchrun --nproc_per_node N train_xxx.py` stands
    for every `train_*.py`: a `python train_b.py` line beside it does not make train_b.py one
    process."""
    script = (
        "import argparse\nimport torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--epochs', type=int, default={default})\n"
        "args = parser.parse_args()\n\n\ndef main(dataset, model):\n    dist.init_process_group('nccl')\n"
        "    loader = DataLoader(dataset, sampler=DistributedSampler(dataset))\n"
        "    for epoch in range(args.epochs):\n        for batch in loader:\n            model(batch).backward()\n\n\n"
        "if __name__ == '__main__':\n    main(None, None)\n"
    )
    run.cwd = tmp_path
    (tmp_path / "train_a.py").write_text(script.format(default=1))
    (tmp_path / "train_b.py").write_text(script.format(default=3))
    (tmp_path / "README.md").write_text(
        "```\ntorchrun --nproc_per_node N train_xxx.py\n# see the usage notes\n```\n\n```\npython train_b.py\n```\n"
    )
    assert not project.build(str(tmp_path)).one_process_run("train_b")
    found = _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)
    assert [(f[0], f[3]) for f in found] == [("train_b.py", "DDP003")]


def test_a_split_outside_the_folder_the_package_ships_runs_in_no_user_process(tmp_path, run):
    """DDP010: setup.py ships `src/` alone (`package_dir={"": "src"}`): a script's split in
    `tools/` that nothing runs as ranks is one process's; the same split in `src/pkg/` is the
    package's, which its users may run in their ranks."""
    split = "from torch.utils.data import random_split\n\n\ndef make(dataset):\n    return random_split(dataset, [8, 2])\n"
    run.cwd = tmp_path
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup, find_packages\nsetup(name='pkg', package_dir={'': 'src'}, packages=find_packages('src'))\n"
    )
    for folder in ("tools", "src/pkg"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "split.py").write_text(split)
    (tmp_path / "src" / "pkg" / "dist.py").write_text("import torch.distributed as dist\n\n\ndef setup():\n    dist.init_process_group('nccl')\n")
    found = _findings(run("check", "--no-cache", "--select", "DDP010", ".").stdout)
    assert [(f[0], f[3]) for f in found] == [("src/pkg/split.py", "DDP010")]


def test_a_worker_count_no_caller_of_another_module_passes_keeps_its_default_of_zero(tmp_path, run):
    """DDP016: the helper's `num_workers` parameter defaults to 0 and train.py's call leaves it
    out: no worker, nothing pickled; a call passing 4 makes the nested worker_init_fn reported."""
    (tmp_path / "data.py").write_text(
        "from torch.utils.data import DataLoader\n\n\ndef build(dataset, shuffle=False, num_workers=0):\n"
        "    def init(worker_id):\n        pass\n"
        "    return DataLoader(dataset, shuffle=shuffle, num_workers=num_workers, worker_init_fn=init)\n"
    )
    run.cwd = tmp_path
    for call, expected in (("build(dataset, shuffle=True)", []), ("build(dataset, num_workers=4)", ["DDP016"])):
        (tmp_path / "train.py").write_text(f"from data import build\n\n\ndef main(dataset):\n    return {call}\n")
        found = _findings(run("check", "--no-cache", "--select", "DDP016", ".").stdout)
        assert [f[3] for f in found] == expected, call


def test_a_function_handed_to_a_helper_the_project_lacks_runs_on_this_machine(tmp_path, run):
    """DDP013: `start_workers(train, n)` is imported from utils.py beside the script, which does
    not define it (a spawn helper whose code is not there): train's first parameter is the
    process index on this one machine, and nothing names a second node; with a node count
    read from the environment it is reported."""
    (tmp_path / "utils.py").write_text("def set_seed(seed):\n    pass\n")
    script = (
        "import os\nimport torch.distributed as dist\nfrom utils import start_workers\n\n\n"
        "def train(local_rank, world_size):\n{nodes}"
        "    dist.init_process_group('nccl', init_method='file:///tmp/rendezvous', rank=local_rank, world_size=world_size)\n\n\n"
        "if __name__ == '__main__':\n    start_workers(train, 4)\n"
    )
    run.cwd = tmp_path
    for nodes, expected in (("", []), ("    nodes = int(os.environ['NNODES'])\n", ["DDP013"])):
        (tmp_path / "train.py").write_text(script.format(nodes=nodes))
        found = _findings(run("check", "--no-cache", "--select", "DDP013", ".").stdout)
        assert [f[3] for f in found] == expected, nodes


def _write_project(root: Path, files: dict[str, str]) -> None:
    """A project at `root` (a `pyproject.toml`) holding `files`, relative path -> text, with
    their folders."""
    (root / "pyproject.toml").write_text("")
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


def _silent_then_found(run, path: Path, text: str, silent: dict, found: dict, code: str, expected: tuple) -> None:
    """`path` written as `text` filled with `silent` has no finding of `code`; filled with
    `found`, the one finding at `expected` (path, line)."""
    path.write_text(text.format(**silent))
    assert _findings(run("check", "--no-cache", "--select", code, ".").stdout) == []
    path.write_text(text.format(**found))
    reported = _findings(run("check", "--no-cache", "--select", code, ".").stdout)
    assert [(f[0], f[1], f[3]) for f in reported] == [(*expected, code)], reported


def test_a_method_called_on_a_local_object_is_judged_by_its_callers_guard(tmp_path, run):
    """utils/ckpt.py's Saver.save runs torch.save and says nothing of ranks; train.py, which
    torchrun starts, binds `saver` to None one way and to a Saver the other, and calls
    `saver.save(...)` only under `if saver and is_main():`: only rank 0 saves (the program
    model follows the call on the local object to the method). Without the rank test, DDP014."""
    _write_project(tmp_path, {"README.md": "torchrun --nproc_per_node=4 train.py\n", "utils/__init__.py": "", "utils/ckpt.py": (
        "import os\nimport torch\n\n\nclass Saver:\n    def __init__(self, out, args):\n        self.out = out\n"
        "        self.args = args\n\n    def save(self, model, epoch):\n        if self.args.distributed:\n"
        "            state = model.module.state_dict()\n        else:\n            state = model.state_dict()\n"
        "        torch.save(state, os.path.join(self.out, f'epoch_{epoch}.pt'))\n"
    ), "utils/ranks.py": (
        "import torch.distributed as dist\n\n\ndef get_rank():\n    if dist.is_available() and dist.is_initialized():\n"
        "        return dist.get_rank()\n    return 0\n\n\ndef is_main():\n    return get_rank() == 0\n"
    )})
    train = (
        "import torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from utils.ckpt import Saver\nfrom utils.ranks import is_main\n\n\ndef main(args, model):\n"
        "    dist.init_process_group('nccl')\n    model = DDP(model)\n    if args.dry_run:\n        saver = None\n"
        "    else:\n        saver = Saver(args.out, args)\n    for epoch in range(args.epochs):\n"
        "        if {test}:\n            saver.save(model, epoch)\n"
    )
    run.cwd = tmp_path
    _silent_then_found(run, tmp_path / "train.py", train, {"test": "saver and is_main()"}, {"test": "saver"}, "DDP014", ("utils/ckpt.py", 15))


def test_a_flag_every_construction_sets_from_a_rank_test_guards_the_save(tmp_path, run):
    """maskrcnn-benchmark's Checkpointer: `save` returns unless `self.save_to_disk`, which
    `__init__` sets from its parameter; the one construction, a subclass's, hands it on through
    `super(Det, self).__init__(...)`, and train.py passes a local bound once to `get_rank() ==
    0`: only rank 0 saves. The flag bound to anything else (`args.save`) guards no rank: DDP014."""
    _write_project(tmp_path, {"README.md": "python -m torch.distributed.launch --nproc_per_node=8 train.py\n", "utils/__init__.py": "", "utils/checkpoint.py": (
        "import os\nimport torch\n\n\nclass Checkpointer:\n    def __init__(self, model, save_dir='', save_to_disk=None):\n"
        "        self.model = model\n        self.save_dir = save_dir\n        self.save_to_disk = save_to_disk\n\n"
        "    def save(self, name):\n        if not self.save_to_disk:\n            return\n"
        "        torch.save(self.model.state_dict(), os.path.join(self.save_dir, f'{name}.pth'))\n\n\n"
        "class DetCheckpointer(Checkpointer):\n    def __init__(self, model, save_dir='', save_to_disk=None):\n"
        "        super(DetCheckpointer, self).__init__(model, save_dir, save_to_disk)\n"
    ), "utils/comm.py": (
        "import torch.distributed as dist\n\n\ndef get_rank():\n    if not dist.is_initialized():\n        return 0\n"
        "    return dist.get_rank()\n"
    )})
    train = (
        "import torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from utils.checkpoint import DetCheckpointer\nfrom utils.comm import get_rank\n\n\ndef main(model, args):\n"
        "    dist.init_process_group('nccl')\n    model = DDP(model)\n    save_to_disk = {flag}\n"
        "    checkpoint = DetCheckpointer(model, save_dir=args.out, save_to_disk=save_to_disk)\n"
        "    for epoch in range(args.epochs):\n        checkpoint.save(f'epoch_{{epoch}}')\n"
    )
    run.cwd = tmp_path
    _silent_then_found(
        run, tmp_path / "train.py", train, {"flag": "get_rank() == 0"}, {"flag": "args.save"}, "DDP014", ("utils/checkpoint.py", 14)
    )


def test_a_method_of_an_object_kept_on_self_saves_on_every_rank_that_an_accelerator_runs(tmp_path, run):
    """actor_critic.py's ActorCritic.save_parameters runs torch.save under no `if`; trainer.py's
    Trainer builds the Accelerator in its constructor and keeps an ActorCritic on `self`, and
    `fit` calls `self.actor_critic.save_parameters(...)` outside `is_main_process`; train.py,
    which `accelerate launch` runs, builds the Trainer and calls `fit`: every rank writes the
    file (the program model follows the call through the object `self` holds, and the ranks
    start where the constructor it calls builds the Accelerator). Under the rank-0 test only
    rank 0 saves; a branch that builds its own Trainer does not start the other's ranks."""
    _write_project(tmp_path, {"README.md": "accelerate launch --num_processes 2 train.py\n", "actor_critic.py": (
        "import torch\nfrom torch import nn\n\n\nclass ActorCritic(nn.Module):\n    def __init__(self, args):\n"
        "        super().__init__()\n        self.args = args\n\n    def save_parameters(self, name):\n"
        "        torch.save(self.state_dict(), f'{self.args.output}/{name}.pth')\n"
    )})
    trainer = (
        "from accelerate import Accelerator\nfrom actor_critic import ActorCritic\n\n\nclass Trainer:\n"
        "    def __init__(self, args):\n        self.accelerator = Accelerator()\n"
        "        self.actor_critic = ActorCritic(args)\n\n    def fit(self):\n"
        "        self.actor_critic = self.accelerator.prepare(self.actor_critic)\n"
        "        if {test}:\n            self.actor_critic.save_parameters('best')\n"
    )
    (tmp_path / "train.py").write_text(
        "import argparse\nfrom trainer import Trainer\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--output')\nargs = parser.parse_args()\ntrainer = Trainer(args)\ntrainer.fit()\n"
    )
    run.cwd = tmp_path
    (tmp_path / "trainer.py").write_text(trainer.format(test="self.accelerator.is_main_process"))
    assert _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout) == []
    (tmp_path / "train.py").write_text(
        "import argparse\nfrom actor_critic import ActorCritic\nfrom trainer import Trainer\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--output')\nparser.add_argument('--stage')\n"
        "args = parser.parse_args()\nif args.stage == 'train':\n    trainer = Trainer(args)\n    trainer.fit()\n"
        "else:\n    model = ActorCritic(args)\n    model.save_parameters('init')\n"
    )
    _silent_then_found(
        run, tmp_path / "trainer.py", trainer, {"test": "self.accelerator.is_main_process"}, {"test": "True"}, "DDP014", ("actor_critic.py", 11)
    )


def test_a_save_reached_only_from_a_script_every_documented_run_starts_as_one_process_is_silent(tmp_path, run):
    """The sixth wave's one-process entries (yolov5_rotation's train.py, scope-recommendation's
    merge stage): trainer.py's Trainer builds the Accelerator in its constructor, and its
    `export` writes the model with no rank test; train.py builds the Trainer and calls it. The
    README runs train.py only as plain `python`, so the Accelerator has one process and one
    writer, whatever pool of workers the data code starts (a Pool runs the function handed to
    it, not the script). Where the README launches it with `accelerate launch` on two
    processes, both write the file: DDP014, as before."""
    _write_project(tmp_path, {"trainer.py": (
        "from multiprocessing import Pool\n\nimport torch\nfrom accelerate import Accelerator\n\n\n"
        "def load(paths):\n    with Pool(4) as pool:\n        return pool.map(torch.load, paths)\n\n\n"
        "class Trainer:\n    def __init__(self, args):\n        self.accelerator = Accelerator()\n        self.args = args\n\n"
        "    def export(self, model):\n        torch.save(model.state_dict(), f'{self.args.output}/model.pt')\n"
    ), "train.py": (
        "import argparse\nfrom torch import nn\nfrom trainer import Trainer, load\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--output')\n\nif __name__ == '__main__':\n    args = parser.parse_args()\n    load([])\n"
        "    trainer = Trainer(args)\n    trainer.export(nn.Linear(2, 2))\n"
    )})
    run.cwd = tmp_path
    readme = "Train:\n\n    {launch} train.py --output out\n"
    _silent_then_found(
        run, tmp_path / "README.md", readme, {"launch": "python"}, {"launch": "accelerate launch --num_processes 2"}, "DDP014", ("trainer.py", 18)
    )


def test_a_save_reached_only_from_an_accelerator_script_no_launch_command_runs_is_silent(tmp_path, run):
    """mesh-gpt's main.py in CrazyCode: the script builds trainers whose constructors build an
    Accelerator and that save with no rank test; the project's launch commands run its other
    scripts, none this one, and nothing it imports starts processes. An Accelerator has several
    processes only under a launcher: one process writes the file. A project that shows no
    launch at all leaves how the script runs unknown: DDP014, as before."""
    _write_project(tmp_path, {"trainer.py": (
        "import torch\nfrom accelerate import Accelerator\n\n\nclass Trainer:\n    def __init__(self, model):\n"
        "        self.accelerator = Accelerator()\n        self.model = model\n\n"
        "    def save(self, path):\n        torch.save(self.model.state_dict(), path)\n"
    ), "main.py": "from torch import nn\nfrom trainer import Trainer\n\ntrainer = Trainer(nn.Linear(2, 2))\ntrainer.save('model.pt')\n",
        "other/pretrain.py": "import torch.distributed as dist\n\ndist.init_process_group('nccl')\n"})
    run.cwd = tmp_path
    _silent_then_found(
        run, tmp_path / "run.sh", "{command}\n", {"command": "torchrun --nproc_per_node 8 other/pretrain.py"}, {"command": "echo none"},
        "DDP014", ("trainer.py", 11)
    )


def test_a_cache_another_module_builds_in_a_rank_zero_first_block_is_written_by_rank_0_alone(tmp_path, run):
    """yolov5_rotation's datasets_rotation.py: train.py joins the ranks and calls
    create_dataloader, which builds the dataset in `with torch_distributed_zero_first(rank):`;
    the dataset's constructor calls cache_labels, whose torch.save writes the label cache, only
    where the cache file is missing or stale. Rank 0 builds first and writes it; the other ranks
    leave the barrier, find it and load it. Built outside the block, every rank finds the file
    missing on a first run and writes it: DDP014, as before."""
    _write_project(tmp_path, {"README.md": "torchrun --nproc_per_node 2 train.py\n", "utils.py": (
        "from contextlib import contextmanager\n\nimport torch.distributed as dist\n\n\n@contextmanager\n"
        "def torch_distributed_zero_first(local_rank):\n    if local_rank not in [-1, 0]:\n        dist.barrier()\n"
        "    yield\n    if local_rank == 0:\n        dist.barrier()\n"
    ), "train.py": (
        "import os\n\nimport torch.distributed as dist\nfrom data import create_dataloader\n\n\ndef main():\n"
        "    dist.init_process_group('nccl')\n    create_dataloader('labels', int(os.environ['LOCAL_RANK']))\n\n\n"
        "if __name__ == '__main__':\n    main()\n"
    )})
    data = (
        "from pathlib import Path\n\nimport torch\nfrom torch.utils.data import Dataset\nfrom utils import torch_distributed_zero_first\n\n\n"
        "class Labels(Dataset):\n    def __init__(self, path):\n        cache = Path(path).with_suffix('.cache')\n"
        "        if cache.is_file():\n            self.labels = torch.load(cache)\n        else:\n"
        "            self.labels = self.cache_labels(cache)\n\n    def cache_labels(self, cache):\n"
        "        labels = {{'hash': 0}}\n        torch.save(labels, cache)\n        return labels\n\n\n"
        "def create_dataloader(path, rank):\n    {first}\n        return Labels(path)\n"
    )
    run.cwd = tmp_path
    _silent_then_found(
        run, tmp_path / "data.py", data, {"first": "with torch_distributed_zero_first(rank):"}, {"first": "if path:"}, "DDP014", ("data.py", 18)
    )


@pytest.mark.parametrize("passed", [False, True])
def test_a_save_only_an_option_no_documented_run_passes_reaches_takes_its_default(tmp_path, run, passed):
    """An option no documented run passes takes its default: the save under `if
    args.dense_result:` (`store_true`) is not reached by the README's torchrun launch, so it is
    not reported; once the launch passes `--dense_result`, every rank of it makes the save."""
    _write_project(tmp_path, {"engine.py": (
        "import torch\n\n\ndef evaluate(args, outputs):\n    for name, output in outputs.items():\n"
        "        if args.dense_result:\n            torch.save(output, f'dense/{name}.pt')\n"
    ), "main.py": (
        "import argparse\n\nimport torch.distributed as dist\nfrom engine import evaluate\n\n\ndef main():\n"
        "    parser = argparse.ArgumentParser()\n    parser.add_argument('--output', default='out')\n"
        "    parser.add_argument('--dense_result', action='store_true')\n"
        "    args = parser.parse_args()\n    dist.init_process_group('nccl')\n    evaluate(args, {})\n"
        "\n\nif __name__ == '__main__':\n    main()\n"
    ), "README.md": "torchrun --nproc_per_node 2 main.py --output out" + (" --dense_result" if passed else "") + "\n"})
    run.cwd = tmp_path
    found = _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout)
    assert sorted((f[0], f[1], f[3]) for f in found) == ([("engine.py", 7, "DDP014")] if passed else []), found


def test_a_stage_only_plain_python_runs_choose_builds_an_accelerator_of_one_process(tmp_path, run):
    """scope-recommendation's train.py: `--train_stage SFT` builds the trainer (whose constructor
    builds an Accelerator) and trains, `--train_stage SFT_Merge` builds it and merges, saving
    with no rank test. run_SFT.sh starts the training stage with `accelerate launch` on two
    processes; run_merge.sh starts the merge with plain `python`: the only runs that take the
    merge branch are one process each. Where the launch script passes SFT_Merge, or a stage
    from a shell variable: DDP014."""
    _write_project(tmp_path, {"trainer.py": (
        "import torch\nfrom accelerate import Accelerator\n\n\nclass Trainer:\n    def __init__(self, args):\n"
        "        self.accelerator = Accelerator()\n        self.args = args\n\n    def train(self):\n        pass\n\n"
        "    def merge(self, model):\n        torch.save(model.state_dict(), f'{self.args.output}/merged.pt')\n"
    ), "train.py": (
        "import argparse\nfrom trainer import Trainer\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--output', default='out')\nparser.add_argument('--train_stage', default='SFT')\n\n"
        "if __name__ == '__main__':\n    args = parser.parse_args()\n    if args.train_stage == 'SFT':\n"
        "        trainer = Trainer(args)\n        trainer.train()\n    elif args.train_stage == 'SFT_Merge':\n"
        "        trainer = Trainer(args)\n        trainer.merge(None)\n"
    ), "run_merge.sh": "python train.py \\\n    --train_stage SFT_Merge \\\n    --output out\n"})
    run.cwd = tmp_path
    launch = "accelerate launch --num_processes 2 train.py \\\n    --train_stage {stage} \\\n    --output out\n"
    _silent_then_found(run, tmp_path / "run_SFT.sh", launch, {"stage": "SFT"}, {"stage": "SFT_Merge"}, "DDP014", ("trainer.py", 14))
    # a stage the shell fills in may be the merge: not known
    _silent_then_found(run, tmp_path / "run_SFT.sh", launch, {"stage": "SFT"}, {"stage": "$STAGE"}, "DDP014", ("trainer.py", 14))


def test_a_local_rank_option_every_documented_plain_run_passes_itself_is_no_launchers(tmp_path, run):
    """eva's generate.py: `--local_rank` is the script's own shard index; gen.sh runs one plain
    `python` process per GPU and passes it (`--local_rank $gpu_id`); no launcher starts the
    script, so no launcher's spelling is missed. A documented torchrun launch, which passes no
    option, keeps the default on every process: DDP012, as before."""
    _write_project(tmp_path, {"generate.py": (
        "import argparse\nfrom concurrent.futures import ProcessPoolExecutor\nimport torch\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--local_rank', type=int, default=0)\n    args = parser.parse_args()\n"
        "    torch.cuda.set_device(args.local_rank)\n    with ProcessPoolExecutor(2) as pool:\n"
        "        list(pool.map(print, range(4)))\n\n\nif __name__ == '__main__':\n    main()\n"
    )})
    gen = "for gpu_id in 0 1 2 3; do\n    CUDA_VISIBLE_DEVICES=$gpu_id {runner} generate.py {option}&\ndone\nwait\n"
    run.cwd = tmp_path
    passed, launched = {"runner": "python", "option": "--local_rank $gpu_id "}, {"runner": "torchrun --nproc_per_node 2", "option": ""}
    _silent_then_found(run, tmp_path / "gen.sh", gen, passed, launched, "DDP012", ("generate.py", 8))


def test_an_evaluation_split_of_known_size_that_every_documented_run_divides_is_not_padded(tmp_path, run):
    """DDP022: MNIST's test split has 10,000 images; a README that launches the script with 2 or
    4 processes per node shards it evenly, so the all-reduced accuracy counts no sample twice.
    3 processes pad it (10,000 is not a multiple of 3), and a run whose count is a variable, or a
    plain `python` run that may spawn its own, says nothing of the count."""
    script = (
        "import torch\nimport torch.distributed as dist\nfrom torchvision import datasets\n"
        "from torch.utils.data import DataLoader, DistributedSampler\n\n\n"
        "def evaluate(model):\n    dist.init_process_group('nccl')\n"
        "    test_set = datasets.MNIST('./data', train=False)\n"
        "    loader = DataLoader(test_set, sampler=DistributedSampler(test_set, shuffle=False))\n"
        "    correct = torch.zeros(1)\n    for x, y in loader:\n        correct += (model(x).argmax(1) == y).sum()\n"
        "    dist.all_reduce(correct)\n    return correct / 10000\n"
    )
    run.cwd = tmp_path
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "evaluate.py").write_text(script)
    cases = (
        ("torchrun --nproc_per_node=2 evaluate.py\ntorchrun --nnodes 2 --nproc_per_node 2 evaluate.py\n", []),
        ("torchrun --nproc_per_node=3 evaluate.py\n", ["DDP022"]),
        ("torchrun --nproc_per_node=$NGPU evaluate.py\n", ["DDP022"]),
        ("torchrun --nproc_per_node=2 evaluate.py\npython evaluate.py\n", ["DDP022"]),
    )
    for readme, expected in cases:
        (tmp_path / "README.md").write_text(readme)
        found = _findings(run("check", "--no-cache", "--select", "DDP022", ".").stdout)
        assert [f[3] for f in found] == expected, (readme, found)


def test_a_rendezvous_option_every_launch_sets_to_a_loopback_address_is_one_machine(tmp_path, run):
    """DDP013: config.py's parser class defaults `--dist_url` to a loopback address, and the
    launch scripts pass it another loopback port: every documented run meets on this machine,
    where the local rank is the global one. A launch passing a routable address is two nodes."""
    (tmp_path / ".git").write_text("")
    (tmp_path / "config.py").write_text(
        "import argparse\n\n\nclass Config(argparse.Namespace):\n    def __init__(self):\n"
        "        parser = argparse.ArgumentParser()\n"
        "        parser.add_argument('--local_rank', default=0, type=int)\n"
        "        parser.add_argument('--dist_url', default='tcp://127.0.0.1:23456', type=str)\n"
        "        super().__init__(**vars(parser.parse_args()))\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\nfrom config import Config\n\nif __name__ == '__main__':\n    config = Config()\n"
        "    torch.distributed.init_process_group('nccl', init_method=config.dist_url, rank=config.local_rank, world_size=8)\n"
    )
    run.cwd = tmp_path
    rules = {}
    for url in ("'tcp://127.0.0.1:23343'", "tcp://10.0.0.1:23343"):
        (tmp_path / "run.sh").write_text(f"python -m torch.distributed.launch --nproc_per_node=8 train.py --dist_url {url}\n")
        rules[url] = [f[3] for f in _findings(run("check", "--no-cache", "--select", "DDP013", ".").stdout)]
    assert rules == {"'tcp://127.0.0.1:23343'": [], "tcp://10.0.0.1:23343": ["DDP013"]}


def test_a_pass_whose_only_backward_is_an_attacks_input_gradient_trains_nothing(tmp_path, run):
    """DDP003: the epoch loop sets the training sampler's epoch; the validation loader is
    scored by classifier_test() in another module, whose only backward() is a PGD attack's
    (utils.py: the gradient of an input made with requires_grad=True, read as `x.grad`, and no
    optimizer step): an evaluation, whose order does not matter. An attack that steps an
    optimizer (adversarial training) still trains."""
    attack = (
        "from torch.autograd import Variable\n\n\ndef pgd(model, x, y, steps, loss_fn{extra}):\n"
        "    x_adv = Variable(x.clone(), requires_grad=True)\n    for _ in range(steps):\n"
        "        loss = loss_fn(model(x_adv), y)\n        loss.backward()\n"
        "        x_adv = Variable(x_adv + 0.01 * x_adv.grad.sign(), requires_grad=True)\n{step}"
        "    return x_adv.detach()\n"
    )
    (tmp_path / "ddp_util.py").write_text(
        "import torch.distributed as dist\nfrom utils import pgd\n\n\ndef init_ddp():\n    dist.init_process_group('nccl')\n\n\n"
        "def classifier_test(model, loader, loss_fn):\n    right = 0\n    for x, y in loader:\n"
        "        x = pgd(model, x, y, 10, loss_fn)\n        right += (model(x).argmax(1) == y).sum()\n    return right\n"
    )
    (tmp_path / "main.py").write_text(
        "from torch.utils.data import DataLoader, DistributedSampler\nfrom ddp_util import init_ddp, classifier_test\n\n"
        "init_ddp()\ntrain_sampler = DistributedSampler(train_set)\nvalid_sampler = DistributedSampler(valid_set)\n"
        "train_loader = DataLoader(train_set, sampler=train_sampler)\nvalid_loader = DataLoader(valid_set, sampler=valid_sampler)\n"
        "for epoch in range(args.epochs):\n    train_sampler.set_epoch(epoch)\n    for x, y in train_loader:\n"
        "        loss_fn(model(x), y).backward()\n        optimizer.step()\n"
        "    print(classifier_test(model, valid_loader, loss_fn))\n"
    )
    run.cwd = tmp_path
    (tmp_path / "utils.py").write_text(attack.format(extra="", step=""))
    assert _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout) == []
    (tmp_path / "utils.py").write_text(attack.format(extra=", optimizer", step="        optimizer.step()\n"))
    (tmp_path / "ddp_util.py").write_text(
        (tmp_path / "ddp_util.py").read_text().replace("loss_fn):", "loss_fn, optimizer):").replace("loss_fn)\n", "loss_fn, optimizer)\n")
    )
    (tmp_path / "main.py").write_text((tmp_path / "main.py").read_text().replace("valid_loader, loss_fn)", "valid_loader, loss_fn, optimizer)"))
    found = _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)
    assert [(f[0], f[1], f[3]) for f in found] == [("main.py", 9, "DDP003")], found


def test_a_static_method_that_builds_the_loader_is_a_builder_and_each_epoch_loop_is_judged_alone(tmp_path, run):
    """DDP003: `Cifar.get_loader(...)`, a static method called through its class, returns the
    loader and its shuffling sampler in a tuple (a builder, as a module-level function is); the
    warm-up epoch loop never sets the epoch, though the training loop after it does. (The module
    builds a validation sampler too: a module that only calls the class's builder is not yet
    opened for the rule, whose screens see no sampler there.)"""
    (tmp_path / "data.py").write_text(
        "import torch\n\n\nclass Cifar:\n    @staticmethod\n    def get_loader(dataset, batch_size):\n"
        "        sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=True)\n"
        "        loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, sampler=sampler)\n"
        "        return loader, None, sampler\n"
    )
    (tmp_path / "task.py").write_text(
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\nfrom data import Cifar\n\n\n"
        "def train(net, loader, optimizer):\n    for x, y in loader:\n        net(x, y).backward()\n        optimizer.step()\n\n\n"
        "def main(args, dataset, net, optimizer):\n    dist.init_process_group('nccl')\n"
        "    ds_train, _, sp_train = Cifar.get_loader(dataset, 64)\n"
        "    ds_val = DataLoader(args.val_set, sampler=DistributedSampler(args.val_set, shuffle=False))\n"
        "    for epoch in range(args.warmup_epochs):\n        train(net, ds_train, optimizer)\n"
        "    for epoch in range(args.epochs):\n        sp_train.set_epoch(epoch)\n        train(net, ds_train, optimizer)\n"
    )
    run.cwd = tmp_path
    found = _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)
    assert [(f[0], f[1], f[3]) for f in found] == [("task.py", 16, "DDP003")], found


def test_a_step_helper_restarting_a_loader_of_a_builders_dict_with_iter_starts_each_epoch_anew(tmp_path, run):
    """DDP003: LoadDatasets (data.py) fills a dict with one DataLoader per task, each drawing from
    a shuffling DistributedSampler, and returns it in a tuple; forward_train (steps.py) restarts
    the task's pass with iter(loaders[task]) whenever its count runs out; the epoch loop of
    train.py calls it in inner loops and trains. Without set_epoch every epoch repeats epoch 0's
    order: reported at the outermost loop around the call (the epoch loop), not the inner ones;
    a set_epoch on each task's sampler there silences it."""
    (tmp_path / "data.py").write_text(
        "from torch.utils.data import DataLoader, RandomSampler\nfrom torch.utils.data.distributed import DistributedSampler\n\n\n"
        "def LoadDatasets(args, datasets, ids):\n    loaders = {}\n    iters = {}\n    for task in ids:\n"
        "        if args.local_rank == -1:\n            sampler = RandomSampler(datasets[task])\n        else:\n"
        "            sampler = DistributedSampler(datasets[task])\n"
        "        loaders[task] = DataLoader(datasets[task], sampler=sampler, batch_size=8)\n"
        "        iters[task] = len(loaders[task])\n    return iters, loaders\n"
    )
    (tmp_path / "steps.py").write_text(
        "def forward_train(task, count, iters, loaders, model):\n    if count[task] % len(loaders[task]) == 0:\n"
        "        iters[task] = iter(loaders[task])\n    count[task] += 1\n    return model(next(iters[task]))\n"
    )
    train = (
        "import torch.distributed as dist\nfrom data import LoadDatasets\nfrom steps import forward_train\n\n\n"
        "def main(args, datasets, model, optimizer, ids):\n    if args.local_rank != -1:\n        dist.init_process_group('nccl')\n"
        "    num_iters, loaders = LoadDatasets(args, datasets, ids)\n    iters, count = {{}}, {{t: 0 for t in ids}}\n"
        "    for epoch in range(args.epochs):\n{set_epoch}        for step in range(100):\n            for task in ids:\n"
        "                forward_train(task, count, iters, loaders, model).backward()\n                optimizer.step()\n"
    )
    run.cwd = tmp_path
    set_epoch = "        for t in ids:\n            loaders[t].sampler.set_epoch(epoch)\n"
    for added, expected in (("", [("train.py", 11, "DDP003")]), (set_epoch, [])):
        (tmp_path / "train.py").write_text(train.format(set_epoch=added))
        found = [(f[0], f[1], f[3]) for f in _findings(run("check", "--no-cache", "--select", "DDP003", ".").stdout)]
        assert found == expected, found



def test_a_script_beside_a_package_of_its_name_is_a_module_of_its_own(tmp_path, run):
    """Prune_Pytorch_DDP's shape: `prune.py` sits beside the package `prune/` it imports from
    (`from prune import irre_prune`). Python's import system finds the package first, so
    `import prune` never reaches the script; the script is a module of its own, reached as
    the entry point it is, and its spawned ranks' load without map_location is flagged."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "prune").mkdir()
    (tmp_path / "prune" / "__init__.py").write_text("")
    (tmp_path / "prune" / "irre_prune.py").write_text("def create_mask(w, ratio):\n    return w.abs() > ratio\n")
    (tmp_path / "prune.py").write_text(
        "import torch\nimport torch.distributed as dist\nimport torch.multiprocessing as mp\n"
        "from prune import irre_prune\n\n\n"
        "def main_worker(local_rank, nprocs, args):\n"
        "    dist.init_process_group('nccl', init_method='tcp://127.0.0.1:23456', world_size=nprocs, rank=local_rank)\n"
        "    model = torch.nn.Linear(4, 4)\n"
        "    ckpt = torch.load(args.weight_file)\n"
        "    model.load_state_dict(ckpt['state_dict'])\n"
        "    mask = irre_prune.create_mask(model.weight, 0.5)\n\n\n"
        "def main(args):\n    mp.spawn(main_worker, nprocs=2, args=(2, args))\n\n\n"
        "if __name__ == '__main__':\n    main(None)\n"
    )
    index = project.build(str(tmp_path))
    assert index.relpaths[index.names["prune.py"]] == "prune.py"
    assert index.relpaths[index.names[os.path.join("prune", "__init__.py")]] == os.path.join("prune", "__init__.py")
    run.cwd = tmp_path
    found = [(f[0], f[1], f[3]) for f in _findings(run("check", "--no-cache", "--select", "DDP004", ".").stdout)]
    assert found == [("prune.py", 10, "DDP004")]


def test_a_meter_logger_the_evaluation_never_updates_counts_no_padded_sample(tmp_path, run):
    """DDP022: engine.py's evaluate() makes a MetricLogger whose meters it all-reduces after the
    loop over the padded loader; where nothing in or after the loop updates them (the scores come
    from elsewhere, `metric_logger.log_every(loader, ...)` only wraps the loader), the reduced
    meters hold nothing of the evaluation and no repeat is counted. Updated in the loop, they are."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(
        "import torch\nimport torch.distributed as dist\n\n\n"
        "class MetricLogger:\n    def __init__(self):\n        self.meters = {}\n\n"
        "    def update(self, **values):\n        self.meters.update(values)\n\n"
        "    def log_every(self, iterable, freq):\n        for item in iterable:\n            yield item\n\n"
        "    def synchronize_between_processes(self):\n"
        "        for name, value in self.meters.items():\n"
        "            total = torch.tensor(value)\n            dist.all_reduce(total)\n            self.meters[name] = total\n"
    )
    engine = (
        "import torch\nimport utils\n\n\n@torch.no_grad()\ndef evaluate(model, data_loader, results):\n"
        "    metric_logger = utils.MetricLogger()\n"
        "    for images, targets in metric_logger.log_every(data_loader, 10):\n"
        "        outputs = model(images)\n"
        "        results.append(outputs)\n{update}"
        "    metric_logger.synchronize_between_processes()\n    return metric_logger.meters\n"
    )
    (tmp_path / "main.py").write_text(
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        "from engine import evaluate\n\n\n"
        "def main(model, dataset_val):\n    dist.init_process_group('nccl')\n"
        "    sampler_val = DistributedSampler(dataset_val, shuffle=False)\n"
        "    data_loader_val = DataLoader(dataset_val, sampler=sampler_val)\n"
        "    print(evaluate(model, data_loader_val, []))\n"
    )
    run.cwd = tmp_path
    update = "        metric_logger.update(loss=outputs.mean().item())\n"
    element = "        metric_logger.meters['acc'].update(outputs.mean().item())\n"
    for text, expected in (("", []), (update, [("main.py", 8, "DDP022")]), (element, [("main.py", 8, "DDP022")])):
        (tmp_path / "engine.py").write_text(engine.format(update=text))
        found = _findings(run("check", "--no-cache", "--select", "DDP022", ".").stdout)
        assert [(f[0], f[1], f[3]) for f in found] == expected, (text, found)


def _check_per_readme(tmp_path, run, code, cases):
    """Lint the project in `tmp_path` with each README of `cases` ((text, expected (path, line,
    code) findings)) for rule `code`; the findings of each, as _findings gives them."""
    results = []
    for readme, expected in cases:
        (tmp_path / "README.md").write_text(readme)
        found = _findings(run("check", "--no-cache", "--select", code, ".").stdout)
        assert [(f[0], f[1], f[3]) for f in found] == expected, (readme, found)
        results.append(found)
    return results


def test_a_strict_parser_without_a_local_rank_option_stops_under_the_old_launcher(tmp_path, run):
    """DDP012: torch.distributed.launch without --use_env appends --local-rank=N (--local_rank=N
    before PyTorch 2.0) to every process; pretrain.py's parser declares neither, and
    parse_args() rejects it on every rank. With --use_env, or under torchrun, nothing is appended.
    fit.py's `--local_rank` defaults to LOCAL_RANK, right under torchrun, but the launcher's
    --local-rank=N is still rejected, whatever the default: flagged where a command runs it with
    that launcher (the message names the launch, not torchrun), silent where nothing does."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pretrain.py").write_text(
        "import argparse\nimport os\nimport torch\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--epochs', type=int, default=100)\n\n"
        "if __name__ == '__main__':\n    args = parser.parse_args()\n"
        "    torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n    torch.distributed.init_process_group('nccl')\n"
    )
    (tmp_path / "fit.py").write_text(
        "import argparse\nimport os\nimport torch\n\n"
        "def options():\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--local_rank', type=int, default=os.getenv('LOCAL_RANK', 0))\n"
        "    return parser.parse_args()\n\n"
        "if __name__ == '__main__':\n    opts = options()\n"
        "    torch.cuda.set_device(opts.local_rank)\n    torch.distributed.init_process_group('nccl')\n"
    )
    run.cwd = tmp_path
    cases = (
        ("python -m torch.distributed.launch --nproc_per_node=2 pretrain.py --epochs 10\n", [("pretrain.py", 9, "DDP012")]),
        ("python -m torch.distributed.launch --nproc_per_node=4 fit.py --lr 0.1\n", [("fit.py", 7, "DDP012")]),
        ("python -m torch.distributed.launch --use_env --nproc_per_node=2 pretrain.py\n"
         "python -m torch.distributed.launch --use_env --nproc_per_node=4 fit.py\n", []),
        ("torchrun --nproc_per_node=2 pretrain.py\ntorchrun --nproc_per_node=4 fit.py\n", []),
        ("Train with fit.py.\n", []),
    )
    for found in _check_per_readme(tmp_path, run, "DDP012", cases):
        assert all("torch.distributed.launch" in f[4] and "torchrun passes" not in f[4] for f in found if f[0] == "fit.py"), found


def test_launch_blocking_in_a_lightning_script_every_documented_run_keeps_on_the_cpu(tmp_path, run):
    """DDP011: CUDA_LAUNCH_BLOCKING=1 slows only CUDA kernel launches. A Lightning script that
    builds its Trainer from its parsed options (`Trainer.from_argparse_args(args)`), and that
    every documented run gives `--accelerator cpu`, launches none: nothing to report. One run on
    GPUs, or a Trainer whose accelerator the call sets itself, or no documented run at all, and it
    is reported as before."""
    (tmp_path / "pyproject.toml").write_text("")
    script = (
        "import argparse\nimport os\nimport pytorch_lightning as pl\n\n"
        "def main(args):\n    trainer = pl.Trainer.from_argparse_args(args, strategy='ddp'{extra})\n    trainer.fit(Model())\n\n"
        "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n    parser = pl.Trainer.add_argparse_args(parser)\n"
        "    os.environ['CUDA_LAUNCH_BLOCKING'] = '1'\n    main(parser.parse_args())\n"
    )
    run.cwd = tmp_path
    cpu = "srun python fold.py data/ \\\n    --precision 32 \\\n    --accelerator cpu --devices 4\n"
    cases = (
        ("", cpu, []),
        ("", cpu + "python fold.py data/ --accelerator=cpu\n", []),
        ("", cpu + "srun python fold.py data/ --gpus 4\n", [("fold.py", 12, "DDP011")]),
        ("", "srun python fold.py data/ --accelerator cpu --gpus 2\n", [("fold.py", 12, "DDP011")]),
        ("", "srun python fold.py data/ --accelerator cpu $EXTRA\n", [("fold.py", 12, "DDP011")]),
        (", accelerator='gpu'", cpu, [("fold.py", 12, "DDP011")]),
        ("", "Run fold.py on your cluster.\n", [("fold.py", 12, "DDP011")]),
    )
    for extra, shell, expected in cases:
        (tmp_path / "fold.py").write_text(script.format(extra=extra))
        (tmp_path / "run.sh").write_text(shell)
        found = _findings(run("check", "--no-cache", "--select", "DDP011", ".").stdout)
        assert [(f[0], f[1], f[3]) for f in found] == expected, (extra, shell, found)


@pytest.mark.parametrize(
    "made, fixed",
    [
        ("    sampler = DistributedSampler(dataset)\n", True),
        ("    if distributed:\n        sampler = DistributedSampler(dataset)\n    else:\n        sampler = None\n", False),
        ("    sampler = None\n    if distributed:\n        sampler = DistributedSampler(dataset)\n", False),
        ("    sampler = DistributedSampler(dataset) if distributed else None\n", False),
        ("    if distributed:\n        sampler = DistributedSampler(dataset)\n    else:\n        sampler = RandomSampler(dataset)\n", False),
        ("    sampler = DistributedSampler(dataset)\n", "inline"),
        ("    sampler = DistributedSampler(dataset)\n", "batched"),
    ],
)
def test_a_builder_that_makes_its_distributed_sampler_only_in_some_runs_gets_no_fix(made, fixed, tmp_path, run):
    """DDP003: build_loader (data.py) returns a DataLoader drawing from a shuffling
    DistributedSampler; the epoch loop of train.py never sets its epoch. Where the builder
    always makes the sampler, `train_loader.sampler.set_epoch(epoch)` is a safe fix; where it
    makes one only when distributed (None, or another sampler, in the other runs; or a
    `sampler=... if distributed else None` at the DataLoader), `train_loader.sampler` is a
    RandomSampler or SequentialSampler there, which has no set_epoch: the finding stays, with
    its message, and no fix is offered. A loader drawing from it through a BatchSampler has it
    as `batch_sampler.sampler` (its own `sampler` is a SequentialSampler): the fix says so."""
    loader = "    return DataLoader(dataset, batch_size=8, sampler=sampler, shuffle=sampler is None)\n"
    if fixed == "inline":
        loader = loader.replace("sampler=sampler,", "sampler=sampler if distributed else None,")
    if fixed == "batched":
        loader = "    return DataLoader(dataset, batch_sampler=BatchSampler(sampler, 8, drop_last=False))\n"
    (tmp_path / "data.py").write_text(
        "from torch.utils.data import BatchSampler, DataLoader, RandomSampler\n"
        f"from torch.utils.data.distributed import DistributedSampler\n\n\ndef build_loader(dataset, distributed):\n{made}{loader}"
    )
    (tmp_path / "train.py").write_text(
        "import torch.distributed as dist\nfrom data import build_loader\n\n\n"
        "def main(args, dataset, model, optimizer):\n    dist.init_process_group('nccl')\n"
        "    train_loader = build_loader(dataset, args.distributed)\n"
        "    for epoch in range(args.epochs):\n        for x, y in train_loader:\n"
        "            model(x, y).backward()\n            optimizer.step()\n"
    )
    run.cwd = tmp_path
    output = run("check", "--no-cache", "--select", "DDP003", ".").stdout
    found = _findings(output)
    assert [(f[0], f[1], f[3]) for f in found] == [("train.py", 8, "DDP003")], output
    named = "train_loader.batch_sampler.sampler" if fixed == "batched" else "train_loader.sampler"
    assert f"DistributedSampler `{named}` never gets set_epoch()" in found[0][4], output
    assert output.splitlines()[0].endswith("[fix]") == (fixed in (True, "batched")), output
    if fixed == "batched":
        diff = run("check", "--no-cache", "--select", "DDP003", "--diff", ".").stdout
        assert f"+        {named}.set_epoch(epoch)" in diff, diff


def test_the_view_says_which_builders_make_their_distributed_sampler_only_in_some_runs(tmp_path):
    """Built.optional: what a builder returns may hold no DistributedSampler on some path of
    it (a sampler returned alone that may be None, a loader drawing from a parameter that
    defaults to None or from a name an `if` binds one way only), so set_epoch on it may fail;
    a sampler made on every path is not optional, nor one made under each way of an `if`."""
    (tmp_path / "train.py").write_text("import torch.distributed as dist\nimport data\n")
    (tmp_path / "data.py").write_text(
        "from torch.utils.data import DataLoader, DistributedSampler\n\n\n"
        "def alone(ds, distributed):\n    if distributed:\n        return DistributedSampler(ds)\n\n\n"
        "def either(ds, distributed):\n    sampler = None\n    if distributed:\n        sampler = DistributedSampler(ds)\n    return sampler\n\n\n"
        "def given(ds, sampler=None):\n    return DataLoader(ds, sampler=sampler)\n\n\n"
        "def caller(ds):\n    return given(ds, DistributedSampler(ds))\n\n\n"
        "def both(ds, train):\n    if train:\n        sampler = DistributedSampler(ds)\n    else:\n"
        "        sampler = DistributedSampler(ds, seed=1)\n    return DataLoader(ds, sampler=sampler)\n"
    )
    view = project.build(str(tmp_path)).view(str(tmp_path / "train.py"))
    assert view.built_data("data.alone") == {"sampler": Built(Place("data.py", 6), None, 0, optional=True)}
    assert view.built_data("data.either") == {"sampler": Built(Place("data.py", 12), None, 0, optional=True)}
    assert view.built_data("data.given") == {"loader": Built(Place("data.py", 21), None, None, optional=True)}
    assert view.built_data("data.both") == {"loader": Built(Place("data.py", 26), None, 0)}


def test_a_dataset_subclass_of_another_module_downloads_like_its_torchvision_base(tmp_path, run):
    """DDP014: a project class of another module that derives (through a class with no
    `__init__`) from a torchvision dataset and hands `download` to its base's `__init__`
    downloads on every rank (AdaPromptCL's MyCIFAR100); one whose `__init__` keeps it does not."""
    data = "from torchvision.datasets import SVHN\n\n\nclass Base(SVHN):\n    pass\n"
    for name, given in (("Kept", "download"), ("Local", "False")):
        data += f"\n\nclass {name}(Base):\n    def __init__(self, root, download=False):\n"
        data += f"        super().__init__(root, split='train', download={given})\n"
    files = {
        "pyproject.toml": "",
        "data.py": data,
        "train.py": "import torch.distributed as dist\nfrom torchvision import datasets\nfrom data import Kept, Local\n\n\n"
        "def main(args):\n    dist.init_process_group('nccl')\n    kept = Kept(args.data, download=True)\n"
        "    local = Local(args.data, download=True)\n    test = datasets.SVHN(args.data, split='test')\n"
        "    return kept, local, test\n\n\nif __name__ == '__main__':\n    main(None)\n",
    }
    for path, text in files.items():
        (tmp_path / path).write_text(text)
    run.cwd = tmp_path
    found = _findings(run("check", "--no-cache", "--select", "DDP014", ".").stdout)
    assert [(path, line, code) for path, line, _, code, _ in found] == [("train.py", 8, "DDP014")], found
    assert found[0][4].startswith("Kept(download=True) runs on every rank")


def test_a_model_a_helper_of_another_module_wraps_in_fsdp1_is_sharded_where_it_is_clipped(tmp_path, run):
    """DDP026: `model = fsdp_wrapper(net)`, a project function of another module that returns
    `FullyShardedDataParallel(model, sharding_strategy=ShardingStrategy.SHARD_GRAD_OP)`, is an
    FSDP1 model whose gradients are sharded (EfficientMoE's utils.fsdp_wrapper); a helper whose
    strategy is a lookup by configuration (`ShardingStrategy[cfg.sharding_strategy]`) leaves it
    unknown, and the rule silent, as for a wrap in the same function; so does one with NO_SHARD."""
    wrapper = "def {}(model, cfg):\n    return FSDP(model, sharding_strategy={}, use_orig_params=True)\n\n\n"
    utils = "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy\n\n\n" + "".join(
        wrapper.format(name, strategy) for name, strategy in (
            ("fsdp_wrapper", "ShardingStrategy.SHARD_GRAD_OP"), ("configured", "ShardingStrategy[cfg.sharding_strategy]"),
            ("replicated", "ShardingStrategy.NO_SHARD"),
        )
    )
    clips = "".join(f"    {name} = {name}_of(net, cfg)\n    clip_grad_norm_({name}.parameters(), 1.0)\n" for name in ("a", "b", "c"))
    train = (
        "import torch.distributed as dist\nfrom torch.distributed.fsdp import FullyShardedDataParallel\n"
        "from torch.nn.utils import clip_grad_norm_\nfrom utils import fsdp_wrapper as a_of, configured as b_of, "
        "replicated as c_of\n\n\ndef main(net, cfg):\n    dist.init_process_group('nccl')\n" + clips
        + "\n\nif __name__ == '__main__':\n    main(None, None)\n"
    )
    for path, text in (("pyproject.toml", ""), ("utils.py", utils), ("train.py", train)):
        (tmp_path / path).write_text(text)
    run.cwd = tmp_path
    found = _findings(run("check", "--no-cache", "--select", "DDP026", ".").stdout)
    assert [(path, line, code) for path, line, _, code, _ in found] == [("train.py", 10, "DDP026")], found
    assert found[0][4].endswith("(`a` is wrapped in FullyShardedDataParallel in a_of (at utils.py:5))"), found


def _padded_eval_findings(root: Path, run, files: dict[str, str]) -> list:
    """DDP022's findings in the project at `root` once `files` are written there."""
    _write_project(root, files)
    run.cwd = root
    return _findings(run("check", "--no-cache", "--select", "DDP022", ".").stdout)


def test_a_project_batch_sampler_that_pads_its_batches_is_a_padding_sampler(tmp_path, run):
    """DDP022: lib/sampler.py's DistributedARBatchSampler (a Sampler subclass, not a
    DistributedSampler) pads its list of batches with its own start so that every rank gets as
    many (`indices += indices[:total - len(indices)]`); the script builds the evaluation loader
    from it as `batch_sampler=` (its fifth positional argument is the class's own drop_last, not
    DistributedSampler's), and validate() all-reduces a confusion matrix over it: the repeated
    batches count twice (PanopticBEV's scripts/train_panoptic_bev.py). A sampler of the same
    shape given drop_last=True by keyword is judged by it, as DistributedSampler's would be."""
    files = {
        "run.sh": "torchrun --nproc_per_node 3 train.py\n",
        "lib/__init__.py": "",
        "lib/sampler.py": (
            "import math\nimport torch\nfrom torch.utils.data.sampler import Sampler\n\n\n"
            "class ARBatchSampler(Sampler):\n    def __init__(self, data_source, batch_size, drop_last=False):\n"
            "        self.data_source, self.batch_size, self.drop_last = data_source, batch_size, drop_last\n\n"
            "    def __len__(self):\n        return math.ceil(len(self.data_source) / self.batch_size)\n\n\n"
            "class DistributedARBatchSampler(ARBatchSampler):\n"
            "    def __init__(self, data_source, batch_size, num_replicas, rank, drop_last=False):\n"
            "        super().__init__(data_source, batch_size, drop_last)\n"
            "        self.num_replicas, self.rank = num_replicas, rank\n"
            "        self.num_batches = math.ceil(super().__len__() / num_replicas)\n\n"
            "    def __iter__(self):\n        batches = [[i] for i in range(len(self.data_source))]\n"
            "        indices = list(range(len(batches)))\n"
            "        indices += indices[:(self.num_batches * self.num_replicas - len(indices))]\n"
            "        offset = self.num_batches * self.rank\n"
            "        for idx in indices[offset:offset + self.num_batches]:\n            yield batches[idx]\n"
        ),
        "train.py": (
            "import torch\nimport torch.distributed as dist\nfrom lib.sampler import DistributedARBatchSampler\n\n\n"
            "def make_dataloader(val_db, rank, world_size):\n"
            "    val_sampler = DistributedARBatchSampler(val_db, 4, world_size, rank, False)\n"
            "    return torch.utils.data.DataLoader(val_db, batch_sampler=val_sampler)\n\n\n"
            "def make_exact(val_db, rank, world_size):\n"
            "    val_sampler = DistributedARBatchSampler(val_db, 4, world_size, rank, drop_last=True)\n"
            "    return torch.utils.data.DataLoader(val_db, batch_sampler=val_sampler)\n\n\n"
            "@torch.no_grad()\n"
            "def validate(model, dataloader):\n    conf = torch.zeros(3, 3)\n"
            "    for images, labels in dataloader:\n        conf[labels, model(images).argmax(1)] += 1\n"
            "    dist.all_reduce(conf)\n    return conf.diag() / conf.sum(1)\n\n\n"
            "if __name__ == '__main__':\n    dist.init_process_group('nccl')\n"
            "    val_dl = make_dataloader(None, dist.get_rank(), dist.get_world_size())\n"
            "    print(validate(None, val_dl))\n"
            "    print(validate(None, make_exact(None, dist.get_rank(), dist.get_world_size())))\n"
        ),
    }
    assert [(f[0], f[1], f[3]) for f in _padded_eval_findings(tmp_path, run, files)] == [("train.py", 7, "DDP022")]


def test_a_builder_whose_parameter_is_the_samplers_drop_last_pads_where_a_call_passes_false(tmp_path, run):
    """DDP022: prepare_dataset() passes its parameter `is_train` as the sampler's drop_last; the
    call that builds the test loader passes is_train=False, so that sampler pads, and evaluate()
    of another module sums over the loader and all-reduces through a helper (OccupancyFlow's
    experiment.py). A builder every evaluated call of which passes True pads nothing."""
    files = {
        "evaluate.py": (
            "import torch\nimport torch.distributed as dist\n\n\n"
            "def aggregate(epe):\n    total = epe.clone()\n    dist.all_reduce(total)\n    return total.item()\n\n\n"
            "def evaluate(dataloader, model):\n    with torch.no_grad():\n        epe = 0\n"
            "        for scene in dataloader:\n            epe += model(scene).sum()\n"
            "        return aggregate(epe)\n"
        ),
        "experiment.py": (
            "import torch.distributed as dist\nfrom torch.utils.data import DataLoader\n"
            "from torch.utils.data.distributed import DistributedSampler\nfrom evaluate import evaluate\n\n\n"
            "def prepare_dataset(dataset, is_train=True):\n"
            "    sampler = DistributedSampler(dataset, shuffle=is_train, drop_last=is_train)\n"
            "    return DataLoader(dataset, batch_size=4, sampler=sampler)\n\n\n"
            "def prepare_exact(dataset, exact=True):\n"
            "    sampler = DistributedSampler(dataset, shuffle=False, drop_last=exact)\n"
            "    return DataLoader(dataset, batch_size=4, sampler=sampler)\n\n\n"
            "def experiment(model, dataset):\n    dist.init_process_group('nccl')\n"
            "    test_dataloader = prepare_dataset(dataset, is_train=False)\n"
            "    evaluate(dataloader=test_dataloader, model=model)\n"
            "    evaluate(prepare_exact(dataset, exact=True), model)\n\n\n"
            "if __name__ == '__main__':\n    experiment(None, None)\n"
        ),
        "run.sh": "torchrun --nproc_per_node 3 experiment.py\n",
    }
    assert [(f[0], f[1], f[3]) for f in _padded_eval_findings(tmp_path, run, files)] == [("experiment.py", 8, "DDP022")]


def test_results_each_rank_writes_to_a_file_and_rank_zero_reads_back_are_gathered(tmp_path, run):
    """DDP022: the loader comes from a method called on the object made then and there
    (`Loaders(ds).get_eval_dataloader()`); Trainer.evaluate appends each pair's score to its
    query's lists, dumps them to a file of its own rank, waits at dist.barrier() and rank 0 lists
    the folder and reads every file back: a gather through files, and the padded pairs count
    twice in their queries' rankings (DenseRetrievalToolkits' RRTrainer.evaluate). Stored by the
    query id alone (a repeat overwrites its entry), the same gather counts nothing twice."""
    files = {
        "run.sh": "torchrun --nproc_per_node 3 run.py\n",
        "loaders.py": (
            "from torch.utils.data import DataLoader\nfrom torch.utils.data.distributed import DistributedSampler\n\n\n"
            "class Loaders:\n    def __init__(self, dataset):\n        self.dataset = dataset\n\n"
            "    def _get_sampler(self, dataset, shuffle=False):\n        return DistributedSampler(dataset, shuffle=shuffle)\n\n"
            "    def get_eval_dataloader(self):\n"
            "        return DataLoader(self.dataset, batch_size=8, sampler=self._get_sampler(self.dataset))\n"
        ),
        "trainer.py": (
            "import json\nimport os\nimport torch.distributed as dist\n\n\n"
            "class Trainer:\n    def __init__(self, model, rank, out):\n        self.model, self.rank, self.out = model, rank, out\n\n"
            "    def evaluate(self, loader, ep):\n        result = {}\n"
            "        for batch in loader:\n            scores = self.model(batch[1])\n"
            "            for q, s in zip(batch[0], scores):\n                if q not in result:\n"
            "                    result[q] = []\n                result[q].append(float(s))\n"
            "        with open(os.path.join(self.out, f'{ep}.{self.rank}.json'), 'w') as f:\n"
            "            json.dump(result, f)\n        dist.barrier()\n        if self.rank == 0:\n"
            "            merged = {}\n            for name in os.listdir(self.out):\n"
            "                with open(os.path.join(self.out, name)) as f:\n"
            "                    for q, s in json.load(f).items():\n                        merged.setdefault(q, []).extend(s)\n"
            "            return merged\n"
        ),
        "run.py": (
            "import torch.distributed as dist\nfrom loaders import Loaders\nfrom trainer import Trainer\n\n\n"
            "def main(model, dataset, out):\n    dist.init_process_group('nccl')\n"
            "    eval_dataloader = Loaders(dataset).get_eval_dataloader()\n"
            "    Trainer(model, dist.get_rank(), out).evaluate(eval_dataloader, 3)\n\n\n"
            "if __name__ == '__main__':\n    main(None, None, 'out')\n"
        ),
    }
    found = _padded_eval_findings(tmp_path, run, files)
    assert [(f[0], f[1], f[3]) for f in found] == [("loaders.py", 10, "DDP022")], found
    assert "listed after a barrier, at trainer.py:23" in found[0][4], found
    (tmp_path / "trainer.py").write_text(files["trainer.py"].replace(
        "                if q not in result:\n                    result[q] = []\n                result[q].append(float(s))\n",
        "                result[q] = float(s)\n",
    ))
    assert _padded_eval_findings(tmp_path, run, {}) == []


def test_rank_files_written_and_read_back_by_methods_of_an_object_the_caller_hands_are_gathered(tmp_path, run):
    """DDP022: validate() of engine.py iterates the loader and calls methods of the object its
    caller hands it: PostProcessor.save writes each rank's predictions to a file of its own
    (`df.to_csv`), then `synchronize()` (a helper around dist.barrier()), and PostProcessor.merge
    lists the folder and reads every file back (EGO4D social-interactions' PostProcessor). The
    loader draws from the sampler through `**params`, a dict that an `if` binds. The same
    validate() handed a RankZeroWriter (only rank 0 writes its file before the barrier) by
    another call combines nothing, whatever the first call handed it."""
    files = {
        "run.sh": "torchrun --nproc_per_node 3 run.py\n",
        "common/__init__.py": "",
        "common/distributed.py": (
            "import torch.distributed as dist\n\n\n"
            "def synchronize():\n    if dist.is_initialized():\n        dist.barrier()\n"
        ),
        "common/post.py": (
            "import glob\nimport pandas as pd\nimport torch.distributed as dist\n"
            "from common.distributed import synchronize\n\n\n"
            "class PostProcessor:\n    def __init__(self, out, rank):\n        self.out, self.rows = out, []\n"
            "        self.file = f'{out}/pred.csv.rank.{rank}'\n\n"
            "    def update(self, scores):\n        self.rows += scores.tolist()\n\n"
            "    def save(self):\n        pd.DataFrame(self.rows).to_csv(self.file, index=False)\n        synchronize()\n\n"
            "    def merge(self):\n        return pd.concat([pd.read_csv(f) for f in glob.glob(f'{self.out}/pred.csv.rank.*')])\n\n\n"
            "class RankZeroWriter(PostProcessor):\n"
            "    def save(self):\n        if dist.get_rank() == 0:\n            pd.DataFrame(self.rows).to_csv(self.file, index=False)\n"
            "        synchronize()\n"
        ),
        "common/engine.py": (
            "import torch\n\n\n"
            "def validate(loader, model, post):\n    for x, _ in loader:\n        with torch.no_grad():\n"
            "            post.update(model(x))\n    post.save()\n    return post.merge()\n"
        ),
        "run.py": (
            "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
            "from common.engine import validate\nfrom common.post import PostProcessor, RankZeroWriter\n\n\n"
            "def main(args, model, val_set, test_set):\n    dist.init_process_group('nccl')\n"
            "    if args.dist:\n        params = {'sampler': DistributedSampler(val_set, shuffle=False)}\n"
            "    else:\n        params = {'shuffle': False}\n"
            "    val_loader = DataLoader(val_set, batch_size=8, **params)\n"
            "    print(validate(val_loader, model, PostProcessor(args.out, dist.get_rank())))\n"
            "    test_loader = DataLoader(test_set, sampler=DistributedSampler(test_set, shuffle=False))\n"
            "    print(validate(test_loader, model, RankZeroWriter(args.out, dist.get_rank())))\n\n\n"
            "if __name__ == '__main__':\n    main(None, None, None, None)\n"
        ),
    }
    chains = [(f[0], f[1], f[4].rpartition(" (")[2]) for f in _padded_eval_findings(tmp_path, run, files)]
    assert chains == [(
        "run.py", 10, "its loader is handed to validate() by the call at run.py:14, evaluated in a loop at "
        "common/engine.py:5 and combined by the ranks' files, listed after a barrier, at common/post.py:20)",
    )], chains


_LOCAL_RANK_ONLY = (
    "import argparse\nimport torch\n\n"
    "parser = argparse.ArgumentParser()\nparser.add_argument('--local_rank', default=-1, type=int)\n"
    "args = parser.parse_args()\ntorch.distributed.init_process_group('nccl')\n"
)
_NO_LOCAL_RANK = (
    "import argparse\nimport torch\n\n"
    "parser = argparse.ArgumentParser()\nparser.add_argument('--epochs', type=int, default=100)\n"
    "args = parser.parse_args()\ntorch.distributed.init_process_group('nccl')\n"
)


def test_a_cd_before_the_launch_names_the_script_in_the_folder_it_moves_to(tmp_path, run):
    """DDP012 and a launch script's `cd` (ImbalancedSSL's bmb.sh): `cd /share/me/ImbalancedSSL/BMB_IMG`
    then `python -m torch.distributed.launch ... ABCfix.py` runs BMB_IMG/ABCfix.py, not the
    ABC/ABCfix.py a plain `python ABCfix.py` runs one process at a time. A `cd` to a folder the
    project does not hold (a former name of the repository) leaves the path read from the shell
    script's own folder, as without one; `cd "$(dirname "$0")"/..` is the folder above it."""
    (tmp_path / "pyproject.toml").write_text("")
    for folder, text in (("ABC", _NO_LOCAL_RANK), ("BMB_IMG", _NO_LOCAL_RANK)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "ABCfix.py").write_text(text)
    (tmp_path / "ABC" / "run.sh").write_text("cd /discobox/me/ImbalancedSSL/ABC\npython ABCfix.py --gpu 7\n")
    run.cwd = tmp_path
    cases = (
        ("cd '/share/me/projects/ImbalancedSSL/BMB_IMG'\nDATA=/data\n", ["BMB_IMG/ABCfix.py"]),
        ("ROOT=/share/me/ImbalancedSSL\ncd $ROOT/BMB_IMG && echo in\n", ["BMB_IMG/ABCfix.py"]),
        ("cd BMB_IMG\n", ["BMB_IMG/ABCfix.py"]),
        ("cd '/share/me/projects/ada-tcp'\n", ["ABC/ABCfix.py", "BMB_IMG/ABCfix.py"]),  # as without a cd
    )
    for moves, expected in cases:
        (tmp_path / "bmb.sh").write_text(moves + "python -m torch.distributed.launch --nproc_per_node=2 --master_port 29500 ABCfix.py \\\n --gpu 0\n")
        found = _findings(run("check", "--no-cache", "--select", "DDP012", ".").stdout)
        assert sorted(f[0] for f in found) == expected, (moves, found)
    (tmp_path / "bmb.sh").unlink()
    (tmp_path / "BMB_IMG" / "scripts").mkdir()
    (tmp_path / "BMB_IMG" / "scripts" / "run.sh").write_text(
        'cd "$(dirname "$0")"/..\npython -m torch.distributed.launch --nproc_per_node=2 ABCfix.py\n'
    )
    found = _findings(run("check", "--no-cache", "--select", "DDP012", ".").stdout)
    assert [f[0] for f in found] == ["BMB_IMG/ABCfix.py"]


def test_the_shallowest_launch_documents_are_read_where_the_project_holds_too_many(tmp_path, run, monkeypatch):
    """DDP012 (ImbalancedSSL's SAW): a sweep of hundreds of generated scripts deep under
    BMB/scripts/ must not crowd out of the documents read the launch script beside SAW's
    trainer, which runs it with torch.distributed.launch and no --use_env."""
    monkeypatch.setattr(project, "MAX_LAUNCH_DOCUMENTS", 5)
    (tmp_path / "pyproject.toml").write_text("")
    sweep = tmp_path / "BMB" / "scripts" / "cifar100" / "r10"
    sweep.mkdir(parents=True)
    for index in range(8):
        (sweep / f"{index:02}.sh").write_text("echo sweep\n")
    (tmp_path / "SAW").mkdir()
    (tmp_path / "SAW" / "train_ddp.py").write_text(_LOCAL_RANK_ONLY)
    (tmp_path / "SAW" / "train_ddp.sh").write_text(
        "cd /discobox/me/code/ImbalancedSSL/SAW\npython -m torch.distributed.launch --nproc_per_node=8 train_ddp.py \\\n--epochs 250\n"
    )
    built = project.build(str(tmp_path))
    assert "SAW/train_ddp.sh" in built._launch_documents and len(built._launch_documents) == 5
    module = next(name for name, path in built.relpaths.items() if path.endswith("train_ddp.py"))
    assert [str(command.place) for command in built.module_view(module).launches(own=True)] == ["SAW/train_ddp.sh:2"]


_ACCELERATE_SCRIPT = (
    "import torch\nfrom accelerate import Accelerator\nfrom accelerate.utils import DistributedDataParallelKwargs, set_seed\n\n\n"
    "def main():\n    accelerator = Accelerator(kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)])\n"
    "    set_seed(42)\n    for latents in loader:\n        noise = torch.randn_like(latents)\n"
    "        accelerator.backward((model(latents + noise) - noise).pow(2).mean())\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)


@pytest.mark.parametrize(
    "config, launch, flagged",
    [
        ("distributed_type: 'NO'\nnum_processes: 1\n", 'CONFIG="accelerate_configs/one.yaml"\n', False),
        ("distributed_type: 'NO'\nnum_processes: 1\n", 'CONFIG="accelerate_configs/one.yaml"\nexport FLAGS="--multi_gpu"\n', False),
        ("distributed_type: DEEPSPEED\nnum_processes: 2\n", 'CONFIG="accelerate_configs/one.yaml"\n', True),
        ("distributed_type: MULTI_GPU\nnum_processes: 1\nnum_machines: 1\n", 'CONFIG="accelerate_configs/one.yaml"\n', False),
        ("distributed_type: 'NO'\nnum_processes: 1\n", 'CONFIG="accelerate_configs/other.yaml"\n', True),  # no such file
        ("distributed_type: 'NO'\nnum_processes: 1\n", 'CONFIG="accelerate_configs/one.yaml"\nCONFIG="x.yaml"\n', True),  # two values
    ],
)
def test_an_accelerate_config_file_of_one_process_makes_a_script_one_process(config, launch, flagged, tmp_path, run):
    """DDP027 and finetrainers' training/train_*.sh: `accelerate launch --config_file
    $ACCELERATE_CONFIG_FILE --gpu_ids $GPU_IDS train.py` with the variable set above it to a
    configuration file whose `distributed_type` is NO runs one process (Accelerate's simple
    launcher): a shared seed there is reproducibility. DeepSpeed on two processes is flagged,
    and so is a file not in the project or a variable set to two values."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "accelerate_configs").mkdir()
    (tmp_path / "accelerate_configs" / "one.yaml").write_text("compute_environment: LOCAL_MACHINE\n" + config + "gpu_ids: '0'\n")
    (tmp_path / "training").mkdir()
    (tmp_path / "training" / "train.py").write_text(_ACCELERATE_SCRIPT)
    (tmp_path / "training" / "train.sh").write_text(
        'GPU_IDS="0"\n' + launch + 'cmd="accelerate launch --config_file $CONFIG --gpu_ids $GPU_IDS training/train.py \\\n  --seed 42"\neval $cmd\n'
    )
    run.cwd = tmp_path
    found = [f[3] for f in _findings(run("check", "--no-cache", "--select", "DDP027", ".").stdout)]
    assert found == (["DDP027"] if flagged else [])


_GLOO_SCRIPT = (
    "import os\nimport torch\nimport torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel\n\n\n"
    "class Fitter:\n    def __init__(self, model, device):\n        self.model = model\n        self.device = device\n\n"
    "    def fit(self):\n        torch.save({'model_state_dict': self.model.state_dict()}, 'last-checkpoint.bin')\n\n"
    "    def load(self, path):\n        checkpoint = torch.load(path)\n"
    "        self.model.load_state_dict(checkpoint['model_state_dict'])\n\n\n"
    "dist.init_process_group('gloo', rank=int(os.environ['SLURM_PROCID']), world_size=int(os.environ['SLURM_NTASKS']))\n"
    "{placement}\nnet = DistributedDataParallel(net)\ndevice = torch.device('cuda:0')\nfitter = Fitter(model=net, device=device)\n"
    "{resume}\nfitter.fit()\n"
    "test_net = Net().cuda()\ncheckpoint = torch.load('best-checkpoint.bin')\ntest_net.load_state_dict(checkpoint['model_state_dict'])\n"
)


def test_a_load_where_no_rank_works_on_a_gpu_of_its_own_or_no_code_calls_it_is_silent(tmp_path, run):
    """VidCrowd: scripts that start a gloo group at their top level and move the model with a bare
    `.cuda()`, no `set_device`, `device_ids` or per-rank device anywhere (CUDA_VISIBLE_DEVICES set
    to one list for all): every rank works on
    cuda:0, where a file saved from cuda:0 lands (DDP004 stays silent). `Fitter.load` is called only
    in a commented-out line: it never runs. Where the script binds each rank to its GPU
    (`.cuda(local_rank)`), the module-level load is flagged; where `fitter.load(...)` is called,
    so is the method's."""
    run.cwd = tmp_path
    (tmp_path / ".git").write_text("")
    cases = {
        ("net = Net().cuda()", "# fitter.load('last-checkpoint.bin')"): [],
        ("net = Net().cuda(int(os.environ['SLURM_LOCALID']))", "# fitter.load('last-checkpoint.bin')"): [("train.py", 28)],
        ("net = Net().cuda(int(os.environ['SLURM_LOCALID']))", "fitter.load('last-checkpoint.bin')"): [("train.py", 16), ("train.py", 28)],
        # one list of GPUs for every rank binds none; `set_device` binds each to its own
        ("os.environ['CUDA_VISIBLE_DEVICES'] = '0,1'\nnet = Net().cuda()", "# fitter.load('x')"): [],
        ("torch.cuda.set_device(int(os.environ['SLURM_LOCALID']))\nnet = Net().cuda()", "# fitter.load('x')"): [("train.py", 29)],
    }
    for (placement, resume), expected in cases.items():
        (tmp_path / "train.py").write_text(_GLOO_SCRIPT.replace("{placement}", placement).replace("{resume}", resume))
        found = [(f[0], f[1]) for f in _findings(run("check", "--no-cache", "--select", "DDP004", ".").stdout)]
        assert found == expected, (placement, resume)


def test_a_load_pairs_with_the_save_of_its_own_script_before_another_scripts(tmp_path, run):
    """VidCrowd's scripts each save `{"model_state_dict": ...}` in their own Fitter.save: the file
    a script's load reads is written by that script, not by the first script of the folder with
    the same keys. A script that saves nothing of the kind still reads what its neighbour wrote."""
    script = (
        "import os\nimport torch\nimport torch.distributed as dist\n\n\n"
        "def save(model, path):\n    torch.save({'model_state_dict': model.state_dict()}, path)\n\n\n"
        "def load(model, path):\n    checkpoint = torch.load(path)\n    model.load_state_dict(checkpoint['model_state_dict'])\n\n\n"
        "if __name__ == '__main__':\n    dist.init_process_group('nccl')\n    net = Net().cuda(int(os.environ['LOCAL_RANK']))\n"
        "    save(net, 'last.pt')\n    load(net, 'last.pt')\n"
    )
    evaluate = (
        "import os\nimport torch\nimport torch.distributed as dist\n\n\n"
        "def load(model, path):\n    checkpoint = torch.load(path)\n    model.load_state_dict(checkpoint['model_state_dict'])\n\n\n"
        "if __name__ == '__main__':\n    dist.init_process_group('nccl')\n    load(Net().cuda(int(os.environ['LOCAL_RANK'])), 'last.pt')\n"
    )
    run.cwd = tmp_path
    (tmp_path / ".git").write_text("")
    for name in ("a_train.py", "b_train.py"):
        (tmp_path / name).write_text(script)
    (tmp_path / "c_evaluate.py").write_text(evaluate)
    found = {f[0]: f[4] for f in _findings(run("check", "--no-cache", "--select", "DDP004", ".").stdout)}
    assert sorted(found) == ["a_train.py", "b_train.py", "c_evaluate.py"]
    assert "saved at" not in found["a_train.py"] and "saved at" not in found["b_train.py"]
    assert found["c_evaluate.py"].endswith("(saved at a_train.py:7)")


_WRAPPER = (
    "#!/usr/bin/env bash\n"
    "SCRIPT=$1\n"
    "GPUS=$2\n"
    "python -m torch.distributed.launch --nproc_per_node=$GPUS $SCRIPT ${@:3}\n"
)
_EXTRACTOR = (
    "import argparse\n"
    "import os\n"
    "import torch.distributed as dist\n"
    "\n"
    "def parse_args():\n"
    "    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--local_rank', type=int, default=0)\n"
    "    args = parser.parse_args()\n"
    "    if 'LOCAL_RANK' not in os.environ:\n"
    "        os.environ['LOCAL_RANK'] = str(args.local_rank)\n"
    "    return args\n"
    "\n"
    "if __name__ == '__main__':\n"
    "    parse_args()\n"
    "    dist.init_process_group('nccl')\n"
)


def test_a_notebook_that_runs_a_launch_wrapper_launches_the_script_it_names(tmp_path, run):
    """A notebook cell runs `!bash tools/dist_run.sh tools/extract.py 8`, and dist_run.sh runs
    torch.distributed.launch (no --use_env) on its first argument: that launcher passes
    --local-rank, which a parser of --local_rank alone rejects. The option only fills LOCAL_RANK
    where no launcher set it, so without that launch nothing is harmed."""
    import json

    (tmp_path / "setup.py").write_text("")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "dist_run.sh").write_text(_WRAPPER)
    (tmp_path / "tools" / "extract.py").write_text(_EXTRACTOR)
    run.cwd = tmp_path
    assert not _findings(run("check", "--no-cache", ".").stdout)
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": ["import os\n", "!bash tools/dist_run.sh tools/extract.py 8 --out x.pkl\n"]}
    (tmp_path / "demo.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    found = [f for f in _findings(run("check", "--no-cache", ".").stdout) if f[3] == "DDP012"]
    assert [f[:4] for f in found] == [("tools/extract.py", 7, 5, "DDP012")]
    assert "demo.ipynb:10" in found[0][4] and "torch.distributed.launch" in found[0][4]


def test_a_hidden_folder_inside_a_package_is_part_of_the_project(tmp_path, run):
    """mmdet's pip package ships its tools in `mmdet/.mim/tools/`: dist_mot_search.sh there
    runs mot_param_search.py with torch.distributed.launch (no --use_env), which on PyTorch
    >= 2.0 passes --local-rank, and the parser takes only --local_rank (it fills LOCAL_RANK
    only where unset, so only that launch shows the harm). The index reads a hidden folder
    inside a package as the package's own files, also at the root (`ddplint check mmdet`); a
    hidden folder that is not inside one (`.dev/`) and one that holds a tool's state (an
    editor's copies, `.ipynb_checkpoints/`) stay out."""
    wrapper = (
        "#!/usr/bin/env bash\nCONFIG=$1\nGPUS=$2\n"
        "python -m torch.distributed.launch --nproc_per_node=$GPUS \\\n"
        "    $(dirname \"$0\")/search.py $CONFIG --launcher pytorch ${@:3}\n"
    )
    run.cwd = tmp_path
    for folder, flagged in (("pkg/.mim/tools", True), ("pkg/.ipynb_checkpoints/tools", False), (".dev/tools", False)):
        for old in (tmp_path / "pkg", tmp_path / ".dev"):
            shutil.rmtree(old, ignore_errors=True)
        files = {"pkg/__init__.py": "", f"{folder}/dist_search.sh": wrapper, f"{folder}/search.py": _EXTRACTOR}
        _write_project(tmp_path, files)
        found = [f for f in _findings(run("check", "--no-cache", "--select", "DDP012", "--isolated", ".").stdout)]
        assert [f[:4] for f in found] == ([(f"{folder}/search.py", 7, 5, "DDP012")] if flagged else []), folder
        assert not flagged or "torch.distributed.launch" in found[0][4]
    # the package linted alone: its hidden folder is inside the root
    run.cwd = tmp_path / "pkg"
    _write_project(tmp_path / "pkg", {".mim/tools/dist_search.sh": wrapper, ".mim/tools/search.py": _EXTRACTOR})
    found = [f[:4] for f in _findings(run("check", "--no-cache", "--select", "DDP012", "--isolated", ".").stdout)]
    assert found == [(".mim/tools/search.py", 7, 5, "DDP012")]


def test_a_nested_training_function_reads_the_loader_of_the_function_that_seeds(tmp_path, run):
    """A detection script's layout: main() seeds torch with a literal, picks the Dataset class
    by an option (`Dataset = COCO if cfg.dataset == 'coco' else VOC`), builds the DataLoader
    with `num_workers=cfg.num_workers` (an option whose default no launch command changes),
    and defines `def train(epoch):` inside itself, whose loop iterates main's loader; main
    calls train(epoch) each epoch. Worker k of every rank seeds numpy from the same base seed
    and draws the same crops: flagged when each class the option may pick draws so, and the
    option gives workers; not when the default is 0 workers (numpy unseeded in each process)
    or a worker_init_fn decides the workers' seeds."""
    draws = "np.random.randint(0, 8)"
    datasets = {
        "datasets/__init__.py": "",
        "datasets/coco.py": "import numpy as np\nfrom torch.utils import data\n\n\nclass COCO(data.Dataset):\n"
        "    def __getitem__(self, index):\n        return self.images[index][{coco}:]\n",
        "datasets/voc.py": "import numpy as np\nfrom torch.utils import data\n\n\nclass VOC(data.Dataset):\n"
        "    def __getitem__(self, index):\n        return self.images[index][np.random.randint(0, 8):]\n",
    }
    launch = "python -m torch.distributed.launch --nproc_per_node 4 train.py --dist{passed}\n"
    script = (
        "import argparse\nimport torch\nimport torch.distributed as dist\n\nfrom datasets.coco import COCO\n"
        "from datasets.voc import VOC\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--dist', action='store_true')\n"
        "parser.add_argument('--dataset', type=str, default='coco', choices=['coco', 'voc'])\n"
        "parser.add_argument('--num_workers', type=int, default={workers})\ncfg = parser.parse_args()\n\n\n"
        "def main(model, optimizer):\n    torch.manual_seed(317)\n    dist.init_process_group('nccl')\n"
        "    Dataset = COCO if cfg.dataset == 'coco' else VOC\n    train_dataset = Dataset()\n"
        "    sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)\n"
        "    train_loader = torch.utils.data.DataLoader(train_dataset, num_workers=cfg.num_workers, sampler=sampler{init})\n\n"
        "    def train(epoch):\n        for batch_idx, batch in enumerate(train_loader):\n"
        "            loss = model(batch).mean()\n            optimizer.zero_grad()\n            loss.backward()\n"
        "            optimizer.step()\n\n    for epoch in range(10):\n        sampler.set_epoch(epoch)\n        train(epoch)\n\n\n"
        "if __name__ == '__main__':\n    main(None, None)\n"
    )
    run.cwd = tmp_path
    for workers, passed, init, coco, expected in (
        ("2", "", "", draws, [("train.py", 16, "DDP027")]),
        ("2", " --num_workers 10", "", draws, [("train.py", 16, "DDP027")]),  # workers in every run
        ("0", "", "", draws, []),
        ("0", " --num_workers 4", "", draws, []),  # runs differ: numpy's draws unshown
        ("2", "", ", worker_init_fn=lambda k: None", draws, []),
        ("2", "", "", "0", []),  # the class every documented run picks (coco, the default) draws nothing
    ):
        _write_project(tmp_path, {**datasets, "datasets/coco.py": datasets["datasets/coco.py"].format(coco=coco),
                                  "train.py": script.format(workers=workers, init=init),
                                  "run.sh": launch.format(passed=passed)})
        assert _seed_findings(run) == expected, (workers, passed, init, coco)


_IGNITE_DATA = (
    "import torch\nfrom torch.utils.data import DataLoader\n\n\n"
    "def build_loaders(args, train_set, valid_set):\n"
    "    train_sampler = torch.utils.data.distributed.DistributedSampler(train_set) if args.distributed else None\n"
    "    valid_sampler = torch.utils.data.distributed.DistributedSampler(valid_set) if args.distributed else None\n"
    "    train_loader = DataLoader(train_set, sampler=train_sampler, batch_size=2)\n"
    "    valid_loader = DataLoader(valid_set, sampler=valid_sampler, batch_size=2, shuffle=False)\n"
    "    return train_loader, valid_loader\n\n\n"
    "def build_plain_loaders(args, train_set, valid_set):\n"
    "    return DataLoader(train_set, batch_size=2), DataLoader(valid_set, batch_size=2)\n"
)
_IGNITE_TRAIN = (
    "import torch\nfrom ignite.engine import Engine, Events\n{imports}\n"
    "from data import build_loaders, build_plain_loaders\n\n\n"
    "def train(args, model, optimizer, train_set, valid_set):\n"
    "    torch.distributed.init_process_group('nccl')\n"
    "    loader_class = build_loaders if args.distributed else build_plain_loaders\n"
    "    train_loader, val_loader = loader_class(args, train_set, valid_set)\n\n"
    "    def update(engine, batch):\n        model.train()\n        loss = model(batch)\n"
    "        loss.backward()\n        optimizer.step()\n        return loss.item()\n\n"
    "    def {name}(engine, batch):\n        model.eval()\n        with torch.no_grad():\n"
    "            return model(batch), batch\n\n"
    "    trainer = Engine(update)\n    evaluator = Engine({name})\n"
    "    trainer.add_event_handler(Events.EPOCH_COMPLETED, lambda _: {engine}.run(val_loader))\n"
    "{attach}"
    "    trainer.run(train_loader, max_epochs=3)\n\n\n"
    "if __name__ == '__main__':\n    train(None, None, None, None, None)\n"
)


def test_an_ignite_evaluator_run_over_a_padded_loader_with_a_metric_attached_combines_it(tmp_path, run):
    """DDP022: data.py's builder returns a validation loader over a DistributedSampler (shuffle
    and drop_last left at their defaults) made where the run is distributed; train.py builds an
    ignite Engine from a function with no backward and runs it over that loader on every rank
    (`evaluator.run(val_loader)`, ignite's own loop over the data), and an ignite metric is
    attached to it: its compute all-reduces across ranks (`sync_all_reduce` on `Loss.compute`),
    so the padded duplicates count twice (CDial-GPT's train.py). The builder is called through a
    name bound to one of two functions (`loader_class = build_a if flag else build_b`): the loaders
    are either one's. Not flagged: no ignite metric
    attached (a logger's attach combines nothing), the engine that trains run over it, or a
    metric attached only to another engine."""
    metric = "    metrics = {'nll': Loss(torch.nn.CrossEntropyLoss())}\n    metrics['ppl'] = Loss(torch.nn.NLLLoss())\n"
    metric += "    for name, metric in metrics.items():\n        metric.attach(evaluator, name)\n"
    imports = "from ignite.metrics import Loss\nfrom ignite.contrib.handlers import ProgressBar"
    cases = (
        ("inference", "evaluator", metric, [("data.py", 7, "DDP022")]),
        ("inference", "evaluator", "    Loss(torch.nn.CrossEntropyLoss()).attach(evaluator, 'nll')\n", [("data.py", 7, "DDP022")]),
        ("inference", "evaluator", "    ProgressBar().attach(evaluator)\n", []),
        ("inference", "trainer", metric.replace("evaluator", "trainer"), []),
        ("inference", "evaluator", "    Loss(torch.nn.CrossEntropyLoss()).attach(trainer, 'nll')\n", []),
    )
    for name, engine, attach, expected in cases:
        files = {
            "data.py": _IGNITE_DATA,
            "train.py": _IGNITE_TRAIN.format(imports=imports, name=name, engine=engine, attach=attach),
            "run.sh": "python -m torch.distributed.launch --nproc_per_node 8 train.py\n",
        }
        found = _padded_eval_findings(tmp_path, run, files)
        assert [(f[0], f[1], f[3]) for f in found] == expected, (name, engine, attach, found)


def test_a_resume_load_in_a_model_class_reads_the_state_the_program_saves_from_its_ddp_model(tmp_path, run):
    """Yolact_minimal's shape: the model class's `load_weights(path)` loads into `self` without
    map_location, in a module with no distributed sign; train.py, whose helper binds each rank to
    its GPU and starts the process group, builds the model, calls `load_weights` on every rank, wraps the model in DDP at module
    level and hands `net.module` to a helper of utils.py that `torch.save`s its state dict. The
    file the class loads is its own state as the DDP run saves it from the GPU: flagged, with the
    save in the chain (its `else:` loads onto the host into the same name: what follows the `if`
    loads either into the model). A backbone class's load of another's weights, whose state the program never
    saves, stays silent; so does the same model class where the program saves another class's state."""
    (tmp_path / "modules").mkdir()
    helpers = {
        "pyproject.toml": "",
        "modules/__init__.py": "",
        "modules/backbone.py": "import torch\nimport torch.nn as nn\n\n\nclass Backbone(nn.Module):\n"
        "    def init_backbone(self, path):\n        self.load_state_dict(torch.load(path))\n",
        "modules/net.py": "import torch\nimport torch.nn as nn\nfrom modules.backbone import Backbone\n\n\nclass Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.backbone = Backbone()\n\n"
        "    def load_weights(self, weight, cuda):\n        if cuda:\n            state_dict = torch.load(weight)\n"
        "        else:\n            state_dict = torch.load(weight, map_location='cpu')\n"
        "        self.load_state_dict(state_dict, strict=True)\n",
        "config.py": "import torch\nimport torch.distributed as dist\n\n\ndef get_config(args):\n"
        "    torch.cuda.set_device(args.local_rank)\n    dist.init_process_group(backend='nccl', init_method='env://')\n"
        "    return args\n",
        "utils.py": "import torch\n\n\ndef save_latest(net, step):\n    torch.save(net.state_dict(), f'weights/latest_{step}.pth')\n",
    }
    for name, text in helpers.items():
        (tmp_path / name).write_text(text)
    train = "\n".join((
        "import argparse", "import torch", "from torch.nn.parallel import DistributedDataParallel as DDP",
        "from modules.net import Net", "from config import get_config", "from utils import save_latest", "",
        "parser = argparse.ArgumentParser()", "parser.add_argument('--resume', type=str, default=None)",
        "parser.add_argument('--local_rank', type=int, default=0)", "args = parser.parse_args()", "cfg = get_config(args)",
        "net = Net()", "if args.resume:", "    net.load_weights(args.resume, True)", "else:",
        "    net.backbone.init_backbone('backbone.pth')", "net = DDP(net.cuda(), [args.local_rank])",
        "for step in range(10):", "    save_latest({saved}, step)", "",
    ))
    run.cwd = tmp_path
    for saved, expected in (("net.module", [("modules/net.py", 13, "DDP004")]), ("net.module.backbone", [])):
        (tmp_path / "train.py").write_text(train.format(saved=saved))
        assert _placed(run, "DDP004") == expected, saved


def _placed(run, code: str) -> list[tuple[str, int, str]]:
    """(path, line, code) of each finding of rule `code` on the project in run's folder."""
    return [(f[0], f[1], f[3]) for f in _findings(run("check", "--no-cache", "--select", code, ".").stdout)]


def test_a_test_module_s_wrapping_does_not_decide_what_a_training_function_is_handed(tmp_path, run):
    """open_lm's shape: a test helper (tests/shared.py) wraps a model in FSDP and hands it to the
    training module's `save_checkpoint`, whose `model.state_dict()` runs under a rank-0 guard;
    the entry point hands it a model the program does not follow. What a test passes is no fact
    of the training run: DDP008 says nothing. The same call from a training script is one."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "main.py").write_text(
        "import torch\nimport torch.distributed as dist\n\n\ndef save_checkpoint(model, path):\n"
        "    if dist.get_rank() == 0:\n        torch.save(model.state_dict(), path)\n\n\n"
        "def main():\n    dist.init_process_group('nccl')\n    model = torch.nn.Linear(2, 2).cuda()\n"
        "    save_checkpoint(model, 'ckpt.pt')\n\n\nif __name__ == '__main__':\n    main()\n"
    )
    helper = (
        "import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n\nfrom main import save_checkpoint\n\n\n"
        "def run_fsdp(path):\n    model = FSDP(torch.nn.Linear(2, 2))\n    save_checkpoint(model, path)\n"
    )
    run.cwd = tmp_path
    for where, expected in (("tests/shared.py", []), ("sharded.py", [("main.py", 7, "DDP008")])):
        (tmp_path / where).write_text(helper)
        assert _placed(run, "DDP008") == expected, where
        (tmp_path / where).unlink()


def _ddp022(tmp_path, run, files: dict[str, str]) -> list[tuple[str, int, str]]:
    """The DDP022 findings (path, line, code) of a project at `tmp_path` holding `files`."""
    _write_project(tmp_path, files)
    run.cwd = tmp_path
    return [(f[0], f[1], f[3]) for f in _findings(run("check", "--no-cache", "--select", "DDP022", ".").stdout)]


_PADDED_TEST = (
    "import torch\nimport torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
    "from {star} import *\n\n\n"
    "def score(model, batch):\n    return reduce_scalars({{'err': (model(batch[0]) - batch[1]).abs().mean()}})\n\n\n"
    "def main(model, test_set):\n    dist.init_process_group('nccl')\n"
    "    test_sampler = DistributedSampler(test_set, shuffle=False)\n"
    "    loader = DataLoader(test_set, sampler=test_sampler)\n"
    "    for batch in loader:\n        print(score(model, batch))\n"
)
_REDUCE_SCALARS = (
    "import torch\nimport torch.distributed as dist\n\n\n"
    "def reduce_scalars(scalars):\n    values = torch.stack(list(scalars.values()))\n"
    "    dist.reduce(values, dst=0)\n    return dict(zip(scalars, values / dist.get_world_size()))\n"
)


def test_a_name_a_chained_star_import_binds_reaches_its_definition(tmp_path, run):
    """DDP022 through a chained star import: main.py's `from helpers import *` binds every public
    name helpers/__init__.py binds, and that module's own `from helpers.comm import *` binds
    comm's reduce_scalars there (Python's star import, without `__all__`, takes every public
    name of the module's namespace, those an inner star import bound included): the metric is
    reduced across the padded ranks, as when main.py star-imports helpers.comm itself."""
    direct = _ddp022(tmp_path, run, {"main.py": _PADDED_TEST.format(star="helpers.comm"), "helpers/__init__.py": "",
                                     "helpers/comm.py": _REDUCE_SCALARS})
    assert direct == [("main.py", 13, "DDP022")]
    chained = _ddp022(tmp_path, run, {"main.py": _PADDED_TEST.format(star="helpers"),
                                      "helpers/__init__.py": "from helpers.comm import *\n"})
    assert chained == direct


def test_a_batch_sampler_a_builder_rewraps_for_training_still_pads_the_evaluation(tmp_path, run):
    """DDP022: the batch-sampler helper wraps the BatchSampler over the padded sampler in a
    re-batching subclass only when given a number of iterations (training); the evaluation
    call gives none, so its loader's batches hold the padded indices. The model learns what the
    helper's parameter holds after it first read the helper's returns: the way that returns the
    BatchSampler over the sampler then wins over the project object of the other way, as a
    conditional binding of the two always does."""
    build = (
        "import torch\nfrom torch.utils.data import BatchSampler, DataLoader, DistributedSampler, SequentialSampler\n\n\n"
        "class Repeated(BatchSampler):\n    def __init__(self, batches, iterations):\n"
        "        self.batches, self.iterations = batches, iterations\n\n\n"
        "def make_batches(sampler, per_gpu, iterations=None):\n"
        "    batches = BatchSampler(sampler, per_gpu, drop_last=False)\n"
        "    if iterations is not None:\n        batches = Repeated(batches, iterations)\n    return batches\n\n\n"
        "def make_sampler(dataset, shuffle, distributed):\n"
        "    if distributed:\n        return DistributedSampler(dataset, shuffle=shuffle)\n"
        "    return SequentialSampler(dataset)\n\n\n"
        "def make_loader(dataset, per_gpu, distributed=True, is_train=True):\n"
        "    if is_train:\n        shuffle, iterations = True, 1000\n    else:\n        shuffle, iterations = False, None\n"
        "    sampler = make_sampler(dataset, shuffle, distributed)\n"
        "    return DataLoader(dataset, batch_sampler=make_batches(sampler, per_gpu, iterations))\n"
    )
    train = (
        "import torch\nimport torch.distributed as dist\nfrom build import make_loader\n\n\n"
        "@torch.no_grad()\ndef validate(loader, model):\n    errors = []\n"
        "    for x, y in loader:\n        errors.append((model(x) - y).abs().mean())\n"
        "    error = torch.stack(errors).mean()\n    dist.all_reduce(error)\n    return error / dist.get_world_size()\n\n\n"
        "def main(model, val_set):\n    dist.init_process_group('nccl')\n"
        "    print(validate(make_loader(val_set, 8, True, is_train=False), model))\n"
    )
    assert _ddp022(tmp_path, run, {"build.py": build, "train.py": train}) == [("build.py", 19, "DDP022")]


def test_a_padding_sampler_class_its_own_module_builds_is_judged_there(tmp_path, run):
    """DDP022: utils.py defines its own copy of DistributedSampler (its `__iter__` pads the index
    list with its start) and builds it in make_data_sampler, beside a batch-sampler helper that
    re-batches only for training; make_loader returns the evaluation loader over the two, and the
    script all-reduces its metric. The file's imports do not name the class (it is the module's
    own), yet it is the padding class: the finding is at the sampler the builder makes. Where the
    script builds the loader over the helpers itself, the finding is the script's, at its sampler."""
    utils = (
        "import math\nimport torch.distributed as dist\nfrom torch.utils.data import BatchSampler, Sampler, SequentialSampler\n\n\n"
        "def make_data_sampler(dataset, shuffle, distributed):\n"
        "    if distributed:\n        return DistributedSampler(dataset, shuffle=shuffle)\n"
        "    return SequentialSampler(dataset)\n\n\n"
        "def make_batch_data_sampler(sampler, per_batch, iterations=None):\n"
        "    batches = BatchSampler(sampler, per_batch, drop_last=False)\n"
        "    if iterations is not None:\n        batches = Repeated(batches, iterations)\n    return batches\n\n\n"
        "class DistributedSampler(Sampler):\n    def __init__(self, dataset, shuffle=True):\n"
        "        self.dataset, self.shuffle = dataset, shuffle\n"
        "        self.num_replicas, self.rank = dist.get_world_size(), dist.get_rank()\n"
        "        self.num_samples = math.ceil(len(dataset) / self.num_replicas)\n"
        "        self.total_size = self.num_samples * self.num_replicas\n\n"
        "    def __iter__(self):\n        indices = list(range(len(self.dataset)))\n"
        "        indices += indices[: self.total_size - len(indices)]\n"
        "        return iter(indices[self.rank:self.total_size:self.num_replicas])\n\n\n"
        "class Repeated(BatchSampler):\n    def __init__(self, batches, iterations):\n"
        "        self.batches, self.iterations = batches, iterations\n\n\n"
        "def make_loader(dataset, distributed=True):\n"
        "    sampler = make_data_sampler(dataset, False, distributed)\n"
        "    return DataLoader(dataset, batch_sampler=make_batch_data_sampler(sampler, 1))\n"
    )
    utils = utils.replace("import BatchSampler, Sampler", "import BatchSampler, DataLoader, Sampler")
    validate = (
        "import torch\nimport torch.distributed as dist\nfrom torch.utils.data import DataLoader\n"
        "from utils import make_batch_data_sampler, make_data_sampler\n\n\n"
        "@torch.no_grad()\ndef validate(loader, model):\n    hits = torch.zeros(2)\n"
        "    for x, y in loader:\n        hits += torch.stack([(model(x).argmax(1) == y).sum(), torch.tensor(len(y))])\n"
        "    dist.all_reduce(hits)\n    return hits[0] / hits[1]\n\n\n"
    )
    built = validate.replace("from utils import make_batch_data_sampler, make_data_sampler", "from utils import make_loader") + (
        "def main(model, val_set):\n    dist.init_process_group('nccl')\n"
        "    print(validate(make_loader(val_set), model))\n"
    )
    assert _ddp022(tmp_path, run, {"utils.py": utils, "train.py": built}) == [("utils.py", 8, "DDP022")]
    own = validate + (
        "def main(model, val_set):\n    dist.init_process_group('nccl')\n"
        "    sampler = make_data_sampler(val_set, False, True)\n"
        "    loader = DataLoader(val_set, batch_sampler=make_batch_data_sampler(sampler, 1))\n"
        "    print(validate(loader, model))\n"
    )
    assert _ddp022(tmp_path, run, {"utils.py": utils, "train.py": own}) == [("train.py", 18, "DDP022")]


def test_a_training_loader_that_only_recalibrates_batch_norm_is_not_the_evaluated_one(tmp_path, run):
    """DDP022: validate() runs a few forward passes over the training loader to re-estimate
    BatchNorm statistics (its outputs discarded), then hands the validation loader to
    validate_one(), whose loop and all_reduce count the validation batches: that all_reduce
    combines what validate_one's own loop over the loader it is handed produced, so the training
    sampler's padding is counted in no metric; the validation sampler's is."""
    files = {
        "evaluation.py": (
            "import torch\nimport torch.distributed as dist\n\n\n"
            "def validate_one(val_loader, model):\n    hits = torch.zeros(2)\n"
            "    for x, y in val_loader:\n        hits += torch.stack([(model(x).argmax(1) == y).sum(), torch.tensor(len(y))])\n"
            "    dist.all_reduce(hits)\n    return hits[0] / hits[1]\n\n\n"
            "@torch.no_grad()\ndef validate(train_loader, val_loader, model, batches):\n"
            "    for step, (x, _) in enumerate(train_loader):\n        if step >= batches:\n            break\n        model(x)\n"
            "    return validate_one(val_loader, model)\n"
        ),
        "train.py": (
            "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
            "from evaluation import validate\n\n\n"
            "def main(model, train_set, val_set):\n    dist.init_process_group('nccl')\n"
            "    train_sampler = DistributedSampler(train_set)\n"
            "    train_loader = DataLoader(train_set, sampler=train_sampler, drop_last=True)\n"
            "    val_sampler = DistributedSampler(val_set, shuffle=False)\n"
            "    val_loader = DataLoader(val_set, sampler=val_sampler)\n"
            "    print(validate(train_loader, val_loader, model, 10))\n"
        ),
    }
    assert _ddp022(tmp_path, run, files) == [("train.py", 10, "DDP022")]


def test_documents_in_the_hidden_github_folder_are_the_projects_documented_runs(tmp_path, run):
    """DDP022: the README links instructions kept as Markdown in `.github/` (GitHub shows them as
    the repository's pages), which run evaluate.py only as plain `python`: one process, no
    ranks, nothing padded. A torchrun line there starts several."""
    script = (
        "import torch\nimport torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n\n\n"
        "def init(args):\n    if 'RANK' in __import__('os').environ:\n        args.distributed = True\n"
        "        dist.init_process_group('nccl')\n    else:\n        args.distributed = False\n\n\n"
        "@torch.no_grad()\ndef evaluate(model, loader):\n    hits = torch.zeros(2)\n"
        "    for x, y in loader:\n        hits += torch.stack([(model(x).argmax(1) == y).sum(), torch.tensor(len(y))])\n"
        "    if dist.is_initialized():\n        dist.all_reduce(hits)\n    return hits[0] / hits[1]\n\n\n"
        "def main(args, model, test_set):\n    init(args)\n"
        "    sampler = DistributedSampler(test_set, shuffle=False) if args.distributed else None\n"
        "    print(evaluate(model, DataLoader(test_set, sampler=sampler)))\n\n\n"
        "if __name__ == '__main__':\n    main(None, None, None)\n"
    )
    readme = "# Evaluation\n\nSee [the instructions](.github/eval.md).\n"
    files = {"scripts/evaluate.py": script, "README.md": readme, ".github/eval.md": "```\npython scripts/evaluate.py --split test\n```\n"}
    assert _ddp022(tmp_path, run, files) == []
    launched = {".github/eval.md": "```\ntorchrun --nproc_per_node=8 scripts/evaluate.py --split test\n```\n"}
    assert _ddp022(tmp_path, run, launched) == [("scripts/evaluate.py", 26, "DDP022")]


def test_an_mpi_collective_waits_for_the_ranks_only_where_an_mpi_launcher_starts_them(tmp_path, run):
    """mpi4py's `MPI.COMM_WORLD.bcast` waits for every process of the MPI world, which is the
    torch ranks only where an MPI launcher (mpiexec, mpirun, srun --mpi) starts them. Under
    torch.distributed.launch or torchrun each process is an MPI world of one (MDT's dist_util,
    kept from guided-diffusion): rank 0's bcast completes alone and nothing hangs. Where the
    project documents no launch, the group is unknown and nothing is reported."""
    root = _copy("mpi_broadcast_helper", tmp_path)
    run.cwd = root
    flagged = [("diffusion/train_util.py", 10, 40, "DDP008")]
    for command, expected in (
        ("mpiexec -n 4 python train.py", flagged),
        ("mpirun -np 4 python train.py", flagged),
        ("srun --mpi=pmix -n 4 python train.py", flagged),
        ("python -m torch.distributed.launch --nproc_per_node=4 train.py", []),
        ("torchrun --nproc_per_node=4 train.py", []),
        (None, []),
    ):
        if command is None:
            (root / "run.sh").unlink()
        else:
            (root / "run.sh").write_text(command + "\n")
        assert [f[:4] for f in _findings(run("check", "--no-cache", "--select", "DDP008", ".").stdout)] == expected, command


EVAL_SCRIPT = """import argparse

import torch
import torch.distributed as dist

from utils import init_distributed_mode


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    init_distributed_mode(args)
    torch.cuda.set_device(args.local_rank)


if __name__ == "__main__":
    raise SystemExit(main())
"""


# (path of the script, the project's launch command, whether it stays a test module)
TEST_NAMED_RUNS = (
    ("test_zeroshot.py", "python -m torch.distributed.launch --nproc_per_node=8 test_zeroshot.py --config a.yaml\n", False),
    ("test_zeroshot.py", "torchrun --nproc_per_node=8 train.py\n", True),
    ("tests/test_zeroshot.py", "python -m torch.distributed.launch --nproc_per_node=8 tests/test_zeroshot.py\n", True),
)


@pytest.mark.parametrize("path, runs, is_test", TEST_NAMED_RUNS)
def test_a_test_named_script_a_launch_command_runs_is_an_evaluation_script(tmp_path, run, path, runs, is_test):
    """whwu95's test_zeroshot.py: `python -m torch.distributed.launch --nproc_per_node=8
    test_zeroshot.py` in scripts/run_test_zeroshot.sh runs it as eight processes; it is an
    evaluation script, not a pytest module (Project.is_test), run by several processes, so DDP012
    reports its --local_rank parser. Unlaunched, or in a tests/ suite folder, it stays a test
    module that starts no processes itself: one process (its process group comes from utils.py)."""
    utils = "import torch.distributed as dist\n\n\ndef init_distributed_mode(args):\n    dist.init_process_group('nccl')\n"
    for name, text in {"pyproject.toml": "", "scripts/run.sh": runs, "train.py": "", "utils.py": utils, path: EVAL_SCRIPT}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    index = project.build(str(tmp_path))
    module = index.names[path]
    assert index.is_test(module) == is_test
    assert index.module_view(module).single_process == is_test
    run.cwd = tmp_path
    found = [(f[0], f[1], f[3]) for f in _findings(run("check", "--no-cache", "--select", "DDP012", ".").stdout)]
    assert found == ([] if is_test else [(path, 11, "DDP012")]), found


CONFTEST = """import os

import torch

if os.environ.get("PYTEST_XDIST_WORKER", "master") != "master" and torch.cuda.is_available():
    worker = int(os.environ["PYTEST_XDIST_WORKER"].lstrip("gw"))
    local_gpu_rank = worker % torch.cuda.device_count()
    torch.cuda.set_device(local_gpu_rank)
    os.environ["CUDA_VISIBLE_DEVICES"] = str(local_gpu_rank)
"""


@pytest.mark.parametrize("path, reported", [("pkg/utils/unittests/conftest.py", False), ("pkg/utils/gpus.py", True)])
def test_a_conftest_pinning_its_pytest_worker_is_no_rank(tmp_path, run, path, reported):
    """nequip's nequip/utils/unittests/conftest.py pins each pytest-xdist worker to a GPU with
    set_device and then sets CUDA_VISIBLE_DEVICES for the processes its tests launch: a conftest
    is test infrastructure that pytest imports into its own workers, no rank of a training run
    (DDP017's `_runs_in_test_runner`), so DDP017 says nothing there; the same code in a module of
    the package, which a rank may import, stays reported."""
    for name, text in {"pyproject.toml": "", "train.py": "import torch.distributed as dist\n", path: CONFTEST}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    run.cwd = tmp_path
    found = [(f[0], f[1], f[3]) for f in _findings(run("check", "--no-cache", "--select", "DDP017", ".").stdout)]
    assert found == ([(path, 9, "DDP017")] if reported else []), found


def test_whether_scripts_start_processes_parses_each_module_they_import_once(tmp_path, monkeypatch):
    """`starts_no_processes` is a union of each reached module's own facts (the starts its text
    holds, the top-level statements that may run one, the names it says), kept per module: two
    scripts that import the same 30 modules parse each once, and answer as before (a spawn in a
    function that no module names starts nothing; once a script calls it, it does)."""
    (tmp_path / ".git").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    spawner = "import torch.multiprocessing as mp\n\n\ndef launch_all(fn):\n    mp.spawn(fn, nprocs=2)\n\n\ndef seed():\n    pass\n"
    (tmp_path / "pkg" / "m0.py").write_text(spawner)
    for index in range(1, 30):
        (tmp_path / "pkg" / f"m{index}.py").write_text(f"from pkg.m{index - 1} import *\n\n\ndef helper{index}():\n    return {index}\n")
    imports = "from pkg.m0 import seed\n" + "".join(f"from pkg.m{index} import helper{index}\n" for index in range(1, 30))
    (tmp_path / "a.py").write_text(imports + "\nif __name__ == '__main__':\n    print(1)\n")
    (tmp_path / "b.py").write_text(imports + "\nif __name__ == '__main__':\n    print(2)\n")
    (tmp_path / "c.py").write_text(imports.replace("seed", "launch_all") + "\nif __name__ == '__main__':\n    launch_all(print)\n")
    index = project.build(str(tmp_path))
    parsed: list[str] = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *args, **kwargs: parsed.append(text) or real(text, *args, **kwargs))
    assert index.starts_no_processes("a") and index.starts_no_processes("b")
    assert not index.starts_no_processes("c")
    assert max(parsed.count(text) for text in parsed) == 1
    assert parsed.count(spawner) == 1
