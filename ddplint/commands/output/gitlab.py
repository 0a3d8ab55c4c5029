"""`--output-format gitlab`: a GitLab Code Quality report (JSON), for merge-request widgets.

https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format
Fingerprints do not include line numbers, so a finding keeps its identity when code above it
moves: they hash the path, the code, the message and the finding's rank among identical ones.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence

from ddplint.core.diagnostics import Diagnostic


def render(diagnostics: Sequence[Diagnostic]) -> str:
    seen: Counter[tuple[str, str, str]] = Counter()
    issues = []
    for d in diagnostics:
        key = (d.path, d.code, d.message)
        seen[key] += 1
        fingerprint = hashlib.sha256("\0".join([*key, str(seen[key])]).encode()).hexdigest()
        issues.append(
            {
                "description": f"{d.code} {d.message}",
                "check_name": d.code,
                "fingerprint": fingerprint,
                "severity": "major",
                "location": {
                    "path": d.path,
                    "positions": {
                        "begin": {"line": d.line, "column": d.col},
                        "end": {"line": d.end_line, "column": d.end_col},
                    },
                },
            }
        )
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
