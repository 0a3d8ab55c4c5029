"""The harness tests share one xdist worker (tests/harness/conftest.py marks them)."""

import pytest


def test_harness_tests_are_one_xdist_group(request):
    if not hasattr(request.config, "workerinput"):
        pytest.skip("not run under xdist")
    assert request.node.nodeid.endswith("@harness")
