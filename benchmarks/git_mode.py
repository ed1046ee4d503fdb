"""The ledger in git against a remote with latency: pushes per run and wall time, git mode beside a
local ledger file, 1 post × 5 channels and 5 posts × 5 channels, min_interval 0.

    python benchmarks/git_mode.py [--push-latency 0.3] [--api-latency 0.3] [--repeat 3]

The remote is a bare repository behind a latency shim: git runs the shim instead of
git-receive-pack / git-upload-pack (the clone's remote.origin.receivepack / uploadpack), and
the shim sleeps `--push-latency` seconds before each push and fetch, and counts them. The
emulators (their own process) answer each request after `--api-latency` seconds: from a CI
runner, the services are as far away as GitHub is. Each run starts from a fresh clone and a
fresh ledger and announces posts no emulator has seen.

Targets: 1 × 5: git / local ≤ 1.5 and at most 3 pushes; 5 × 5: pushes ≤ 2 × 5 + 2.
The floor, whatever the design: one push before the first at-most-once request and one after the
last response (only a login can hide under the first).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.gitsettings import GitSettings
from mkdocs_syndicate.output.reporters import PlainReporter

SERVER = """
import sys
from pathlib import Path
sys.path.insert(0, {root!r})
from mkdocs_syndicate.registry import emulators
from mkdocs_syndicate.sandbox import SandboxServer
server = SandboxServer(Path({state!r}), emulators(), port={port}, latency=lambda: {latency!r})
server.emulators["indexnow"].trust("bench-key-1234")
server.serve_forever()
"""

SHIM = """#!/bin/sh
echo "$0" >> '{log}'
sleep {latency}
exec {program} "$@"
"""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def channels(url: str) -> dict:
    none = {"min_interval": 0}
    return {
        "ping": {"type": "indexnow", "endpoint": url + "/indexnow", "key": "bench-key-1234", **none},
        "masto": {"type": "mastodon", "instance": url + "/mastodon", "token": "sandbox-mastodon-token", **none},
        "devto": {"type": "forem", "api": url + "/forem/api", "api_key": "sandbox-forem-api-key", **none},
        "weibo": {
            "type": "weibo",
            "api": url + "/weibo/2",
            "access_token": "sandbox-weibo-access-token",
            "rip": "203.0.113.7",
            **none,
        },
        "bsky": {
            "type": "bluesky",
            "service": url + "/bluesky",
            "handle": "sandbox.bsky.social",
            "app_password": "sandbox-bsky-app-password",
            **none,
        },
    }


class Remote:
    """A bare repository with a site's first commit, and a shim that delays and counts."""

    def __init__(self, folder: Path, latency: float) -> None:
        self.folder = folder
        self.bare = folder / "remote.git"
        self.log = folder / "shim.log"
        git("init", "--quiet", "--bare", "-b", "main", str(self.bare), cwd=folder)
        seed = folder / "seed"
        git("clone", "--quiet", str(self.bare), str(seed), cwd=folder)
        (seed / "README.md").write_text("# site\n")
        git("add", "README.md", cwd=seed)
        git("commit", "--quiet", "-m", "start", cwd=seed)
        git("push", "--quiet", "origin", "HEAD:main", cwd=seed)
        shutil.rmtree(seed)
        self.shims = {}
        for name in ("git-receive-pack", "git-upload-pack"):
            shim = folder / f"slow-{name}"
            shim.write_text(SHIM.format(log=self.log, latency=latency, program=name))
            shim.chmod(0o755)
            self.shims[name] = shim

    def checkout(self, target: Path) -> Path:
        """What actions/checkout leaves: a clone whose pushes and fetches go through the shim."""
        git("clone", "--quiet", "-b", "main", str(self.bare), str(target), cwd=self.folder)
        git("config", "remote.origin.receivepack", str(self.shims["git-receive-pack"]), cwd=target)
        git("config", "remote.origin.uploadpack", str(self.shims["git-upload-pack"]), cwd=target)
        return target

    def counts(self) -> tuple[int, int]:
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return (sum("receive" in line for line in lines), sum("upload" in line for line in lines))


class Emulators:
    """The sandbox emulators in their own process, fresh for every run: the services' own posting
    limits (DEV: 9 articles per 30 s, Weibo's hourly cap) must not leak from one run into the next."""

    def __init__(self, folder: Path, latency: float) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVER.format(root=str(ROOT), state=str(folder / "emu"), port=port, latency=latency)]
        )
        for _ in range(200):
            try:
                httpx.get(self.url + "/_sandbox/received", timeout=5)
                return
            except httpx.TransportError:
                time.sleep(0.05)
        raise SystemExit("the emulators did not come up")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def one_run(folder: Path, api_latency: float, push_latency: float | None, posts: int) -> tuple[float, int, int]:
    """Wall time of one run (from taking the ledger lock to the checkout following the last push),
    pushes and fetches. push_latency None: a local ledger file."""
    emulators = Emulators(folder, api_latency)
    try:
        remote = Remote(folder, push_latency) if push_latency is not None else None
        work = remote.checkout(folder / "work") if remote else folder
        git_settings = GitSettings(commit=True, push=True, branch="main") if remote else GitSettings()
        options = parse_options(
            channels(emulators.url),
            ledger_path=work / "ledger.yml",
            site=Site("https://example.com/", "Bench"),
            sandbox=False,
            sending=True,
            max_per_run=posts,
            git=git_settings,
        )
        items = [
            Post(
                key=f"blog/p{n}/",
                url=f"https://example.com/blog/p{n}/",
                title=f"Post {n}",
                date=dt.datetime(2026, 12, 1, tzinfo=dt.UTC) + dt.timedelta(hours=n),
                description=f"About post {n}.",
            )
            for n in range(posts)
        ]
        start = time.perf_counter()
        report = send(options, items, PlainReporter(lambda line: None))
        wall = time.perf_counter() - start
        assert not report.undone, report.results
        pushes, fetches = remote.counts() if remote else (0, 0)
        return wall, pushes, fetches
    finally:
        emulators.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--push-latency", type=float, default=0.3, help="seconds added to each push and fetch")
    parser.add_argument("--api-latency", type=float, default=0.3, help="seconds before each emulator answer")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.update(GIT_ENV)
    print(
        f"push/fetch latency {args.push_latency * 1000:.0f} ms, emulator answers after "
        f"{args.api_latency * 1000:.0f} ms, min_interval 0; median of {args.repeat} alternating runs"
    )
    print(
        f"{'posts × channels':>16}  {'local':>7}  {'git':>7}  {'git/local':>9}  {'git−local':>9}  {'pushes':>6}  "
        f"{'fetches':>7}  target"
    )
    verdicts = []
    with tempfile.TemporaryDirectory() as scratch:
        for posts, max_pushes in ((1, 3), (5, 2 * 5 + 2)):
            local, in_git, pushes, fetches = [], [], [], []
            for n in range(args.repeat):
                case = Path(scratch) / f"p{posts}-{n}"
                (case / "local").mkdir(parents=True)
                (case / "git").mkdir()
                local.append(one_run(case / "local", args.api_latency, None, posts)[0])
                wall, pushed, fetched = one_run(case / "git", args.api_latency, args.push_latency, posts)
                in_git.append(wall)
                pushes.append(pushed)
                fetches.append(fetched)
            ratio = statistics.median(g / loc for g, loc in zip(in_git, local, strict=True))
            extra = statistics.median(g - loc for g, loc in zip(in_git, local, strict=True))
            most = max(pushes)
            ok = most <= max_pushes and (posts != 1 or ratio <= 1.5)
            verdicts.append(ok)
            target = f"≤ {max_pushes} pushes" + (", ratio ≤ 1.5" if posts == 1 else "")
            print(
                f"{posts:>10} × 5  {statistics.median(local):6.2f}s  {statistics.median(in_git):6.2f}s  "
                f"{ratio:9.2f}  {extra:8.2f}s  {most:>6}  {max(fetches):>7}  {target}: {'ok' if ok else 'MISSED'}",
                flush=True,
            )
    # Whatever the design, a run ends with a push after its last response: git ≥ local + one push.
    print(
        f"floor: git − local ≥ one push ({args.push_latency:.2f}s); with answers as slow as pushes, "
        "git / local ≥ 1.5 for 1 × 5 before any overhead (the local run is login + post)"
    )
    sys.exit(0 if all(verdicts) else 1)


if __name__ == "__main__":
    main()
