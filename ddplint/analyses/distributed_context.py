"""Is this file evidently distributed? Some pitfalls only matter when several ranks run the
same code (each rank splitting data its own way, each rank starting cpu_count() workers), and
flagging them in single-process scripts would be noise.

The test is textual and runs before parsing, as a rule's needle: a file counts as distributed
when it names one of the DDP entry points below (in code, or in a comment next to it, which in
practice says the same). Use it as one entry of a rule's `needles`:

    needles = ("random_split", DISTRIBUTED_MARKERS)
"""

from ddplint.prefilter.needles import DISTRIBUTED_MARKERS

__all__ = ["DISTRIBUTED_MARKERS"]
