"""The posts a build found, saved so that `mkdocs-syndicate run`, `plan` and `adopt` can work
without rebuilding the site (pipelines whose deploy step comes after the build).

Kept in `.syndicate-cache/<ledger name>.posts.json` next to the ledger: local, git-ignored, never
inside the built site (which gets published). Written atomically at the end of every build that
is not `serve` and not `--dirty`.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from mkdocs_syndicate.content.pages import UNKNOWN_PAGES, PageFacts, SitePages
from mkdocs_syndicate.content.posts import ChannelOverride, Post
from mkdocs_syndicate.errors import ManifestError
from mkdocs_syndicate.ledger.atomicfile import atomic_write_text
from mkdocs_syndicate.localdirs import CACHE_DIR, private_dir
from mkdocs_syndicate.timeutil import from_iso, to_iso

FORMAT = 2  # 2: the body as HTML (`body_html`) and its code blocks' languages


def manifest_path(ledger_path: Path) -> Path:
    return ledger_path.parent / CACHE_DIR / f"{ledger_path.name}.posts.json"


def write_manifest(
    path: Path, posts: list[Post], site_url: str, built_at: dt.datetime, pages: SitePages | None = None
) -> None:
    data: dict[str, Any] = {
        "format": FORMAT,
        "site_url": site_url,
        "built_at": to_iso(built_at),
        "posts": [post_to_json(post) for post in posts],
    }
    if pages is not None:  # every page of the build: what tells a removed post from one no longer a post
        data["pages"] = [page.as_json() for page in pages.pages]
    private_dir(path.parent)
    # A cache: read_manifest refuses a torn file, and a build writes it again (no fsync: builds stay fast).
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n", checkpoint=False, durable=False)


def read_manifest(path: Path, site_url: str) -> tuple[list[Post], dt.datetime]:
    """The posts of the last build and when it ran; raises ManifestError naming the file."""
    if not path.exists():
        raise ManifestError(
            f"{path}: no record of a build; run `mkdocs build` first (it saves the posts it found there)"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ManifestError(f"{path}: written by another mkdocs-syndicate version; run `mkdocs build` again")
        posts = [_post_from_json(item) for item in data["posts"]]
        built_at = from_iso(data["built_at"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ManifestError(f"{path}: unreadable ({type(exc).__name__}); run `mkdocs build` again") from None
    if data.get("site_url") != site_url:
        raise ManifestError(
            f"{path}: built for site_url {data.get('site_url')!r}, but mkdocs.yml says "
            f"{site_url!r}; run `mkdocs build` again"
        )
    return posts, built_at


def read_site_pages(path: Path) -> SitePages:
    """The pages of the last build (read after `read_manifest` accepted the file): unknown when it
    was saved without them, by an earlier version (then nothing is taken for removed)."""
    try:
        items = json.loads(path.read_text(encoding="utf-8")).get("pages")
        return SitePages(tuple(PageFacts.from_json(item) for item in items)) if items is not None else UNKNOWN_PAGES
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return UNKNOWN_PAGES


def post_to_json(post: Post) -> dict[str, Any]:
    return {
        "key": post.key,
        "url": post.url,
        "title": post.title,
        "date": post.date.isoformat(),
        "source": post.source,
        "description": post.description,
        "excerpt_source": post.excerpt_source,
        "tags": list(post.tags),
        "draft": post.draft,
        "body_html": post.body_html,
        "code_languages": post.code_languages,
        "image": post.image,
        "opted_out": post.opted_out,
        "overrides": {k: {"enabled": o.enabled, "text": o.text} for k, o in post.overrides.items()},
        # What identifies the post across moves, and says which door it came through (edits).
        "src": post.src,
        "pin": post.pin,
    }


def _post_from_json(item: dict[str, Any]) -> Post:
    return Post(
        key=item["key"],
        url=item["url"],
        title=item["title"],
        date=dt.datetime.fromisoformat(item["date"]),
        source=item["source"],
        description=item["description"],
        excerpt_source=item.get("excerpt_source", ""),
        tags=tuple(item["tags"]),
        draft=item["draft"],
        body_html=item["body_html"],
        code_languages=dict(item["code_languages"]),
        image=item["image"],
        opted_out=item["opted_out"],
        overrides={k: ChannelOverride(bool(o["enabled"]), o["text"]) for k, o in item["overrides"].items()},
        src=item.get("src") or "",  # a manifest written before 0.2 has neither
        pin=item.get("pin"),
    )
