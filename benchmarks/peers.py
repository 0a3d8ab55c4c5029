#!/usr/bin/env python3
"""Create one virtual environment per peer tool under ``benchmarks/venvs/``.

Every package is pinned, transitive dependencies included, so that the peers
measured are the same from one machine to the next.  TorchFix needs
``libcst<1.6``, which is why each peer has its own environment rather than
sharing the main Python's.

After installing, each tool is run on a small file that has a mistake it is
known to report, and the script fails loudly if a tool does not run or does
not report it.  ``benchmarks/venvs/peers.json`` records what was installed and
the exact commands; ``run.py`` reads it.

Usage:  python benchmarks/peers.py [--recreate]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENVS = HERE / "venvs"
INFO = VENVS / "peers.json"

# venv name -> exact pins (the full `pip freeze` of the venv).
PINS: dict[str, list[str]] = {
    "torchfix": [
        "TorchFix==0.7.0",
        "libcst==1.5.1",
        "PyYAML==6.0.3",
        "flake8==7.5.0",
        "mccabe==0.7.0",
        "pycodestyle==2.15.0",
        "pyflakes==4.1.0",
    ],
    "fixit": [
        "fixit==2.2.1",
        "libcst==1.9.0",
        "click==8.1.8",
        "moreorless==0.6.0",
        "packaging==26.3",
        "pathspec==1.1.1",
        "PyYAML==6.0.3",
        "trailrunner==1.4.0",
    ],
    "flake8-bugbear": [
        "flake8==7.5.0",
        "flake8-bugbear==26.10.27",
        "attrs==26.1.0",
        "mccabe==0.7.0",
        "pycodestyle==2.15.0",
        "pyflakes==4.1.0",
    ],
    "ruff": [
        "ruff==0.17.5",
    ],
    # Plain flake8 for the editor case: the same flake8 as the main python's,
    # but no plugins installed (the main python may have ddplint installed,
    # and flake8 runs every installed plugin whatever --select says).  libcst
    # is here so that run.py can load ddplint into it as a local plugin.
    "flake8": [
        "flake8==7.5.0",
        "mccabe==0.7.0",
        "pycodestyle==2.15.0",
        "pyflakes==4.1.0",
        "libcst==1.9.0",
        "PyYAML==6.0.3",
    ],
}

# Small probe programs, and what each tool must say about them.
PROBE_TORCH = """\
import torch


def load(path, cache=[]):
    try:
        return torch.load(path)
    except:
        return None
"""

PROBE_FIXIT = """\
class Model(object):
    pass
"""

PROBE_FIXIT_F401 = "import os\n"

# venv -> (executable in venv/bin, argv after it ({path} is the probe), probe, needle)
CHECKS: dict[str, tuple[str, list[str], str, str]] = {
    "torchfix": ("torchfix", ["--select", "ALL", "{path}"], PROBE_TORCH, "TOR102"),
    "fixit": ("fixit", ["lint", "{path}"], PROBE_FIXIT, "NoInheritFromObject"),
    "flake8-bugbear": ("flake8", ["--isolated", "--select", "B", "{path}"], PROBE_TORCH, "B006"),
    "flake8": ("flake8", ["--isolated", "--select", "F401", "{path}"], PROBE_FIXIT_F401, "F401"),
    "ruff": (
        "ruff",
        ["check", "--isolated", "--no-respect-gitignore", "--select", "B", "--no-cache", "{path}"],
        PROBE_TORCH,
        "B006",
    ),
}


def log(msg: str) -> None:
    print(msg, flush=True)


def bin_dir(venv: Path) -> Path:
    return venv / ("Scripts" if sys.platform == "win32" else "bin")


def frozen(venv: Path) -> set[str]:
    r = subprocess.run(
        [str(bin_dir(venv) / "python"), "-m", "pip", "freeze", "--all"],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        return set()
    skip = {"pip", "setuptools", "wheel"}
    return {
        line.strip().lower()
        for line in r.stdout.splitlines()
        if line.strip() and line.split("==")[0].lower() not in skip
    }


def ensure_venv(name: str, pins: list[str], recreate: bool) -> Path:
    venv = VENVS / name
    want = {p.lower() for p in pins}
    if venv.exists() and not recreate and frozen(venv) == want:
        log(f"[{name}] up to date")
        return venv
    if venv.exists():
        shutil.rmtree(venv)
    log(f"[{name}] creating venv and installing {' '.join(pins)}")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(bin_dir(venv) / "python"), "-m", "pip", "install", "--quiet", "--no-deps", *pins],
        check=True,
    )
    got = frozen(venv)
    if got != want:
        raise SystemExit(f"[{name}] installed set differs from the pins: {sorted(got ^ want)}")
    # --no-deps skips the resolver; make sure nothing is missing.
    r = subprocess.run(
        [str(bin_dir(venv) / "python"), "-m", "pip", "check"], capture_output=True, text=True
    )
    if r.returncode != 0:
        raise SystemExit(f"[{name}] pip check failed:\n{r.stdout}{r.stderr}")
    return venv


def check_tool(name: str, venv: Path, workdir: Path) -> dict:
    exe, argv, probe, needle = CHECKS[name]
    path = workdir / f"probe_{name.replace('-', '_')}.py"
    path.write_text(probe)
    cmd = [str(bin_dir(venv) / exe)] + [a.replace("{path}", str(path)) for a in argv]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    out = r.stdout + r.stderr
    ok = r.returncode in (0, 1) and needle in out
    log(f"[{name}] probe: exit {r.returncode}, {'found' if needle in out else 'MISSING'} {needle}")
    if not ok:
        log(out[-3000:])
    version = subprocess.run(
        [str(bin_dir(venv) / exe), "--version"], capture_output=True, text=True
    ).stdout.strip()
    return {
        "ok": ok,
        "exe": str(bin_dir(venv) / exe),
        "version": version.splitlines()[0] if version else "",
        "pins": PINS[name],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recreate", action="store_true", help="rebuild every venv from scratch")
    ap.add_argument("only", nargs="*", help=f"peers to set up (default all): {', '.join(PINS)}")
    args = ap.parse_args()
    names = args.only or list(PINS)
    unknown = [n for n in names if n not in PINS]
    if unknown:
        ap.error(f"unknown peer(s): {', '.join(unknown)}")

    VENVS.mkdir(parents=True, exist_ok=True)
    info = json.loads(INFO.read_text()) if INFO.exists() else {}
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            try:
                venv = ensure_venv(name, PINS[name], args.recreate)
                info[name] = check_tool(name, venv, Path(tmp))
            except (subprocess.CalledProcessError, SystemExit) as exc:
                log(f"[{name}] FAILED: {exc}")
                info[name] = {"ok": False, "error": str(exc), "pins": PINS[name]}
            if not info[name]["ok"]:
                failed.append(name)
    INFO.write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
    log(f"wrote {INFO.relative_to(HERE.parent)}")
    if failed:
        log("FAILED: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
