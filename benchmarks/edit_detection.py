"""What finding the copies that are out of date (`edits: update`) costs a run with nothing to do:
a 10,000-post ledger with every pair done on Mastodon, DEV, Bluesky and Weibo, planned without
detection (records without hashes), then with detection and no memo (a fresh CI clone), then with
the memo a previous run left (engine/memo.py).

    python benchmarks/edit_detection.py [--posts 10000]

Target (issue 34): with the memo, detection adds at most 5 % to a no-op plan build. The build of
a 10,000-page site takes minutes; the plan step alone is compared here, against the whole build
time measured by build_overhead.py scaled to this many posts (printed for reference). No network:
messages are made and hashed locally.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.memo import MessageMemo
from mkdocs_syndicate.engine.plan import make_plan
from mkdocs_syndicate.ledger.format import dump
from mkdocs_syndicate.ledger.schema import PostEntry, Record
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import TYPES
from mkdocs_syndicate.sandbox.site import make_channels

CHANNELS = {
    "masto": {"type": "mastodon", "instance": "https://mastodon.example", "token": "token-123456"},
    "devto": {"type": "forem", "api": "https://dev.to/api", "api_key": "key-1234567"},
    "bsky": {"type": "bluesky", "handle": "me.bsky.social", "app_password": "abcd-efgh-ijkl-mnop"},
    "weibo": {"type": "weibo", "access_token": "token-abcdef", "rip": "1.2.3.4"},
}
BODY = "<p>" + "A paragraph of ordinary prose, long enough to look like a post. " * 12 + "</p>"


def posts(count: int) -> list[Post]:
    import datetime as dt

    return [
        Post(
            key=f"posts/p{n:05d}/",
            url=f"https://example.com/posts/p{n:05d}/",
            title=f"Post number {n}",
            date=dt.datetime(2026, 1 + n % 12, 1 + n % 28, tzinfo=dt.UTC),
            description=f"About post {n}.",
            tags=("python", "mkdocs"),
            body_html=BODY,
            src=f"posts/p{n:05d}.md",
        )
        for n in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--posts", type=int, default=10_000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    ledger_path = folder / "ledger.yml"

    def channels(edits: str) -> list:
        # Every type that edits in place is detected; the others (ignore) are never prepared.
        raw = {
            cid: {**settings, "edits": edits if TYPES[settings["type"]].client_class().edits_in_place else "ignore"}
            for cid, settings in CHANNELS.items()
        }
        options = parse_options(
            raw, ledger_path=ledger_path, site=Site("https://example.com/", "Site"), sandbox=False, sending=False
        )
        return make_channels(options)

    every = posts(args.posts)
    made = channels("update")
    entries, unhashed = {}, {}
    for post in every:
        entry = entries[post.key] = PostEntry(post.url, post.title, src=post.src)
        bare = unhashed[post.key] = PostEntry(post.url, post.title, src=post.src)
        for channel in made:
            prepared = channel.prepare(post, created_at="2026-12-01T07:00:00.000Z")
            done = Record("done", 1, "2026-12-01T07:00:00Z", remote_id="1", created_at="2026-12-01T07:00:00.000Z")
            entry.channels[channel.id] = replace(done, message_sha256=prepared.sha256)
            bare.channels[channel.id] = done  # no hash: nothing to compare, detection skipped
    ledger_path.write_text(dump(entries), encoding="utf-8")
    ledger = Ledger.read(ledger_path)
    (folder / "bare.yml").write_text(dump(unhashed), encoding="utf-8")
    bare_ledger = Ledger.read(folder / "bare.yml")

    def timed(channel_list: list, memo: MessageMemo | None, book: Ledger = ledger) -> tuple[float, int]:
        start = time.perf_counter()
        plan = make_plan(book, every, channel_list, None, memo=memo)
        return time.perf_counter() - start, len(plan.pairs)

    baseline, _ = timed(made, None, bare_ledger)
    memo = MessageMemo(folder / "memo.json")
    cold, pending = timed(made, memo)
    memo.save()
    warm, pending_warm = timed(made, MessageMemo(folder / "memo.json"))
    one_edit = [replace(every[0], description="Corrected."), *every[1:]]
    start = time.perf_counter()
    edited = make_plan(ledger, one_edit, made, None, memo=MessageMemo(folder / "memo.json"))
    edited_time = time.perf_counter() - start
    print(f"{args.posts} posts × {len(made)} channels, every pair done:")
    print(f"  plan without detection (no hashes)       {baseline:7.2f} s")
    print(f"  detection, no memo (a fresh clone)       {cold:7.2f} s  ({pending} pending: must be 0)")
    print(f"  detection with the memo                  {warm:7.2f} s  ({pending_warm} pending: must be 0)")
    updates = f"({len(edited.pairs)} updates: one per channel that edits)"
    print(f"  one post edited, with the memo           {edited_time:7.2f} s  {updates}")
    added = warm - baseline
    print(f"  what detection adds with the memo: {added:.2f} s")


if __name__ == "__main__":
    main()
