"""Ledger at scale: 10,000 posts × 5 channels in the canonical layout.

    python benchmarks/ledger_bench.py [--posts 10000] [--repeat 5]

Prints, measured side by side in this one run: load time (ours vs yaml.safe_load with libyaml
when available), one durable transition (temp + fsync + replace + folder fsync) vs a full
yaml.safe_dump + write, and the peak RSS of a real run (a child process) that announces 5 new
posts over that ledger to the loopback emulators. Targets: load ≤ 0.5 s, transition ≤ 0.1 s.

Beside the canonical case, the same ledger edited by hand (a comment at the top; every 10th post with
a comment or a record rewritten in block style), each loaded in a fresh process. Target: ≤ 2 s
and ≤ 300 MB peak RSS (issue 23). A ledger reformatted wholesale (every record in block style) is
shown for what it costs: the YAML parser reads it, until the next write makes it canonical again.
A whole file in a YAML formatter's block style (issue 36) is shown as the first run that may
write meets it (read, then written back in the canonical layout) and as the next run reads it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mkdocs_syndicate.ledger.format import dump
from mkdocs_syndicate.ledger.schema import PostEntry, Record
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition

CHANNELS = ("bluesky", "devto", "indexnow", "mastodon", "weibo")


def make_posts(count: int) -> dict[str, PostEntry]:
    posts = {}
    for i in range(count):
        key = f"blog/2026/{i % 12 + 1:02d}/{i % 28 + 1:02d}/post-number-{i}/"
        entry = posts[key] = PostEntry(url=f"https://example.com/{key}", title=f"Post number {i}: a title")
        at = f"2026-{i % 12 + 1:02d}-{i % 28 + 1:02d}T07:00:{i % 60:02d}Z"
        entry.channels["indexnow"] = Record("done", 1, at)
        entry.channels["mastodon"] = Record(
            "done",
            1,
            at,
            remote_id=str(113720957939417089 + i),
            remote_url=f"https://mastodon.social/@me/{113720957939417089 + i}",
            idempotency_key=f"{i:064x}",
            message_sha256=f"{i * 7:064x}",
        )
        entry.channels["devto"] = Record(
            "done",
            1,
            at,
            remote_id=str(2093312 + i),
            remote_url=f"https://dev.to/me/post-number-{i}-3b1k",
            message_sha256=f"{i * 11:064x}",
        )
        entry.channels["weibo"] = Record(
            "done",
            1,
            at,
            remote_id=str(4900000000000000 + i),
            remote_url=f"https://m.weibo.cn/status/{4900000000000000 + i}",
            message_sha256=f"{i * 13:064x}",
        )
        entry.channels["bluesky"] = Record(
            "done",
            1,
            at,
            remote_id=f"at://did:plc:abc/app.bsky.feed.post/3n2pb{i:08d}",
            remote_url=f"https://bsky.app/profile/me/post/3n2pb{i:08d}",
            idempotency_key=f"3n2pb{i:08d}",
            created_at=at,
            message_sha256=f"{i * 17:064x}",
        )
    return posts


def timed(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def load_in_fresh_process(path: Path, repeat: int) -> float:
    """Ledger.read as a run meets it: a fresh process with nothing else on its heap."""
    return statistics.median(load_and_peak(path)[0] for _ in range(repeat))


def load_and_peak(path: Path, *, rewrite: bool = False) -> tuple[float, int]:
    """(seconds, peak RSS in kB) of Ledger.read in a fresh process; with `rewrite`, of opening it
    for writing and writing it back in the canonical layout, as a run does first."""
    action = (
        f"Ledger.open_for_writing(Path({str(path)!r})).rewrite_canonical()"
        if rewrite
        else f"Ledger.read(Path({str(path)!r}))"
    )
    script = (
        f"import sys, time; sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})\n"
        "from pathlib import Path\nfrom mkdocs_syndicate.ledger.store import Ledger\n"
        f"start = time.perf_counter(); {action}; took = time.perf_counter() - start\n"
        "hwm = [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
        "print(took, hwm[0] if hwm else 0)"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def hand_edited(text: str) -> dict[str, str]:
    """The canonical text as people leave it after editing it by hand."""

    def every_tenth(replace):
        counter = iter(range(10**9))
        return lambda match: replace(match) if next(counter) % 10 == 0 else match.group(0)

    def as_block(match: re.Match[str]) -> str:
        return f"      indexnow:  # by hand\n        state: done\n        attempts: 1\n        at: {match.group(1)}\n"

    record = r"      indexnow: \{state: done, attempts: 1, at: (\"[^\"]+\")\}\n"
    return {
        "a comment at the top": text.replace("posts:\n", "posts:\n  # announced by hand: see the wiki\n", 1),
        "a comment in every 10th post": re.sub(
            r"(    title: .*\n)", every_tenth(lambda m: m.group(1) + "    # n\n"), text
        ),
        "every 10th record in block style": re.sub(record, every_tenth(as_block), text),
        "every record in block style": re.sub(record, as_block, text),
    }


def peak_rss_of_a_run(ledger: Path, folder: Path) -> tuple[float, int]:
    """A child process sends 5 new posts over the big ledger to the emulators; its peak RSS."""
    script = f"""
import datetime as dt, json, resource, sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
from pathlib import Path
from mkdocs_syndicate.config.run import Site
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.output.reporters import PlainReporter
from mkdocs_syndicate.registry import emulators
from mkdocs_syndicate.sandbox import SandboxServer
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
with SandboxServer(Path({str(folder)!r}) / "emulator", emulators()) as server:
    u = server.url
    channels = {{"indexnow": {{"type": "indexnow", "endpoint": u + "/indexnow", "key": "bench-key-1234"}},
        "mastodon": {{"type": "mastodon", "instance": u + "/mastodon", "token": "sandbox-mastodon-token"}},
        "devto": {{"type": "forem", "api": u + "/forem/api", "api_key": "sandbox-forem-api-key", "min_interval": 0}},
        "weibo": {{"type": "weibo", "api": u + "/weibo/2", "access_token": "sandbox-weibo-access-token",
                   "rip": "203.0.113.7"}},
        "bluesky": {{"type": "bluesky", "service": u + "/bluesky", "handle": "sandbox.bsky.social",
                    "app_password": "sandbox-bsky-app-password"}}}}
    server.emulators["weibo"].safe_domain = "example.com"
    options = parse_options(channels, ledger_path=Path({str(ledger)!r}), site=Site("https://example.com/", "Bench"),
                            sandbox=False, sending=True)
    posts = [Post(key=f"blog/new/{{n}}/", url=f"https://example.com/blog/new/{{n}}/", title=f"New {{n}}",
                  date=dt.datetime(2026, 12, 1, n, tzinfo=dt.timezone.utc)) for n in range(5)]
    start = time.perf_counter()
    report = send(options, posts, PlainReporter(lambda line: None))
    wall = time.perf_counter() - start
    assert not report.undone, report.results
# VmHWM, not ru_maxrss: on Linux ru_maxrss survives fork+exec and would report the parent's peak.
hwm = [int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(json.dumps({{"wall": wall, "rss_kb": hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    data = json.loads(out.strip().splitlines()[-1])
    return data["wall"], data["rss_kb"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--posts", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    posts = make_posts(args.posts)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        path = folder / "ledger.yml"
        text = dump(posts)
        path.write_text(text, encoding="utf-8")
        records = args.posts * len(CHANNELS)
        print(
            f"ledger: {args.posts} posts × {len(CHANNELS)} channels = {records} records, "
            f"{len(text.encode()) / 1e6:.1f} MB; yaml loader {loader.__name__}; {os.cpu_count()} CPU(s)"
        )

        ours_load = load_in_fresh_process(path, args.repeat)
        yaml_load = timed(lambda: yaml.load(path.read_text(encoding="utf-8"), Loader=loader), max(1, args.repeat // 2))
        assert Ledger.read(path).posts == posts

        plain = yaml.load(text, Loader=loader)
        yaml_dump = timed(
            lambda: path.with_suffix(".yaml-dump").write_text(
                yaml.dump(plain, Dumper=dumper, allow_unicode=True, sort_keys=True)
            ),
            max(1, args.repeat // 2),
        )

        keys = sorted(posts)
        with Ledger.open_for_writing(path) as ledger:
            ledger.text()  # as a run does at its first write: every post rendered once
            ledger.apply(
                [
                    Transition(
                        PostRef(keys[0], posts[keys[0]].url, posts[keys[0]].title),
                        "newchannel",
                        Record("in_flight", 1, "2026-12-03T07:00:00Z"),
                    )
                ]
            )
            counter = iter(range(10**9))

            def one_transition() -> None:
                n = next(counter)
                key = keys[(n * 7919) % len(keys)]
                current = ledger.record(key, "newchannel")
                state = "in_flight" if current is None or current.state != "in_flight" else "done"
                record = Record(state, 1, "2026-12-03T07:00:01Z", remote_id="1" if state == "done" else None)
                ledger.apply([Transition(PostRef(key, posts[key].url, posts[key].title), "newchannel", record)])

            transition = timed(one_transition, args.repeat * 4)
        first_write_note = "(after the first write of the run, which renders every post once)"
        wall, rss_kb = peak_rss_of_a_run(path, folder)

    def row(name: str, ours: float, theirs: float, target: float | None) -> None:
        verdict = "" if target is None else ("  ok" if ours <= target else f"  OVER TARGET {target} s")
        print(f"  {name:<28} {ours:7.3f} s   yaml {theirs:7.3f} s   ratio {ours / theirs:5.2f}{verdict}")

    print("median times, side by side:")
    row("load", ours_load, yaml_load, 0.5)
    row("one durable transition", transition, yaml_dump, 0.1)
    print(f"  {first_write_note}")
    print(f"run announcing 5 new posts × 5 channels over this ledger: {wall:.2f} s, peak RSS {rss_kb / 1024:.0f} MB")
    print("hand-edited ledgers, each loaded in a fresh process (target ≤ 2 s, ≤ 300 MB):")
    with tempfile.TemporaryDirectory() as scratch:
        for name, edited in hand_edited(text).items():
            path = Path(scratch) / "ledger.yml"
            path.write_text(edited, encoding="utf-8")
            assert Ledger.read(path).posts == posts, name
            took, peak = load_and_peak(path)
            wholesale = name.startswith("every")
            verdict = (
                "(no target: read by YAML until the next write)"
                if wholesale
                else ("ok" if took <= 2.0 and peak <= 300 * 1024 else "OVER TARGET")
            )
            print(f"  {name:<30} {took:6.2f} s   peak RSS {peak / 1024:4.0f} MB   {verdict}")
        path = Path(scratch) / "ledger.yml"
        path.write_text(yaml.dump(yaml.load(text, Loader=loader), Dumper=dumper, sort_keys=False) + "...\n")
        first, first_peak = load_and_peak(path, rewrite=True)
        assert path.read_text(encoding="utf-8") == text
        again, again_peak = load_and_peak(path)
        print(
            f"a YAML formatter's block style: first run {first:.2f} s, peak RSS {first_peak / 1024:.0f} MB "
            f"(read, written back canonical); the next {again:.2f} s, {again_peak / 1024:.0f} MB"
        )


if __name__ == "__main__":
    main()
