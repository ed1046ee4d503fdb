"""`syndication.json`: each post's copies (and where a reader's browser reads their replies), as a
static file of the built site, for pages the plugin does not build (Zensical, Hugo, any
generator). The comments script, included with one tag in a theme's template, reads it and shows
the same "Also on" links and replies the plugin puts on an MkDocs page. Made from the committed
ledger like the plugin's block (no request), with the same vetting: only a copy on its channel's
own service is listed.

    {"version": 1, "site_url": "https://example.com/", "lead": "Also on:",
     "posts": {"https://example.com/blog/hello/": [
        {"channel": "mastodon", "service": "Mastodon", "url": "https://mastodon.social/@me/1",
         "replies": {"type": "mastodon", "url": "https://mastodon.social/api/v1/statuses/1/context"}}]}}
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

FILE_NAME = "syndication.json"
FORMAT = 1


def syndication_json(
    ledger_path: Path,
    raw_channels: Any,
    site_url: str,
    *,
    sandbox: bool = False,
    comments: bool = False,
    lead: str = "Also on:",
    warn: Callable[[str], None] | None = None,
) -> str:
    """The file's text: every post of the ledger with a copy to link, keyed by its URL (`site_url`
    and its key); with `comments`, each copy says where its replies are read. Raises LedgerError
    (naming the file and line) when the ledger does not parse."""
    from mkdocs_syndicate.content.crosslinks import Vetting, copies, labels
    from mkdocs_syndicate.registry import named_in
    from mkdocs_syndicate.safety import public_text
    from mkdocs_syndicate.sources.ledger_copies import done_copies, own_urls, replies_locator

    posts = done_copies(ledger_path, sandbox=sandbox)
    services = {name: kind.service or name for name, kind in named_in(raw_channels).items()}
    names = labels(raw_channels, services)
    vetting = Vetting(own_urls(raw_channels, site_url), sandbox, warn) if posts else None
    replies_of = replies_locator(raw_channels, sandbox=sandbox) if comments and posts else None
    listed: dict[str, list[dict[str, Any]]] = {}
    for key in sorted(posts):
        found = copies(posts[key], names, replies_of, vetting, key)
        if found:
            listed[site_url + key] = [_copy(copy) for copy in found]
    return json.dumps(
        {"version": FORMAT, "site_url": site_url, "lead": public_text(lead), "posts": listed},
        ensure_ascii=False,
        indent=1,
        sort_keys=False,
    )


def _copy(copy: Any) -> dict[str, Any]:
    from mkdocs_syndicate.safety import public_text

    shown: dict[str, Any] = {"channel": copy.channel, "service": public_text(copy.service), "url": copy.url}
    if copy.replies is not None:
        shown["replies"] = {"type": copy.replies.reader, "url": copy.replies.url}
        if copy.replies.web:
            shown["replies"]["web"] = copy.replies.web
        if copy.replies.parts:  # a thread's later parts: the post itself, not replies to it
            shown["replies"]["parts"] = list(copy.replies.parts)
    return shown
