"""Content hashes, and the fingerprint of ddplint's own code that keys its caches."""

from __future__ import annotations

import hashlib
import os


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def code_fingerprint() -> str:
    """Changes whenever ddplint's own code does, so a development install never reads
    results an older version of a rule produced."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    stamps = []
    for folder, _, names in os.walk(package):
        for name in sorted(names):
            if name.endswith(".py"):
                info = os.stat(os.path.join(folder, name))
                stamps.append(f"{os.path.relpath(os.path.join(folder, name), package)}:{info.st_size}:{info.st_mtime_ns}")
    return content_hash("\n".join(sorted(stamps)).encode())[:12]
