"""Jupyter notebooks: linted cell by cell positions, fixed in their sources only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebook tests build notebooks with nbformat")

from ddplint.commands.notebook import _invalid, parse_notebook, split_cells  # noqa: E402


def _notebook(*cells: str, outputs: bool = True, language: str = "python") -> str:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "k", "display_name": "K", "language": language}
    notebook.cells = [nbformat.v4.new_markdown_cell("# Training")]
    for source in cells:
        cell = nbformat.v4.new_code_cell(source)
        if outputs:
            cell.outputs = [nbformat.v4.new_output("stream", text="loss 0.5 \u00e9\n")]
            cell.execution_count = 7
        notebook.cells.append(cell)
    return nbformat.writes(notebook) + "\n"


TRAIN = _notebook(
    "%matplotlib inline\n!pip install torch\nimport torch.distributed",
    "files = !ls\nmodel = torch.load('ckpt.pt')\nmodel?",
    "%%bash\necho torch.load('x')",
    "torch.multiprocessing.spawn(train, nprocs=2)",  # the notebook starts its ranks itself
)


def test_cells_are_linted_with_magics_masked_and_cell_positions(run, tmp_path: Path) -> None:
    (tmp_path / "train.ipynb").write_text(TRAIN)
    result = run("train.ipynb")
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0].startswith("train.ipynb:cell 3:2:9: DDP004 ")
    assert "Found 1 problem" in result.stdout  # not the torch.load in the %%bash cell

    [finding] = json.loads(run("train.ipynb", "--output-format", "json").stdout)
    assert (finding["cell"], finding["line"], finding["column"]) == (3, 2, 9)
    assert finding["fix"]["edits"][0]["line"] == 2
    [annotation] = run("train.ipynb", "--output-format", "github").stdout.splitlines()
    assert annotation.startswith("::error file=train.ipynb,title=DDP004 torch-load-without-map-location::cell 3, line 2: DDP004 ")
    sarif = json.loads(run("train.ipynb", "--output-format", "sarif").stdout)
    [sarif_result] = sarif["runs"][0]["results"]
    assert sarif_result["properties"] == {"cell": 3}
    assert sarif_result["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_fix_rewrites_only_the_cell_source(run, tmp_path: Path) -> None:
    path = tmp_path / "train.ipynb"
    path.write_text(TRAIN)
    result = run("--fix", "train.ipynb")
    assert result.returncode == 0, result.stderr
    fixed = path.read_text()
    old = json.dumps("model = torch.load('ckpt.pt')\n")
    new = json.dumps("model = torch.load('ckpt.pt', map_location=\"cpu\")\n")
    assert TRAIN.count(old) == 1 and fixed == TRAIN.replace(old, new)  # every other byte as it was
    nbformat.validate(nbformat.reads(fixed, as_version=4))
    assert run("train.ipynb").returncode == 0


def test_an_added_import_goes_to_the_first_code_cell_and_layout_is_kept(run, tmp_path: Path) -> None:
    # Not nbformat's layout: two-space indent, sources as plain strings, ASCII escapes.
    data = json.loads(
        _notebook("import torch.multiprocessing as mp", "x = 1\nmp.set_sharing_strategy('file_system')\nbatches = DataLoader(dataset, num_workers=4)\n", outputs=False)
    )
    for cell in data["cells"]:
        cell["source"] = "".join(cell["source"])
    text = json.dumps(data, indent=2, ensure_ascii=True)
    path = tmp_path / "shm.ipynb"
    path.write_text(text)
    assert run("--fix", "--unsafe-fixes", "shm.ipynb").returncode == 0
    fixed = json.loads(path.read_text())
    # The fix's import lands in the first code cell; the one it orphans there is removed.
    assert fixed["cells"][1]["source"] == "import resource"
    assert "file_system" not in fixed["cells"][2]["source"]
    expected = text
    for before, after in zip(data["cells"], fixed["cells"]):
        expected = expected.replace(json.dumps(before["source"]), json.dumps(after["source"]))
    assert path.read_text() == expected


def test_folders_include_notebooks_unless_switched_off(run, tmp_path: Path) -> None:
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "train.ipynb").write_text(TRAIN)
    assert run("nb").returncode == 1
    off = run("--no-notebooks", "nb")
    assert off.returncode == 0 and "no Python files found" in off.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.ddplint]\ninclude-notebooks = false\n")
    assert run("nb").returncode == 0
    assert run("nb/train.ipynb").returncode == 1  # a notebook named on the command line is checked


def test_an_empty_run_warns_and_exits_0(run, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("torch.load('x')\n")
    result = run("docs")
    assert result.returncode == 0
    assert result.stderr == "ddplint: warning: no Python files found under the given paths\n"


def test_bad_notebooks_are_one_line_errors(run, tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text('{"cells": [')
    (tmp_path / "list.ipynb").write_text("[1, 2]")
    spawns = "import torch.distributed\ntorch.multiprocessing.spawn(f, nprocs=2)"  # ranks: the rules parse it
    (tmp_path / "syntax.ipynb").write_text(_notebook(spawns, "def f(:\n    torch.load(p)"))
    (tmp_path / "r.ipynb").write_text(_notebook("torch.load('x')", language="R"))
    result = run(".")
    assert result.returncode == 2
    errors = result.stderr.splitlines()
    assert errors[0].startswith("broken.ipynb: cannot read: not a notebook (")
    assert errors[1] == "list.ipynb: cannot read: not a notebook (unexpected structure)"
    assert errors[2].startswith("syntax.ipynb: cannot parse: ") and "(cell 3, line 1, column" in errors[2]
    assert len(errors) == 3  # the R notebook is not Python: skipped


def test_joining_and_splitting_round_trips() -> None:
    notebook = parse_notebook(_notebook("!ls\nimport torch.distributed", "if x:\n    %time f()\n", 'y = ("%d"\n     % 2)'))
    joined, origin, masked = notebook.joined()
    assert masked == ["!ls", "    %time f()"]
    assert origin[:3] == [(2, 1), (2, 2), None]
    assert joined.endswith('y = ("%d"\n     % 2)\n')  # plain Python: nothing masked
    expected = {2: "!ls\nimport torch.distributed\n", 3: "if x:\n    %time f()\n", 4: 'y = ("%d"\n     % 2)\n'}
    assert split_cells(joined, masked, [2, 3, 4]) == expected
    assert split_cells(joined.replace("# ddplint:cell:3\n", ""), masked, [2, 3, 4]) is None


def test_add_noqa_writes_into_the_cells_and_leaves_the_rest_of_the_json(run, tmp_path: Path) -> None:
    (tmp_path / "train.ipynb").write_text(TRAIN)
    result = run("--add-noqa", "train.ipynb")
    assert (result.returncode, result.stdout, result.stderr) == (0, "Added 1 noqa comment.\n", "")
    expected = TRAIN.replace("model = torch.load('ckpt.pt')\\n", "model = torch.load('ckpt.pt')  # noqa: DDP004\\n")
    assert expected != TRAIN and (tmp_path / "train.ipynb").read_text() == expected  # magics and outputs kept
    assert run("train.ipynb").returncode == 0


def test_what_fix_would_write_is_validated() -> None:
    assert _invalid(TRAIN) is None
    assert _invalid(TRAIN.replace('"cell_type": "code"', '"cell_type": "kode"', 1)) is not None
    assert _invalid("{") is not None


def test_a_notebook_buffer_on_stdin(run, tmp_path: Path) -> None:
    fixed = run("--fix", "-", "--stdin-filename", "train.ipynb", stdin=TRAIN)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == TRAIN.replace("torch.load('ckpt.pt')", "torch.load('ckpt.pt', map_location=\\\"cpu\\\")")
    linted = run("-", "--stdin-filename", "train.ipynb", stdin=TRAIN)
    assert linted.returncode == 1 and linted.stdout.startswith("train.ipynb:cell 3:2:9: DDP004")
    other = _notebook("torch.load('x')", language="R")
    assert run("--fix", "-", "--stdin-filename", "r.ipynb", stdin=other).stdout == other


# A notebook whose dist_init cell forms a process group: one kernel runs it, a world of one.
KERNEL = (
    "import os\nimport torch\nimport torch.distributed as dist\n"
    "dist.init_process_group('gloo', rank=int(os.environ['SLURM_PROCID']), world_size=int(os.environ['SLURM_NTASKS']))",
    "state = torch.load('last-checkpoint.bin')\ntorch.save(state, 'best.bin')",
)


def test_a_notebook_runs_as_one_kernel_process(run, tmp_path: Path) -> None:
    (tmp_path / "train.ipynb").write_text(_notebook(*KERNEL))
    result = run("train.ipynb")
    assert (result.returncode, result.stdout.splitlines()[:1]) == (0, ["No problems found."]), result.stdout


def test_a_notebook_that_launches_its_ranks_is_checked_as_ranks(run, tmp_path: Path) -> None:
    launched = "from accelerate import notebook_launcher\nnotebook_launcher(main, num_processes=2)"
    (tmp_path / "train.ipynb").write_text(_notebook(*KERNEL, launched))
    result = run("train.ipynb", "--select", "DDP004")
    assert result.returncode == 1, result.stdout
    assert result.stdout.splitlines()[0].startswith("train.ipynb:cell 3:1:9: DDP004 ")
