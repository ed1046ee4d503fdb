"""What the realserver tiers add to `.ci/run` (issue 37): the install step, cold and cached, and the
tiers' tests on two workers, in wall time, CPU time and worker time, with the machine's load.

    python benchmarks/realserver_budget.py [--workers 2] [--cold] [--install-only] [-k EXPR] [--whole]

- install, cached: `tests/realserver/install` with both tiers already in the cache (what every
  `.ci/run` after the first pays). Target: nothing, under a second.
- install, cold (`--cold`): the same into fresh folders (SYNDICATE_REALSERVER_DIR and
  SYNDICATE_SYNAPSE_DIR in a temporary folder): npm ci, better-sqlite3 compiled, a Synapse venv.
  Needs the npm registry and PyPI, and minutes; `.ci/run` runs it beside the lint and type checks.
- tests: `pytest -m realserver -n WORKERS` over tests/test_realserver_*.py, as `.ci/run` runs
  them inside the full suite (conftest.py makes it `--dist loadgroup`: a server's tests on one
  worker). Wall time is what they take alone; worker time (the
  sum of every test's setup, call and teardown, from pytest's JUnit report) over the workers is
  what they add to a full run whose other tests keep every worker busy. Target: at most 90 s
  added on two cores.

- whole suite (`--whole`): README command 2 (`pytest -q -n auto`) run twice, with the tiers and
  without them (`-m "not realserver"`): the difference is what they add, measured the way a user
  meets it (the other tests keep the cores busy meanwhile, so a test's own wall time overstates
  it). Takes two full runs; on an idle machine only.

CPU time is the children's user + system time (pytest, its workers, the PDS under Node, Synapse,
the killed runs): on a loaded machine wall time grows with the load, CPU time much less, so both
are printed, with the load average before and after. Exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "tests" / "realserver" / "install"
ADDED_TARGET = 90.0  # seconds a full .ci/run may grow by on two cores
CACHED_TARGET = 1.0


@dataclass
class Measured:
    wall: float
    cpu: float
    code: int
    output: str


def measured(command: list[str], env: dict[str, str]) -> Measured:
    """Wall time, and the CPU time of the command and every process it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    done = subprocess.run(command, check=False, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(wall, cpu, done.returncode, done.stdout + done.stderr)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def worker_seconds(report: Path) -> tuple[float, int]:
    """The sum of the tests' times (setup, call and teardown each) and how many ran."""
    cases = ET.parse(report).getroot().iter("testcase")
    times = [float(case.get("time") or 0) for case in cases if case.find("skipped") is None]
    return sum(times), len(times)


def whole_suite_difference(env: dict[str, str]) -> float:
    """README command 2 with the tiers and without them; prints both, returns the difference."""
    runs = {}
    for label, marks in (("with the tiers", []), ("without them", ["-m", "not realserver"])):
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "auto", *marks]
        runs[label] = measured(command, env)
        print(f"whole suite, {label}: {runs[label].wall:7.1f} s wall (exit {runs[label].code}); {load()}")
    added = runs["with the tiers"].wall - runs["without them"].wall
    print(f"the tiers add {added:.0f} s to the whole suite")
    return added


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cold", action="store_true", help="also time an install into fresh folders")
    parser.add_argument("--install-only", action="store_true", help="time the install step alone")
    parser.add_argument("-k", default="", help="only the realserver tests this pytest -k expression selects")
    parser.add_argument("--whole", action="store_true", help="also time the whole suite with and without the tiers")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNDICATE_")}
    missed = []
    print(f"machine before: {load()}")

    if args.cold:
        with tempfile.TemporaryDirectory(prefix="realserver-cold-") as folder:
            cold_env = {
                **env,
                "SYNDICATE_REALSERVER_DIR": f"{folder}/pds",
                "SYNDICATE_SYNAPSE_DIR": f"{folder}/synapse",
            }
            cold = measured([str(INSTALL)], cold_env)
        print(f"install, cold:   {cold.wall:7.1f} s wall {cold.cpu:7.1f} s CPU (exit {cold.code})")
        if cold.code:
            print(cold.output[-2000:])
    cached = measured([str(INSTALL)], env)
    print(f"install, cached: {cached.wall:7.1f} s wall {cached.cpu:7.1f} s CPU (exit {cached.code})")
    if cached.code or cached.wall > CACHED_TARGET:
        missed.append(f"the cached install took {cached.wall:.1f} s (target: under {CACHED_TARGET:.0f} s)")

    if args.install_only:
        print(f"machine after:  {load()}")
        return 1 if missed else 0
    with tempfile.TemporaryDirectory(prefix="realserver-tests-") as folder:
        report = Path(folder) / "junit.xml"
        files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_realserver_*.py"))
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "realserver",
            "-n",
            str(args.workers),
            f"--junitxml={report}",
            *(["-k", args.k] if args.k else []),
            *files,
        ]
        tests = measured(command, env)
        busy, count = worker_seconds(report) if report.exists() else (0.0, 0)
    added = busy / args.workers
    print(
        f"tests ({count}, -n {args.workers}): {tests.wall:7.1f} s wall {tests.cpu:7.1f} s CPU "
        f"{busy:7.1f} s worker time, so about {added:.0f} s added to a full run on {args.workers} workers, "
        f"at least {tests.cpu / args.workers:.0f} s of it CPU (exit {tests.code})"
    )
    print(f"machine after:  {load()}")
    if tests.code:
        print(tests.output[-3000:])
        missed.append("the realserver tests failed")
    if args.whole:
        added = whole_suite_difference(env)
    if added > ADDED_TARGET:
        missed.append(f"the tests add about {added:.0f} s (target: at most {ADDED_TARGET:.0f} s)")
    for line in missed:
        print(f"missed: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
