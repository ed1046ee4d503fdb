"""What a person waits for at the prompt: `mkdocs-syndicate --help` and `status` against
`mkdocs --help`, each the median of fresh processes, with bytecode as an installed wheel has it.

    python benchmarks/cli_startup.py [--repeat 9] [--site example-site/mkdocs.yml]

Targets (issue 54): `mkdocs-syndicate --help` ≤ 1× `mkdocs --help`; `status` ≤ 1× `mkdocs --help`.
tests/test_cli_lazy.py checks *what* `--help` loads; this measures the time.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"mkdocs-syndicate --help": 1.0, "mkdocs-syndicate status": 1.0}


def quiet_env() -> dict[str, str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true", "PYTHONPATH": str(ROOT)}
    for name in ("CI", "GITHUB_ACTIONS", "SYNDICATE_MODE"):
        env.pop(name, None)
    return env


def median_seconds(args: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], env=quiet_env(), cwd=ROOT, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--site", default=str(ROOT / "example-site" / "mkdocs.yml"))
    given = parser.parse_args()
    compileall.compile_dir(ROOT / "mkdocs_syndicate", quiet=2)  # as pip compiles an installed wheel
    baseline = median_seconds(["-m", "mkdocs", "--help"], given.repeat)
    print(f"mkdocs --help: {baseline * 1000:.0f} ms (the baseline)")
    measured = {
        "mkdocs-syndicate --help": median_seconds(["-m", "mkdocs_syndicate.cli", "--help"], given.repeat),
        "mkdocs-syndicate status": median_seconds(
            ["-m", "mkdocs_syndicate.cli", "status", "-f", given.site], given.repeat
        ),
    }
    missed = 0
    for name, seconds in measured.items():
        ratio = seconds / baseline
        ok = ratio <= TARGETS[name]
        missed += not ok
        verdict = "" if ok else "  MISSED"
        print(f"{name}: {seconds * 1000:.0f} ms, {ratio:.2f}× mkdocs --help (target ≤ {TARGETS[name]:.2f}×){verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
