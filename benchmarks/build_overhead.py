"""What the plugin costs a build with nothing pending: a generated 2,000-post site whose ledger
already has every pair done, built with and without the plugin, alternately.

    python benchmarks/build_overhead.py [--posts 2000] [--repeat 3]

Targets: 0 requests; build time with the plugin / without ≤ 1.03. Whole builds of this size vary
by several percent from run to run on a shared machine, more than the plugin costs, so the
plugin's own time is also measured inside one build (its event handlers, timed in-process).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mkdocs_syndicate.ledger.format import dump
from mkdocs_syndicate.ledger.schema import PostEntry, Record
from mkdocs_syndicate.registry import emulators
from mkdocs_syndicate.sandbox import SandboxServer

BODY = (
    """
Some text with a [link to the home page](../index.md) and [another post](p0001.md).

## A section

"""
    + "A paragraph of ordinary prose, long enough to look like a post. " * 12
    + "\n"
)


def make_site(folder: Path, posts: int, sandbox_url: str) -> tuple[Path, Path]:
    docs = folder / "docs"
    (docs / "posts").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n")
    ledger = {}
    for n in range(posts):
        name = f"p{n:04d}"
        (docs / "posts" / f"{name}.md").write_text(
            f"---\ndate: 2026-{n % 12 + 1:02d}-{n % 28 + 1:02d}\nsyndicate: true\ndescription: Post {n}.\n---\n\n"
            f"# Post number {n}\n{BODY}"
        )
        key = f"posts/{name}/"
        entry = ledger[key] = PostEntry(url=f"https://example.com/{key}", title=f"Post number {n}")
        for channel in ("ping", "masto", "devto", "weibo", "bsky"):
            # Copies with a URL, as real ones have: every post page gets its "Also on" links.
            url = None if channel == "ping" else f"https://{channel}.example/{n}"
            entry.channels[channel] = Record("done", 1, "2026-12-01T07:00:00Z", remote_id=str(n), remote_url=url)
    (folder / "ledger.yml").write_text(dump(ledger))
    base = {"site_name": "Bench", "site_url": "https://example.com/", "theme": {"name": "mkdocs"}}
    u = sandbox_url
    plugin = {
        "syndicate": {
            "mode": "send",
            "channels": {
                "ping": {"type": "indexnow", "endpoint": u + "/indexnow", "key": "bench-key-1234"},
                "masto": {"type": "mastodon", "instance": u + "/mastodon", "token": "sandbox-mastodon-token"},
                "devto": {"type": "forem", "api": u + "/forem/api", "api_key": "sandbox-forem-api-key"},
                "weibo": {
                    "type": "weibo",
                    "api": u + "/weibo/2",
                    "access_token": "sandbox-weibo-access-token",
                    "rip": "203.0.113.7",
                },
                "bsky": {
                    "type": "bluesky",
                    "service": u + "/bluesky",
                    "handle": "sandbox.bsky.social",
                    "app_password": "sandbox-bsky-app-password",
                },
            },
        }
    }
    with_plugin, without = folder / "with.yml", folder / "without.yml"
    with_plugin.write_text(yaml.safe_dump({**base, "plugins": [plugin]}))
    without.write_text(yaml.safe_dump({**base, "plugins": []}))
    return with_plugin, without


def build(config: Path) -> float:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    env.pop("CI", None)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config)],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"build of {config.name} failed:\n{result.stderr}")
    return elapsed


def plugin_seconds(config: Path) -> tuple[float, float]:
    """One in-process build with the plugin's event handlers timed: (plugin seconds, build seconds)."""
    os.environ["NO_MKDOCS_2_WARNING"] = "1"
    from handler_timing import time_plugin_handlers
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    spent = time_plugin_handlers()
    config = load_config(config_file=str(config))
    start = time.perf_counter()
    config.plugins.on_startup(command="build", dirty=False)
    try:
        mkdocs_build(config)
    finally:
        config.plugins.on_shutdown()
    return spent[0], time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--posts", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch, SandboxServer(Path(scratch) / "emu", emulators()) as server:
        with_plugin, without = make_site(Path(scratch), args.posts, server.url)
        build(without)  # warm the page cache and the bytecode
        times: dict[str, list[float]] = {"with": [], "without": []}
        for _ in range(args.repeat):
            times["without"].append(build(without))
            times["with"].append(build(with_plugin))
        inside, whole = plugin_seconds(with_plugin)
        requests = len(server.requests())
    ours, theirs = statistics.median(times["with"]), statistics.median(times["without"])
    for name in ("without", "with"):
        print(f"  {name:<8} plugin: " + "  ".join(f"{t:6.2f} s" for t in times[name]))
    ratio = ours / theirs
    print(
        f"{args.posts} posts, nothing pending: median {ours:.2f} s with / {theirs:.2f} s without = "
        f"{ratio:.3f} (target ≤ 1.03{', ok' if ratio <= 1.03 else ', OVER'}); "
        f"{requests} requests (target 0{', ok' if requests == 0 else ', OVER'})"
    )
    print(
        f"inside one build: the plugin's handlers took {inside:.2f} s of {whole:.2f} s = "
        f"{whole / (whole - inside):.3f} × the build without them"
    )


if __name__ == "__main__":
    main()
