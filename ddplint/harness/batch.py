"""Run several scenarios inside one torchrun launch.

Starting a launch costs seconds (mostly importing torch in every rank); a
scenario that neither hangs, changes process-wide settings, spawns workers
that re-import ``__main__``, nor kills processes costs milliseconds. Those
share one launch: the process group is set up once and each scenario runs as
``__main__`` in turn. Usage (under torchrun): ``-m ddplint.harness.batch
CODE=path ...``.
"""

from __future__ import annotations

import os
import runpy
import sys

from ddplint.harness import probes


def main(argv: list[str]) -> int:
    os.environ[probes.BATCH_VAR] = "1"
    probes.init_distributed()
    import torch.distributed as dist

    failed = 0
    for item in argv:
        code, _, path = item.partition("=")
        sys.argv = [path]  # as if launched alone: scenarios may parse their arguments
        try:
            runpy.run_path(path, run_name="__main__")
        except Exception as exc:  # reported for this scenario, the others go on
            failed += 1
            probes.emit(code, {"crashed": probes.describe(exc)})
        dist.barrier()
    dist.destroy_process_group()
    return 1 if failed else 0


if __name__ == "__main__":
    status = main(sys.argv[1:])
    # Every result is printed; skip C++ static destructors, which in gloo can abort at exit
    # after a DDP model with a comm hook (DDP019, DDP021) and would read as a crashed launch.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
