"""Put first on PYTHONPATH by ``ddplint verify --script``: Python imports it at start-up, in
every process of the observed job. In a rank it starts ddplint's probes
(:mod:`ddplint.harness.observe`); then it runs the ``sitecustomize`` it shadows, if any."""

import os
import sys

if os.environ.get("DDPLINT_OBSERVE"):
    try:
        from ddplint.harness import observe

        observe.install()
    except Exception as exc:  # the script must run even if a probe cannot start
        sys.stderr.write(f"ddplint: probes not started: {type(exc).__name__}: {exc}\n")


def _run_shadowed() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    saved_path, saved_module = sys.path[:], sys.modules.pop("sitecustomize", None)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        import sitecustomize  # noqa: F401  the next one on the path
    except ImportError:
        if saved_module is not None:
            sys.modules["sitecustomize"] = saved_module
    finally:
        sys.path[:] = saved_path


_run_shadowed()
