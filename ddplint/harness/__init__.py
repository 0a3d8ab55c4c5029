"""ddplint's runtime harness: proves each rule's fix on a real multi-process DDP run.

``ddplint verify`` runs, for each rule, its scenario program
(``scenarios/ddpNNN/program.py``) under torchrun, applies ddplint's own fix to a
copy, runs the fixed copy the same way, and reports the symptom measured
before and after. ``ddplint verify --script`` does the same with the user's
own training script, observed through injected probes (``script.py``).

Importing this package never imports torch; only the scenario subprocesses
(and :mod:`ddplint.harness.probes` functions, called inside them) do.
"""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Entry point for ``ddplint verify``; see :mod:`ddplint.harness.cli`."""
    from .cli import main as _main

    return _main(argv)
