"""ddplint: find, fix and prove the mistakes that break PyTorch DistributedDataParallel.

The public API is imported lazily so that `ddplint --version` and the flake8 entry point do
not pay for libcst before they need it.
"""

__version__ = "0.1.0"

__all__ = ["ConfigError", "Diagnostic", "FileResult", "SourceError", "fix_source", "lint_paths", "lint_source", "__version__"]


def __getattr__(name: str):
    if name in ("lint_source", "fix_source", "lint_paths", "FileResult", "SourceError", "ConfigError"):
        from ddplint import api

        return getattr(api, name)
    if name == "Diagnostic":
        from ddplint.core.diagnostics import Diagnostic

        return Diagnostic
    raise AttributeError(f"module 'ddplint' has no attribute {name!r}")
