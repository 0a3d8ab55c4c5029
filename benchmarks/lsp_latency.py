"""Language-server latency: time from sending didChange to receiving publishDiagnostics.

    python benchmarks/lsp_latency.py                  # torch/storage.py, 40 edits (no finding)
    python benchmarks/lsp_latency.py --file F --edits N --debounce 0

The server runs as an editor starts it (`python -m ddplint server`, this checkout on
PYTHONPATH). The file (default: torch's own storage.py, 1,558 lines; it has no finding since
DDP004 asks for distributed evidence, so pass --file for a file with one) is opened once; then each
edit changes one line in the middle of the file (alternating, so every text is new) and the
clock runs from writing the didChange to reading the diagnostics published for that version.
The figure includes any debounce wait (--debounce, seconds; the server's own default when
omitted) and JSON-RPC both ways. Prints the median, the quartiles and the extremes in ms, and
the server's own CPU time per edit (from /proc/PID/schedstat, where there is one), which other
jobs on a shared machine disturb far less than the wall-clock figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ddplint.server.client import Session  # noqa: E402


def default_file() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise SystemExit("lsp_latency: torch is not installed; name a file with --file")
    return Path(spec.origin).parent / "storage.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, help="the file to edit (default: torch/storage.py)")
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--debounce", type=float, help="the server's debounce in seconds (default: its own)")
    args = parser.parse_args()
    path = args.file or default_file()
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    middle = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].strip() and not lines[i].rstrip().endswith(("\\", ",", "(")))
    options = {} if args.debounce is None else {"debounce": args.debounce}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    os.environ.update(env)
    with tempfile.TemporaryDirectory() as folder:  # no pyproject.toml above: default settings
        uri = (Path(folder) / path.name).as_uri()
        with Session([sys.executable, "-m", "ddplint", "server"], folder, initialization_options=options) as session:
            session.open(uri, text)
            first = session.diagnostics(uri)
            timings, cpu = [], []
            for edit in range(args.edits):
                edited = lines.copy()
                edited[middle] = edited[middle].rstrip("\n") + f"  # edit {edit}\n"
                time.sleep(0.2)  # a pause in typing, longer than the debounce
                cpu_before = _cpu_ms(session.process.pid)
                start = time.perf_counter()
                version = session.change(uri, "".join(edited))
                session.diagnostics(uri, version)
                timings.append((time.perf_counter() - start) * 1000)
                cpu_after = _cpu_ms(session.process.pid)
                if cpu_before is not None and cpu_after is not None:
                    cpu.append(cpu_after - cpu_before)
    quartiles = statistics.quantiles(timings, n=4)
    server_cpu = f"; server CPU per edit: median {statistics.median(cpu):.0f} ms" if cpu else ""
    print(
        f"{path.name}: {len(lines)} lines, {len(first)} finding(s), {args.edits} edits: "
        f"median {statistics.median(timings):.0f} ms (quartiles {quartiles[0]:.0f}-{quartiles[2]:.0f}, "
        f"min {min(timings):.0f}, max {max(timings):.0f}){server_cpu}"
    )
    return 0


def _cpu_ms(pid: int) -> float | None:
    """CPU time the process has run, in ms (Linux), or None."""
    try:
        with open(f"/proc/{pid}/schedstat") as handle:
            return int(handle.read().split()[0]) / 1e6
    except (OSError, ValueError, IndexError):
        return None


if __name__ == "__main__":
    raise SystemExit(main())
