"""DDP005: `set_sharing_strategy("file_system")` harms only where tensors cross processes, so
the program the setting runs in (the module, the modules importing it, what they import) must
start DataLoader workers or torch.multiprocessing processes, pools or queues."""

from __future__ import annotations

import re

_FINDING = re.compile(r"^(\S+?):(\d+):\d+: (DDP\d{3})", re.M)

HELPERS = (
    "import torch\nimport torch.multiprocessing\n\n"
    "torch.multiprocessing.set_sharing_strategy('file_system')\n\n\n"
    "def load_encoder(path):\n    return torch.load(path, map_location='cpu')\n"
)


def _sharing_findings(run) -> list[tuple[str, int]]:
    out = run("check", "--no-cache", "--select", "DDP005", ".").stdout
    return sorted((path.removeprefix("./"), int(line)) for path, line, _ in _FINDING.findall(out))


def test_a_program_with_no_worker_process_is_spared(tmp_path, run):
    """An inference helper sets the strategy, and the one script importing it runs the model on
    one image in the main process: no tensor crosses processes."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "encoders.py").write_text(HELPERS)
    (tmp_path / "infer.py").write_text(
        "import sys\nfrom encoders import load_encoder\n\n"
        "model = load_encoder(sys.argv[1])\nprint(model(torch.rand(1, 3, 256, 256)))\n"
    )
    assert _sharing_findings(run) == []


def test_a_worker_loader_in_an_importing_script_is_reported(tmp_path, run):
    """The same helper, imported by a script that iterates a DataLoader with worker processes:
    batches come back from the workers through shared memory, under file_system."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "encoders.py").write_text(HELPERS)
    (tmp_path / "embed.py").write_text(
        "import sys\nfrom torch.utils.data import DataLoader\nfrom encoders import load_encoder\n\n"
        "model = load_encoder(sys.argv[1])\n"
        "for batch in DataLoader(patches, batch_size=64, num_workers=4):\n    print(model(batch))\n"
    )
    assert _sharing_findings(run) == [("encoders.py", 4)]


def test_a_spawned_process_in_an_imported_module_is_reported(tmp_path, run):
    """The script that sets the strategy imports a module that spawns processes."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "launch.py").write_text(
        "import torch.multiprocessing as mp\n\n\ndef start(worker, n):\n    mp.spawn(worker, nprocs=n)\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch.multiprocessing as mp\nfrom launch import start\n\n"
        "mp.set_sharing_strategy('file_system')\nstart(print, 2)\n"
    )
    assert _sharing_findings(run) == [("train.py", 4)]


_SCORER = (
    "from torch.utils.data import DataLoader\n\n\n"
    "def score(images, num_workers=8):\n"
    "    loader = DataLoader(images, batch_size=50, num_workers=num_workers)\n"
    "    return sum(batch.sum() for batch in loader)\n"
)
_LOADING = (
    "import torch\nimport torch.multiprocessing as mp\nfrom scorer import score\n\n"
    "mp.set_sharing_strategy('file_system')\n\n\n"
    "def train(images):\n"
    "    loader = torch.utils.data.DataLoader(images, batch_size=4{workers})\n"
    "    for batch in loader:\n        print(batch.sum())\n{last}\n\n"
    "if __name__ == '__main__':\n    train(torch.rand(8, 3))\n"
)


def test_loaders_without_workers_share_no_tensors(tmp_path, run):
    """The script's DataLoader has no workers (num_workers left out or 0: batches are loaded in
    the process itself), and the helper that would start workers is imported but never called:
    no tensor crosses processes. A count of workers that is not a literal 0, or a call of the
    helper (its default of 8 workers), is reported."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "scorer.py").write_text(_SCORER)
    for workers, last, reported in (
        ("", "", False),
        (", num_workers=0", "", False),
        (", num_workers=2", "", True),
        (", num_workers=int(sys.argv[1])", "", True),
        ("", "    print(score(images))\n", True),
    ):
        (tmp_path / "train.py").write_text(_LOADING.format(workers=workers, last=last))
        assert _sharing_findings(run) == ([("train.py", 5)] if reported else []), (workers, last)


def test_a_helper_module_no_project_code_imports_is_called_from_outside(tmp_path, run):
    """A helper module that sets the strategy and whose function iterates a loader with workers,
    imported by no module of the project (a notebook or a user's script calls it): its
    functions are its entry points, and the loader's batches cross processes."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "embeddings.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader\n\n"
        "torch.multiprocessing.set_sharing_strategy('file_system')\n\n\n"
        "def _mean(model, slides):\n"
        "    return [model(batch).mean(0) for batch in DataLoader(slides, batch_size=1, num_workers=4)]\n\n\n"
        "def embed_slides(model, slides):\n    return torch.stack(_mean(model, slides))\n"
    )
    assert _sharing_findings(run) == [("embeddings.py", 4)]


_LAUNCHER = (
    "import json\nimport torch\nimport torch.multiprocessing as mp\nfrom torch.utils.data import DataLoader\n"
    "from hosts import master_ip\n\n\n"
    "def main_worker(rank, config):\n"
    "    for batch in DataLoader(range(64), batch_size=4, num_workers=4):\n        print(rank, batch)\n\n\n"
    "if __name__ == '__main__':\n"
    "    mp.set_sharing_strategy('file_system')\n"
    "    config = json.load(open('config.json'))\n"
    "    config['world_size'] = torch.cuda.device_count()\n"
    "    config['init_method'] = f'tcp://{{master_ip()}}:23456'\n"
    "    config['distributed'] = True if config['world_size'] > 1 else False\n"
    "{start}\n"
)


def test_a_launcher_that_spawns_its_ranks_keeps_the_strategy_to_itself(tmp_path, run):
    """The strategy is set in the `__main__` block of a launcher that hands every rank to
    `mp.spawn`: a spawned rank is a new interpreter that imports the script as `__mp_main__`,
    where that block does not run, so each rank and the loader workers it starts keep
    file_descriptor (measured on torch 2.13: the child and its workers report
    file_descriptor). The launcher itself starts no loader and hands the ranks plain data.
    Reported: a tensor in the spawn's args (the launcher shares it under file_system: a
    torch_shm_manager starts), a rank the launcher runs itself, children forked (they inherit
    the setting), and the strategy set outside the block (every rank runs that)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "hosts.py").write_text("import os\n\n\ndef master_ip():\n    return os.environ.get('MASTER_ADDR', '127.0.0.1')\n")
    spawn = "    mp.spawn(main_worker, nprocs=torch.cuda.device_count(), args=(config, ))"
    for start, reported in (
        (spawn, False),
        ("    mp.start_processes(main_worker, args=(config,), nprocs=2)", False),
        ("    mp.spawn(main_worker, nprocs=2, args=(config, torch.zeros(4)))", True),
        ("    config['mean'] = torch.zeros(3)\n" + spawn, True),
        ("    if config['distributed']:\n    " + spawn + "\n    else:\n        main_worker(0, config)", True),
        ("    mp.start_processes(main_worker, args=(config,), nprocs=2, start_method='fork')", True),
    ):
        (tmp_path / "train.py").write_text(_LAUNCHER.format(start=start))
        assert _sharing_findings(run) == ([("train.py", 14)] if reported else []), start
    outside = _LAUNCHER.format(start=spawn).replace("    mp.set_sharing_strategy('file_system')\n", "")
    (tmp_path / "train.py").write_text(outside.replace("from hosts", "mp.set_sharing_strategy('file_system')\nfrom hosts"))
    assert _sharing_findings(run) == [("train.py", 5)]


_INFERENCE = """\
import argparse

import torch
from data.loaders import get_loader

torch.multiprocessing.set_sharing_strategy("file_system")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_workers", default=8, type=int, help="workers of the DataLoader")
    parser.add_argument("--data", default="cases/")
    args = parser.parse_args()
    for batch in get_loader(args.data):
        print(batch.shape)
{tail}

if __name__ == "__main__":
    main()
"""

_LOADERS = """\
from torch.utils.data import DataLoader


def get_loader(root):
    return DataLoader(list_cases(root), batch_size=1, shuffle=False, num_workers=0)


def list_cases(root):
    return [root]
{tail}"""

_SELF_TEST = """

if __name__ == "__main__":
    for item in DataLoader(list_cases("cases/"), num_workers=4):
        print(item)
"""


def _inference_project(tmp_path, inference_tail: str = "", loaders_tail: str = "") -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "__init__.py").write_text("")
    (tmp_path / "data" / "loaders.py").write_text(_LOADERS.format(tail=loaders_tail))
    (tmp_path / "inference.py").write_text(_INFERENCE.format(tail=inference_tail))


def test_an_option_declared_for_workers_and_an_imported_modules_self_test_start_no_worker(tmp_path, run):
    """inference.py declares `--num_workers` (its name and help say workers and DataLoader) but
    its one loader is `DataLoader(..., num_workers=0)`: batches load in the process itself. The
    `if __name__ == "__main__":` self-test of data/loaders.py starts workers only where that file
    is the script, a program without inference.py's setting; imported, the block never runs."""
    _inference_project(tmp_path, loaders_tail=_SELF_TEST)
    assert _sharing_findings(run) == []


def test_the_scripts_own_main_block_and_a_loader_given_the_option_start_workers(tmp_path, run):
    """The same self-test in the script's own `__main__` block runs; so does a loader built
    with the declared count."""
    _inference_project(tmp_path)
    with open(tmp_path / "inference.py", "a") as script:
        script.write(_SELF_TEST.replace("list_cases", "list"))
    assert _sharing_findings(run) == [("inference.py", 6)]
    _inference_project(tmp_path, inference_tail="    torch.utils.data.DataLoader([args.data], num_workers=args.num_workers)\n")
    assert _sharing_findings(run) == [("inference.py", 6)]
