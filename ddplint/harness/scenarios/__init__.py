"""The verify scenarios: one folder per rule, discovered like the rules are.

A scenario folder ``ddpNNN/`` holds ``program.py``, a small real DDP training program with
the rule's pitfall, and an ``__init__.py`` that declares:

- ``RULE``: the rule code whose fix it proves;
- ``BATCHABLE``: whether the program may share one launch with others (no hang, no
  process-wide settings, no spawned workers re-importing ``__main__``, no killing);
- ``measure(runs, ctx)``: the symptom, from what the program printed (see
  :mod:`ddplint.harness.measuring`);
- optionally ``launches(gpus, phase)``: the launches a phase needs, by name (default: one
  plain launch, ``"main"``);
- for a rule that offers no fix, ``recommended(program_text)``: the program rewritten to the
  pattern the rule's message recommends, which the "after" run uses instead of ddplint's fix.

Nothing here imports torch: the programs run only in the launched ranks.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..measuring import LaunchSpec


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


@lru_cache(maxsize=None)
def all_scenarios() -> dict[str, Scenario]:
    """Every scenario in this package, by rule code, in code order."""
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        program = Path(module.__file__).with_name("program.py")
        found[module.RULE] = Scenario(module.RULE, program, module.BATCHABLE, module.measure,
                                      getattr(module, "launches", _one_launch),
                                      getattr(module, "recommended", None))
    return dict(sorted(found.items()))
