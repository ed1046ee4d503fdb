"""What the plugin adds to every `mkdocs` command: a small site (20 posts, every pair already done,
mode plan) built with and without the plugin, alternately, and the plugin's own import time.

    python benchmarks/startup.py [--posts 20] [--repeat 9]

Targets: build with the plugin / without ≤ 1.05 (median of alternating builds, each after the
previous one: the steady state of `mkdocs build` and `serve`, where a plan build that changed
nothing reuses the last one's "nothing pending", see sources/plan_snapshot.py); importing
`mkdocs_syndicate.plugin` ≤ 50 ms on top of what `mkdocs build` imports anyway (median of fresh
processes). It also prints the plugin's own handler time, and that of the first plan build after
a change. tests/test_cheap_import.py checks *what* is loaded; this measures the time.
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
IMPORT_PROBE = (
    MKDOCS_BASELINE + "\nimport time\nstart = time.perf_counter()\nimport mkdocs_syndicate.plugin\n"
    "print(time.perf_counter() - start)"
)


def make_site(folder: Path, posts: int, material_blog: bool) -> tuple[Path, Path]:
    """The same posts as plain pages under the default theme, or as a Material blog (what most of
    our users have). Every pair is already done: the plugin has nothing to send."""
    folder.mkdir(parents=True)
    docs = folder / "docs"
    posts_dir = docs / "blog" / "posts" if material_blog else docs / "posts"
    posts_dir.mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n")
    if material_blog:
        (docs / "blog" / "index.md").write_text("# Blog\n")
    ledger = {}
    for n in range(posts):
        name = f"p{n:03d}"
        (posts_dir / f"{name}.md").write_text(
            f"---\ndate: 2026-{n % 12 + 1:02d}-{n % 28 + 1:02d}\ndescription: Post {n}.\n"
            + ("" if material_blog else "syndicate: true\n")
            + f"---\n\n# Post number {n}\n\nA paragraph of prose.\n"
        )
    base: dict = {
        "site_name": "Startup",
        "site_url": "https://example.com/",
        "theme": {"name": "material" if material_blog else "mkdocs"},
    }
    without_plugins: list = ["blog"] if material_blog else []
    plugin = {"syndicate": {"mode": "plan", "channels": CHANNELS}}
    with_plugin, without = folder / "with.yml", folder / "without.yml"
    with_plugin.write_text(yaml.safe_dump({**base, "plugins": [*without_plugins, plugin]}))
    without.write_text(yaml.safe_dump({**base, "plugins": without_plugins}))
    build(with_plugin)  # the posts' keys are their URLs: learn them from the plugin's saved build
    from mkdocs_syndicate.sources.manifest import manifest_path, read_manifest

    found, _ = read_manifest(manifest_path(folder / "ledger.yml"), "https://example.com/")
    assert len(found) == posts, f"expected {posts} posts, the build found {len(found)}"
    for post in found:
        entry = ledger[post.key] = PostEntry(url=post.url, title=post.title)
        for channel in CHANNELS:
            entry.channels[channel] = Record("done", 1, "2026-12-01T07:00:00Z", remote_id=post.key)
    (folder / "ledger.yml").write_text(dump(ledger))
    return with_plugin, without


def quiet_env() -> dict[str, str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    # PYTHONDONTWRITEBYTECODE (set on some CI machines) would make every run compile our modules
    # from source while MkDocs' own come from the bytecode pip wrote: compare like with like.
    for name in ("CI", "GITHUB_ACTIONS", "SYNDICATE_MODE", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    return env


def build(config: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config)],
        cwd=config.parent,
        env=quiet_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"build of {config.name} failed:\n{result.stderr}")
    return elapsed


def import_seconds() -> float:
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE], env=quiet_env(), capture_output=True, text=True, check=True
    ).stdout
    return float(out.split()[-1])


def handler_seconds(config: Path) -> float:
    # One build in a fresh interpreter with the plugin's event handlers timed.
    out = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "handler_timing.py"), str(config)],
        cwd=config.parent,
        env=quiet_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(out.split()[-1])


def compare(folder: Path, posts: int, repeat: int, material_blog: bool) -> tuple[float, float, float]:
    with_plugin, without = make_site(folder, posts, material_blog)
    build(with_plugin)  # warm the page cache and write our bytecode, as an installed wheel has it
    build(without)
    times: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(repeat):
        times["without"].append(build(without))
        times["with"].append(build(with_plugin))
    for name in ("without", "with"):
        print(f"  {name:<8} plugin: " + "  ".join(f"{t:5.2f} s" for t in times[name]))
    handlers = statistics.median(handler_seconds(with_plugin) for _ in range(repeat))
    # The first plan build after a change (settings, ledger, posts) validates and plans in full.
    snapshot = folder / ".syndicate-cache" / "ledger.yml.plan.json"
    first = []
    for _ in range(repeat):
        snapshot.unlink()
        first.append(handler_seconds(with_plugin))
    print(
        f"  the plugin's handlers: {1000 * handlers:.0f} ms (nothing changed since the last plan build), "
        f"{1000 * statistics.median(first):.0f} ms (the first plan build after a change)"
    )
    return statistics.median(times["with"]), statistics.median(times["without"]), handlers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--posts", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        results = {}
        for material_blog, name in ((True, "Material blog"), (False, "default theme, plain pages")):
            print(f"{name}:")
            results[name] = compare(Path(scratch) / name.split()[0], args.posts, args.repeat, material_blog)
        imports = [import_seconds() for _ in range(args.repeat)]
    for name, (ours, theirs, handlers) in results.items():
        ratio = ours / theirs
        target = "target ≤ 1.05" + (", ok" if ratio <= 1.05 else ", OVER")
        print(
            f"mkdocs build, {args.posts} posts ({name}), mode plan, nothing pending: median {ours:.3f} s with / "
            f"{theirs:.3f} s without = {ratio:.3f} ({target}); the plugin's handlers, imports included, "
            f"take {1000 * handlers:.0f} ms = {(theirs + handlers) / theirs:.3f} × the build without them"
        )
    imported = statistics.median(imports) * 1000
    print(
        f"import mkdocs_syndicate.plugin after what mkdocs build imports anyway: median {imported:.1f} ms "
        f"(target ≤ 50 ms{', ok' if imported <= 50 else ', OVER'}; "
        f"range {min(imports) * 1000:.1f}–{max(imports) * 1000:.1f} ms)"
    )


if __name__ == "__main__":
    main()
