"""Cost of the project index (ddplint/model/project.py) on a corpus: cold (no cache), warm (the
index cache up to date), and after one file changed; CPU seconds of this process.

    python benchmarks/project_index.py benchmarks/corpus/packages [--rounds 3]

The root indexed is the one `ddplint check PATH` uses (ddplint.model.project.common_root).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ddplint.model import project  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--root", help="index this folder instead of the path's project root")
    args = parser.parse_args()
    root = args.root or project.common_root([args.path])
    files = project.python_files(root)
    cache = tempfile.mkdtemp(prefix="ddplint-index-")
    cold, warm = [], []
    try:
        for _ in range(args.rounds):
            shutil.rmtree(cache, ignore_errors=True)
            start = time.process_time()
            index = project.build(root, None)
            cold.append(time.process_time() - start)
        project.build(root, cache)  # fill the cache
        for _ in range(args.rounds):
            start = time.process_time()
            index = project.build(root, cache)
            warm.append(time.process_time() - start)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    parsed = sum(1 for facts in index.modules.values() if facts["functions"] or facts["classes"] or facts["imports"])
    print(
        json.dumps(
            {
                "root": root,
                "files": len(files),
                "modules with facts": parsed,
                "distributed": index.distributed,
                "cold_cpu_s_median": sorted(cold)[len(cold) // 2],
                "warm_cpu_s_median": sorted(warm)[len(warm) // 2],
                "cold_cpu_s": [round(x, 3) for x in cold],
                "warm_cpu_s": [round(x, 3) for x in warm],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
