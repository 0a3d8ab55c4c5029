"""The launch command: given as words (`torchrun --nproc_per_node 8 train.py --lr 0.1`), or as
a shell or SLURM script that holds one.

A script is read, never run: its lines are joined where they end in a backslash, split at
`;`, `&&`, `||` and `|`, and the first command that runs a launcher (torchrun, `python -m
torch.distributed.run` or `.launch`, `deepspeed`, `accelerate launch`), or else `python
something.py`, is the launch. Variables the script sets before it (`export NGPU=8`, `NGPU=8`)
and `${VAR:-default}` are expanded; anything else (`$SLURM_GPUS_ON_NODE`, `$(nproc)`) stays
as written, and a check that needs it says it is known only when the job runs. `#SBATCH`
lines and `srun`'s own options give the nodes and tasks of a SLURM job.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ddplint.core.torch_api import OLD_LAUNCHER_MODULE, TORCHRUN
from ddplint.doctor.checks import Unknown

TORCHRUN_LAUNCHER = "torchrun"
OLD_LAUNCHER = OLD_LAUNCHER_MODULE
DEEPSPEED = "deepspeed"
ACCELERATE = "accelerate launch"
PYTHON = "python"  # no launcher: the script starts as one process (it may spawn its ranks)

SCRIPT_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch")
_MODULE_LAUNCHERS = {TORCHRUN: TORCHRUN_LAUNCHER, OLD_LAUNCHER_MODULE: OLD_LAUNCHER,
                     "deepspeed.launcher.runner": DEEPSPEED, "accelerate.commands.launch": ACCELERATE}

# Options that take a value, by launcher, with `_` written `-` and without leading dashes. An
# option not listed takes the next word as its value unless that word is an option or a `.py`.
_TORCH_VALUES = frozenset({
    "nnodes", "nproc-per-node", "rdzv-backend", "rdzv-endpoint", "rdzv-id", "rdzv-conf", "max-restarts",
    "monitor-interval", "start-method", "role", "node-rank", "master-addr", "master-port", "local-addr",
    "log-dir", "redirects", "r", "tee", "t", "local-ranks-filter", "logs-specs",
})  # fmt: skip
_TORCH_FLAGS = frozenset({"standalone", "module", "m", "no-python", "run-path", "use-env", "virtual-local-rank"})
_DEEPSPEED_VALUES = frozenset({
    "num-gpus", "num-nodes", "hostfile", "h", "include", "i", "exclude", "e", "master-addr", "master-port",
    "launcher", "launcher-args", "node-rank", "ssh-port", "min-elastic-nodes", "max-elastic-nodes", "venv-script",
    "bind-core-list", "comment", "account",
})  # fmt: skip
_DEEPSPEED_FLAGS = frozenset({"no-local-rank", "module", "no-python", "force-multi", "no-ssh-check", "bind-cores-to-rank",
                              "elastic-training", "no-ssh"})
_ACCELERATE_VALUES = frozenset({
    "num-processes", "num-machines", "machine-rank", "main-process-ip", "main-process-port", "mixed-precision",
    "config-file", "gpu-ids", "dynamo-backend", "num-cpu-threads-per-process", "rdzv-backend", "deepspeed-config-file",
    "zero-stage", "fsdp-sharding-strategy", "gradient-accumulation-steps", "max-restarts", "monitor-interval",
})  # fmt: skip
_ACCELERATE_FLAGS = frozenset({"multi-gpu", "cpu", "use-deepspeed", "use-fsdp", "use-megatron-lm", "module", "m",
                               "no-python", "debug", "same-network", "tpu", "quiet", "q"})
_OPTIONS = {
    TORCHRUN_LAUNCHER: (_TORCH_VALUES, _TORCH_FLAGS),
    OLD_LAUNCHER: (_TORCH_VALUES, _TORCH_FLAGS),
    DEEPSPEED: (_DEEPSPEED_VALUES, _DEEPSPEED_FLAGS),
    ACCELERATE: (_ACCELERATE_VALUES, _ACCELERATE_FLAGS),
}
# srun's options that take a value (the ones that say how many tasks and where, and common others).
_SRUN_VALUES = frozenset({
    "n", "ntasks", "N", "nodes", "ntasks-per-node", "gres", "gpus", "G", "gpus-per-node", "gpus-per-task", "c",
    "cpus-per-task", "p", "partition", "t", "time", "J", "job-name", "o", "output", "e", "error", "mem", "export",
    "mpi", "container-image", "container-mounts", "container-workdir", "account", "A", "qos", "w", "nodelist",
})  # fmt: skip
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?$")
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")
_VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}|\$(\w+)")
_SEPARATORS = re.compile(r"&&|\|\||[;|&]")
_REDIRECT = re.compile(r"^\d*(>>?|<)(&\d+)?$|^&>")
# Programs that run the rest of the line as a command: skipped to find the launch.
_WRAPPERS = frozenset({"exec", "nohup", "time", "command", "builtin"})


class CommandError(Exception):
    """The launch command cannot be read at all (a usage error: exit 2)."""


@dataclass
class Launch:
    """A launch command, read. `options` are the launcher's, named without dashes and with `_`
    written `-` (`nproc-per-node`); `True` for a flag. `scheduler` holds SLURM's `nodes`,
    `ntasks-per-node`, `ntasks` and `gpus-per-node`, from `#SBATCH` lines and `srun`."""

    words: tuple[str, ...]
    launcher: str
    options: dict[str, str | bool] = field(default_factory=dict)
    script: str | None = None
    module: str | None = None  # `python -m pkg.train`, `torchrun -m pkg.train`
    script_args: tuple[str, ...] = ()
    environment: dict[str, str] = field(default_factory=dict)
    scheduler: dict[str, str] = field(default_factory=dict)
    interpreter: str | None = None
    origin: str | None = None  # "run.sh:12" when read from a file
    folder: str | None = None  # the folder of the file it was read from
    notes: list[str] = field(default_factory=list)

    def option(self, *names: str) -> str | bool | None:
        for name in names:
            if name in self.options:
                return self.options[name]
        return None

    @property
    def text(self) -> str:
        return shlex.join(self.words)

    @property
    def under_srun(self) -> bool:
        return "srun" in self.scheduler.get("wrapper", "")


def expand(word: str, variables: Mapping[str, str]) -> str:
    """`word` with `$VAR`, `${VAR}` and `${VAR:-default}` replaced where known."""

    def value(match: re.Match) -> str:
        name = match.group(1) or match.group(3)
        if name in variables:
            return variables[name]
        return match.group(2) if match.group(2) is not None else match.group(0)

    return _VARIABLE.sub(value, word)


def _split_commands(line: str) -> list[str]:
    """`line` split at `;`, `&&`, `||`, `|` and `&` outside quotes."""
    parts, start, quote, index = [], 0, None, 0
    while index < len(line):
        char = line[index]
        if quote:
            if char == quote:
                quote = None
            index += 2 if char == "\\" and quote == '"' else 1
            continue
        if char in "'\"":
            quote = char
        elif char == "\\":
            index += 1
        elif char in ";|&" and not _in_redirect(line, index):
            match = _SEPARATORS.match(line, index)
            parts.append(line[start:index])
            index = start = index + len(match.group(0)) if match else index + 1
            continue
        index += 1
    parts.append(line[start:])
    return [part for part in parts if part.strip()]


def _in_redirect(line: str, index: int) -> bool:
    """`&` of `2>&1` or `&>`: part of a redirection, not a separator."""
    return line[index] == "&" and (line[index - 1 : index] == ">" or line[index + 1 : index + 2] == ">")


def _hide_substitutions(line: str) -> str:
    """`line` with each command substitution (`$(...)`, backquotes) replaced by `$(...)`: its
    value is known only when the script runs, and its `|` and `;` are not this line's."""
    out, index = [], 0
    while index < len(line):
        if line.startswith("$(", index) or line[index] == "`":
            closing, depth, index = ("`", 0, index + 1) if line[index] == "`" else (")", 1, index + 2)
            while index < len(line) and (depth > 1 or line[index] != closing):
                depth += (line[index] == "(") - (line[index] == ")") if closing == ")" else 0
                index += 1
            out.append("$(...)")
            index += 1
            continue
        out.append(line[index])
        index += 1
    return "".join(out)


def _words(text: str) -> list[str] | None:
    try:
        words = shlex.split(text, comments=True)
    except ValueError:  # an unbalanced quote: not a command ddplint can read
        return None
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif _REDIRECT.match(word):
            skip = not word[-1:].isdigit() and not word.startswith("&>")
        elif re.match(r"^\d*(>>?|<)\S", word):
            continue  # `>log.txt`, `2>err`
        else:
            kept.append(word)
    return kept


def _normal(option: str) -> tuple[str, str | None]:
    name, equals, value = option.lstrip("-").partition("=")
    short = option.startswith("-") and not option.startswith("--") and len(name) == 1
    return (name if short else name.replace("_", "-").lower()), (value if equals else None)


def _scan_options(words: Sequence[str], values: frozenset[str], flags: frozenset[str]) -> tuple[dict, int]:
    """The options at the start of `words`, and the index of the first word after them."""
    found: dict[str, str | bool] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            return found, index + 1
        if not word.startswith("-") or word == "-":
            break
        name, value = _normal(word)
        following = words[index + 1] if index + 1 < len(words) else None
        if value is None and name not in flags and following is not None and (
            name in values or (not following.startswith("-") and not following.endswith(".py"))
        ):
            value = following
            index += 1
        found[name] = True if value is None else value
        index += 1
    return found, index


def _python_options(words: Sequence[str]) -> tuple[str | None, int]:
    """After `python`: the module of `-m MODULE` (None for a script), and where its target is."""
    index = 0
    while index < len(words) and words[index].startswith("-"):
        word = words[index]
        if word == "-m" or (word.startswith("-m") and len(word) > 2):
            module = word[2:] or (words[index + 1] if index + 1 < len(words) else "")
            return module, index + (1 if word[2:] else 2)
        index += 2 if word in ("-W", "-X", "-c") else 1
    return None, index


def parse_words(words: Sequence[str], environment: Mapping[str, str] | None = None) -> Launch | None:
    """The launch `words` run, or None where they run no launcher and no Python script."""
    environment = dict(environment or {})
    scheduler: dict[str, str] = {}
    rest = list(words)
    while rest:
        head = rest[0]
        if _ASSIGNMENT.match(head):
            name, _, value = head.partition("=")
            environment[name] = value
            rest = rest[1:]
        elif head == "env":
            rest = [word for word in rest[1:] if word not in ("-i", "-")]
        elif head in _WRAPPERS:
            rest = rest[1:]
        elif os.path.basename(head) == "srun":
            options, used = _scan_options(rest[1:], _SRUN_VALUES, frozenset())
            scheduler.update(_slurm_counts(options))
            scheduler["wrapper"] = "srun"
            rest = rest[1 + used :]
        else:
            break
    return _launch(rest, environment, scheduler) if rest else None


def _launch(words: list[str], environment: dict[str, str], scheduler: dict[str, str]) -> Launch | None:
    program = os.path.basename(words[0])
    interpreter = None
    if _PYTHON.match(program):
        interpreter = words[0]
        module, index = _python_options(words[1:])
        target = words[1 + index :]
        if module is None:
            if not target or not target[0].endswith(".py"):
                return None
            return Launch(tuple(words), PYTHON, script=target[0], script_args=tuple(target[1:]),
                          environment=environment, scheduler=scheduler, interpreter=interpreter)
        if module not in _MODULE_LAUNCHERS:
            return Launch(tuple(words), PYTHON, module=module, script_args=tuple(target),
                          environment=environment, scheduler=scheduler, interpreter=interpreter)
        launcher, after = _MODULE_LAUNCHERS[module], target
    elif program == TORCHRUN_LAUNCHER:
        launcher, after = TORCHRUN_LAUNCHER, words[1:]
    elif program == DEEPSPEED:
        launcher, after = DEEPSPEED, words[1:]
    elif program == "accelerate" and words[1:2] == ["launch"]:
        launcher, after = ACCELERATE, words[2:]
    else:
        return None
    options, index = _scan_options(after, *_OPTIONS[launcher])
    target = after[index:]
    as_module = any(options.get(flag) is True for flag in ("m", "module"))
    if as_module or options.get("no-python") is True:
        script, module = None, (target[0] if target and as_module else None)
    else:
        script, module = (target[0] if target else None), None
    return Launch(tuple(words), launcher, options, script, module, tuple(target[1:]), environment,
                  scheduler, interpreter)


def _slurm_counts(options: Mapping[str, str | bool]) -> dict[str, str]:
    """`nodes`, `ntasks-per-node`, `ntasks` and `gpus-per-node` from `#SBATCH` or srun options."""
    counts: dict[str, str] = {}
    for names, key in ((("N", "nodes"), "nodes"), (("n", "ntasks"), "ntasks"), (("ntasks-per-node",), "ntasks-per-node"),
                       (("gpus-per-node",), "gpus-per-node")):
        for name in names:
            if isinstance(options.get(name), str):
                counts[key] = str(options[name]).rpartition(":")[2]
    gres = options.get("gres")
    if isinstance(gres, str):
        for item in gres.split(","):
            kind, _, count = item.partition(":")
            if kind == "gpu":
                counts["gpus-per-node"] = count.rpartition(":")[2] or "1"
    return counts


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, logical line): lines ending in a backslash are joined to the next."""
    pending, first = "", 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not pending:
            first = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield first, pending + line
        pending = ""
    if pending:
        yield first, pending


def parse_script(path: str, text: str, environment: Mapping[str, str] | None = None) -> Launch:
    """The launch a shell or SLURM script runs (CommandError when it runs none)."""
    variables: dict[str, str] = {}  # what the script sets, for expanding its words
    exported: dict[str, str] = {}  # what it exports: the launch's environment
    sbatch: dict[str, str | bool] = {}
    found: list[Launch] = []
    name = os.path.basename(path)
    folder = os.path.dirname(os.path.abspath(path))
    for number, line in _lines(text):
        stripped = line.strip()
        if stripped.startswith("#SBATCH"):
            words = _words(stripped[len("#SBATCH"):]) or []
            sbatch.update(_scan_options(words, _SRUN_VALUES, frozenset())[0])
            continue
        for part in _split_commands(_hide_substitutions(line)):
            words = _words(part)
            if not words:
                continue
            exporting = words[0] == "export"
            if words[0] in ("export", "declare", "local", "readonly"):
                words = [word for word in words[1:] if not word.startswith("-")]
            if all(_ASSIGNMENT.match(word) for word in words):
                for word in words:
                    key, _, value = word.partition("=")
                    variables[key] = expand(value, variables)
                    if exporting or key in exported:
                        exported[key] = variables[key]
                continue
            launch = parse_words([expand(word, variables) for word in words], exported)
            if launch is not None:
                launch.origin = f"{name}:{number}"
                found.append(launch)
    if not found:
        raise CommandError(
            f"{path}: no launch command found (torchrun, python -m torch.distributed.run or .launch, "
            "deepspeed, accelerate launch, or python SCRIPT.py)"
        )
    chosen = next((launch for launch in found if launch.launcher != PYTHON), found[0])
    chosen.scheduler = {**_slurm_counts(sbatch), **chosen.scheduler}
    chosen.environment = {**(environment or {}), **chosen.environment}
    chosen.folder = folder
    others = len(found) - 1
    if others:
        chosen.notes.append(f"{name} runs {len(found)} commands that could be the launch; the one at {chosen.origin} is checked")
    return chosen


def read_command(words: Sequence[str], cwd: str) -> Launch:
    """The launch that `ddplint doctor WORDS` names: a command, or a script file (also as
    `bash run.sh` or `sbatch job.slurm`) that holds one. CommandError when there is none."""
    words = list(words)
    if len(words) == 2 and words[0] in ("bash", "sh", "sbatch", "source", "."):
        words = words[1:]
    if len(words) == 1 and not words[0].endswith(".py"):
        path = os.path.join(cwd, words[0])
        if not os.path.isfile(path):
            raise CommandError(f"{words[0]}: no such file (give a launch command, or a shell or SLURM script that holds one)")
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError as error:
            raise CommandError(f"{words[0]}: cannot read: {error.strerror or error}") from None
        return parse_script(words[0], text)
    if len(words) >= 1 and words[0].endswith(".py"):
        words = ["python", *words]
    launch = parse_words(words)
    if launch is None:
        raise CommandError(
            f"not a launch command: {shlex.join(words)} (expected torchrun, python -m torch.distributed.run "
            "or .launch, deepspeed, accelerate launch, srun or python SCRIPT.py, or a script that runs one)"
        )
    return launch


# -- what a launch means ---------------------------------------------------------------------


def _count(value: str | bool | None, what: str) -> int | Unknown:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return Unknown(f"{what} is {value}, known only when the job runs")


def ranks_per_node(launch: Launch, gpus: int | Unknown, cpus: int, spawns: bool) -> int | Unknown:
    """The processes the launch starts on each node; `gpus`: the GPUs CUDA shows here."""
    tasks = launch.scheduler.get("ntasks-per-node", "1")
    tasks_here = int(tasks) if tasks.isdigit() else 1
    if launch.launcher in (TORCHRUN_LAUNCHER, OLD_LAUNCHER):
        value = launch.option("nproc-per-node")
        if value is None:
            per_launcher: int | Unknown = 1  # torchrun's default
        elif value == "gpu":
            per_launcher = gpus
        elif value == "auto":
            per_launcher = gpus if isinstance(gpus, Unknown) or gpus > 0 else cpus
        elif value == "cpu":
            per_launcher = cpus
        else:
            per_launcher = _count(value, "--nproc-per-node")
        return per_launcher if isinstance(per_launcher, Unknown) else per_launcher * tasks_here
    if launch.launcher == DEEPSPEED:
        value = launch.option("num-gpus")
        if value is not None:
            return _count(value, "--num_gpus")
        include = launch.option("include")
        if isinstance(include, str):
            return len(include.partition("@")[0].partition(":")[2].split(","))
        return gpus  # every GPU of the node
    if launch.launcher == ACCELERATE:
        total = launch.option("num-processes")
        if total is None:
            return Unknown("accelerate launch takes the number of processes from its config file (--num_processes gives it)")
        machines = nodes(launch)
        count = _count(total, "--num_processes")
        if isinstance(count, Unknown) or isinstance(machines, Unknown):
            return count if isinstance(count, Unknown) else machines
        return max(1, count // machines)
    if launch.under_srun:
        if tasks.isdigit():
            return int(tasks)
        total, machines = launch.scheduler.get("ntasks", ""), launch.scheduler.get("nodes", "1")
        if total.isdigit() and machines.isdigit():
            return max(1, int(total) // int(machines))
        return Unknown("srun's tasks per node are not given (--ntasks-per-node)")
    if spawns:
        return Unknown("the script starts its own ranks (torch.multiprocessing.spawn): how many is decided when it runs")
    return 1


def nodes(launch: Launch, hostfile: bool = False) -> int | Unknown:
    """The nodes the job spans. `hostfile`: DeepSpeed's default hostfile (/job/hostfile) exists."""
    scheduled = launch.scheduler.get("nodes")
    if launch.launcher in (TORCHRUN_LAUNCHER, OLD_LAUNCHER):
        value = launch.option("nnodes")
        if value is None:
            return 1
        if isinstance(value, str) and "$" in value and scheduled and scheduled.isdigit():
            return int(scheduled)  # `--nnodes $SLURM_NNODES` in a job of `#SBATCH --nodes=N`
        return _count(value.rpartition(":")[2] if isinstance(value, str) else value, "--nnodes")
    if launch.launcher == DEEPSPEED:
        value = launch.option("num-nodes")
        if value is not None and value != "-1":
            return _count(value, "--num_nodes")
        if launch.option("hostfile", "h") is not None or hostfile:
            return Unknown("DeepSpeed takes its nodes from the hostfile, which ddplint does not read")
        return 1
    if launch.launcher == ACCELERATE:
        value = launch.option("num-machines")
        if value is not None:
            return _count(value, "--num_machines")
        return Unknown("accelerate launch takes the number of machines from its config file (--num_machines gives it)")
    if launch.under_srun:
        return _count(scheduled or "1", "srun's --nodes")
    return 1


def option_value(arguments: Sequence[str], strings: Sequence[str]) -> str | None:
    """The value the last of `strings` (`-j`, `--workers`) is given in `arguments`, as
    `--workers 8` or `--workers=8`; None where none is."""
    found = None
    for index, word in enumerate(arguments):
        name, equals, value = word.partition("=")
        if name in strings:
            found = value if equals else (arguments[index + 1] if index + 1 < len(arguments) else None)
    return found
