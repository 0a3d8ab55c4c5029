"""The verify report: a table for people, JSON for machines."""

from __future__ import annotations

import json
import textwrap
from typing import Iterable

from .launcher import Topology
from .runner import RuleOutcome, passed

_WIDTHS = (7, 44, 44, 10)


def _cell(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width) or [""]


def table(outcomes: Iterable[RuleOutcome], topology: Topology, total_s: float) -> str:
    head = ("rule", "measured before", "measured after", "verdict")
    rows = [head]
    notes = []
    for o in outcomes:
        after = o.after.text if o.after is not None else "(not run: " + o.reason + ")"
        rows.append((o.rule, o.before.text, after, o.verdict))
        extra = f" [{o.mode}]" if o.mode else ""
        notes.append(f"{o.rule}: {o.reason}{extra} ({o.seconds:.1f}s)")
    sep = "+".join("-" * (w + 2) for w in _WIDTHS)
    lines = [sep]
    for i, row in enumerate(rows):
        cells = [_cell(str(c), w) for c, w in zip(row, _WIDTHS)]
        for k in range(max(map(len, cells))):
            lines.append("|".join(
                " " + (c[k] if k < len(c) else "").ljust(w) + " " for c, w in zip(cells, _WIDTHS)))
        if i == 0:
            lines.append(sep.replace("-", "="))
        else:
            lines.append(sep)
    lines.append(
        f"backend {topology.backend}, {topology.nproc_per_node} ranks per node, "
        f"{topology.gpus} GPU(s); total {total_s:.1f}s")
    lines.append("This proves each rule's fix on ddplint's own scenario programs, not on your "
                 "code; `ddplint verify --script PATH` tries the fixes on your training script.")
    lines.extend(notes)
    return "\n".join(lines)


def nnodes_json(nnodes: str) -> int | dict:
    """torchrun's --nnodes (N or MIN:MAX) as JSON: a number, or {"min": .., "max": ..}."""
    low, _, high = nnodes.partition(":")
    return int(low) if not high else {"min": int(low), "max": int(high)}


def to_json(outcomes: Iterable[RuleOutcome], topology: Topology, total_s: float) -> dict:
    outcomes = list(outcomes)
    return {
        "backend": topology.backend,
        "nproc_per_node": topology.nproc_per_node,
        "nnodes": nnodes_json(topology.nnodes),
        "gpus": topology.gpus,
        "total_seconds": round(total_s, 2),
        "ok": passed(outcomes),
        "rules": [o.to_json() for o in outcomes],
    }


def write_json(path: str, data: dict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
        fh.write("\n")
