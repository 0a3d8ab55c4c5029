#!/usr/bin/env python3
"""Floor: read every file's bytes, one process, nothing else (the cost of
Python start-up plus file discovery and I/O).  Prints one JSON line."""

from __future__ import annotations

import json
import sys

from _walk import py_files


def main(argv: list[str]) -> int:
    files = lines = size = 0
    for path in py_files(argv):
        data = path.read_bytes()
        files += 1
        size += len(data)
        lines += data.count(b"\n")
    print(json.dumps({"files": files, "lines": lines, "bytes": size}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
