"""What each emulator received, as data (`GET /_sandbox/received`) and as a small web page
(`GET /`): one column per emulator (a channel type), newest first, a post that arrived twice on an
at-most-once channel highlighted, each copy's images with their alt text ("no alt text" flagged), and a
thread as a thread: each reply indented under the post it answers (an item's `in_reply_to_id` or
`in_reply_to` naming another item's `id` or `remote_id`). For rehearsing a config and its
templates with `mkdocs-syndicate sandbox`. Everything shown is escaped: it is untrusted text."""

from __future__ import annotations

import datetime as dt
import html
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mkdocs_syndicate.emulator_api import Emulator


def when(epoch: Any) -> str:
    """One time format for every emulator (they each answer in their service's own)."""
    try:
        return dt.datetime.fromtimestamp(float(epoch), dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (TypeError, ValueError, OverflowError):
        return ""


def received(emulators: Iterable[Emulator], state: dict[str, Any], public_base: str) -> dict[str, list[dict[str, Any]]]:
    """Per emulator, what it received (its own `received`), with one time format and, where a
    second copy of a post is a fault, duplicates marked."""
    items: dict[str, list[dict[str, Any]]] = {}
    for emulator in emulators:
        entries = [
            {**item, "at": when(item.get("at"))}
            for item in emulator.received(state.get(emulator.name, {}), public_base.rstrip("/"))
        ]
        counts = Counter(item["announces"] for item in entries if item["announces"])
        for item in entries:
            item["duplicate"] = emulator.duplicates_matter and counts[item["announces"]] > 1
        items[emulator.name] = entries
    return items


def shown_text(item: dict[str, Any]) -> str:
    """A received post's text as the service's own app shows it: a deleted one (an emulator's
    `deleted`: Matrix keeps a redacted event in the room) as "Message deleted" with the reason
    given, an edited one (`edited`) with its latest text and "(edited)", as Element does."""
    if item.get("deleted"):
        reason = f" (reason: {html.escape(str(item['reason']))})" if item.get("reason") else ""
        return f"<p class=deleted><i>Message deleted</i>{reason}</p>"
    edited = " <small class=edited>(edited)</small>" if item.get("edited") else ""
    return f"<pre>{html.escape(item['text'])}</pre>{edited}"


def images(item: dict[str, Any]) -> str:
    """A copy's images, each with its alt text as a reader's screen reader gets it, or flagged
    when it has none. Only the sandbox's own copies are shown as images (http(s) links); another
    host's (a DEV cover, the site's own file) is a link, so the page fetches nothing remote."""
    shown = []
    for image in item.get("images") or []:
        src, alt = str(image.get("src") or ""), image.get("alt")
        label = (
            f"<span class=alt>{html.escape(str(alt))}</span>"
            if isinstance(alt, str) and alt.strip()
            else "<b class=no-alt>no alt text</b>"
        )
        safe = src.startswith(("http://", "https://"))
        if safe and not image.get("remote"):
            picture = f'<img src="{html.escape(src, quote=True)}" alt="{html.escape(str(alt or ""), quote=True)}">'
        elif safe:
            picture = f'<a href="{html.escape(src, quote=True)}" rel="noreferrer">{html.escape(src)}</a>'
        else:
            picture = "<i>(image not on this server)</i>"
        shown.append(f"<figure>{picture}<figcaption>{label}</figcaption></figure>")
    return "".join(shown)


def _card(entry: dict[str, Any], replies: dict[str, list[dict[str, Any]]], above: frozenset[str] = frozenset()) -> str:
    """One received copy, and under it (indented) the replies to it, oldest first (`above`: the
    copies it is nested in, so that a loop of replies ends)."""
    link = (
        f'<a href="{html.escape(entry["link"], quote=True)}">#{html.escape(entry["id"])}</a>'
        if entry["link"]
        else f"#{html.escape(entry['id'])}"
    )
    inside = above | {_key(entry)}
    under = "".join(_card(c, replies, inside) for c in replies.get(_key(entry), []) if _key(c) not in inside)
    return (
        f'<article class="{"dup" if entry["duplicate"] else ""}" data-id="{html.escape(entry["id"], quote=True)}">'
        f"<header>{link} <time>{html.escape(entry['at'])}</time>"
        f"{' <b>DUPLICATE</b>' if entry['duplicate'] else ''}</header>{shown_text(entry)}{images(entry)}"
        + (f"<div class=replies>{under}</div>" if under else "")
        + "</article>"
    )


def _key(entry: dict[str, Any]) -> str:
    return str(entry.get("remote_id") or entry["id"])


def _parent(entry: dict[str, Any]) -> str | None:
    parent = entry.get("in_reply_to_id") or entry.get("in_reply_to")
    return str(parent) if parent else None


def threads(entries: list[dict[str, Any]]) -> str:
    """The cards of a channel: the posts that answer none of the others newest first, each with
    its replies nested under it."""
    known = {_key(e) for e in entries} | {str(e["id"]) for e in entries}
    aliases = {str(e["id"]): _key(e) for e in entries}
    replies: dict[str, list[dict[str, Any]]] = {}
    parents: dict[str, str] = {}
    for entry in entries:
        parent = _parent(entry)
        if parent in known and parent is not None:
            replies.setdefault(aliases.get(parent, parent), []).append(entry)
            parents[_key(entry)] = aliases.get(parent, parent)
    return "".join(_card(entry, replies) for entry in reversed(entries) if _top(_key(entry), parents))


def _top(key: str, parents: dict[str, str]) -> bool:
    """A copy that answers none of the others, or one in a loop of replies (so it is shown)."""
    start, seen = key, {key}
    while key in parents:
        key = parents[key]
        if key in seen:  # back at the start: it is in the loop, and the loop's least key stands for it
            return key == start and start == min(seen)
        seen.add(key)
    return len(seen) == 1


def page(data: dict[str, list[dict[str, Any]]], names: dict[str, list[str]] | None = None) -> bytes:
    """`data`: what `received` gives; `names`: the site's channel ids for each emulator (`masto`
    for mastodon), for the headings."""
    columns = []
    for channel, entries in data.items():
        dupes = sum(e["duplicate"] for e in entries)
        ids = (names or {}).get(channel)
        # Channel ids come from the site's config, emulator names from plugins: both as text.
        shown = html.escape(channel)
        title = f"{html.escape(', '.join(ids))} <small>({shown})</small>" if ids else shown
        head = f"{title} <small>{len(entries)} received"
        head += f", <b class=dup-count>{dupes} duplicate</b>" if dupes else ""
        cards = threads(entries) or "<p class=empty>nothing yet</p>"
        columns.append(f'<section data-channel="{html.escape(channel)}"><h2>{head}</small></h2>{cards}</section>')
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="3">
<title>mkdocs-syndicate sandbox</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 1rem; background: #fafafa; }}
main {{ display: grid; grid-template-columns: repeat({len(columns)}, minmax(14rem, 1fr)); gap: 1rem; }}
article {{ background: white; border: 1px solid #ddd; border-radius: 6px; padding: .5rem; margin-bottom: .5rem; }}
article.dup {{ border: 2px solid #c00; background: #fee; }}
header {{ color: #666; font-size: 12px; }} header b, .dup-count {{ color: #c00; }}
pre {{ white-space: pre-wrap; word-break: break-word; font: inherit; margin: .25rem 0 0; }}
.empty, .deleted, .edited {{ color: #999; }}
.replies {{ margin-left: 1.25rem; border-left: 2px solid #ddd; padding-left: .5rem; }}
figure {{ margin: .5rem 0 0; }} figure img {{ max-width: 100%; max-height: 12rem; display: block; }}
figcaption {{ font-size: 12px; color: #444; }} .no-alt {{ color: #c00; }}
</style></head>
<body><h1>mkdocs-syndicate sandbox</h1>
<p>What each emulator received (refreshes every 3 s). Nothing here left this machine.</p>
<main>{"".join(columns)}</main></body></html>
"""
    return body.encode("utf-8")


def post_page(emulator: str, item: dict[str, Any]) -> bytes:
    """A received post's public page, as the real service has one at the link it hands out (the
    ledger's remote_url, the dashboard and the run log point here); everything escaped."""
    announces = item.get("announces") or ""
    about = (
        f'<p>Announces <a href="{html.escape(announces, quote=True)}">{html.escape(announces)}</a></p>'
        if announces
        else ""
    )
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(emulator)} #{html.escape(item["id"])} (sandbox)</title>
<style>body {{ font: 15px system-ui, sans-serif; margin: 2rem auto; max-width: 40rem; }}
pre {{ white-space: pre-wrap; word-break: break-word; font: inherit; background: white; border: 1px solid #ddd;
border-radius: 6px; padding: 1rem; }} small {{ color: #666; }}</style></head>
<body><p><small>mkdocs-syndicate sandbox · {html.escape(emulator)} · received {html.escape(item["at"])}
{" · <b>DUPLICATE</b>" if item.get("duplicate") else ""} · <a href="/">all received posts</a></small></p>
<article data-id="{html.escape(item["id"], quote=True)}">{shown_text(item)}{images(item)}</article>
{about}<p><small>Nothing here left this machine.</small></p></body></html>
"""
    return body.encode("utf-8")
