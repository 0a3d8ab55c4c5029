"""DDP021: gradient accumulation on a DDP model without (or with a backward-only) no_sync().
Measured: all-reduces per optimizer step in each training loop of the program.

DDP021 offers no fix, so the "after" run is the program with the placements the rule
recommends (no_sync() around the forward and the backward, or around the forward only),
written by `recommended` below rather than by ddplint's fixer."""

from ...measuring import Measurement, completed
from ...script_symptoms import failed_run

RULE = "DDP021"


def recommended(program: str) -> str:
    return program.replace('PLACEMENTS = ("none", "backward")', 'PLACEMENTS = ("forward_and_backward", "forward")')


def measure_result(run, found, ctx) -> Measurement:
    counts = {loop: value["allreduces_per_step"] for loop, value in found.items() if isinstance(value, dict)}
    worst = max((n for per_rank in counts.values() for steps in per_rank for n in steps), default=0)
    text = "; ".join(f"no_sync around {loop.replace('_', ' ')}: all-reduces per optimizer step {c[0]}" for loop, c in counts.items())
    text += f" ({found['accumulate']} micro-batches per step)"
    return Measurement(worst > 1, text, completed(run, found), data=found)


def script_symptom(run, ctx: dict) -> Measurement:
    """Per optimizer step, the DDP forwards that prepared a gradient all-reduce (outside
    no_sync(), gradients on): more than one is an all-reduce per accumulated micro-batch."""
    steps = [(r.get("ddp") or {}).get("syncing_per_step", []) for r in run.ranks]
    if not run.ranks or not all(steps):
        return failed_run(run, "no optimizer step followed a DDP forward on every rank")
    worst = [max(s) for s in steps]
    return Measurement(max(worst) > 1, "DDP forwards preparing a gradient all-reduce per optimizer "
                       f"step, at most {worst} per rank (rank 0's first steps {steps[0][:8]})")
