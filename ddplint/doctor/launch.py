"""The launch: the ranks it starts against the GPUs, the launcher against the script's argument
parsing, the rendezvous of several nodes, the process group's timeout against rank 0's work,
and the live rendezvous probe."""

from __future__ import annotations

from ddplint.doctor.checks import CouldNotCheck, Found, Severity, check, known
from ddplint.doctor.command import ACCELERATE, DEEPSPEED, OLD_LAUNCHER, PYTHON, TORCHRUN_LAUNCHER
from ddplint.doctor.facts import NO_LAUNCH
from ddplint.doctor.script import LOCAL_RANK_ARGUMENT, RANK_FROM_LOCAL_RANK, ScriptFacts, findings_under
from ddplint.doctor.software import release

# The process group's default timeout: 30 minutes; for NCCL 10 minutes since PyTorch 2.2
# (pytorch/pytorch#110947).
DEFAULT_TIMEOUT = 30 * 60
DEFAULT_NCCL_TIMEOUT = 10 * 60
# Rank 0's lone work is reported when the ranks waiting for it give up within this long.
LONG_WORK = 30 * 60
LOOPBACK = ("localhost", "127.", "::1", "[::1]", "0.0.0.0")
# Variables that a scheduler sets in the job: a launch that reads them is given them at run time.
SCHEDULER_PREFIXES = ("SLURM_", "PMI_", "OMPI_", "PBS_", "LSB_")


def _launch(facts):
    if facts.launch is None:
        raise CouldNotCheck(NO_LAUNCH)
    return facts.launch


def _nproc_option(launch) -> str:
    return {DEEPSPEED: "--num_gpus", ACCELERATE: "--num_processes"}.get(launch.launcher, "--nproc_per_node")


def _rule_fix(name: str, path: str, unsafe: bool = False) -> str:
    from ddplint.rules import rule_by_code

    rule = rule_by_code(name)
    flags = "--fix --unsafe-fixes" if unsafe else "--fix"
    return f"ddplint {flags} --select {rule.code} {path}" if rule is not None else f"see `ddplint rule {name}`"


@check("DDPE401", "ranks-per-gpu", "launch")
def ranks_per_gpu(facts) -> list[Found]:
    """The launch starts more ranks on this node than CUDA shows GPUs, and each rank takes a
    GPU of its own.

    A rank that places itself on `cuda:LOCAL_RANK` finds no such device ("invalid device
    ordinal"), and NCCL refuses two ranks on one GPU. The ranks are the launcher's
    (`--nproc_per_node`, `gpu` and `auto` included; DeepSpeed's `--num_gpus` or every GPU;
    Accelerate's `--num_processes` over its machines; srun's tasks per node); the GPUs those
    nvidia-smi lists that `CUDA_VISIBLE_DEVICES` leaves visible (torch's own count with
    `--probe`). Whether ranks use GPUs: DeepSpeed's do, Accelerate's with `--multi_gpu`, and
    otherwise where the script uses CUDA or NCCL. A script that asks
    `torch.cuda.is_available()` is taken to fall back to the CPU on a machine without GPUs.
    """
    launch = _launch(facts)
    ranks = known(facts.ranks_per_node)
    if not known(facts.needs_gpu):
        return []
    gpus = known(facts.gpu_count)
    if 0 < ranks <= gpus:
        return []
    if gpus == 0 and isinstance(facts.script, ScriptFacts) and facts.script.cpu_fallback:
        return []  # without a GPU, torch.cuda.is_available() is False and the script takes the CPU
    variable = facts.environment.get("CUDA_VISIBLE_DEVICES")
    hidden = f"CUDA_VISIBLE_DEVICES={variable!r}" if variable is not None else None
    if ranks == 0 or gpus == 0:
        why = hidden or ("torch.cuda.device_count() is 0" if "torch" in facts.probes else known(facts.gpus).source)
        message = f"the launch places each rank on a GPU and CUDA shows none here ({why})"
        fix = "run it on a GPU node" + (", with CUDA_VISIBLE_DEVICES listing its GPUs" if hidden else "")
    else:
        message = (f"the launch starts {ranks} ranks on this node, each on a GPU of its own, and CUDA shows {gpus} GPU(s)"
                   f"{f' ({hidden})' if hidden else ''}: ranks {gpus} to {ranks - 1} find no GPU")
        fix = f"start at most {gpus} ranks per node ({_nproc_option(launch)} {gpus}), or run on a node with {ranks} GPUs"
    return [Found(Severity.ERROR, message, fix)]


def _passed_option(facts, launch) -> str | None:
    """The option the launcher adds to each rank's command line, or None."""
    if launch.launcher == DEEPSPEED:
        return None if launch.option("no-local-rank") else "--local_rank"
    if launch.launcher != OLD_LAUNCHER or launch.option("use-env"):
        return None
    software = known(facts.software)
    if software.torch is None:
        raise CouldNotCheck("torch is not installed, so what torch.distributed.launch passes is unknown")
    return "--local-rank" if (release(software.torch.version) or (0,)) >= (2,) else "--local_rank"


@check("DDPE402", "launcher-arguments", "launch")
def launcher_arguments(facts) -> list[Found]:
    """The launcher and the script's argument parsing disagree about the local rank.

    torchrun and `accelerate launch` pass no option: each rank gets `LOCAL_RANK` in its
    environment. `python -m torch.distributed.launch` passes `--local-rank=N` (PyTorch 2.0
    and later; `--local_rank=N` before), unless given `--use-env`. DeepSpeed's launcher
    passes `--local_rank=N` unless given `--no_local_rank`. A parser that reads the rank from
    an option no launcher passes keeps its default on every rank (all on GPU 0), and one that
    does not accept the option the launcher passes stops every rank ("unrecognized
    arguments"). What the script reads comes from the linter's local-rank-argument rule, told
    the launch's launcher; the options a parser accepts are read from its `add_argument`
    calls, and a parser that gets options elsewhere (`parents=`, a function of another
    module) or uses `parse_known_args` is not judged.
    """
    launch = _launch(facts)
    if launch.launcher == PYTHON:
        return []  # no launcher passes anything
    script = known(facts.need_script("what its parser accepts is unknown"))
    passed = _passed_option(facts, launch)
    if passed is None:
        return [
            Found(Severity.ERROR, message + ("" if launch.launcher == TORCHRUN_LAUNCHER else
                                             f" ({launch.launcher} passes no option either)"),
                  _rule_fix(LOCAL_RANK_ARGUMENT, script.path), where)
            for where, message in script.findings.get(LOCAL_RANK_ARGUMENT, [])
        ]
    if launch.launcher == OLD_LAUNCHER and facts.script_text is not None:
        named = findings_under(script.path, facts.script_text, OLD_LAUNCHER)
        if named:
            return [Found(Severity.ERROR, f"{OLD_LAUNCHER} passes {passed}=N: {message}",
                          f"{_rule_fix(LOCAL_RANK_ARGUMENT, script.path)}, or launch with torchrun", where)
                    for where, message in named]
    return _rejects(script, launch, passed)


def _rejects(script, launch, passed: str) -> list[Found]:
    strict = [parser for parser in script.parsers if parser.strict]
    if not strict:
        if any(parser.tolerant for parser in script.parsers):
            return []
        raise CouldNotCheck(f"{script.path} calls no parse_args() itself: its arguments are parsed elsewhere or not at all")
    found = []
    for parser in strict:
        if parser.accepts(passed) or parser.tolerant:
            continue
        if not parser.complete:
            raise CouldNotCheck(f"a parser of {script.path} gets options outside this file (parents=, or another module)")
        fix = ("declare it: parser.add_argument('--local_rank', type=int, default=-1), or launch with --no_local_rank"
               if launch.launcher == DEEPSPEED else
               "launch with torchrun (it passes no option; read LOCAL_RANK), or add --use-env, or declare it: "
               "parser.add_argument('--local-rank', '--local_rank', type=int, default=int(os.environ.get('LOCAL_RANK', 0)))")
        found.append(Found(
            Severity.ERROR,
            f"{launch.launcher} passes {passed}=N to every rank and this parser does not accept it: every rank stops "
            f"with 'unrecognized arguments: {passed}=0'", fix, parser.where,
        ))
    return found


def _address(facts, launch) -> tuple[str | None, str]:
    """The rendezvous address the launch gives, and how it is given."""
    for option in ("rdzv-endpoint", "master-addr", "main-process-ip"):
        value = launch.option(option)
        if isinstance(value, str):
            return value, f"--{option.replace('-', '_')} {value}"
    for variable in ("PET_RDZV_ENDPOINT", "PET_MASTER_ADDR"):
        if facts.environment.get(variable):
            return facts.environment[variable], f"{variable}={facts.environment[variable]}"
    return None, ""


def _host(address: str) -> str:
    if address.startswith("["):
        return address[: address.find("]") + 1]
    return address.rpartition(":")[0] if address.count(":") == 1 else address


def _unset_variable(address: str, environment: dict[str, str]) -> str | None:
    """The `$NAME` in `address` that nothing sets: not the launch's script, this shell, or a scheduler."""
    if "$(" in address:
        return None  # a command's output, at run time
    for word in address.replace("{", "").replace("}", "").split("$")[1:]:
        name = "".join(char for char in word if char.isalnum() or char == "_")
        if name and name not in environment and not name.startswith(SCHEDULER_PREFIXES):
            return name
    return None


@check("DDPE403", "rendezvous-address", "launch")
def rendezvous_address(facts) -> list[Found]:
    """A launch over several nodes has no rendezvous address the nodes share.

    torchrun's nodes meet at `--rdzv-endpoint` (or `--master-addr`/`--master-port`);
    without one each node uses its own 127.0.0.1 and waits for the others for ever; a
    loopback address does the same, `--standalone` too. Accelerate's machines meet at
    `--main_process_ip`. A script started by srun without a launcher meets through
    `init_process_group`'s `env://`, which needs `MASTER_ADDR` and `MASTER_PORT` in each
    task's environment. An address that is a variable nothing sets (not the launch's script,
    this shell, or the scheduler's `SLURM_*`) is reported too; a command's output
    (`$(scontrol show hostnames ...)`) is taken as set. DeepSpeed's nodes come from its
    hostfile, which is not read.
    """
    launch = _launch(facts)
    count = known(facts.nodes)
    if count <= 1:
        return []
    if launch.launcher == DEEPSPEED:
        raise CouldNotCheck("DeepSpeed takes its nodes and master from the hostfile, which ddplint does not read")
    if launch.launcher == PYTHON:
        return _env_rendezvous(facts, count)
    if launch.option("standalone"):
        return [Found(Severity.ERROR, f"--standalone makes a rendezvous of one node on each node: the {count} nodes never meet",
                      "drop --standalone and give every node the same --rdzv-endpoint HOST:PORT (one node's address)")]
    address, given = _address(facts, launch)
    if address is None:
        if launch.launcher == ACCELERATE:
            raise CouldNotCheck("accelerate launch may read main_process_ip from its config file")
        return [Found(Severity.ERROR, f"the launch spans {count} nodes and names no rendezvous address: each node meets "
                      "at its own 127.0.0.1 and waits for the others for ever",
                      "give every node the same --rdzv-endpoint HOST:PORT (--rdzv-backend c10d), HOST being one node's address")]
    unset = _unset_variable(address, facts.environment)
    if unset is not None:
        return [Found(Severity.ERROR, f"{given} reads ${unset}, which neither {launch.origin or 'the command'} nor this "
                      "environment sets", f"set {unset} before the launch (export {unset}=<the first node's address>)")]
    if _host(address).lower().startswith(LOOPBACK):
        return [Found(Severity.ERROR, f"{given} is a loopback address and the launch spans {count} nodes: each node "
                      "reaches only itself", "give the address of one node that the others can reach")]
    return []


def _env_rendezvous(facts, count: int) -> list[Found]:
    script = known(facts.need_script("how it meets the other nodes is unknown"))
    method = script.init_method
    if method is not None and not method.startswith("env://"):
        host = method.partition("://")[2]
        if host.lower().startswith(LOOPBACK):
            return [Found(Severity.ERROR, f"init_method {method}... is a loopback address on {count} nodes",
                          "use the address of one node that the others can reach", script.init_calls[0] if script.init_calls else None)]
        return []
    missing = [name for name in ("MASTER_ADDR", "MASTER_PORT") if name not in facts.environment]
    if not missing:
        return []
    return [Found(Severity.ERROR, f"the script meets the other nodes through env://, and {' and '.join(missing)} "
                  f"{'is' if len(missing) == 1 else 'are'} set neither by {facts.launch.origin or 'the command'} nor here",
                  "export MASTER_ADDR (the first node: $(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)) "
                  "and MASTER_PORT before srun", script.init_calls[0] if script.init_calls else None)]


@check("DDPE404", "local-rank-as-rank", "launch")
def local_rank_as_rank(facts) -> list[Found]:
    """The launch spans several nodes and the script passes its local rank as
    `init_process_group(rank=...)`.

    `LOCAL_RANK` numbers the processes of one node; on two nodes two processes claim each
    rank, and the rendezvous fails or hangs. Found by the linter's rank-from-local-rank rule;
    on one node the local rank is the global one, and this check is silent.
    """
    _launch(facts)
    if known(facts.nodes) <= 1:
        return []
    script = known(facts.need_script("whether it passes its local rank as its rank is unknown"))
    return [
        Found(Severity.ERROR, f"the launch spans {facts.nodes} nodes and {message}",
              _rule_fix(RANK_FROM_LOCAL_RANK, script.path, unsafe=True), where)
        for where, message in script.findings.get(RANK_FROM_LOCAL_RANK, [])
    ]


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} minute{'' if seconds == 60 else 's'}" if seconds >= 60 else f"{seconds:g} seconds"


def _timeout(facts, script) -> tuple[float, str]:
    """The timeout the waiting ranks have, and where it comes from."""
    timeout = known(script.timeout)
    if timeout is not None:
        return timeout, "the script's timeout"
    probe = facts.probes.get("torch")
    nccl = "nccl" in facts.backends
    measured = probe.values.get("timeouts", {}).get("nccl" if nccl else "default") if probe is not None else None
    if measured is not None:
        return measured, f"torch's default{' for NCCL' if nccl else ''} (read by the probe)"
    if not nccl:
        return DEFAULT_TIMEOUT, "torch's default"
    software = facts.software
    torch = getattr(software, "torch", None)
    if torch is not None and (release(torch.version) or (0,)) < (2, 2):
        return DEFAULT_TIMEOUT, "torch's default"
    return DEFAULT_NCCL_TIMEOUT, "NCCL's default since PyTorch 2.2"


@check("DDPE405", "rank-zero-timeout", "launch")
def rank_zero_timeout(facts) -> list[Found]:
    """Rank 0 does long work alone while the other ranks wait in a collective, under a timeout
    of 30 minutes or less.

    The waiting ranks give up after the process group's timeout: `init_process_group`'s
    `timeout=`, else torch's default, 10 minutes for NCCL (PyTorch 2.2 and later) and 30 for
    the others. Then the watchdog kills the job ("Watchdog caught collective operation
    timeout"), often hours into the run. Long work is read from the script, in code that rank
    0 alone runs (the linter's rank analysis: `if rank == 0:`, `if is_main_process():` and
    the like) followed by a collective every rank calls in the same function: a download
    (`download=True`, a function named for downloading), an evaluation (a function named for
    evaluating, validating, testing, predicting) or a loop over a loader or dataset.
    """
    _launch(facts)
    ranks, count = facts.ranks_per_node, facts.nodes
    if ranks == 1 and count == 1:
        return []
    script = known(facts.need_script("what rank 0 does alone is unknown"))
    if not script.waits:
        return []
    seconds, source = _timeout(facts, script)
    if seconds > LONG_WORK:
        return []
    return [
        Found(Severity.WARNING,
              f"rank 0 alone runs {wait.what} while the other ranks wait in {wait.collective_name}() at "
              f"{wait.collective}; they give up after {_minutes(seconds)} ({source}) and the job dies if it takes longer",
              "pass init_process_group(..., timeout=datetime.timedelta(hours=2)), longer than that work can take, "
              "or share the work among the ranks", wait.work)
        for wait in script.waits
    ]


@check("DDPE406", "local-rendezvous", "launch")
def local_rendezvous(facts) -> list[Found]:
    """Two processes cannot meet over gloo on this machine's loopback address (live probe).

    With `--probe`, two Python processes import torch, meet through a TCP store on
    127.0.0.1 and all-reduce one tensor over gloo, in this environment (so
    `GLOO_SOCKET_IFNAME` and the like apply). A failure here (torch.distributed not built, a
    firewall on loopback, an interface setting that does not exist) fails any launch on this
    machine. Without `--probe` it cannot check.
    """
    probe = facts.probes.get("torch")
    if probe is None:
        raise CouldNotCheck("the live probe was not run (--probe runs it)")
    if not probe.failed:
        return []
    return [Found(Severity.ERROR, f"two processes could not meet over gloo on 127.0.0.1: {probe.detail}",
                  "see the error: torch.distributed must be available, and loopback connections allowed")]


@check("DDPE407", "nccl-without-cuda", "launch")
def nccl_without_cuda(facts) -> list[Found]:
    """The script asks for the NCCL backend and the installed torch is not a CUDA build.

    A CPU build of torch has no NCCL: `init_process_group("nccl")` stops every rank
    ("Distributed package doesn't have NCCL built in"). The backend is read from the script's
    `init_process_group` calls (a literal, or a constant), and DeepSpeed always uses NCCL on
    GPUs.
    """
    _launch(facts)
    if "nccl" not in facts.backends:
        return []
    software = known(facts.software)
    if software.torch is None:
        return []  # the torch-missing check says it
    if known(software.torch_cuda) is not None:
        return []
    where = facts.script.init_calls[0] if isinstance(facts.script, ScriptFacts) and facts.script.init_calls else None
    return [Found(Severity.ERROR, f"the run uses the NCCL backend and torch {software.torch.version} is not a CUDA build: "
                  "'Distributed package doesn't have NCCL built in'",
                  "install a CUDA build of torch on a GPU node, or use backend='gloo' on the CPU", where)]
