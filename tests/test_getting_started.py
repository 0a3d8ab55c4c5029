"""What a newcomer takes from the README first: the pre-commit set-up that works from a clone,
and the verify figures it quotes."""

import pytest

from ddplint_test_support import REPO

yaml = pytest.importorskip("yaml")  # pre-commit's own dependency
PUBLISHED = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}


def test_the_published_hooks_run_serially_so_that_one_call_prints_one_summary():
    assert all(hook["require_serial"] is True for hook in PUBLISHED.values())
