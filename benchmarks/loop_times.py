"""How long a person waits for the tests (issue 40): the unit tier, the everyday loop and README
command 2, each against its target, with the machine's load before and after.

    python benchmarks/loop_times.py [--repeat N] [--only unit|everyday|whole]

| loop | command | target on 2 cores |
|---|---|---|
| unit | `pytest -q -n auto -m unit` | 25 s |
| everyday | `pytest -q -n auto -m "unit or http"` | 60 s |
| whole (README command 2) | `pytest -q -n auto` (every tier installed here runs) | 300 s |

Each runs in the dev profile (SYNDICATE_TEST_PROFILE unset: `.ci/run`'s larger ci profile is not
what a person waits for) and without pytest's cache. The figure is the wall time of the whole
command, start-up and collection included; with --repeat the median is compared. Wall time on a
machine that is busy with something else says how busy it was: the load average printed beside
each figure tells which measurement to trust (the targets are for two cores doing nothing else).
Exit 1 when a target is missed or a run fails.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOOPS = {
    "unit": (["-m", "unit"], 25.0),
    "everyday": (["-m", "unit or http"], 60.0),
    "whole": ([], 300.0),
}


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def timed(marks: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "auto", *marks]
    began = time.monotonic()
    done = subprocess.run(command, check=False, cwd=ROOT, env=env, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    return time.monotonic() - began, done.returncode, lines[-1] if lines else done.stderr[-500:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=sorted(LOOPS), action="append", help="one loop (repeatable); default all")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNDICATE_")}
    missed = []
    for name in args.only or list(LOOPS):
        marks, target = LOOPS[name]
        walls = []
        for _ in range(args.repeat):
            before = load()
            wall, code, summary = timed(marks, env)
            walls.append(wall)
            print(f"{name:9} {wall:6.1f} s (target {target:.0f} s): {summary}; before: {before}; after: {load()}")
            if code:
                missed.append(f"{name}: pytest exited {code}")
        if statistics.median(walls) > target:
            missed.append(f"{name}: {statistics.median(walls):.1f} s, target {target:.0f} s")
    for line in missed:
        print(f"missed: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
