"""The lexicons the sandbox's PDS checks records against, in the reference PDS's words: a post's
(app.bsky.feed.post: its text, createdAt, langs and facets) and standard.site's documents and
publications."""

from __future__ import annotations

import json
import re
from typing import Any

from mkdocs_syndicate.sandbox.atproto_data import atproto_datetime, grapheme_count

POST = "app.bsky.feed.post"

# The PDS checks a record's `langs` with the lexicon's strict `language` format (checked against
# the reference PDS itself: tests/test_realserver_bluesky.py; the rule is bluesky-social/atproto's
# packages/syntax/src/language.ts, `parseLanguageString`): well-formed BCP 47 (RFC 5646 §2.1), no
# repeated variant or extension singleton (§4.1), and a primary language subtag of 2–3 lowercase
# letters. So `EN`, `PT-BR`, `english` and `en_US` are refused; `pt-br`, `zh-Hant` and `i-klingon`
# pass. (Older PDS versions checked the syntax alone and took `EN` and `english`.)
_GRANDFATHERED = re.compile(
    r"en-GB-oed|i-ami|i-bnn|i-default|i-enochian|i-hak|i-klingon|i-lux|i-mingo|i-navajo|"
    r"i-pwn|i-tao|i-tay|i-tsu|sgn-BE-FR|sgn-BE-NL|sgn-CH-DE|art-lojban|cel-gaulish|no-bok|"
    r"no-nyn|zh-guoyu|zh-hakka|zh-min|zh-min-nan|zh-xiang"
)
_PRIVATE_USE = re.compile(r"[xX](?:-[A-Za-z0-9]{1,8})+")
_LANGTAG = re.compile(
    r"(?:[A-Za-z]{2,3}(?:-[A-Za-z]{3}(?:-[A-Za-z]{3}){0,2})?|[A-Za-z]{4}|[A-Za-z]{5,8})"  # language
    r"(?:-[A-Za-z]{4})?"  # script
    r"(?:-(?:[A-Za-z]{2}|[0-9]{3}))?"  # region
    r"(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*"  # variants
    r"(?:-[0-9A-WY-Za-wy-z](?:-[A-Za-z0-9]{2,8})+)*"  # extensions
    r"(?:-[xX](?:-[A-Za-z0-9]{1,8})+)?"
)  # private use


def _well_formed_language(value: str) -> bool:
    if _GRANDFATHERED.fullmatch(value) or _PRIVATE_USE.fullmatch(value):
        return True
    if not _LANGTAG.fullmatch(value):
        return False
    subtags = value.split("-")
    return bool(re.fullmatch(r"[a-z]{2,3}", subtags[0])) and _no_repeats(subtags, _past_region(subtags))


def _past_region(subtags: list[str]) -> int:
    """Where the variants start: after the language, its extlangs, the script and the region."""
    i = 1
    while i < len(subtags) and i <= 3 and re.fullmatch(r"[A-Za-z]{3}", subtags[i]):
        i += 1
    for optional in (r"[A-Za-z]{4}", r"[A-Za-z]{2}|[0-9]{3}"):  # script, then region
        if i < len(subtags) and re.fullmatch(optional, subtags[i]):
            i += 1
    return i


def _no_repeats(subtags: list[str], i: int) -> bool:
    """No variant twice, and no extension's singleton twice (private use, after x, aside)."""
    variants: list[str] = []
    while i < len(subtags) and len(subtags[i]) > 1:
        variants.append(subtags[i].lower())
        i += 1
    singletons = [t.lower() for t in subtags[i:] if len(t) == 1]
    singletons = singletons[: singletons.index("x")] if "x" in singletons else singletons
    return len(set(variants)) == len(variants) and len(set(singletons)) == len(singletons)


# per field, (required, kind, max graphemes, max UTF-8 bytes). Both are keyed by TIDs.
_Field = tuple[bool, str, int, int]
STANDARD_SITE: dict[str, dict[str, _Field]] = {
    "site.standard.document": {
        "site": (True, "uri", 0, 0),
        "title": (True, "string", 500, 5000),
        "publishedAt": (True, "datetime", 0, 0),
        "path": (False, "string", 0, 0),
        "description": (False, "string", 3000, 30000),
        "textContent": (False, "string", 0, 0),
        "tags": (False, "strings", 128, 1280),
        "updatedAt": (False, "datetime", 0, 0),
        "bskyPostRef": (False, "strongRef", 0, 0),
    },
    "site.standard.publication": {
        "url": (True, "uri", 0, 0),
        "name": (True, "string", 500, 5000),
        "description": (False, "string", 3000, 30000),
    },
}
TID_KEYED = {POST, *STANDARD_SITE}


def lexicon_problem(collection: str, record: dict[str, Any], fields: dict[str, _Field]) -> str | None:
    """A standard.site record checked as the PDS's lexicon validator checks it, in its words."""
    for name, (required, kind, graphemes, size) in fields.items():
        where = f"$.record.{name}"
        if name not in record:
            if required:
                return f'Invalid {collection} record: Missing required key "{name}" at $.record'
            continue
        problem = _field_problem(record[name], kind, graphemes, size, where)
        if problem:
            return f"Invalid {collection} record: {problem}"
    return None


def _field_problem(value: Any, kind: str, graphemes: int, size: int, where: str) -> str | None:
    if kind == "strings":
        if not isinstance(value, list):
            return f"Expected array value type (got {type(value).__name__}) at {where}"
        for i, item in enumerate(value):
            problem = _field_problem(item, "string", graphemes, size, f"{where}[{i}]")
            if problem:
                return problem
        return None
    if kind == "strongRef":
        ok = isinstance(value, dict) and isinstance(value.get("uri"), str) and isinstance(value.get("cid"), str)
        return None if ok else f"Expected a strong reference (uri and cid) at {where}"
    if not isinstance(value, str):
        return f"Expected string value type (got {type(value).__name__}) at {where}"
    if kind == "datetime" and not atproto_datetime(value):
        return f"Invalid datetime (got {json.dumps(value)}) at {where}"
    if kind == "uri" and not re.fullmatch(r"[a-z][a-z.+-]*:\S+", value):
        return f"Invalid uri (got {json.dumps(value)}) at {where}"
    if graphemes and grapheme_count(value) > graphemes:
        return f"grapheme too big (maximum {graphemes}, got {grapheme_count(value)}) at {where}"
    if size and len(value.encode("utf-8")) > size:
        return f"string too big (maximum {size}, got {len(value.encode('utf-8'))}) at {where}"
    return None


def invalid_post(why: str) -> str:
    return f"Invalid app.bsky.feed.post record: {why}"


_AT_URI = re.compile(r"at://[^/\s?#]+(?:/[^\s?#]*)?(?:#\S*)?")
_CID = re.compile(r"b[a-z2-7]{20,}|Qm[1-9A-HJ-NP-Za-km-z]{44}")  # base32 CIDv1, or a base58 CIDv0


def bad_reply(reply: Any) -> str | None:
    """`reply` as the lexicon's app.bsky.feed.post#replyRef: `root` and `parent`, each a
    com.atproto.repo.strongRef (an at-uri and a CID), in the reference PDS's words (0.5.35;
    tests/test_realserver_bluesky.py). The PDS checks the shape only: a parent that does not exist,
    or a cid that is not the parent's, is stored (the AppView, not the PDS, builds threads)."""
    if reply is None:
        return None
    if not isinstance(reply, dict):
        return invalid_post(f"Expected object value type (got {json.dumps(reply)}) at $.record.reply")
    for name in ("root", "parent"):
        if name not in reply:
            return invalid_post(f'Missing required key "{name}" at $.record.reply')
    for name in ("root", "parent"):
        ref, where = reply[name], f"$.record.reply.{name}"
        if not isinstance(ref, dict):
            return invalid_post(f"Expected object value type (got {json.dumps(ref)}) at {where}")
        for key in ("uri", "cid"):
            if key not in ref:
                return invalid_post(f'Missing required key "{key}" at {where}')
        if not isinstance(ref["uri"], str) or not _AT_URI.fullmatch(ref["uri"]):
            return invalid_post(f"Invalid at-uri (got {json.dumps(ref['uri'])}) at {where}.uri")
        if not isinstance(ref["cid"], str) or not _CID.fullmatch(ref["cid"]):
            return invalid_post(f"Invalid CID string (got {json.dumps(ref['cid'])}) at {where}.cid")
    return None


def bad_langs(langs: Any) -> str | None:
    if langs is None:
        return None
    if (
        not isinstance(langs, list)
        or len(langs) > 3
        or not all(isinstance(x, str) and _well_formed_language(x) for x in langs)
    ):
        return invalid_post("Record/langs must be at most 3 valid language tags")
    return None


def bad_facets(record: dict[str, Any], text: str) -> str | None:
    """Facet ranges inside the text's UTF-8 bytes, and #tag facets of at most 64 graphemes."""
    size = len(text.encode("utf-8"))
    for facet in record.get("facets") or []:
        index = facet.get("index", {})
        if not 0 <= index.get("byteStart", -1) < index.get("byteEnd", -1) <= size:
            return invalid_post("facet index out of range")
        for feature in facet.get("features") or []:
            tag = feature.get("tag") if feature.get("$type") == "app.bsky.richtext.facet#tag" else None
            if tag is not None and (grapheme_count(tag) > 64 or len(tag.encode("utf-8")) > 640):
                return invalid_post("Record/facets/features/tag must not be longer than 64 graphemes")
    return None
