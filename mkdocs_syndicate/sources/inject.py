"""`mkdocs-syndicate inject`: what the plugin puts on an MkDocs post page, put into the pages any
generator built (Zensical, Hugo, Jekyll, Eleventy, Astro), in place, from the committed ledger
(no request). The markup is the plugin's own (content/crosslinks.py's block, content/pagehtml.py's
places and head tags), so a page looks the same whichever way it was made.

Only the pages of posts the ledger links (a copy out, or a standard.site document) are read;
every other file of the site is left as it is, byte for byte. A page is written only when
something changed, whole (a temporary file renamed over it), keeping its file mode.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from mkdocs_syndicate.content import crosslinks
from mkdocs_syndicate.content.pagehtml import Additions, HeadTag, added, creator_head_tag
from mkdocs_syndicate.ledger.atomicfile import atomic_write_text


@dataclass(frozen=True)
class Settings:
    """What `inject` needs of the site's settings (the plugin block's keys)."""

    ledger_path: Path
    channels: Any  # the raw `channels:` mapping
    site_url: str
    site_dir: Path
    sandbox: bool = False
    links: str = "block"  # block, meta-only or off (the last two: no block)
    lead: str = "Also on:"
    comments: bool = False
    fediverse_creator: str | None = None
    selector: str | None = None


@dataclass
class Injected:
    changed: dict[str, list[str]] = field(default_factory=dict)  # page (site-relative) → what changed
    unchanged: int = 0  # pages that had everything already
    problems: list[str] = field(default_factory=list)  # pages the block found no place in, or not UTF-8
    missing: list[str] = field(default_factory=list)  # posts the ledger links with no page in the site
    files: list[str] = field(default_factory=list)  # site files written (the script, .well-known)


def inject(settings: Settings, warn: Callable[[str], None] | None = None) -> Injected:
    """Put each linked post's copies, replies hook and head tags into its built page. Raises
    LedgerError (naming the file and line) for a ledger that does not parse."""
    from mkdocs_syndicate.ledger.store import Ledger
    from mkdocs_syndicate.registry import named_in
    from mkdocs_syndicate.sources.ledger_copies import done_copies, own_urls, replies_locator
    from mkdocs_syndicate.sources.standard_site import document_head_tag, document_uris, well_known_file

    posts = done_copies(settings.ledger_path, sandbox=settings.sandbox)
    documents = document_uris(settings.ledger_path, settings.channels, sandbox=settings.sandbox)
    done = Injected()
    keys = sorted(set(posts) | set(documents))
    if not keys:
        return done
    entries = Ledger.read(settings.ledger_path).posts
    services = {name: kind.service or name for name, kind in named_in(settings.channels).items()}
    labels = crosslinks.labels(settings.channels, services)
    vetting = crosslinks.Vetting(own_urls(settings.channels, settings.site_url), settings.sandbox, warn)
    replies_of = replies_locator(settings.channels, sandbox=settings.sandbox) if settings.comments else None
    blocks = settings.links == "block"
    scripted = False
    for key in keys:
        entry = entries.get(key)
        page = _page_of(entry.url if entry is not None else "", settings.site_url)
        path = settings.site_dir / (page or ".")
        if page is None or not path.is_file():
            done.missing.append(f"{key}: no built page for it in {settings.site_dir}")
            continue
        found = crosslinks.copies(posts.get(key), labels, replies_of, vetting, key) if blocks else []
        script = _script_url(page) if settings.comments else None
        block = crosslinks.block_html(found, settings.lead, script)
        scripted = scripted or (script is not None and any(copy.replies for copy in found))
        head: list[HeadTag] = []
        if key in documents:
            head.append(document_head_tag(documents[key]))
        if settings.fediverse_creator and (found or key in documents):
            head.append(creator_head_tag(settings.fediverse_creator))
        _rewrite(path, page, Additions(tuple(head), block, settings.selector), done)
    if scripted:
        _write_site_file(settings.site_dir, crosslinks.SCRIPT_PATH, crosslinks.comments_script(), done)
    for name, content in well_known_file(
        settings.ledger_path, settings.channels, settings.site_url, sandbox=settings.sandbox
    ):
        _write_site_file(settings.site_dir, name, content, done)
    return done


def _rewrite(path: Path, page: str, additions: Additions, done: Injected) -> None:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        done.problems.append(f"{page}: not UTF-8, left as it is")
        return
    result = added(text, additions)
    if result.problem:
        done.problems.append(f"{page}: {result.problem}")
    if result.html == text:
        done.unchanged += 1
        return
    atomic_write_text(path, result.html, stat.S_IMODE(os.stat(path).st_mode), checkpoint=False, durable=False)
    done.changed[page] = result.changed


def _write_site_file(site_dir: Path, name: str, content: str, done: Injected) -> None:
    path = site_dir / name
    if path.is_file() and path.read_bytes() == content.encode("utf-8"):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, content, checkpoint=False, durable=False)
    done.files.append(name)


def _page_of(url: str, site_url: str) -> str | None:
    """The built file of the page at `url` (its path under `site_url`), relative to the site's
    folder: `blog/hello/` → `blog/hello/index.html`. None for a URL outside the site or a path
    that would leave the site's folder (a hand-edited ledger)."""
    base = urlsplit(site_url).path or "/"
    path = unquote(urlsplit(url).path)
    if not url.startswith(site_url.rstrip("/")) or not path.startswith(base if base.endswith("/") else base + "/"):
        return None
    relative = path[len(base.rstrip("/")) + 1 :]
    if relative == "" or relative.endswith("/"):
        relative += "index.html"
    parts = PurePosixPath(relative).parts
    if any(part in ("..", ".") for part in parts) or "\\" in relative or "\0" in relative:
        return None
    return relative


def _script_url(page: str) -> str:
    """The comments script's address relative to the page, as MkDocs links a page's assets."""
    from mkdocs.utils import get_relative_url

    url = page.removesuffix("index.html")
    return get_relative_url(crosslinks.SCRIPT_PATH, url or ".")
