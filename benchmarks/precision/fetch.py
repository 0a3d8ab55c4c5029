#!/usr/bin/env python3
"""Download and unpack the precision corpus (benchmarks/precision/corpus.json).

A PyPI project is a pinned artifact (wheel or sdist), fetched with
``pip download --no-deps`` into ``<cache>/dl/``, checked against the sha256
recorded in corpus.json, and unpacked into ``<cache>/src/<name>-<version>/``.

A GitHub project ("kind": "github") is pinned by its 40-hex commit, which is
its integrity check.  Its tree comes from ``git archive <commit>`` of a bare
mirror when one is found under ``$DDPLINT_GITHUB_MIRRORS/OWNER+NAME/`` or
``/work/.mirror/OWNER+NAME/`` (any git dir beneath that folder), and otherwise
from ``https://codeload.github.com/OWNER/NAME/tar.gz/<commit>``.  It is
unpacked into ``<cache>/src/OWNER+NAME-<commit[:12]>/``.

The cache lives outside the repository: ``~/.cache/ddplint-precision`` unless
``--cache DIR`` or ``$DDPLINT_PRECISION_CACHE`` names another.

Idempotent: an artifact already in ``dl/`` with the right hash is not fetched
again, and a project already unpacked (marker file ``.unpacked`` holding the
sha256 or the commit) is not unpacked again.  A hash mismatch is an error
(exit 1), never silently accepted; ``--refresh-hashes`` rewrites corpus.json
with the hashes of what was downloaded (only for deliberately re-pinning).

Usage:  python benchmarks/precision/fetch.py [--cache DIR] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS_FILE = HERE / "corpus.json"
MARKER = ".unpacked"
DEFAULT_MIRRORS = "/work/.mirror"
CODELOAD = "https://codeload.github.com/{repo}/tar.gz/{commit}"


def default_cache() -> Path:
    env = os.environ.get("DDPLINT_PRECISION_CACHE")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/ddplint-precision").expanduser()


def load_corpus(path: Path = CORPUS_FILE) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def project_dir(cache: Path, project: dict) -> Path:
    """The unpacked project root: paths in labels.csv are relative to it."""
    if project["kind"] == "github":
        return cache / "src" / f"{project['repo'].replace('/', '+')}-{project['commit'][:12]}"
    return cache / "src" / f"{project['name']}-{project['version']}"


def find_mirror(repo: str) -> Path | None:
    """A bare git dir for OWNER/NAME in $DDPLINT_GITHUB_MIRRORS or /work/.mirror:
    the folder OWNER+NAME itself or one up to three levels beneath it."""
    roots = [os.environ.get("DDPLINT_GITHUB_MIRRORS"), DEFAULT_MIRRORS]
    for root in filter(None, roots):
        base = Path(root).expanduser() / repo.replace("/", "+")
        for pattern in ("HEAD", "*/HEAD", "*/*/HEAD", "*/*/*/HEAD"):
            for head in sorted(base.glob(pattern)):
                if (head.parent / "objects").is_dir():
                    return head.parent
    return None


def missing_blobs(git_dir: Path, commit: str) -> list[str]:
    """Paths at the commit whose blobs the mirror lacks (a snapshot may leave its largest files out)."""
    tree = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", commit],
                          capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    blobs = [entry.split("\t", 1) for entry in tree.split("\0") if entry]
    blobs = [(meta.split()[2], path) for meta, path in blobs if meta.split()[1] == "blob"]
    query = "".join(sha + "\n" for sha, _ in blobs)
    answers = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "--batch-check"], input=query.encode(),
                             capture_output=True, check=True).stdout.decode().splitlines()
    return [path for (_, path), answer in zip(blobs, answers) if answer.endswith(" missing")]


def _github_archive(project: dict, target: Path) -> None:
    """Write a tar of the tree at the pinned commit: from a mirror, else from codeload."""
    repo, commit = project["repo"], project["commit"]
    mirror = find_mirror(repo)
    with open(target, "wb") as out:
        if mirror:
            absent = missing_blobs(mirror, commit)
            print(f"fetch: git archive {commit[:12]} from {mirror}"
                  + (f" (without {len(absent)} file(s) the mirror lacks)" if absent else ""), flush=True)
            subprocess.run(["git", f"--git-dir={mirror}", "archive", "--format=tar", f"--prefix={commit}/",
                            commit, "--", "."] + [f":(exclude,literal){path}" for path in absent],
                           stdout=out, check=True)
        else:
            url = CODELOAD.format(repo=repo, commit=commit)
            print(f"fetch: {url}", flush=True)
            try:
                with urllib.request.urlopen(url, timeout=120) as resp:
                    shutil.copyfileobj(resp, out)
            except OSError as error:  # URLError, a timeout: no mirror here and GitHub out of reach
                raise SystemExit(f"fetch: {repo} has no mirror under {DEFAULT_MIRRORS} or "
                                 f"$DDPLINT_GITHUB_MIRRORS, and {url} could not be read ({error}); "
                                 "bring a mirror or pass --only without it") from None


def _download(project: dict, dl: Path) -> Path:
    target = dl / project["filename"]
    if target.exists():
        return target
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(dl),
           f"{project['name']}=={project['version']}"]
    if project["kind"] == "wheel":
        cmd += ["--only-binary", ":all:"]
    else:
        cmd += ["--no-binary", ":all:"]
    print(f"fetch: {' '.join(cmd[3:])}", flush=True)
    subprocess.run(cmd, check=True)
    if not target.exists():
        raise SystemExit(f"fetch: pip did not produce {target.name} for {project['name']}")
    return target


def _safe_members_tar(tf: tarfile.TarFile, dest: Path):
    for m in tf.getmembers():
        p = (dest / m.name).resolve()
        if not str(p).startswith(str(dest.resolve())) or m.issym() or m.islnk():
            continue
        yield m


def _unpack(archive: Path, kind: str, dest: Path) -> None:
    tmp = dest.with_name(dest.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    if kind == "wheel":
        with zipfile.ZipFile(archive) as zf:
            for name in zf.namelist():
                if name.startswith("/") or ".." in Path(name).parts:
                    continue
                zf.extract(name, tmp)
        root = tmp
    else:
        with tarfile.open(archive) as tf:
            members = list(_safe_members_tar(tf, tmp))
            # The "data" filter (3.12 and the 3.8-3.11 security releases) also drops device files
            # and odd modes; where it exists, passing it keeps 3.14's changed default from applying.
            if hasattr(tarfile, "data_filter"):
                tf.extractall(tmp, members=members, filter="data")
            else:
                tf.extractall(tmp, members=members)
        tops = [p for p in tmp.iterdir()]
        root = tops[0] if len(tops) == 1 and tops[0].is_dir() else tmp
    if dest.exists():
        shutil.rmtree(dest)
    shutil.move(str(root), str(dest))
    if tmp.exists():
        shutil.rmtree(tmp)


def fetch(cache: Path, corpus: dict, only: set[str] | None = None,
          refresh_hashes: bool = False) -> dict[str, Path]:
    """Fetch and unpack every project; return name -> unpacked root."""
    dl = cache / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    roots: dict[str, Path] = {}
    bad = []
    for project in corpus["projects"]:
        if only and project["name"] not in only:
            continue
        if project["kind"] == "github":
            roots[project["name"]] = _fetch_github(project, cache, dl)
            continue
        archive = _download(project, dl)
        digest = sha256(archive)
        if digest != project.get("sha256"):
            if refresh_hashes:
                project["sha256"] = digest
            else:
                bad.append(f"{archive.name}: sha256 {digest}, corpus.json says {project.get('sha256')}")
                continue
        dest = project_dir(cache, project)
        marker = dest / MARKER
        if not (marker.exists() and marker.read_text().strip() == digest):
            print(f"unpack: {archive.name}", flush=True)
            _unpack(archive, project["kind"], dest)
            marker.write_text(digest + "\n")
        roots[project["name"]] = dest
    if refresh_hashes:
        with open(CORPUS_FILE, "w", encoding="utf-8") as f:
            json.dump(corpus, f, indent=2)
            f.write("\n")
    if bad:
        raise SystemExit("fetch: hash mismatch:\n  " + "\n  ".join(bad))
    return roots


def _fetch_github(project: dict, cache: Path, dl: Path) -> Path:
    dest = project_dir(cache, project)
    marker = dest / MARKER
    if not (marker.exists() and marker.read_text().strip() == project["commit"]):
        # The commit pins the tree, so the archive is not kept once unpacked.
        archive = dl / f"{dest.name}.tar"
        try:
            _github_archive(project, archive)
            print(f"unpack: {project['repo']} at {project['commit'][:12]}", flush=True)
            _unpack(archive, "tar", dest)
        finally:
            archive.unlink(missing_ok=True)
        marker.write_text(project["commit"] + "\n")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=None, help="cache folder (default ~/.cache/ddplint-precision)")
    ap.add_argument("--only", default="", help="comma-separated project names")
    ap.add_argument("--refresh-hashes", action="store_true", help="re-pin: write the downloaded hashes into corpus.json")
    args = ap.parse_args(argv)
    cache = (args.cache or default_cache()).expanduser()
    only = {s.strip() for s in args.only.split(",") if s.strip()} or None
    roots = fetch(cache, load_corpus(), only, args.refresh_hashes)
    for name, root in roots.items():
        print(f"{name}: {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
