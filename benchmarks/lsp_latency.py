"""Language-server latency on public training scripts, edited as a user edits them.

    python benchmarks/lsp_latency.py                        # the pinned scripts below
    python benchmarks/lsp_latency.py --only olmo,allennlp   # those whose name contains one of these
    python benchmarks/lsp_latency.py --out lsp-latency      # also write benchmarks/results/lsp-latency.{json,md}
    python benchmarks/lsp_latency.py --file PATH [--finding OLD NEW]   # a file of your own, where it lies

The scripts are two sets: the four the benchmark began with (SCRIPTS), and long training
scripts inside whole repositories of tens to hundreds of files, several with findings
(REPOSITORY_SCRIPTS). Each figure of the second set is also given as a ratio to the first set's
in the same run, which a busy machine disturbs less than the figures themselves.

Each script is fetched at its pinned commit (or PyPI release) the way the precision benchmark
fetches its projects (benchmarks/precision/fetch.py: a bare mirror, else codeload.github.com,
or pip download; into its cache), and opened where it lies in the checkout, with the checkout
as the editor's workspace folder, so the server builds the project model of the whole
repository, as it would for a user. The server runs as an editor starts it
(`python -m ddplint server`, this checkout on PYTHONPATH) with no debounce, so that every
change is linted; then the benchmark

- types a statement one keystroke at a time (Enter, then each character: half-typed states
  that do not parse are part of typing) after a one-line statement in a function near the
  start, the middle and the end of the file;
- makes an edit that changes a finding (the script's `finding` pair of texts, swapped back
  and forth; the benchmark checks that the findings change each time).

Each edit is a full-text didChange answered by the diagnostics for that version. The figure
is the server process's CPU time per edit (/proc/PID/schedstat), counted from sending one
edit to sending the next, so nothing the server does is left out; the wall time from sending
the change to reading its diagnostics is given too. It also reports the server's peak
resident memory (VmHWM) after each file, the project model included.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks" / "precision"))

import fetch  # noqa: E402
from ddplint.model.project import find_root, python_files  # noqa: E402
from ddplint.server.client import Session  # noqa: E402

TYPED = "seen += len(batch)"  # typed one character at a time
FINDING_EDITS = 10
# Seconds of wall time to wait for the diagnostics of the open (the project model is built then):
# on a busy machine that took over a minute for sd-scripts.
OPEN_TIMEOUT = 600
POSITIONS = {"typing at the start": 0.05, "typing in the middle": 0.5, "typing at the end": 0.95}


@dataclass(frozen=True)
class Script:
    project: dict  # a project as benchmarks/precision/corpus.json describes one
    path: str
    finding: tuple[str, str] | None  # (text in the file, text that changes its findings)

    @property
    def name(self) -> str:
        return f"{self.project['name'].rpartition('/')[2]}/{self.path}"


def github(repo: str, commit: str) -> dict:
    return {"name": repo, "kind": "github", "repo": repo, "commit": commit}


def pypi(name: str) -> dict:
    """The precision corpus's entry for a PyPI release (its pinned version and hash)."""
    return next(project for project in fetch.load_corpus()["projects"] if project["name"] == name)


SCRIPTS = (
    Script(
        github("lucidrains/denoising-diffusion-pytorch", "faed4db28e724735323fa91c70aa9b28a6e1cbac"),
        "denoising_diffusion_pytorch/denoising_diffusion_pytorch.py",  # Trainer on Accelerate; DDP018, DDP021
        ("num_workers = cpu_count()", "num_workers = 4"),
    ),
    Script(
        github("allenai/OLMo", "59a53e3f68e546330ca5a99ec626e58f9ab96494"),
        "olmo/train.py",  # the FSDP/DDP Trainer; no finding until the edit puts a barrier under rank 0 (DDP008)
        (
            "        if get_global_rank() == 0:\n            if self",
            "        if get_global_rank() == 0:\n            dist.barrier()\n            if self",
        ),
    ),
    Script(
        github("facebookresearch/sam2", "2b90b9f5ceec907a1c18123530e92e794ad901a4"),
        "training/trainer.py",  # SAM 2's DDP Trainer; no finding until the edit drops a rank-0 guard (DDP014)
        ("        if self.distributed_rank != 0:\n            return\n", ""),
    ),
    Script(
        github("NVIDIA/Megatron-LM", "d98e8a64ddf34856e74b24714e3bedb2f5a39553"),
        "megatron/core/optimizer/optimizer.py",  # distributed optimizers (1,344-file project); no finding
        # until the edit puts a barrier under the data-parallel rank-0 load (DDP008). The earlier edit, a
        # rank-0 guard on `torch.save(states, filename)`, no longer changes a finding: DDP014 is silent on
        # that save with and without the guard (it already sits under `if save_states:`).
        (
            "                states = torch.load(filename)\n",
            "                torch.distributed.barrier()\n                states = torch.load(filename)\n",
        ),
    ),
)

# Long training scripts inside their whole repositories, unlike the four above: files with
# several findings, files whose findings the program model reaches across modules, projects of
# tens to a thousand files.
REPOSITORY_SCRIPTS = (
    Script(
        pypi("allennlp"),
        "allennlp/training/gradient_descent_trainer.py",  # 1,244 lines, 2 x DDP014 (337 files)
        (
            "self._ddp_wrapped_model.load_state_dict(torch.load(path, map_location=device))",
            "self._ddp_wrapped_model.load_state_dict(torch.load(path))",  # DDP004
        ),
    ),
    Script(
        github("microsoft/Megatron-DeepSpeed", "f4157bea69f3df8c6cb66f2ebcda66ba03d1288e"),
        "megatron/training.py",  # 1,667 lines (304 files); a barrier under is_rank_0() (DDP008)
        (
            "            torch.distributed.barrier()\n            print_datetime('exiting program at",
            "            if is_rank_0():\n                torch.distributed.barrier()\n            print_datetime('exiting program at",
        ),
    ),
    Script(
        github("kohya-ss/sd-scripts", "48d368fa557731ad0488c07304dfeba8c07910eb"),
        "train_network.py",  # 1,913 lines on Accelerate (169 files); workers per rank (DDP018)
        ("n_workers = min(args.max_data_loader_n_workers, os.cpu_count())", "n_workers = os.cpu_count()"),
    ),
    Script(
        github("bytedance/ibot", "da316d82636a7a7356835ef224b13d5f3ace0489"),
        "evaluation/semi_supervised/eval_cls.py",  # 904 lines; DDP012, and DDP022 through the program model
        ('parser.add_argument("--local_rank", default=0,', 'parser.add_argument("--local-rank", "--local_rank", default=0,'),
    ),
    Script(
        pypi("espnet"),
        "espnet2/train/trainer.py",  # 964 lines in a 1,054-file project; DDP004 once map_location goes
        ('            map_location=f"cuda:{torch.cuda.current_device()}" if ngpu > 0 else "cpu",\n', ""),
    ),
)


def typing_line(text: str, fraction: float) -> int:
    """The index of a one-line statement inside a function nearest `fraction` of the file."""
    tree = ast.parse(text)
    candidates = [
        statement.end_lineno - 1
        for function in ast.walk(tree)
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        for statement in function.body
        if statement.lineno == statement.end_lineno and not isinstance(statement, ast.Expr)
    ]
    target = fraction * text.count("\n")
    return min(candidates, key=lambda line: abs(line - target))


def typing_texts(text: str, fraction: float) -> list[str]:
    """The buffer after each keystroke of typing TYPED on a new line after that statement."""
    lines = text.splitlines(keepends=True)
    index = typing_line(text, fraction)
    line = lines[index]
    indent = line[: len(line) - len(line.lstrip())]
    before, after = "".join(lines[: index + 1]), "".join(lines[index + 1 :])
    return [before + indent + TYPED[:typed] + "\n" + after for typed in range(len(TYPED) + 1)]


def finding_texts(text: str, finding: tuple[str, str]) -> list[str]:
    old, new = finding
    if text.count(old) != 1:
        raise SystemExit(f"lsp_latency: the finding edit's text occurs {text.count(old)} times, not once: {old!r}")
    edited = text.replace(old, new)
    return [edited if index % 2 == 0 else text for index in range(FINDING_EDITS)]


def timed(session: Session, uri: str, texts: list[str], findings: int, *, changing: bool = False) -> list[tuple]:
    """(server CPU ms, wall ms) for each text sent as one change; with `changing`, each must
    change the number of findings (`findings`: the number before the first)."""
    pid = session.process.pid
    results = []
    for text in texts:
        cpu_before = _cpu_ms(pid)
        start = time.perf_counter()
        version = session.change(uri, text)
        found = len(session.diagnostics(uri, version))
        wall = (time.perf_counter() - start) * 1000
        time.sleep(0.05)  # what the server does after publishing counts for this edit too
        results.append((_cpu_ms(pid) - cpu_before, wall))
        if changing and found == findings:
            raise SystemExit(f"lsp_latency: the finding edit did not change the findings of {uri}")
        findings = found
    return results


def measure(path: Path, root: Path, finding: tuple[str, str] | None, debounce: float, cold: bool = False) -> dict:
    """Open `path` in a fresh server (its project rooted at or above `root`) and time each
    scenario's edits, going back to the file as it is between scenarios. With `cold`, the
    project's cache is deleted first, so that opening builds the model from every file."""
    text = path.read_text(encoding="utf-8")
    uri = path.resolve().as_uri()
    project = find_root(str(path), fallback=str(root))
    if cold:
        shutil.rmtree(os.path.join(project, ".ddplint_cache"), ignore_errors=True)
    command = [sys.executable, "-m", "ddplint", "server"]
    with Session(command, root, initialization_options={"debounce": debounce}) as session:
        pid = session.process.pid
        cpu_before = _cpu_ms(pid)
        session.open(uri, text)
        findings = len(session.diagnostics(uri, timeout=OPEN_TIMEOUT))
        opened = _cpu_ms(pid) - cpu_before
        scenarios = {}
        for name, fraction in POSITIONS.items():
            scenarios[name] = timed(session, uri, typing_texts(text, fraction), findings)
            session.diagnostics(uri, session.change(uri, text))
        if finding is not None:
            texts = finding_texts(text, finding)
            scenarios["an edit that changes a finding"] = timed(session, uri, texts, findings, changing=True)
        memory = _peak_memory_mb(pid)
    return {
        "lines": text.count("\n"),
        "findings": findings,
        "project_files": len(python_files(project)),
        "open_cpu_ms": round(opened),
        "peak_memory_mb": round(memory, 1),
        "cpu_ms": {name: [round(cpu, 1) for cpu, _ in timings] for name, timings in scenarios.items()},
        "wall_ms": {name: [round(wall, 1) for _, wall in timings] for name, timings in scenarios.items()},
    }


def quantiles(values: list[float]) -> tuple[float, float]:
    """(median, p90)."""
    return statistics.median(values), statistics.quantiles(values, n=10, method="inclusive")[8]


def figures(values: list[float]) -> str:
    """Median / p90."""
    median, p90 = quantiles(values)
    return f"{median:.0f} / {p90:.0f}"


def all_edits(result: dict) -> list[float]:
    return [value for values in result["cpu_ms"].values() for value in values]


def table(results: dict[str, dict], calibration: list[str]) -> str:
    """Per file and scenario, then per file with its ratio to the `calibration` files' edits
    (the benchmark's own scripts, measured in the same run), then opening and memory."""
    rows = [
        "| file | lines | findings | scenario | edits | server CPU per edit, median / p90 (ms) |",
        "|---|---:|---:|---|---:|---:|",
    ]
    for name, result in results.items():
        for scenario, values in [*result["cpu_ms"].items(), ("all edits", all_edits(result))]:
            file = f"`{name}` | {result['lines']:,} | {result['findings']}"
            rows.append(f"| {file} | {scenario} | {len(values)} | {figures(values)} |")
    reference = [value for name in calibration if name in results for value in all_edits(results[name])]
    rows += ["", "| file | files in its project | edits | median / p90 (ms) | ratio to the four scripts' |"]
    rows.append("|---|---:|---:|---:|---:|")
    groups = [(name, all_edits(result), result["project_files"]) for name, result in results.items()]
    if reference:
        groups.append((f"**the four scripts** ({', '.join(calibration)})", reference, None))
    others = [value for name, result in results.items() if name not in calibration for value in all_edits(result)]
    if others and reference:
        groups.append(("**the repository scripts**", others, None))
    for name, values, files in groups:
        ratio = ""
        if reference:
            (median, p90), (base_median, base_p90) = quantiles(values), quantiles(reference)
            ratio = f"{median / base_median:.2f}x / {p90 / base_p90:.2f}x"
        label = name if name.startswith("**") else f"`{name}`"
        rows.append(f"| {label} | {'' if files is None else f'{files:,}'} | {len(values)} | {figures(values)} | {ratio} |")
    rows += ["", "| file | files in its project | server CPU to open it (ms) | server peak memory (MB) |"]
    rows.append("|---|---:|---:|---:|")
    for name, r in results.items():
        rows.append(f"| `{name}` | {r['project_files']:,} | {r['open_cpu_ms']:,} | {r['peak_memory_mb']:.0f} |")
    return "\n".join(rows) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, help="one file to edit where it lies (default: the pinned scripts)")
    parser.add_argument("--finding", nargs=2, metavar=("OLD", "NEW"), help="with --file: a finding edit")
    parser.add_argument("--only", help="the pinned scripts whose name contains one of these, comma separated")
    parser.add_argument("--cache", type=Path, help="where the repositories go (default: the precision cache)")
    parser.add_argument("--debounce", type=float, default=0.0, help="the server's debounce in seconds (default 0)")
    parser.add_argument("--cold", action="store_true", help="delete each project's cache first (.ddplint_cache)")
    parser.add_argument("--out", help="also write benchmarks/results/OUT.json and OUT.md")
    args = parser.parse_args()
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    results: dict[str, dict] = {}
    if args.file:
        path = args.file.resolve()
        finding = tuple(args.finding) if args.finding else None
        results[path.name] = measure(path, path.parent, finding, args.debounce, args.cold)
    else:
        wanted = [word for word in (args.only or "").split(",") if word]
        scripts = [s for s in (*SCRIPTS, *REPOSITORY_SCRIPTS) if not wanted or any(w in s.name for w in wanted)]
        projects = list({script.project["name"]: script.project for script in scripts}.values())
        roots = fetch.fetch((args.cache or fetch.default_cache()).expanduser(), {"projects": projects})
        for script in scripts:
            root = roots[script.project["name"]]
            results[script.name] = measure(root / script.path, root, script.finding, args.debounce, args.cold)
            brief = {key: value for key, value in results[script.name].items() if key not in ("cpu_ms", "wall_ms")}
            print(f"{script.name}: {json.dumps(brief)}", flush=True)
    report = table(results, [script.name for script in SCRIPTS])
    print(report)
    if args.out:
        folder = REPO / "benchmarks" / "results"
        (folder / f"{args.out}.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        (folder / f"{args.out}.md").write_text(report, encoding="utf-8")
    return 0


def _cpu_ms(pid: int) -> float:
    """CPU time the process has run, in ms (Linux)."""
    with open(f"/proc/{pid}/schedstat") as handle:
        return int(handle.read().split()[0]) / 1e6


def _peak_memory_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        peak = next(line for line in handle if line.startswith("VmHWM:"))
    return int(peak.split()[1]) / 1024


if __name__ == "__main__":
    raise SystemExit(main())
