import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "e2e: runs real multi-process DDP programs under torchrun (slow, needs torch)"
    )


def pytest_itemcollected(item):
    # Launches of real DDP jobs run one after another on one xdist worker: they measure
    # /dev/shm files and processes, and two jobs at once on 2 cores only slow each other.
    # Marked as each test is collected, before xdist turns the group mark into the node id's
    # "@harness" suffix in its pytest_collection_modifyitems (a mark added in that hook may
    # come after xdist's, and then does nothing).
    if HERE in Path(str(item.fspath)).resolve().parents:
        item.add_marker(pytest.mark.xdist_group("harness"))
        item.add_marker(pytest.mark.harness)


class Installed:
    """ddplint installed from a wheel built from this checkout, in a fresh virtual environment
    that also sees the packages of the environment running the tests (torch is not installed
    again)."""

    def __init__(self, venv: Path) -> None:
        self.bin = venv / "bin"
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def run(self, *args: str, cwd: Path, timeout: float = 900, env: dict | None = None) -> subprocess.CompletedProcess:
        """`env`: variables set on top of this environment's."""
        return subprocess.run([str(self.bin / "ddplint"), *args], cwd=cwd, env={**self.env, **(env or {})},
                              capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> Installed:
    pytest.importorskip("torch")
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "ddplint", src / "ddplint", ignore=shutil.ignore_patterns("__pycache__"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w",
                    str(work / "dist"), str(src)], check=True, capture_output=True)
    (wheel,) = (work / "dist").glob("ddplint-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    see_site_packages_of_this_environment(venv)
    subprocess.run([str(venv / "bin" / "python"), *pip[1:], "install", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True)
    shutil.rmtree(src)
    return Installed(venv)


def see_site_packages_of_this_environment(venv: Path) -> None:
    """Put this environment's site-packages after `venv`'s own on its path. Not
    `venv --system-site-packages`: run from a virtual environment, that gives the base
    interpreter's packages, not this environment's (where torch is)."""
    outer = site.getsitepackages()
    if site.ENABLE_USER_SITE:
        outer.append(site.getusersitepackages())
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "_ddplint_outer_site.pth").write_text("".join(f"{path}\n" for path in outer))


@pytest.fixture
def error_line(capsys):
    """What a command printed on stderr, checked to be one line and no traceback."""
    def read() -> str:
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.count("\n") == 1, err
        return err
    return read
