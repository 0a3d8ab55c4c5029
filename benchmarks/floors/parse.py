#!/usr/bin/env python3
"""Floor: libcst.parse_module on every file, one process, nothing else.

Reads each file's bytes and hands them to libcst (which detects the encoding),
so this is the least work a libcst-based linter must do per file.  Prints one
JSON line: files, lines, bytes, parse errors."""

from __future__ import annotations

import json
import sys
from importlib.metadata import version

import libcst

from _walk import py_files


def main(argv: list[str]) -> int:
    files = lines = size = errors = 0
    for path in py_files(argv):
        data = path.read_bytes()
        files += 1
        size += len(data)
        lines += data.count(b"\n")
        try:
            libcst.parse_module(data)
        except Exception:  # noqa: BLE001 - a file libcst cannot parse still counts as read
            errors += 1
    print(json.dumps({"files": files, "lines": lines, "bytes": size, "parse_errors": errors,
                      "libcst": version("libcst")}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
