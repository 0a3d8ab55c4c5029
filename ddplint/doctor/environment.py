"""The environment: the variables that change how NCCL, torch.distributed and CUDA behave.

Each variable ddplint knows is listed with what it does and when it hurts (`VARIABLES`,
shown for every one that is set); the checks report the settings that hurt. The environment
is this shell's, with what the launch command and the script holding it set on top
(`CUDA_VISIBLE_DEVICES=0,1 torchrun ...`, `export NCCL_P2P_DISABLE=1`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ddplint.doctor.checks import Found, Severity, check, known


@dataclass(frozen=True)
class Variable:
    does: str
    hurts: str


# Renamed in PyTorch 2.2 (pytorch/pytorch#114077); the old names still work with a warning.
RENAMED = {
    "NCCL_BLOCKING_WAIT": "TORCH_NCCL_BLOCKING_WAIT",
    "NCCL_ASYNC_ERROR_HANDLING": "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "NCCL_DESYNC_DEBUG": "TORCH_NCCL_DESYNC_DEBUG",
    "NCCL_ENABLE_TIMING": "TORCH_NCCL_ENABLE_TIMING",
    "ENABLE_NCCL_HEALTH_CHECK": "TORCH_ENABLE_NCCL_HEALTH_CHECK",
    "NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK": "TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK",
}
# NCCL settings that override its own choice of algorithm, protocol and resources.
TUNING = ("NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_NTHREADS", "NCCL_BUFFSIZE",
          "NCCL_MIN_CTAS", "NCCL_MAX_CTAS")
THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
# Set by a launcher for each rank: in a shell that runs a script directly they are left over.
RANK_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
_TUNING = Variable("overrides NCCL's own choice for this topology and message size",
                   "tuned for one machine and NCCL version, it is usually slower elsewhere, and some values fail on some topologies")
_THREADS = Variable("threads each rank's CPU operators use (torchrun sets OMP_NUM_THREADS=1 when it is unset)",
                    "ranks per node x threads above the CPU cores: the ranks' threads fight for the cores")
_RANK = Variable("a rank's place in the job, set by torchrun and the other launchers for each rank they start",
                 "left in a shell, a script started there without a launcher believes it is that rank and waits for the others")
VARIABLES = {
    "CUDA_VISIBLE_DEVICES": Variable("which GPUs CUDA shows the process, in that order",
                                     "a GPU this machine lacks, or too few for the ranks: ranks find no GPU"),
    "CUDA_DEVICE_ORDER": Variable("PCI_BUS_ID numbers GPUs as nvidia-smi does; the default numbers the fastest first",
                                  "with different GPU models, indices in CUDA_VISIBLE_DEVICES mean other GPUs than nvidia-smi shows"),
    "CUDA_LAUNCH_BLOCKING": Variable("makes every CUDA kernel launch wait for the kernel to finish (a debugging switch)",
                                     "every step is slower, and DDP's overlap of all-reduce with backward is lost"),
    "NCCL_DEBUG": Variable("NCCL's logging: WARN, INFO (start-up and topology), TRACE (every call)",
                           "TRACE logs every collective and slows them; INFO is harmless"),
    "NCCL_DEBUG_SUBSYS": Variable("which parts of NCCL log", "harmless"),
    "NCCL_P2P_DISABLE": Variable("1: no peer-to-peer (NVLink, PCIe) transfers between the GPUs of a node",
                                 "intra-node all-reduce goes through host memory, several times slower"),
    "NCCL_P2P_LEVEL": Variable("how close two GPUs must be for peer-to-peer (LOC: never)", "LOC or 0 turns P2P off"),
    "NCCL_SHM_DISABLE": Variable("1: no shared-memory transport between the processes of a node",
                                 "ranks that cannot use P2P talk through the network stack instead"),
    "NCCL_IB_DISABLE": Variable("1: no InfiniBand or RoCE; NCCL uses TCP sockets between nodes",
                                "inter-node bandwidth drops by an order of magnitude"),
    "NCCL_NET": Variable("forces NCCL's network plugin (Socket, IB)", "Socket on an InfiniBand cluster: slow inter-node traffic"),
    "NCCL_SOCKET_IFNAME": Variable("the network interfaces NCCL uses (prefixes; ^ excludes, = matches exactly)",
                                   "one this machine lacks: 'no socket interface found', or a hang at start-up"),
    "GLOO_SOCKET_IFNAME": Variable("the network interface gloo uses", "one this machine lacks: gloo cannot start"),
    "NCCL_IB_HCA": Variable("the InfiniBand adapters NCCL uses", "an adapter this node lacks: NCCL falls back to sockets"),
    "NCCL_IB_TIMEOUT": Variable("InfiniBand's retry timeout", "harmless when raised; low values fail on busy fabrics"),
    "TORCH_DISTRIBUTED_DEBUG": Variable("OFF, INFO or DETAIL: DETAIL checks that every collective matches across ranks",
                                        "DETAIL adds a collective before each one and logs per bucket: slower steps"),
    "TORCH_CPP_LOG_LEVEL": Variable("torch's C++ logging (INFO shows the c10d messages)", "harmless, verbose"),
    "TORCH_SHOW_CPP_STACKTRACES": Variable("C++ stack traces in errors", "harmless"),
    "TORCH_NCCL_BLOCKING_WAIT": Variable("1: the host waits for each collective and raises at the timeout",
                                         "steps are slower; the default error handling already turns a hang into an error"),
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": Variable("what the watchdog does on a failed or timed-out collective (default 3: "
                                                "tear the process down)", "0: nothing, so a lost rank leaves the others waiting forever"),
    "TORCH_NCCL_TRACE_BUFFER_SIZE": Variable("how many collectives the flight recorder keeps for a hang report", "harmless"),
    "TORCH_NCCL_DUMP_ON_TIMEOUT": Variable("1: write the flight recorder's trace when a collective times out", "harmless"),
    "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC": Variable("how long the watchdog may hang before the process is killed",
                                                 "low values kill healthy jobs"),
    "PYTORCH_CUDA_ALLOC_CONF": Variable("the CUDA caching allocator's settings (expandable_segments, max_split_size_mb)",
                                        "harmless unless tuned for another model"),
    "MASTER_ADDR": Variable("where rank 0 listens for env:// rendezvous (launchers set it for each rank)",
                            "a loopback address on a multi-node job: the nodes never meet"),
    "MASTER_PORT": Variable("the port of env:// rendezvous", "a port in use: 'Address already in use'"),
    **{name: Variable(f"the old name of {new}", "deprecated since PyTorch 2.2: torch warns on every rank")
       for name, new in RENAMED.items()},
    **{name: _TUNING for name in TUNING},
    **{name: _THREADS for name in THREADS},
    **{name: _RANK for name in RANK_VARIABLES},
}
# Set variables with these prefixes are listed even when ddplint has nothing to say about them.
PREFIXES = ("NCCL_", "TORCH_", "TORCHELASTIC_", "PYTORCH_", "CUDA_", "GLOO_")


def relevant(environment: dict[str, str]) -> list[tuple[str, str, Variable | None]]:
    """(name, value, what ddplint knows of it) of every set variable that matters to a run."""
    return sorted(
        (name, value, VARIABLES.get(name))
        for name, value in environment.items()
        if name in VARIABLES or name.startswith(PREFIXES)
    )


def _on(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in ("", "0", "false", "no", "off")


def _single_rank(facts) -> bool:
    """The launch is known to start one process in all."""
    ranks, nodes = facts.ranks_per_node, facts.nodes
    return ranks == 1 and nodes == 1


def _hurting(environment: dict[str, str], settings: list[tuple[str, bool]], fix: str) -> list[Found]:
    """A warning for each (variable, whether its value hurts) that does, saying what it does."""
    return [
        Found(Severity.WARNING, f"{name}={environment[name]}: {VARIABLES[name].does}; {VARIABLES[name].hurts}",
              fix.format(name=name))
        for name, hurts in settings if hurts
    ]


@check("DDPE201", "debug-switch", "environment")
def debug_switch(facts) -> list[Found]:
    """A debugging switch is left on: `CUDA_LAUNCH_BLOCKING=1`, `TORCH_DISTRIBUTED_DEBUG=DETAIL`,
    `NCCL_DEBUG=TRACE` or `TORCH_NCCL_BLOCKING_WAIT=1`.

    Each is right while chasing a bug and a cost on every step of a real run: synchronous
    kernel launches (and no overlap of DDP's all-reduce with the backward pass), a checking
    collective before each collective, a log line per NCCL call, a host that waits for each
    collective. (The linter reports `CUDA_LAUNCH_BLOCKING` set in code; this is the shell's.)
    """
    environment = facts.settled
    switches = [
        ("CUDA_LAUNCH_BLOCKING", _on(environment.get("CUDA_LAUNCH_BLOCKING"))),
        ("TORCH_DISTRIBUTED_DEBUG", environment.get("TORCH_DISTRIBUTED_DEBUG", "").upper() == "DETAIL"),
        ("NCCL_DEBUG", environment.get("NCCL_DEBUG", "").upper() == "TRACE"),
        ("TORCH_NCCL_BLOCKING_WAIT", _on(environment.get("TORCH_NCCL_BLOCKING_WAIT"))),
        ("NCCL_BLOCKING_WAIT", _on(environment.get("NCCL_BLOCKING_WAIT"))),
    ]
    return _hurting(environment, switches, "unset {name} for training (set it only while debugging)")


@check("DDPE202", "transport-disabled", "environment")
def transport_disabled(facts) -> list[Found]:
    """An NCCL transport is turned off: `NCCL_P2P_DISABLE=1`, `NCCL_P2P_LEVEL=LOC`,
    `NCCL_SHM_DISABLE=1`, `NCCL_IB_DISABLE=1` or `NCCL_NET=Socket`.

    These are workarounds (for virtual machines without working peer-to-peer, consumer GPUs,
    a broken InfiniBand driver) that stay in `.bashrc` and job scripts long after: every
    collective then takes a slower path. The inter-node ones are silent for a launch known to
    run on one node, and all are silent for a launch known to start one process.
    """
    environment = facts.settled
    if _single_rank(facts):
        return []
    one_node = facts.nodes == 1
    off = [
        ("NCCL_P2P_DISABLE", _on(environment.get("NCCL_P2P_DISABLE"))),
        ("NCCL_P2P_LEVEL", environment.get("NCCL_P2P_LEVEL", "").upper() in ("LOC", "0")),
        ("NCCL_SHM_DISABLE", _on(environment.get("NCCL_SHM_DISABLE"))),
        ("NCCL_IB_DISABLE", _on(environment.get("NCCL_IB_DISABLE")) and not one_node),
        ("NCCL_NET", environment.get("NCCL_NET", "").lower() == "socket" and not one_node),
    ]
    return _hurting(environment, off, "unset {name} unless this machine needs the workaround (check with the NCCL tests first)")


@check("DDPE203", "interface-missing", "environment")
def interface_missing(facts) -> list[Found]:
    """`NCCL_SOCKET_IFNAME` or `GLOO_SOCKET_IFNAME` names no network interface of this machine.

    NCCL takes the value as prefixes (`eth` for eth0, eth1), a leading `^` as prefixes to
    exclude and a leading `=` as exact names; gloo takes exact names. When nothing matches,
    NCCL stops with "Bootstrap : no socket interface found" and gloo cannot create its
    device. A value copied from another cluster (`ib0`, `bond0`) is the usual cause. The
    interfaces are those of `/sys/class/net`.
    """
    checked = [(name, facts.settled[name]) for name in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")
               if facts.settled.get(name) and not (name == "NCCL_SOCKET_IFNAME" and facts.settled[name][0] == "^")]
    if not checked:
        return []  # unset, or NCCL told only what to exclude: it uses whatever is left
    interfaces = known(facts.interfaces)
    return [
        Found(Severity.ERROR, f"{name}={value} matches no network interface of this machine ({', '.join(interfaces) or 'none'})",
              f"set {name} to one of this machine's interfaces, or unset it")
        for name, value in checked if not _interface_found(name, value, interfaces)
    ]


def _interface_found(name: str, value: str, interfaces: list[str]) -> bool:
    exact = name == "GLOO_SOCKET_IFNAME" or value.startswith("=")
    patterns = [part.strip() for part in value.lstrip("=").split(",") if part.strip()]
    return any(interface == pattern if exact else interface.startswith(pattern)
               for pattern in patterns for interface in interfaces)


@check("DDPE204", "renamed-variable", "environment")
def renamed_variable(facts) -> list[Found]:
    """A variable is set under its old name: `NCCL_ASYNC_ERROR_HANDLING`, `NCCL_BLOCKING_WAIT`,
    `NCCL_DESYNC_DEBUG` and friends became `TORCH_NCCL_...` in PyTorch 2.2.

    torch still reads the old name and prints a deprecation warning on every rank; a script
    that later sets the new name gets both, and a future torch may read only the new one.
    Silent where torch is older than 2.2 or not installed.
    """
    from ddplint.doctor.software import release

    software = known(facts.software)
    torch = software.torch
    if torch is None or (release(torch.version) or (0,)) < (2, 2):
        return []
    return [
        Found(Severity.WARNING, f"{old} is the name PyTorch used before 2.2 for {new}: torch {torch.version} warns about it",
              f"rename it: {new}={facts.settled[old]}")
        for old, new in RENAMED.items() if old in facts.settled
    ]


@check("DDPE205", "errors-hang", "environment")
def errors_hang(facts) -> list[Found]:
    """`TORCH_NCCL_ASYNC_ERROR_HANDLING=0`: a failed or timed-out collective no longer stops
    the process.

    By default torch's watchdog tears a rank down when a collective fails or passes the
    process group's timeout, so a lost rank ends the job. With 0 nothing happens: the other
    ranks wait in their collective for ever, holding their GPUs.
    """
    found = []
    for name in ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING"):
        value = facts.settled.get(name)
        if value is not None and value.strip() == "0":
            found.append(Found(Severity.WARNING, f"{name}=0: a failed or timed-out collective no longer ends the job, "
                               "so the surviving ranks wait for ever", f"unset {name} (the default tears the rank down)"))
    return found


@check("DDPE206", "threads-oversubscribed", "environment")
def threads_oversubscribed(facts) -> list[Found]:
    """`OMP_NUM_THREADS` (or `MKL_NUM_THREADS`, `OPENBLAS_NUM_THREADS`) times the ranks per node
    is more than the CPU cores this process may use.

    Each rank starts that many threads for its CPU operators and data work; above the cores
    they preempt each other and every rank slows down (torchrun sets OMP_NUM_THREADS=1 when
    it is unset, for this reason). The cores are those of this process's CPU affinity.
    """
    set_here = [(name, int(value)) for name in THREADS if (value := facts.settled.get(name, "").strip()).isdigit()]
    if not set_here:
        return []
    ranks, cores = known(facts.ranks_per_node), facts.cpus
    return [
        Found(Severity.WARNING, f"{name}={threads} with {ranks} rank(s) per node is {ranks * threads} threads on {cores} CPU core(s)",
              f"set {name}={max(1, cores // ranks)} (cores / ranks per node), or unset it under torchrun")
        for name, threads in set_here if ranks * threads > cores
    ]


@check("DDPE207", "forced-nccl-tuning", "environment")
def forced_nccl_tuning(facts) -> list[Found]:
    """NCCL's algorithm, protocol or resources are forced: `NCCL_ALGO`, `NCCL_PROTO`,
    `NCCL_MIN_NCHANNELS`, `NCCL_MAX_NCHANNELS`, `NCCL_NTHREADS`, `NCCL_BUFFSIZE`,
    `NCCL_MIN_CTAS`, `NCCL_MAX_CTAS`.

    NCCL picks these per topology and message size. A value that helped one benchmark on
    one machine and NCCL version is usually slower elsewhere, and some combinations fail
    on some topologies. Reported so that a forgotten one is seen; keep it where it is measured.
    """
    if _single_rank(facts):
        return []
    return [
        Found(Severity.WARNING, f"{name}={facts.settled[name]} {_TUNING.does}: {_TUNING.hurts}",
              f"unset {name} unless you measured it on this machine with this NCCL")
        for name in TUNING if facts.settled.get(name)
    ]


@check("DDPE208", "leftover-rank-variables", "environment")
def leftover_rank_variables(facts) -> list[Found]:
    """`RANK`, `WORLD_SIZE`, `LOCAL_RANK` or `LOCAL_WORLD_SIZE` is set in the shell and the
    launch starts the script without a launcher.

    torchrun and the other launchers set these for each rank they start (replacing what the
    shell has); `python train.py` inherits them, so a script that reads them believes it is
    rank 1 of 2 and waits in `init_process_group` for a rank 0 that never starts. Silent
    without a launch command, and under a launcher or srun.
    """
    from ddplint.doctor.command import PYTHON

    launch = facts.launch
    if launch is None or launch.launcher != PYTHON or launch.under_srun:
        return []
    set_here = [f"{name}={facts.settled[name]}" for name in RANK_VARIABLES
                if name in facts.settled and name not in launch.environment]  # the command's own are meant
    if not set_here:
        return []
    return [Found(
        Severity.WARNING,
        f"{' '.join(set_here)} set in this shell reach `{launch.text}`, which no launcher starts: the script "
        "takes them for its own rank and world",
        f"unset {' '.join(name.partition('=')[0] for name in set_here)}, or start it with torchrun",
    )]
