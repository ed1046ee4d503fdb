"""What each emulator received, as data (`GET /_sandbox/received`) and as a small web page
(`GET /`): one column per channel, newest first, a post that arrived twice on an at-most-once
channel highlighted. For rehearsing a config and its templates with `mkdocs-syndicate sandbox`."""

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
        cards = (
            "".join(
                f'<article class="{"dup" if e["duplicate"] else ""}"><header>'
                + (
                    f'<a href="{html.escape(e["link"], quote=True)}">#{html.escape(e["id"])}</a>'
                    if e["link"]
                    else f"#{html.escape(e['id'])}"
                )
                + f" <time>{html.escape(e['at'])}</time>{' <b>DUPLICATE</b>' if e['duplicate'] else ''}</header>"
                f"{shown_text(e)}</article>"
                for e in reversed(entries)
            )
            or "<p class=empty>nothing yet</p>"
        )
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
<article data-id="{html.escape(item["id"], quote=True)}">{shown_text(item)}</article>
{about}<p><small>Nothing here left this machine.</small></p></body></html>
"""
    return body.encode("utf-8")
