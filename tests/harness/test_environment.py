"""The environment check before `verify` runs anything: torch, its build, and the packages built
against it (issue 40's set-up). No launch."""

import textwrap

import pytest

from ddplint.harness import cli, environment
from ddplint.harness.environment import Environment, check

NMS = "RuntimeError: operator torchvision::nms does not exist"


def test_no_torch_names_the_cpu_build_to_install():
    (stop,), notes = check(Environment(torch_error="ModuleNotFoundError: No module named 'torch'"), set())
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in stop and notes == []


def test_a_cuda_build_without_a_gpu_is_named_and_kept():
    stops, (note,) = check(Environment("2.13.0", "12.8", 0), set())
    assert stops == []
    assert "torch 2.13.0 is a CUDA 12.8 build and no GPU is visible" in note
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in note
    assert check(Environment("2.13.0", "12.8", 2), set()) == ([], [])


@pytest.mark.parametrize("torch_version, cuda, folder", [
    ("2.13.0+cpu", None, "cpu"), ("2.13.0+cu128", "12.8", "cu128"), ("2.13.0", "12.8", "cu128"),
    ("2.13.0", None, "cpu")])
def test_a_torchvision_built_for_another_torch_stops_a_script_that_imports_it(torch_version, cuda, folder):
    env = Environment(torch_version, cuda, 0, {"torchvision": {"error": NMS}})
    (stop,), _ = check(env, {"torchvision"})
    assert f"torchvision does not import with torch {torch_version} ({NMS})" in stop
    assert stop.endswith(f"pip install --force-reinstall --no-deps torchvision==0.28.0 "
                         f"--index-url https://download.pytorch.org/whl/{folder}")
    # A script that does not import it is only told.
    stops, notes = check(env, set())
    assert stops == [] and notes[-1].endswith("(the script does not import torchvision)")


def test_companions_imported_by_the_project(tmp_path):
    (tmp_path / "train.py").write_text("import torch\nfrom torchvision import models\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "x.py").write_text("import torchaudio\n")
    (tmp_path / "notes.py").write_text("# import torchaudio is not needed\n")
    assert environment.imported_companions(tmp_path) == {"torchvision"}


BROKEN_TORCHVISION = '''
raise RuntimeError("operator torchvision::nms does not exist")
'''


def test_verify_stops_before_running_with_what_to_install(tmp_path, monkeypatch, error_line):
    """A torchvision that does not load with this torch, as pip gives beside a CPU torch: one line,
    exit 2, nothing run."""
    pytest.importorskip("torch")
    site = tmp_path / "site"
    (site / "torchvision").mkdir(parents=True)
    (site / "torchvision" / "__init__.py").write_text(BROKEN_TORCHVISION)
    monkeypatch.setenv("PYTHONPATH", str(site))
    found = environment.probe()
    assert found.companions["torchvision"] == {"error": NMS} and found.torch
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text(textwrap.dedent("""
        import torch
        import torchvision
        from torch.utils.data import DataLoader, DistributedSampler
        for epoch in range(2):
            for batch in DataLoader([1, 2], sampler=DistributedSampler([1, 2])):
                pass
        """))
    assert cli.main(["--script", str(project / "train.py")]) == 2
    line = error_line()
    assert line.startswith(f"ddplint verify: torchvision does not import with torch {found.torch}")
    assert "--index-url https://download.pytorch.org/whl/cpu" in line


def test_a_torch_before_2_is_refused_with_what_to_install():
    (stop,), _ = check(Environment("1.13.1+cu117", "11.7"), set())
    assert stop.startswith("needs torch 2 (2.0 or later, before 3); this is torch 1.13.1+cu117")
    assert stop.endswith("--index-url https://download.pytorch.org/whl/cu117")
