"""Each rule's runtime evidence: one folder per rule, discovered like the rules are.

A folder ``ddpNNN/`` is the one place that says what ddplint shows at run time about the rule:
the bundled ``ddplint verify`` run, ``verify --script`` and the symptom tests all read it. Its
``__init__.py`` declares:

- ``RULE``: the rule code;
- ``script_symptom(run, ctx)``: what ``verify --script`` looks for in what the probes recorded
  on the user's script (see :mod:`ddplint.harness.script_symptoms`); a rule no script run can
  show says why, with ``unobserved("...")`` or ``gpu_only``;
- optionally ``CPU_MAPPING_HIDES``: why a script run whose GPU placement is mapped to CPU
  ranks (:mod:`ddplint.harness.cpu_mapping`) can neither show the symptom nor show it gone.

A folder with a bundled scenario also holds ``program.py``, a small real DDP training program
with the rule's pitfall, and declares:

- ``measure_result(run, found, ctx)``: the symptom, from the result line the program printed
  in its main launch (a missing or crashed result is reported for it); or, for a scenario with
  several launches or its own observations, ``measure(runs, ctx)`` from every launch (see
  :mod:`ddplint.harness.measuring`);
- ``BATCHABLE = False`` where the program may not share one launch with others (a hang, a
  process-wide setting, spawned workers re-importing ``__main__``, killing);
- optionally ``launches(gpus, phase)``: the launches a phase needs, by name (default: one
  plain launch, ``"main"``);
- for a rule that offers no fix, ``recommended(program_text)``: the program rewritten to the
  pattern the rule's message recommends, which the "after" run uses instead of ddplint's fix.

``experiment_*.py`` files are further measurements of the symptom (DDP programs that print one
result line, run by ``tests/test_new_rule_symptoms.py``) where the bundled program does not show
all the rule's explanation quotes.

Nothing here imports torch: the programs run only in the launched ranks.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..measuring import LaunchSpec, from_result


@dataclass(frozen=True)
class Scenario:
    rule: str
    program: Path
    batchable: bool
    measure: Callable
    launches: Callable[[int, str], dict[str, LaunchSpec]]
    recommended: Callable[[str], str] | None = None


def _one_launch(gpus: int, phase: str) -> dict[str, LaunchSpec]:
    return {"main": LaunchSpec()}


@dataclass(frozen=True)
class Evidence:
    """What one rule's folder declares."""

    rule: str
    folder: Path
    script_symptom: Callable  # (run, ctx) -> Measurement, for verify --script
    cpu_mapping_hides: str  # "" when mapped CPU ranks can show the symptom
    scenario: Scenario | None  # the bundled run, where the folder has program.py
    experiments: tuple[Path, ...]


@lru_cache(maxsize=None)
def all_evidence() -> dict[str, Evidence]:
    """Every rule's evidence in this package, by rule code, in code order."""
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        folder = Path(module.__file__).parent
        program = folder / "program.py"
        scenario = None
        if program.is_file():
            measure = getattr(module, "measure", None) or from_result(module.RULE, module.measure_result)
            scenario = Scenario(module.RULE, program, getattr(module, "BATCHABLE", True), measure,
                                getattr(module, "launches", _one_launch),
                                getattr(module, "recommended", None))
        found[module.RULE] = Evidence(module.RULE, folder, module.script_symptom,
                                      getattr(module, "CPU_MAPPING_HIDES", ""), scenario,
                                      tuple(sorted(folder.glob("experiment_*.py"))))
    return dict(sorted(found.items()))


def all_scenarios() -> dict[str, Scenario]:
    """Every bundled scenario (a folder with a program), by rule code, in code order."""
    return {code: e.scenario for code, e in all_evidence().items() if e.scenario is not None}
