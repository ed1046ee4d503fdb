"""What `mkdocs-syndicate inject` costs a built site: 1,000 post pages (each a real Material page of
the example site, about 40 KB) with two copies each in the ledger, and 1,000 pages with none, given
the links, the replies' script, standard.site's link and `fediverse:creator`; then the same run
again, which finds everything in place and writes nothing.

    python benchmarks/inject_pages.py [--pages 1000] [--repeat 3]

Target: the first pass over 1,000 pages ≤ 2 s (the in-process call, as the command makes it, on
one core of this machine); the second changes no byte.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mkdocs_syndicate.ledger.format import dump
from mkdocs_syndicate.ledger.schema import PostEntry, Record, State
from mkdocs_syndicate.sources.inject import Settings, inject

SITE = "https://example.com/"
DOC = "at://did:plc:abcdefghijklmnopqrstuvwx/site.standard.document/3mpost{:05d}"
CHANNELS = {
    "masto": {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1"},
    "bsky": {"type": "bluesky", "handle": "me.bsky.social", "app_password": "x"},
    "std": {"type": "standard", "handle": "me.bsky.social", "app_password": "x"},
}


def page_text() -> str:
    """A Material post page: the look of what a generator writes (head, nav, article, footer)."""
    nav = "".join(
        f'<li class="md-nav__item"><a href="/p{i}/" class="md-nav__link">Post {i}</a></li>\n' for i in range(150)
    )
    prose = "<p>" + "A paragraph of ordinary prose, long enough to look like a post. " * 12 + "</p>\n"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>A post</title>'
        '<link rel="stylesheet" href="/assets/stylesheets/main.css"></head>\n<body><header class="md-header">'
        f'</header><nav class="md-nav"><ul>{nav}</ul></nav><main class="md-main"><div class="md-content">'
        f'<article class="md-content__inner md-typeset"><h1>A post</h1>{prose * 20}'
        '<pre><code>if (a &lt; b) { return "</article>"; }</code></pre></article></div></main>'
        '<footer class="md-footer"></footer><script src="/assets/javascripts/bundle.js"></script></body></html>\n'
    )


def make_site(folder: Path, pages: int) -> Settings:
    text = page_text()
    posts = {}
    for i in range(pages * 2):
        path = folder / "site" / f"p{i:05d}" / "index.html"
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
        if i < pages:
            entry = PostEntry(url=f"{SITE}p{i:05d}/", title=f"Post {i}")
            at = "2026-11-20T10:00:00Z"
            entry.channels["masto"] = Record(
                State.DONE, 1, at, remote_id=str(i), remote_url=f"https://m.example/@me/{i}"
            )
            entry.channels["bsky"] = Record(
                State.DONE,
                1,
                at,
                remote_id=f"at://did:plc:abcdefghijklmnopqrstuvwx/app.bsky.feed.post/3m{i:011d}",
                remote_url=f"https://bsky.app/profile/me.bsky.social/post/3m{i:011d}",
            )
            entry.channels["std"] = Record(State.DONE, 1, at, remote_id=DOC.format(i))
            posts[f"p{i:05d}/"] = entry
    (folder / "ledger.yml").write_text(dump(posts), encoding="utf-8")
    return Settings(
        folder / "ledger.yml", CHANNELS, SITE, folder / "site", comments=True, fediverse_creator="@me@m.example"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    firsts, seconds = [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            settings = make_site(Path(tmp), args.pages)
            inject(settings)  # warm: the copies cache beside the ledger, as any build after the first
            for page in Path(tmp, "site").rglob("index.html"):  # back to the generator's pages
                page.write_text(page_text(), encoding="utf-8")
            started = time.perf_counter()
            done = inject(settings)
            firsts.append(time.perf_counter() - started)
            assert len(done.changed) == args.pages and not done.problems, done.problems[:3]
            before = {p: p.read_bytes() for p in Path(tmp, "site").rglob("*") if p.is_file()}
            started = time.perf_counter()
            again = inject(settings)
            seconds.append(time.perf_counter() - started)
            assert not again.changed and not again.files
            assert {p: p.read_bytes() for p in Path(tmp, "site").rglob("*") if p.is_file()} == before
    size = len(page_text().encode())
    print(f"{args.pages} pages of {size // 1000} KB with copies (+{args.pages} without)")
    print(f"first pass  median {statistics.median(firsts):.2f} s  (runs: {', '.join(f'{t:.2f}' for t in firsts)})")
    print(f"second pass median {statistics.median(seconds):.2f} s  (no byte written)")


if __name__ == "__main__":
    main()
