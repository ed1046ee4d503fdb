"""The AT Protocol's data formats as a PDS writes and checks them, for the sandbox's PDS: CIDs,
TIDs, record keys and NSIDs, the strict atproto datetime, AppView timestamps, a blob's type by its
bytes, and graphemes as the PDS counts them."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import re
from typing import Any

import regex

from mkdocs_syndicate.sandbox.media_files import image_type

TID = re.compile(r"[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}")
RKEY = re.compile(r"[A-Za-z0-9._:~-]{1,512}")  # the record-key syntax
# An NSID (https://atproto.com/specs/nsid): a reversed domain and a name, e.g. site.standard.document.
NSID = re.compile(
    r"[a-zA-Z](?:[a-zA-Z0-9-]{0,62})(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,62})){1,}\.[a-zA-Z][a-zA-Z0-9]{0,62}"
)
_S32 = "234567abcdefghijklmnopqrstuvwxyz"


def make_cid(data: bytes, codec: int) -> str:
    """CIDv1, sha2-256 multihash, base32 lower (multibase 'b'): bafyrei… (dag-cbor), bafkrei… (raw)."""
    raw = bytes([0x01, codec, 0x12, 0x20]) + hashlib.sha256(data).digest()
    return "b" + base64.b32encode(raw).decode("ascii").lower().rstrip("=")


def iso_ms(epoch: float) -> str:
    """An AppView timestamp: UTC with milliseconds and a Z."""
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def cid_of(value: Any) -> str:
    """The record's CID. A real PDS hashes its DAG-CBOR bytes; canonical JSON stands in here: the
    same content gives the same CID, other content another one, and the string is a valid CID."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return make_cid(canonical.encode("utf-8"), 0x71)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def tid(micros: int, clock_id: int) -> str:
    """A TID as the atproto spec defines it: 0, 53 bits of µs since the epoch, 10 bits of clock id,
    in base32-sortable, 13 characters."""
    number = (micros << 10) | clock_id
    return "".join(_S32[(number >> (5 * i)) & 31] for i in reversed(range(13)))


def grapheme_count(text: str) -> int:
    return len(regex.findall(r"\X", text))


# The strict atproto datetime the PDS checks a record's `createdAt` with: @atproto/syntax 0.7.7,
# https://github.com/bluesky-social/atproto/blob/main/packages/syntax/src/datetime.ts
# `parseString`: RFC 3339 with "T", an upper-case "Z" or a ±hh:mm offset, any number of fraction
# digits; not "-00:00"; at most 64 characters. Then JavaScript's `Date` must parse it to a year
# from 0 to 9999 (V8 refuses a leap second, and takes 30 February as 2 March).
_DATETIME = re.compile(
    r"(?P<year>[0-9]{4})-(?:0[1-9]|1[012])-(?:[0-2][0-9]|3[01])T(?P<time>(?:[01][0-9]|2[0-3]):[0-5][0-9]):"
    r"(?P<second>[0-5][0-9]|60)(?:\.[0-9]+)?(?:Z|(?P<sign>[+-])(?P<offset>(?:[01][0-9]|2[0-3]):[0-5][0-9]))"
)


def atproto_datetime(value: str) -> bool:
    match = _DATETIME.fullmatch(value)
    if len(value) > 64 or value.endswith("-00:00") or match is None or match["second"] == "60":
        return False
    # An offset can move the first or last minutes of the range out of it, to year -1 ("normalized
    # to a negative time") or 10000 ("too far in the future").
    shift = _minutes(match["offset"] or "00:00") * (1 if match["sign"] == "+" else -1)
    utc = _minutes(match["time"]) - shift
    too_early = value.startswith("0000-01-01T") and utc < 0
    too_late = value.startswith("9999-12-31T") and utc >= 24 * 60
    return not (too_early or too_late)


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


# standard.site's lexicons, which the reference PDS (0.5.35) bundles and checks records against
# (its dist/lexicons/site/standard/*.defs.js; checked against it: tests/test_realserver_bluesky.py):


def sniffed(data: bytes) -> str | None:
    """A blob's type by its magic bytes, for the images and a few common others (the PDS uses the
    file-type package, which knows hundreds; plain text it does not recognise)."""
    for magic, mime in (
        (b"%PDF", "application/pdf"),
        (b"PK\x03\x04", "application/zip"),
        (b"\x1f\x8b", "application/gzip"),
    ):
        if data.startswith(magic):
            return mime
    return image_type(data)
