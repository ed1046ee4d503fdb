"""The git-mode benchmark still runs (a smoke test: the figures themselves are the script's job,
on a quiet machine, not a test's)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sites import ROOT

pytestmark = pytest.mark.process


def test_the_git_mode_benchmark_runs_and_prints_its_table():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "GIT_"))}
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "git_mode.py"),
            "--repeat",
            "1",
            "--push-latency",
            "0",
            "--api-latency",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode in (0, 1), result.stderr  # 1: a target missed (expected at zero latency)
    lines = result.stdout.splitlines()
    rows = [line.split() for line in lines if line.split()[1:3] == ["×", "5"]]
    assert [row[0] for row in rows] == ["1", "5"], result.stdout
    assert all(row[8] == "0" for row in rows), result.stdout  # fetches: none while pushes succeed
    assert int(rows[0][7]) <= 3 and int(rows[1][7]) <= 12, result.stdout
    assert lines[-1].startswith("floor: git − local ≥ one push"), result.stdout


def test_the_ledger_benchmark_runs_its_canonical_and_hand_edited_cases():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "GIT_"))}
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "ledger_bench.py"), "--posts", "300", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    for case in (
        "a comment at the top",
        "a comment in every 10th post",
        "every 10th record in block style",
        "every record in block style",
        "a YAML formatter's block style: first run",
    ):
        assert case in result.stdout, result.stdout
