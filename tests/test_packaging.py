"""What pyproject.toml promises about Pythons and torch, and that CI checks those promises."""

import re
import sys

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from ddplint_test_support import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
EXTRAS = {name: [Requirement(text) for text in texts] for name, texts in PROJECT["optional-dependencies"].items()}
CI = (REPO / ".ci" / "run").read_text()


def torch_in(extra: str) -> Requirement:
    (torch,) = [req for req in EXTRAS[extra] if req.name == "torch"]
    return torch


def test_the_harness_extra_pulls_no_torch_and_verify_checks_the_tested_one():
    """`pip install "ddplint[harness]"` on a machine without a GPU must not fetch the CUDA build
    pip picks on Linux; verify's own check accepts the torch the tests pin (issue 40)."""
    from ddplint.harness import environment

    assert not any(req.name == "torch" for req in EXTRAS["harness"])
    (pin,) = torch_in("test").specifier
    assert pin.operator == "=="
    assert environment.supported(pin.version) and environment.supported(pin.version + "+cpu")
    assert not environment.supported("1.13.1") and not environment.supported("3.0.0")


def test_only_the_test_set_up_pins_torch():
    pinned = [name for name, reqs in EXTRAS.items() for req in reqs if req.name == "torch" and "==" in str(req.specifier)]
    assert pinned == ["test"]
    assert not any(req.name == "torch" for req in EXTRAS["test-no-torch"])
    assert Requirement("ddplint[test-no-torch,harness]") in EXTRAS["test"]


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    (command,) = re.findall(r"^python3 -m pip install -q -e \"\.\[test\]\".*$", readme, re.M)
    assert command in CI


def test_ci_tests_every_supported_python():
    """The classifiers name the supported Pythons; the oldest is the floor of requires-python.
    CI runs the README's command on python3 (3.11) and loops over the others: a Python left out
    hid a crash that only 3.12's ast shows (a FunctionDef built without type_params)."""
    prefix = "Programming Language :: Python :: "
    supported = sorted((tuple(map(int, c[len(prefix):].split("."))) for c in PROJECT["classifiers"]
                        if re.fullmatch(re.escape(prefix) + r"3\.\d+", c)))
    floor = SpecifierSet(PROJECT["requires-python"])
    assert floor.contains("%d.%d.0" % supported[0]) and not floor.contains("%d.%d.0" % (3, supported[0][1] - 1))
    (tested,) = re.findall(r"^for version in ([\d. ]+); do", CI, re.M)
    assert sorted([*tested.split(), "3.11"]) == ["%d.%d" % v for v in supported]
