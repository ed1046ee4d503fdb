"""What each emulator received, as data (`GET /_sandbox/received`) and as a small web page
(`GET /`): one column per channel, newest first, a post that arrived twice on an at-most-once
channel highlighted. For rehearsing a config and its templates with `mkdocs-syndicate sandbox`."""

from __future__ import annotations

import datetime as dt
import html
import re
from collections import Counter
from typing import Any

_URL = re.compile(r"https?://[^\s<>\"]+")
AT_MOST_ONCE = ("mastodon", "forem", "weibo", "bluesky")


def _first_url(text: str) -> str:
    match = _URL.search(text or "")
    return match.group(0).rstrip(".,)") if match else ""


def when(epoch: Any) -> str:
    """One time format for every emulator (they each answer in their service's own)."""
    try:
        return dt.datetime.fromtimestamp(float(epoch), dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (TypeError, ValueError, OverflowError):
        return ""


def received(state: dict[str, Any], public_base: str = "") -> dict[str, list[dict[str, Any]]]:
    """Per emulator: {id, text, announces (the post URL it is about), at, link (where the received
    post would be seen), duplicate}."""
    base = public_base.rstrip("/")
    items: dict[str, list[dict[str, Any]]] = {
        "mastodon": [{"id": s["id"], "text": s["text"], "announces": _first_url(s["text"]),
                      "at": when(s.get("created_epoch")), "link": s.get("url", "")}
                     for s in state.get("mastodon", {}).get("statuses", [])],
        "forem": [{"id": str(a["id"]), "text": f"{a['title']}\n\n{a.get('body_markdown', '')[:280]}",
                   "announces": a.get("canonical_url", ""), "at": when(a.get("created_epoch")), "link": a.get("url", "")}
                  for a in state.get("forem", {}).get("articles", []) if a.get("user") != "someone-else"],
        "weibo": [{"id": s["idstr"], "text": s["original"], "announces": _first_url(s["original"]),
                   "at": when(s.get("epoch")), "link": f"{base}/weibo/status/{s['idstr']}"}
                  for s in state.get("weibo", {}).get("statuses", [])],
        "bluesky": [{"id": rkey, "text": r["value"].get("text", ""),
                     "announces": (r["value"].get("embed") or {}).get("external", {}).get("uri")
                     or _first_url(r["value"].get("text", "")), "at": when(r.get("at")),
                     "link": f"{base}/bluesky/profile/sandbox.bsky.social/post/{rkey}"}
                    for rkey, r in state.get("bluesky", {}).get("records", {}).items()],
        "indexnow": [{"id": str(n), "text": "\n".join(p["urls"]), "announces": "", "at": when(p.get("at")), "link": ""}
                     for n, p in enumerate(state.get("indexnow", {}).get("pings", []), 1)],
    }
    for channel in AT_MOST_ONCE:
        counts = Counter(item["announces"] for item in items[channel] if item["announces"])
        for item in items[channel]:
            item["duplicate"] = counts[item["announces"]] > 1
    for item in items["indexnow"]:
        item["duplicate"] = False  # re-pinging is harmless (at-least-once)
    return items


def page(state: dict[str, Any], public_base: str = "", names: dict[str, list[str]] | None = None) -> bytes:
    """`names`: the site's channel ids for each emulator (`masto` for mastodon), for the headings."""
    data = received(state, public_base)
    columns = []
    for channel, entries in data.items():
        dupes = sum(e["duplicate"] for e in entries)
        ids = (names or {}).get(channel)
        title = f"{', '.join(ids)} <small>({channel})</small>" if ids else channel
        head = f"{title} <small>{len(entries)} received"
        head += f", <b class=dup-count>{dupes} duplicate</b>" if dupes else ""
        cards = "".join(
            f"<article class=\"{'dup' if e['duplicate'] else ''}\"><header>"
            + (f"<a href=\"{html.escape(e['link'], quote=True)}\">#{html.escape(e['id'])}</a>" if e["link"]
               else f"#{html.escape(e['id'])}")
            + f" <time>{html.escape(e['at'])}</time>{' <b>DUPLICATE</b>' if e['duplicate'] else ''}</header>"
            f"<pre>{html.escape(e['text'])}</pre></article>"
            for e in reversed(entries)) or "<p class=empty>nothing yet</p>"
        columns.append(f"<section data-channel=\"{html.escape(channel)}\"><h2>{head}</small></h2>{cards}</section>")
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
.empty {{ color: #999; }}
</style></head>
<body><h1>mkdocs-syndicate sandbox</h1>
<p>What each emulator received (refreshes every 3 s). Nothing here left this machine.</p>
<main>{''.join(columns)}</main></body></html>
"""
    return body.encode("utf-8")
