"""Bluesky's records and the PDS's answers: the deterministic TID record key of a copy, whether a
record is about a post, and what putRecord and deleteRecord answers mean."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Found,
    Kind,
    Outcome,
    Part,
    Post,
    Record,
    Verdict,
    client_id,
    error_detail,
    json_object,
    optional_text,
    optional_url,
)
from mkdocs_syndicate.channels.bluesky_text import facets
from mkdocs_syndicate.timeutil import from_iso, to_iso_ms

if TYPE_CHECKING:
    import httpx

_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"


def tid(micros: int, clock_id: int) -> str:
    """A TID: 53 bits of microseconds since the epoch, 10 bits of clock id, base32-sortable."""
    number = (micros << 10) | (clock_id & 0x3FF)
    chars = []
    for _ in range(13):
        chars.append(_ALPHABET[number & 31])
        number >>= 5
    return "".join(reversed(chars))


def rkey_for(post: Post, channel_id: str, life: int = 0) -> str:
    """Deterministic per (site, post, channel): the post's date in µs plus an offset and a clock
    id derived from its full canonical URL (two sites on one account never share a key)."""
    digest = int(client_id(post.url, channel_id, "bluesky-rkey", life), 16)
    micros = int(post.date.timestamp()) * 1_000_000 + digest % 1_000_000
    return tid(micros, (digest >> 20) % 1024)


def part_rkey(post: Post, channel_id: str, number: int, life: int = 0) -> str:
    """A thread's part `number`'s record key: part 1's is the pair's own (unchanged: existing
    ledgers stay valid); each later part's is derived as it is, from (site, post, channel, number)."""
    if number == 1:
        return rkey_for(post, channel_id, life)
    digest = int(client_id(post.url, channel_id, f"bluesky-rkey-part-{number}", life), 16)
    micros = int(post.date.timestamp()) * 1_000_000 + digest % 1_000_000
    return tid(micros, (digest >> 20) % 1024)


def part_created_at(created_at: str, number: int) -> str:
    """Part `number`'s frozen `createdAt`: the thread's, plus a millisecond per part (the parts
    keep their order wherever they are sorted by time, and a repeat sends the same bytes)."""
    return to_iso_ms(from_iso(created_at) + dt.timedelta(milliseconds=number - 1))


def reply_refs(sent: tuple[Part, ...]) -> dict[str, Any]:
    """app.bsky.feed.post#replyRef: the thread's first part as `root`, the last part sent as
    `parent`, each a strong ref (its at:// URI and CID)."""
    root, parent = sent[0], sent[-1]
    return {"root": {"uri": root.remote_id, "cid": root.cid}, "parent": {"uri": parent.remote_id, "cid": parent.cid}}


def without_thumb(value: dict[str, Any]) -> dict[str, Any]:
    embed = value.get("embed")
    if not isinstance(embed, dict) or not isinstance(embed.get("external"), dict):
        return value
    external = {k: v for k, v in embed["external"].items() if k != "thumb"}
    return {**value, "embed": {**embed, "external": external}}


def is_delete_output(response: httpx.Response) -> bool:
    """The documented answer to deleteRecord: a JSON object (`commit` only when a record was
    deleted), or no body at all (the lexicon had no output before `commit` was added)."""
    if not response.content.strip():
        return True
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and isinstance(body.get("commit", {}), dict)


def rkey_of(record: Record) -> str:
    """The copy's record key: the last part of its at:// URI (the key it was made under)."""
    if record.remote_id and record.remote_id.startswith("at://"):
        return record.remote_id.rsplit("/", 1)[-1]
    assert record.idempotency_key
    return record.idempotency_key


def put_refused(response: httpx.Response) -> Outcome:
    """putRecord's 400: InvalidSwap means a record is at our key already (ours, or another's: a
    read tells); anything else is a refusal."""
    detail = error_detail(response)
    if "InvalidSwap" in response.text:
        return Outcome(Kind.AMBIGUOUS, error=f"400 InvalidSwap{detail}: a different record is at our key")
    return Outcome(Kind.REFUSED, error=f"400 refused{detail}")


def card_uri(value: dict[str, Any]) -> str | None:
    """The page a record's link card is about (`app.bsky.embed.external`), if it has one."""
    embed = value.get("embed")
    external = embed.get("external") if isinstance(embed, dict) else None
    uri = external.get("uri") if isinstance(external, dict) else None
    return uri if isinstance(uri, str) and uri else None


def links_to(value: Any, url: str) -> bool:
    """Whether a post record is about `url`: its link card, a link facet, or the URL in its text."""
    if not isinstance(value, dict):
        return False
    embed = value.get("embed")
    external = embed.get("external") if isinstance(embed, dict) else None
    if isinstance(external, dict) and external.get("uri") == url:
        return True
    text = value.get("text")
    return _facet_links_to(value.get("facets"), url) or (isinstance(text, str) and url in text)


def _facet_links_to(facets: object, url: str) -> bool:
    for facet in facets if isinstance(facets, list) else []:
        features = facet.get("features") if isinstance(facet, dict) else None
        if any(isinstance(f, dict) and f.get("uri") == url for f in features or []):
            return True
    return False


def put_outcome(response: httpx.Response, web_url: str) -> Outcome:
    """putRecord's 200: done, with the record's URI (and its CID, which a reply to it names)."""
    try:
        body = json_object(response)
        uri, cid = optional_url(body.get("uri"), "uri"), optional_text(body.get("cid"), "cid")
    except BadAnswer as exc:
        return Outcome(Kind.AMBIGUOUS, error=f"200 with an unreadable answer ({exc}); the post may exist")
    if uri is None:
        return Outcome(Kind.AMBIGUOUS, error="200 without the record's uri; the post may exist")
    return Outcome(Kind.DONE, remote_id=uri, remote_url=web_url, ref=cid)


def found_verdict(response: httpx.Response, post: Post, uri_at_key: str, web_url: str) -> Verdict:
    """getRecord's 200: ours only if it is about this post (another site's may hold our key)."""
    rkey = uri_at_key.rsplit("/", 1)[-1]
    try:
        body = json_object(response)
        uri = optional_url(body.get("uri"), "uri")
    except BadAnswer as exc:
        return Verdict(Found.UNKNOWN, reason=f"getRecord: {exc}")
    if not links_to(body.get("value"), post.url):
        return Verdict(
            Found.CONFLICT,
            reason=(
                f"the record at our key {rkey} does not link to {post.url}: it is another post's "
                "(another site on this account?); the next run sends under a fresh key"
            ),
        )
    cid = body.get("cid")
    return Verdict(Found.FOUND, uri or uri_at_key, web_url, ref=cid if isinstance(cid, str) else None)


def part_record(
    text: str, created_at: str, number: int, sent: tuple[Part, ...], language: str | None
) -> dict[str, Any]:
    """Part `number` of a thread: its text, a reply to the thread (no card: the first part has it)."""
    return reply_record(text, part_created_at(created_at, number), reply_refs(sent), language)


def reply_record(text: str, created_at: str, refs: dict[str, Any], language: str | None) -> dict[str, Any]:
    """A post that replies to `refs` ({root, parent}): a thread's later part, as sent or edited."""
    record: dict[str, Any] = {
        "$type": "app.bsky.feed.post",
        "text": text,
        "createdAt": created_at,
        "facets": facets(text),
        "reply": refs,
    }
    if language:
        record["langs"] = [language]
    return record
