"""Run by tests/test_test_loop.py under `pytest -n 2`, never collected on its own (not `test_*`):
each test writes which worker ran it and its group, so the test can check that a group keeps to
one worker as the realserver tier needs (tests/conftest.py, pytest_configure)."""

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit


def _note(group: str) -> None:
    with Path(os.environ["GROUPED_PROBE_LOG"]).open("a", encoding="utf-8") as log:
        log.write(f"{group} {os.environ.get('PYTEST_XDIST_WORKER', 'none')}\n")


@pytest.mark.xdist_group("probe-a")
@pytest.mark.parametrize("n", range(12))
def test_in_group_a(n: int) -> None:
    _note("a")


@pytest.mark.xdist_group("probe-b")
@pytest.mark.parametrize("n", range(12))
def test_in_group_b(n: int) -> None:
    _note("b")


@pytest.mark.parametrize("n", range(12))
def test_in_no_group(n: int) -> None:
    _note("none")
