"""The test loop itself (issue 40): what README command 2 relies on to be as fast as it says."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

HERE = Path(__file__).resolve().parent


def test_an_xdist_group_keeps_to_one_worker_under_plain_dash_n(tmp_path):
    """`-n 2` with no `--dist`: the conftest chooses loadgroup, and the workers must know it too,
    or each real server (the PDS, Synapse, the AppView) starts once a worker. Found when the
    AppView started on four workers at once in one run."""
    log = tmp_path / "workers.log"
    env = {**os.environ, "GROUPED_PROBE_LOG": str(log)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "2",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            str(HERE / "data" / "xdist" / "grouped_probe.py"),
        ],
        cwd=HERE.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    workers: dict[str, set[str]] = defaultdict(set)
    for line in log.read_text(encoding="utf-8").splitlines():
        group, worker = line.split()
        workers[group].add(worker)
    print(dict(workers))
    assert all(w.startswith("gw") for ws in workers.values() for w in ws), workers  # it ran under xdist
    assert len(workers["a"]) == 1, workers
    assert len(workers["b"]) == 1, workers
