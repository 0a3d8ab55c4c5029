"""The `installed` fixture: ddplint from a wheel, beside the torch of the environment that runs
the tests, whether that is the system's Python or a virtual environment."""

import subprocess

import pytest

torch = pytest.importorskip("torch")


def test_the_wheel_runs_with_the_torch_of_this_environment(installed, tmp_path):
    code = "import ddplint, torch; print(ddplint.__file__); print(torch.__file__)"
    shown = subprocess.run([str(installed.bin / "python"), "-c", code], cwd=tmp_path, env=installed.env,
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert shown[0].startswith(str(installed.bin.parent)), shown
    assert shown[1] == torch.__file__
