"""Runner wall time against the pacing floor: 10 posts × 5 channels, spacing scaled down 100×.

    python benchmarks/runner_floor.py [--posts 10] [--scale 0.01] [--repeat 3]

The emulators run in their own process, so the CPU time measured is the runner's alone, with their
clock sped up by the same factor (so DEV's own 9-per-30-s limit scales too). The
floor is the slowest lane's mandated spacing: Forem's 75 s × scale between its requests, i.e.
(posts - 1) × 0.75 s. Targets: wall / floor ≤ 1.05; CPU time while pacing ≤ 5 % of wall.
"""

from __future__ import annotations

import argparse
import datetime as dt
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
from mkdocs_syndicate.output.reporters import PlainReporter


def LOG(line: str) -> None:
    pass


SERVER = """
import sys
from pathlib import Path
sys.path.insert(0, {root!r})
from mkdocs_syndicate.registry import emulators
from mkdocs_syndicate.sandbox import SandboxServer
import time
server = SandboxServer(Path({state!r}), emulators(), port={port})
server.emulators["weibo"].safe_domain = "example.com"
# The services' own windows (DEV: 9 articles per 30 s) are scaled with the spacing: emulator time
# runs 1/scale times faster, as if the real 75 s spacing had been kept.
start = time.time()
server.now = lambda: start + (time.time() - start) / {scale}
server.serve_forever()
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def one_run(posts: int, scale: float) -> tuple[float, float, float, int]:
    with tempfile.TemporaryDirectory() as scratch:
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER.format(root=str(ROOT), state=scratch + "/emu", port=port, scale=scale)]
        )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(200):
                try:
                    httpx.get(url + "/_sandbox/received", timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.05)
            paced = 0.3 * scale * 100  # Mastodon, Weibo, Bluesky: a gentler spacing than Forem's
            forem = 75 * scale
            channels = {
                "ping": {"type": "indexnow", "endpoint": url + "/indexnow", "key": "bench-key-1234"},
                "masto": {
                    "type": "mastodon",
                    "instance": url + "/mastodon",
                    "token": "sandbox-mastodon-token",
                    "min_interval": paced,
                },
                "devto": {
                    "type": "forem",
                    "api": url + "/forem/api",
                    "api_key": "sandbox-forem-api-key",
                    "min_interval": forem,
                },
                "weibo": {
                    "type": "weibo",
                    "api": url + "/weibo/2",
                    "access_token": "sandbox-weibo-access-token",
                    "rip": "203.0.113.7",
                    "min_interval": paced,
                },
                "bsky": {
                    "type": "bluesky",
                    "service": url + "/bluesky",
                    "handle": "sandbox.bsky.social",
                    "app_password": "sandbox-bsky-app-password",
                    "min_interval": paced,
                },
            }
            options = parse_options(
                channels,
                ledger_path=Path(scratch) / "ledger.yml",
                site=Site("https://example.com/", "Bench"),
                sandbox=False,
                sending=True,
                max_per_run=posts,
            )
            items = [
                Post(
                    key=f"blog/p{n}/",
                    url=f"https://example.com/blog/p{n}/",
                    title=f"Post {n}",
                    date=dt.datetime(2026, 11, 1, tzinfo=dt.UTC) + dt.timedelta(hours=n),
                    description=f"About post {n}.",
                )
                for n in range(posts)
            ]
            wall_start, cpu_start = time.perf_counter(), time.process_time()
            report = send(options, items, PlainReporter(LOG))
            wall, cpu = time.perf_counter() - wall_start, time.process_time() - cpu_start
            assert not report.undone, report.results
            floor = (posts - 1) * forem
            return wall, floor, cpu, report.requests
        finally:
            server.terminate()
            server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--posts", type=int, default=10)
    parser.add_argument("--scale", type=float, default=0.01, help="multiplies Forem's 75 s spacing")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = [one_run(args.posts, args.scale) for _ in range(args.repeat)]
    for wall, floor, cpu, requests in runs:
        print(
            f"  wall {wall:6.2f} s   floor {floor:5.2f} s   ratio {wall / floor:5.3f}   "
            f"cpu {cpu:5.2f} s = {100 * cpu / wall:4.1f} % of wall   {requests} requests"
        )
    ratio = statistics.median(w / f for w, f, _, _ in runs)
    cpu_share = statistics.median(c / w for w, _, c, _ in runs)
    print(
        f"{args.posts} posts × 5 channels, median: wall/floor {ratio:.3f} (target ≤ 1.05"
        f"{', ok' if ratio <= 1.05 else ', OVER'}), CPU {100 * cpu_share:.1f} % of wall (target ≤ 5 %"
        f"{', ok' if cpu_share <= 0.05 else ', OVER'})"
    )


if __name__ == "__main__":
    main()
