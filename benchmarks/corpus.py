#!/usr/bin/env python3
"""Build the benchmark corpus of real Python code.

Sources, all pinned:

* eight releases downloaded from PyPI with ``pip download --no-deps`` (seven
  wheels, DeepSpeed as an sdist); only their ``.py`` files are kept, under
  ``benchmarks/corpus/packages/<name>/``;
* the ``.py`` files of the torch package installed in the running Python,
  under ``benchmarks/corpus/torch/``;
* an ML monorepo whose files mostly import torch, where the prefilter helps least:
  NVIDIA/Megatron-LM at a pinned commit (``MONOREPO``), its ``.py`` files under
  ``benchmarks/corpus/monorepo/``, fetched as the precision benchmark fetches its GitHub
  projects (a bare mirror under ``$DDPLINT_GITHUB_MIRRORS``, else GitHub's tarball);
* a deterministic 1-in-40 sample of each (every 40th file in sorted path order,
  starting with the first), under ``benchmarks/corpus/sample-packages/`` and
  ``benchmarks/corpus/sample-torch/``.

``benchmarks/corpus/pyproject.toml`` (no settings) marks the corpus as a
project root of its own; see ROOT_MARKER_TEXT. The same file in ``packages/``,
``monorepo/`` and ``sample-packages/`` makes each of those trees a project of its own, as a
user's repository is: a tool that indexes a whole project (ddplint's project model)
reads that tree, not its sibling corpora. ``torch/`` (and its sample) gets none: it holds the
package's files without the ``torch/`` folder, so only under the corpus root are
its modules named ``torch.*``.

``benchmarks/corpus/`` is git-ignored.  The script is idempotent: downloads are
kept in ``benchmarks/corpus/downloads/`` and reused, and every extracted tree is
rebuilt from them from scratch on each run, so two runs give the same files.

Usage:  python benchmarks/corpus.py [--force-download]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from floors._walk import py_files as walk_py_files  # benchmarks/ is the script's folder

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
DOWNLOADS = CORPUS / "downloads"
MANIFEST = CORPUS / "manifest.json"
ROOT_MARKER = CORPUS / "pyproject.toml"
PROJECT_TREES = ("packages", "monorepo", "sample-packages")
ROOT_MARKER_TEXT = """\
# Written by benchmarks/corpus.py.  It marks this folder as a project of
# its own: tools that look upward for a project root (Fixit's file walker,
# ddplint's config lookup) stop here, so they neither apply this repository's
# .gitignore (which ignores the whole corpus) nor read its configuration.
"""

# The ML monorepo: 1,344 .py files, 491k lines, 828 of them import torch.
MONOREPO = {"repo": "NVIDIA/Megatron-LM", "commit": "d98e8a64ddf34856e74b24714e3bedb2f5a39553"}

SAMPLE_EVERY = 40
TORCH_VERSION = "2.13.0"

# (distribution, version, kind).  kind is "wheel" or "sdist".
PACKAGES: list[tuple[str, str, str]] = [
    ("transformers", "5.23.0", "wheel"),
    ("lightning", "2.6.6", "wheel"),
    ("accelerate", "1.15.0", "wheel"),
    ("ultralytics", "8.4.190", "wheel"),
    ("mmengine", "0.10.7", "wheel"),
    ("deepspeed", "0.19.8", "sdist"),
    ("torchvision", "0.29.1", "wheel"),
]


def log(msg: str) -> None:
    print(msg, flush=True)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _norm(name: str) -> str:
    return name.lower().replace("-", "_")


def find_download(name: str, version: str, kind: str) -> Path | None:
    """Return the already-downloaded archive for name==version, if any."""
    if not DOWNLOADS.is_dir():
        return None
    for p in sorted(DOWNLOADS.iterdir()):
        dist, _, rest = p.name.partition("-")
        if _norm(dist) != _norm(name):
            continue
        if kind == "wheel" and p.name.endswith(".whl") and rest.split("-")[0] == version:
            return p
        if kind == "sdist" and rest in (f"{version}.tar.gz", f"{version}.zip"):
            return p
    return None


def pip_download(name: str, version: str, kind: str) -> Path:
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    spec = f"{name}=={version}"
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--dest", str(DOWNLOADS)]
    if kind == "wheel":
        attempts = [base + ["--only-binary", ":all:", spec]]
    else:
        # pip download of an sdist prepares its metadata, i.e. runs its build
        # backend.  DeepSpeed's setup imports torch, which an isolated build
        # env does not have; --no-build-isolation uses this Python's torch.
        attempts = [
            base + ["--no-binary", ":all:", "--no-build-isolation", spec],
            base + ["--no-binary", ":all:", spec],
        ]
    errors = []
    for cmd in attempts:
        log("  $ " + " ".join(cmd[2:]))
        r = subprocess.run(cmd, capture_output=True, text=True)
        found = find_download(name, version, kind)
        if r.returncode == 0 and found:
            return found
        errors.append((r.stdout + r.stderr)[-2000:])
    if kind == "sdist":
        found = fetch_sdist_without_build(name, version)
        if found:
            return found
    raise SystemExit(f"could not download {spec}:\n" + "\n---\n".join(errors))


def fetch_sdist_without_build(name: str, version: str) -> Path | None:
    """Last resort for an sdist: fetch the file named by PyPI's JSON API for
    this exact release (no metadata build), and check its sha256."""
    import urllib.request

    url = f"https://pypi.org/pypi/{name}/{version}/json"
    log(f"  fetching sdist directly: {url}")
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            info = json.load(r)
        for f in info.get("urls", []):
            if f.get("packagetype") != "sdist":
                continue
            dest = DOWNLOADS / f["filename"]
            tmp = dest.with_suffix(dest.suffix + ".part")
            with urllib.request.urlopen(f["url"], timeout=300) as r, open(tmp, "wb") as out:
                shutil.copyfileobj(r, out)
            want = f.get("digests", {}).get("sha256")
            if want and sha256(tmp) != want:
                tmp.unlink()
                raise RuntimeError("sha256 mismatch")
            tmp.replace(dest)
            return dest
    except Exception as exc:  # noqa: BLE001 - report and give up
        log(f"  direct fetch failed: {exc}")
    return None


def extract_py(archive: Path, dest: Path) -> None:
    """Extract the .py files of a wheel or sdist into dest (replaced)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)

    def write(rel: str, data: bytes) -> None:
        parts = PurePosixPath(rel).parts
        if not parts or any(p in ("", ".", "..") for p in parts) or rel.startswith("/"):
            return  # never write outside dest
        out = dest.joinpath(*parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)

    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as z:
            names = [n for n in z.namelist() if n.endswith(".py")]
            strip = archive.name.endswith(".zip")  # sdist zip: drop top folder
            for n in names:
                rel = n.split("/", 1)[1] if strip and "/" in n else n
                write(rel, z.read(n))
    else:
        with tarfile.open(archive) as t:
            for m in t.getmembers():
                if not (m.isfile() and m.name.endswith(".py")):
                    continue
                rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
                f = t.extractfile(m)
                if f is not None:
                    write(rel, f.read())


def copy_torch(dest: Path) -> tuple[str, str]:
    try:
        import torch  # noqa: PLC0415 - only needed here
    except ImportError:
        raise SystemExit(
            f"torch is not installed in {sys.executable}; install torch=={TORCH_VERSION} first"
        )
    version = torch.__version__
    if version.split("+")[0] != TORCH_VERSION:
        log(f"WARNING: torch {version} installed, corpus expects {TORCH_VERSION}")
    src = Path(torch.__file__).resolve().parent
    if dest.exists():
        shutil.rmtree(dest)
    for p in py_files(src):
        out = dest / p.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, out)
    return version, str(src)


def py_files(root: Path) -> list[Path]:
    """Every regular .py file under root, in sorted relative-path order (the floors' walk)."""
    return walk_py_files([str(root)])


def count(root: Path) -> tuple[int, int]:
    files = lines = 0
    for p in py_files(root):
        data = p.read_bytes()
        files += 1
        lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return files, lines


def make_sample(src: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    for i, p in enumerate(py_files(src)):
        if i % SAMPLE_EVERY == 0:
            out = dest / p.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--force-download", action="store_true", help="download archives again")
    args = ap.parse_args()

    if args.force_download and DOWNLOADS.exists():
        shutil.rmtree(DOWNLOADS)

    manifest: dict = {"sample_every": SAMPLE_EVERY, "packages": {}, "trees": {}}
    pkg_root = CORPUS / "packages"
    pkg_root.mkdir(parents=True, exist_ok=True)
    wanted = {name for name, _, _ in PACKAGES}
    for stale in pkg_root.iterdir():
        if stale.name not in wanted:
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()

    for name, version, kind in PACKAGES:
        archive = find_download(name, version, kind)
        if archive is None:
            log(f"download {name}=={version} ({kind})")
            archive = pip_download(name, version, kind)
        else:
            log(f"reuse {archive.name}")
        extract_py(archive, pkg_root / name)
        f, n = count(pkg_root / name)
        manifest["packages"][name] = {
            "version": version,
            "kind": kind,
            "archive": archive.name,
            "sha256": sha256(archive),
            "files": f,
            "lines": n,
        }

    log(f"fetch {MONOREPO['repo']} at {MONOREPO['commit'][:12]}")
    try:
        manifest["monorepo"] = {**MONOREPO, **fetch_monorepo(CORPUS / "monorepo")}
    except SystemExit as exc:  # no mirror and no network: the other corpora are still measured
        log(f"{exc}\nthe monorepo corpus is left out; `run.py --corpora monorepo` will say so")
        manifest["monorepo"] = {**MONOREPO, "missing": str(exc)}
        shutil.rmtree(CORPUS / "monorepo", ignore_errors=True)

    log("copy torch .py files")
    tv, tsrc = copy_torch(CORPUS / "torch")
    manifest["torch"] = {"version": tv, "source": tsrc}

    make_sample(pkg_root, CORPUS / "sample-packages")
    make_sample(CORPUS / "torch", CORPUS / "sample-torch")

    log("")
    log(f"{'tree':<28} {'files':>7} {'lines':>10}")
    for name in wanted_order():
        f, n = manifest["packages"][name]["files"], manifest["packages"][name]["lines"]
        log(f"  packages/{name:<18} {f:>7} {n:>10}")
    for tree in ("packages", "torch", "monorepo", "sample-packages", "sample-torch"):
        f, n = count(CORPUS / tree)
        manifest["trees"][tree] = {"files": f, "lines": n}
        log(f"{tree:<28} {f:>7} {n:>10}")

    ROOT_MARKER.write_text(ROOT_MARKER_TEXT)
    for tree in PROJECT_TREES:
        if (CORPUS / tree).is_dir():
            (CORPUS / tree / ROOT_MARKER.name).write_text(ROOT_MARKER_TEXT)
    MANIFEST.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    log(f"\nwrote {MANIFEST.relative_to(HERE.parent)}")
    return 0


def fetch_monorepo(dest: Path) -> dict:
    """The monorepo's .py files at the pinned commit, under `dest` (rebuilt from scratch)."""
    sys.path.insert(0, str(HERE / "precision"))
    from fetch import _github_archive  # benchmarks/precision/fetch.py: mirror or codeload

    if dest.exists():
        shutil.rmtree(dest)
    archive = DOWNLOADS / f"{MONOREPO['repo'].replace('/', '+')}-{MONOREPO['commit'][:12]}.tar"
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    if not archive.exists():
        # written beside and renamed once whole: a failed download must not leave an empty
        # archive that every later run would take for the real one
        partial = archive.with_name(archive.name + ".partial")
        try:
            _github_archive(MONOREPO, partial)
            partial.replace(archive)
        finally:
            partial.unlink(missing_ok=True)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts[1:]  # drop the <commit>/ prefix
            if member.isfile() and parts and parts[-1].endswith(".py") and ".." not in parts:
                target = dest.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(member) as src:  # type: ignore[union-attr]
                    target.write_bytes(src.read())
    files, lines = count(dest)
    return {"files": files, "lines": lines}


def wanted_order() -> list[str]:
    return [name for name, _, _ in PACKAGES]


if __name__ == "__main__":
    sys.exit(main())
