"""Everything the checks read, gathered once: the machine, the software, the environment, the
launch command and the script it runs, and what they mean together (ranks per node, nodes,
DataLoader workers per rank). A fact that cannot be read is an `Unknown` with the reason."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ddplint.doctor import command as commands
from ddplint.doctor.checks import Unknown
from ddplint.doctor.command import Launch
from ddplint.doctor.machine import (
    DEFAULT_SHM_PER_WORKER, Gpus, SharedMemory, Visible, read_container, read_gpus, read_interfaces, read_shm,
    visible_gpus,
)
from ddplint.doctor.script import NOT_LITERAL, ScriptFacts, Setting, read_script
from ddplint.doctor.software import Software, read_software
from ddplint.doctor.system import System

NO_LAUNCH = "no launch command was given"

@dataclass
class Options:
    """What the user told the doctor besides the launch command."""

    workers: int | None = None  # --workers: DataLoader workers per rank
    shm_per_worker: int | None = None  # --shm-per-worker, in bytes


@dataclass
class Probe:
    """What a live probe settled: `failed` with what went wrong, or what it saw, in `detail`."""

    name: str
    failed: bool
    detail: str
    seconds: float = 0.0
    values: dict = field(default_factory=dict)


@dataclass
class Facts:
    system: System
    launch: Launch | None
    environment: dict[str, str]
    gpus: Gpus | Unknown
    shm: SharedMemory | None | Unknown
    open_files: tuple[int, int] | None
    cpus: int  # usable by this process (its CPU affinity)
    cpu_total: int  # os.cpu_count(): what a script that asks for it gets
    container: list[str]
    interfaces: list[str] | Unknown
    software: Software | Unknown
    script: ScriptFacts | Unknown | None
    script_text: str | None = None
    options: Options = field(default_factory=Options)
    probes: dict[str, Probe] = field(default_factory=dict)

    # -- what they mean together --------------------------------------------------------------

    @property
    def settled(self) -> dict[str, str]:
        """The environment without the variables whose value the launch's script sets only
        when it runs (`export CUDA_VISIBLE_DEVICES=$(...)`, `$SLURM_...`): the ones whose
        value can be judged now."""
        return {name: value for name, value in self.environment.items() if "$" not in value}

    @property
    def visible(self) -> Visible | Unknown:
        """The GPUs nvidia-smi lists that CUDA_VISIBLE_DEVICES leaves visible."""
        if isinstance(self.gpus, Unknown):
            return self.gpus
        variable = self.environment.get("CUDA_VISIBLE_DEVICES")
        if variable is not None and "$" in variable:
            return Unknown(f"CUDA_VISIBLE_DEVICES is {variable}, set only when the job runs")
        return visible_gpus(self.gpus, variable)

    @property
    def gpu_count(self) -> int | Unknown:
        """How many GPUs a rank's CUDA shows: torch's own count where the live probe read it."""
        probe = self.probes.get("torch")
        if probe is not None and "gpus" in probe.values:
            return probe.values["gpus"]
        visible = self.visible
        return visible if isinstance(visible, Unknown) else len(visible.gpus)

    @property
    def ranks_per_node(self) -> int | Unknown:
        if self.launch is None:
            return Unknown(NO_LAUNCH)
        gpus = self.gpu_count
        return commands.ranks_per_node(self.launch, gpus, self.cpus, self._spawns)

    @property
    def nodes(self) -> int | Unknown:
        if self.launch is None:
            return Unknown(NO_LAUNCH)
        return commands.nodes(self.launch, hostfile=self.system.exists("/job/hostfile"))

    @property
    def _spawns(self) -> bool:
        return isinstance(self.script, ScriptFacts) and self.script.spawns

    @property
    def workers(self) -> int | Unknown:
        """DataLoader workers per rank: --workers, else the most any DataLoader of the script starts."""
        if self.options.workers is not None:
            return self.options.workers
        script = self.need_script("the DataLoader workers are unknown (--workers N gives them)")
        if isinstance(script, Unknown):
            return script
        if not script.loaders:
            return Unknown(f"{script.path} builds no DataLoader itself (one built in another module is not read): "
                           "--workers N gives the workers per rank")
        counts = []
        for loader in script.loaders:
            count = self.resolve(script, loader, int)
            if isinstance(count, Unknown):
                return Unknown(f"{count.reason}: --workers N gives the workers per rank")
            counts.append(count)
        return max(counts)

    def resolve(self, script: ScriptFacts, setting: Setting, kind: type):
        """The value of what the script passes, where reading tells: a literal, this machine's
        CPU count, or the option it reads: as the launch command gives it, else its default."""
        value = setting.value
        if setting.counts_cpus:
            value = self.cpu_total
        elif value is NOT_LITERAL and setting.dest:
            option = script.option(setting.dest)
            if isinstance(option, Unknown):
                return option
            if option is not None:
                given = commands.option_value(self.launch.script_args if self.launch else (), option.strings)
                value = given if given is not None else option.default
        try:
            if isinstance(value, (str, int)) and not isinstance(value, bool) and "$" not in str(value):
                return kind(value)
        except ValueError:
            pass
        return Unknown(f"{setting.name}={setting.text} at {setting.where} is known only when the script runs")

    @property
    def sharing_strategy(self) -> str | Unknown:
        script = self.need_script("the sharing strategy the script sets is unknown")
        return script if isinstance(script, Unknown) else script.sharing_strategy

    @property
    def backends(self) -> set[str]:
        """The process-group backends the run uses, where the script or launcher says."""
        found = set()
        if isinstance(self.script, ScriptFacts):
            for setting in self.script.backends:
                value = self.resolve(self.script, setting, str)
                if isinstance(value, str):  # `cpu:gloo,cuda:nccl` uses both
                    found.update(part.rpartition(":")[2] for part in value.lower().split(","))
        if self.launch is not None and self.launch.launcher == commands.DEEPSPEED:
            found.add("nccl")
        return found

    @property
    def shm_per_worker(self) -> int:
        return self.options.shm_per_worker or DEFAULT_SHM_PER_WORKER

    @property
    def shm_per_worker_given(self) -> bool:
        return self.options.shm_per_worker is not None

    @property
    def needs_gpu(self) -> bool | Unknown:
        """Whether each rank places itself on a GPU of its own."""
        launch = self.launch
        if launch is None:
            return Unknown(NO_LAUNCH)
        if launch.launcher == commands.DEEPSPEED:
            return True
        if launch.launcher == commands.ACCELERATE and (launch.option("cpu") or launch.option("multi-gpu")):
            return launch.option("cpu") is None
        script = self.need_script("whether the ranks use GPUs is unknown")
        if isinstance(script, Unknown):
            return script
        return script.uses_cuda

    def need_script(self, consequence: str) -> ScriptFacts | Unknown:
        """The launch's script as read, or Unknown saying why it is not and what that leaves unknown."""
        if self.script is None:
            return Unknown(NO_LAUNCH)
        if isinstance(self.script, Unknown):
            return Unknown(f"{self.script.reason}; {consequence}")
        return self.script


def _interpreter(system: System, launch: Launch | None) -> str | None:
    """The Python the launch runs, as found on its PATH: named (`python3 train.py`), or the
    one a launcher's script starts (`#!/usr/bin/python3` in `torchrun`); None where unknown."""
    if launch is None:
        return None
    program = launch.interpreter or {commands.TORCHRUN_LAUNCHER: "torchrun", commands.DEEPSPEED: "deepspeed",
                                     commands.ACCELERATE: "accelerate"}.get(launch.launcher)
    if program is None:
        return None
    found = system.which(program) if os.sep not in program else program
    if found is None or launch.interpreter:
        return found
    try:
        with open(found, "rb") as handle:
            first = handle.readline().decode("utf-8", "replace").strip()
    except OSError:
        return None
    interpreter = first[2:].strip().split()[0] if first.startswith("#!") and first[2:].strip() else None
    return None if interpreter is None or os.path.basename(interpreter) == "env" else interpreter


def _script_path(system: System, launch: Launch) -> str | None:
    """The launch's script on disk: relative to the current folder, or to the folder of the
    shell script that holds the launch; None where it is not found."""
    if launch.script is None or "$" in launch.script:
        return None
    places = [launch.script] if os.path.isabs(launch.script) else [
        os.path.join(folder, launch.script) for folder in (system.cwd, launch.folder) if folder
    ]
    return next((place for place in places if os.path.isfile(place)), None)


def read_launch_script(system: System, launch: Launch | None) -> tuple[ScriptFacts | Unknown | None, str | None]:
    if launch is None:
        return None, None
    if launch.module is not None:
        return Unknown(f"the launch runs the module {launch.module}, whose file ddplint does not look up"), None
    if launch.script is None:
        return Unknown("the launch command names no script"), None
    path = _script_path(system, launch)
    if path is None:
        return Unknown(f"{launch.script}: not found from {system.cwd}"
                       + (f" or {launch.folder}" if launch.folder else "")), None
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        return Unknown(f"{launch.script}: cannot read: {getattr(error, 'strerror', None) or error}"), None
    shown = os.path.relpath(path, system.cwd) if not os.path.isabs(launch.script) else path
    try:
        return read_script(shown, text), text
    except Exception as error:  # a bug in ddplint: the checks that need the script say so
        return Unknown(f"{shown}: internal error while reading it ({type(error).__name__}: {error})"), None


def gather(system: System, launch: Launch | None, options: Options | None = None) -> Facts:
    environment = {**system.environ, **(launch.environment if launch else {})}
    script, text = read_launch_script(system, launch)
    return Facts(
        system=system,
        launch=launch,
        environment=environment,
        gpus=read_gpus(system),
        shm=read_shm(system),
        open_files=system.open_file_limits(),
        cpus=system.cpus(),
        cpu_total=system.cpu_total(),
        container=read_container(system),
        interfaces=read_interfaces(system),
        software=read_software(system, _interpreter(system, launch)),
        script=script,
        script_text=text,
        options=options or Options(),
    )
