"""Building blocks for the symptom a rule's scenario folder tells ``verify --script`` to look
for (its ``script_symptom``).

A script symptom is a function ``(run, ctx) -> Measurement``: ``run`` is one launch of the
user's script with what the probes of :mod:`.observe` recorded per rank (``run.ranks``), and
``ctx`` holds ``gpus`` and the ``finding``. ``symptom`` is True when the run showed it, False
when it ran the code and did not, None when it could not tell. The symptoms several rules
share are made here; one rule's own is written in its folder. Nothing here names a rule.
"""

from __future__ import annotations

from typing import Callable

from .measuring import Measurement


def failed_run(run, what: str) -> Measurement:
    """Not observed: ``what`` did not happen, and how the script ended instead. A rank that
    ended without its final report (killed or aborted) may have done more than its facts say,
    and the text says so."""
    silent = run.silent_ranks()
    if silent:
        what += (f" (as far as rank(s) {silent} reported: they ended without a final report, "
                 "so what they did after their last one is unknown)")
    if run.completed:
        return Measurement(None, f"{what}; the script completed")
    return Measurement(None, f"{what}; the script {run.state()}")


def _place(site: str) -> tuple[str, int]:
    path, _, line = site.rpartition(":")
    return path, int(line) if line.isdigit() else 0


def passes_through(sites: list[str], finding) -> bool:
    """Whether a stack of the project's places ("path:line") goes through the finding's
    statement (its ``span`` of lines in its file)."""
    first, last = finding.span
    return any(path == finding.path and first <= line <= last for path, line in map(_place, sites))


def in_file(sites: list[str], finding) -> bool:
    return any(_place(site)[0] == finding.path for site in sites)


def loaders_of(run, finding, keep: Callable[[dict], bool]) -> tuple[list[tuple[int, list[dict]]], str]:
    """The loaders (as :func:`loaders` gives them) that a finding is about: those made, or
    whose sampler was made, in the finding's statement; else those made in its file; else
    every loader ``keep`` chooses. Also says which, for the symptom's text."""
    chosen = loaders(run, keep)

    def sites(per_rank):
        return [s for ld in per_rank for s in (*ld.get("created_at", ()), *ld.get("sampler_at", ()))]

    here = [(n, lds) for n, lds in chosen if passes_through(sites(lds), finding)]
    if here:
        return here, f"made at {finding.path}:{finding.line}"
    in_its_file = [(n, lds) for n, lds in chosen if in_file(sites(lds), finding)]
    if in_its_file:
        return in_its_file, f"made in {finding.path}"
    return chosen, "made elsewhere in the project" if chosen else ""


def fatal(run, error: str) -> dict:
    """Marks a symptom that is also what ended the run (so the findings it hid are told)."""
    return {} if run.completed else {"fatal": error}


def exception(words: tuple[str, ...], what: str):
    """The symptom is an exception (or error line) whose text holds one of ``words``."""
    def observe(run, ctx: dict) -> Measurement:
        hits = [e for e in run.errors if any(w.lower() in e.lower() for w in words)]
        if hits:
            return Measurement(True, f"{what}: {hits[0]}", data=fatal(run, hits[0]))
        if run.completed:
            return Measurement(False, f"no {what}; the script completed")
        return Measurement(None, f"no {what}, but the script {run.state()}")
    return observe


def printed(words: str, what: str):
    """The symptom is a line some rank printed (torch's own warnings go to stderr)."""
    def observe(run, ctx: dict) -> Measurement:
        hits = [(rank, ln) for rank, lines in sorted(run.launch.rank_lines.items()) for ln in lines
                if words in ln]
        if hits:
            return Measurement(True, f"{what}, on rank(s) {sorted({r for r, _ in hits})}: "
                               f"{hits[0][1].strip()[:300]}")
        if run.completed:
            return Measurement(False, f"no {what}; the script completed")
        return Measurement(None, f"no {what}, but the script {run.state()}")
    return observe


def unobserved(text: str):
    """No script run can show the symptom; ``text`` says why."""
    return lambda run, ctx: Measurement(None, text)


def gpu_only(run, ctx: dict) -> Measurement:
    return Measurement(None, "shows only on GPUs", needs_gpu=not ctx["gpus"])


def loaders(run, keep: Callable[[dict], bool]) -> list[tuple[int, list[dict]]]:
    """(loader number, that loader on every rank), for loaders created on every rank in the
    same order and chosen by ``keep`` on some rank."""
    counts = {len(r["loaders"]) for r in run.ranks}
    if not run.ranks or not min(counts, default=0):
        return []
    out = []
    for i in range(min(counts)):
        per_rank = [r["loaders"][i] for r in run.ranks]
        if any(keep(ld) for ld in per_rank):
            out.append((i + 1, per_rank))
    return out


def rank_overlap(keep: Callable[[dict], bool], what: str):
    """The symptom is samples read by every rank in the first epoch of a loader ``keep``
    chooses (beyond the world-1 repeats a DistributedSampler pads with)."""
    def observe(run, ctx: dict) -> Measurement:
        worst = None
        for number, per_rank in loaders(run, keep):
            reads = [ld["passes"][0] if ld["passes"] else [] for ld in per_rank]
            if not all(reads):
                continue
            shared = len(set.intersection(*map(set, reads)))
            if worst is None or shared > worst[0]:
                worst = (shared, number, reads, per_rank[0]["dataset"])
        if worst is None:
            return failed_run(run, f"no {what} was read on every rank")
        shared, number, reads, size = worst
        # A DistributedSampler pads each rank's share with at most world-1 repeats.
        return Measurement(shared > len(reads) - 1,
                           f"DataLoader {number} (dataset of {size}): samples read per rank in "
                           f"epoch 0 {[len(r) for r in reads]}; {shared} read by every rank")
    return observe
