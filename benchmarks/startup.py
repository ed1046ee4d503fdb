"""What the plugin adds to every `mkdocs` command: a small site (20 posts, every pair already done,
mode plan) built with and without the plugin, alternately, and the plugin's own import time.

    python benchmarks/startup.py [--posts 20] [--repeat 9]

Targets: build with the plugin / without ≤ 1.05 (median of alternating builds); importing
`mkdocs_syndicate.plugin` ≤ 50 ms on top of what `mkdocs build` imports anyway (median of fresh
processes). tests/test_cheap_import.py checks *what* is loaded; this measures the time.
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

CHANNELS = {
    "ping": {"type": "indexnow", "key": "bench-key-1234"},
    "masto": {"type": "mastodon", "instance": "https://mastodon.example", "token": "bench-token"},
    "devto": {"type": "forem", "api_key": "bench-forem-key"},
    "weibo": {"type": "weibo", "access_token": "bench-weibo-token", "rip": "203.0.113.7"},
    "bsky": {"type": "bluesky", "handle": "bench.bsky.social", "app_password": "bench-app-password"},
}

# What `mkdocs build` has imported before any plugin is loaded: the import measured is the plugin's
# own cost on top of it.
MKDOCS_BASELINE = "import mkdocs.__main__, mkdocs.commands.build, mkdocs.config.defaults, mkdocs.plugins"
IMPORT_PROBE = (MKDOCS_BASELINE + "\nimport time\nstart = time.perf_counter()\nimport mkdocs_syndicate.plugin\n"
                "print(time.perf_counter() - start)")


def make_site(folder: Path, posts: int) -> tuple[Path, Path]:
    docs = folder / "docs"
    (docs / "posts").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n")
    ledger = {}
    for n in range(posts):
        name = f"p{n:03d}"
        (docs / "posts" / f"{name}.md").write_text(
            f"---\ndate: 2026-{n % 12 + 1:02d}-{n % 28 + 1:02d}\nsyndicate: true\ndescription: Post {n}.\n---\n\n"
            f"# Post number {n}\n\nA paragraph of prose.\n")
        key = f"posts/{name}/"
        entry = ledger[key] = PostEntry(url=f"https://example.com/{key}", title=f"Post number {n}")
        for channel in CHANNELS:
            entry.channels[channel] = Record("done", 1, "2026-12-01T07:00:00Z", remote_id=str(n))
    (folder / "ledger.yml").write_text(dump(ledger))
    base = {"site_name": "Startup", "site_url": "https://example.com/", "theme": {"name": "mkdocs"}}
    with_plugin, without = folder / "with.yml", folder / "without.yml"
    with_plugin.write_text(yaml.safe_dump({**base, "plugins": [{"syndicate": {"mode": "plan", "channels": CHANNELS}}]}))
    without.write_text(yaml.safe_dump({**base, "plugins": []}))
    return with_plugin, without


def quiet_env() -> dict[str, str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    for name in ("CI", "GITHUB_ACTIONS", "SYNDICATE_MODE"):
        env.pop(name, None)
    return env


def build(config: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config)],
                            cwd=config.parent, env=quiet_env(), capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"build of {config.name} failed:\n{result.stderr}")
    return elapsed


def import_seconds() -> float:
    out = subprocess.run([sys.executable, "-c", IMPORT_PROBE], env=quiet_env(), capture_output=True,
                         text=True, check=True).stdout
    return float(out.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--posts", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        with_plugin, without = make_site(Path(scratch), args.posts)
        build(with_plugin)  # warm the page cache and the bytecode
        build(without)
        times: dict[str, list[float]] = {"with": [], "without": []}
        for _ in range(args.repeat):
            times["without"].append(build(without))
            times["with"].append(build(with_plugin))
        imports = [import_seconds() for _ in range(args.repeat)]
    for name in ("without", "with"):
        print(f"  {name:<8} plugin: " + "  ".join(f"{t:5.2f} s" for t in times[name]))
    ours, theirs = statistics.median(times["with"]), statistics.median(times["without"])
    ratio = ours / theirs
    imported = statistics.median(imports) * 1000
    print(f"mkdocs build, {args.posts} posts, mode plan, nothing pending: median {ours:.3f} s with / "
          f"{theirs:.3f} s without = {ratio:.3f} (target ≤ 1.05{', ok' if ratio <= 1.05 else ', OVER'})")
    print(f"import mkdocs_syndicate.plugin after what mkdocs build imports anyway: median {imported:.1f} ms "
          f"(target ≤ 50 ms{', ok' if imported <= 50 else ', OVER'}; "
          f"range {min(imports) * 1000:.1f}–{max(imports) * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
