"""Results of earlier runs, so an unchanged tree is checked at the cost of reading it.

One JSON file per ddplint version in `.ddplint_cache/`, mapping each path to its size, mtime,
content hash, the rules it was checked with (configuration can vary them per file), its
findings and its notes (a large file checked in part), so a warm run prints what the cold run
printed. An entry is used only if the file's content hash
still matches; the size and mtime let an unchanged file skip even the hashing. It is used only
while the other modules its result was read from (`FileResult.reads`: what the program's
answers and the file's prefilter hints came from) keep their size and mtime; those sets are
few and large (each process's reads only grow), so entries name them by a hash and the file
holds each once. JSON, never
pickle: a cache file someone else wrote must not be able to run code. Concurrent runs are
safe: each writes a temporary file and renames it into place, and the last writer wins.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict

from ddplint import __version__
from ddplint.core.hashing import code_fingerprint, content_hash
from ddplint.core.diagnostics import Applicability, Diagnostic, Edit, Fix, FileResult, Step, StepKind

CACHE_DIR = ".ddplint_cache"


class Cache:
    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.path = os.path.join(folder, f"results-{__version__}-{code_fingerprint()}.json")
        self.entries: dict[str, dict] = {}
        # The modules results were read from, shared by entries: id -> {path: [size, mtime]}.
        self.reads: dict[str, dict] = {}
        self._unchanged: dict[str, bool] = {}  # id -> whether all of them are as they were, this run
        self._ids: dict[tuple[str, ...], str] = {}  # a result's reads -> their id, this run
        self.dirty = False
        # The digest of the project index the results were computed with (ddplint.model.project):
        # a result is used only with the same one.
        self.project = ""
        self._stamps: dict[str, list | None] = {}  # path -> [size, mtime] this run, for `reads`
        try:
            with open(self.path, encoding="utf-8") as handle:
                loaded = json.load(handle)
            if isinstance(loaded, dict) and isinstance(loaded.get("files"), dict) and isinstance(loaded.get("reads"), dict):
                self.entries, self.reads = loaded["files"], loaded["reads"]
        except (OSError, ValueError):
            pass

    def lookup(
        self, path: str, rules, info: os.stat_result, data: bytes | None = None, *, syntax: bool = False
    ) -> FileResult | None:
        """The stored result, if it still holds; with `syntax`, only one for which the file's
        syntax was checked (it was named on the command line then too). A file named with
        a syntax error is not stored (ddplint.commands.pool), so a run over its folder, which
        does not check a file no rule admits, says what it would say cold."""
        entry = self.entries.get(path)
        if entry is None or entry.get("rules") != _rule_keys(rules) or (syntax and not entry.get("syntax")):
            return None
        if entry.get("project", "") != self.project:
            return None
        if entry["size"] != info.st_size:
            return None
        if entry["mtime"] != info.st_mtime_ns:
            if data is None or entry["hash"] != content_hash(data):
                return None
        if "reads" in entry and not self._reads_unchanged(entry["reads"]):
            return None  # a module the result's answers or hints came from has changed since
        return _result_from_json(path, entry)

    def _reads_unchanged(self, key) -> bool:
        if not isinstance(key, str):
            return False
        if key not in self._unchanged:
            reads = self.reads.get(key)
            self._unchanged[key] = isinstance(reads, dict) and all(
                self._stamp(other) == stamp for other, stamp in reads.items()
            )
        return self._unchanged[key]

    def _stamp(self, path: str) -> list | None:
        if path not in self._stamps:
            try:
                info = os.stat(path)
                self._stamps[path] = [info.st_size, info.st_mtime_ns]
            except OSError:
                self._stamps[path] = None
        return self._stamps[path]

    def store(self, path: str, rules, info: os.stat_result, data: bytes, result: FileResult, *, syntax: bool = False) -> None:
        self.entries[path] = {
            "syntax": syntax,
            "rules": _rule_keys(rules),
            "project": self.project,
            "size": info.st_size,
            "mtime": info.st_mtime_ns,
            "hash": content_hash(data),
            "error": result.error,
            "notes": result.fix_problems,  # a lint result's only problems are the engine's notes
            "diagnostics": [asdict(d) for d in result.diagnostics],
        }
        if result.reads:
            self.entries[path]["reads"] = self._reads_id(tuple(result.reads))
        self.dirty = True

    def _reads_id(self, paths: tuple[str, ...]) -> str:
        if paths not in self._ids:
            reads = {other: self._stamp(other) for other in paths}
            key = content_hash(json.dumps(reads).encode())
            self.reads[key] = reads
            self._ids[paths] = key
        return self._ids[paths]

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            os.makedirs(self.folder, exist_ok=True)
            ignore = os.path.join(self.folder, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w", encoding="utf-8") as handle:
                    handle.write("# created by ddplint\n*\n")
            descriptor, temporary = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            used = {entry["reads"] for entry in self.entries.values() if isinstance(entry.get("reads"), str)}
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump({"files": self.entries, "reads": {key: self.reads[key] for key in used if key in self.reads}}, handle)
            os.replace(temporary, self.path)
        except OSError:
            pass  # a cache that cannot be written only costs speed


def _rule_keys(rules) -> list[str]:
    """The rules a file was checked with; a rule in strict mode (`[tool.ddplint] strict`)
    finds more than the same rule without it."""
    return [rule.code + ("/strict" if getattr(rule, "strict", False) else "") for rule in rules]


def _result_from_json(path: str, entry: dict) -> FileResult | None:
    try:
        diagnostics = []
        for item in entry["diagnostics"]:
            fix = item.pop("fix")
            if fix is not None:
                fix = Fix(
                    Applicability(fix["applicability"]),
                    tuple(Edit(**edit) for edit in fix["edits"]),
                    tuple(fix["imports"]),
                )
            chain = tuple(Step(**{**step, "kind": StepKind(step["kind"])}) for step in item.pop("chain", ()))
            diagnostics.append(Diagnostic(**item, fix=fix, chain=chain))
        return FileResult(path, diagnostics=diagnostics, error=entry["error"], fix_problems=list(entry["notes"]))
    except (KeyError, TypeError, ValueError):
        return None
