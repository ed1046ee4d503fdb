"""standard.site's verification, from the ledger (no request): the publication's at:// URI in
`/.well-known/site.standard.publication`, and each announced post's document URI for its
`<link rel="site.standard.document">` (https://standard.site/docs/verification).

The publication's URI is the account's DID (read from the documents the ledger records) and the
record key the channel derives from the site (channels/standard.py), so a site has the file from
its first announced document on. A site under a path (a GitHub project site) cannot serve it: the
specification puts it at the domain's root, `/.well-known/site.standard.publication/<path>`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from mkdocs_syndicate.content.pagehtml import HeadTag

WELL_KNOWN = ".well-known/site.standard.publication"
DOCUMENT_PREFIX = "/site.standard.document/"
DOCUMENT_REL = "site.standard.document"


def standard_channels(raw_channels: Any) -> list[str]:
    """The ids of the enabled `type: standard` channels, in the order configured."""
    found = []
    for channel, values in raw_channels.items() if isinstance(raw_channels, dict) else ():
        if isinstance(values, dict) and values.get("type") == "standard" and values.get("enabled", True) is not False:
            found.append(str(channel))
    return found


def document_uris(ledger_path: Path, raw_channels: Any, *, sandbox: bool = False) -> dict[str, str]:
    """Post key → its document's at:// URI, for the first standard channel with one: a document
    that is out (`done`, or an edit of it in flight, as the "Also on" links:
    `crosslinks.linked_record`), a sandbox run's only in a sandbox build. Raises LedgerError (naming the file and
    line) when the ledger does not parse."""
    channels = standard_channels(raw_channels)
    if not channels or not ledger_path.exists():
        return {}
    from mkdocs_syndicate.content.crosslinks import linked_record
    from mkdocs_syndicate.ledger.store import Ledger

    found: dict[str, str] = {}
    for key, entry in Ledger.read(ledger_path).posts.items():
        for channel in channels:
            record = entry.channels.get(channel)
            if (
                record is not None
                and linked_record(record)
                and (sandbox or not record.sandbox)
                and _is_document_uri(record.remote_id)
            ):
                found[key] = str(record.remote_id)
                break
    return found


def well_known_file(
    ledger_path: Path, raw_channels: Any, site_url: str, *, sandbox: bool = False
) -> list[tuple[str, str]]:
    """`[(".well-known/site.standard.publication", "at://…")]` once a document is recorded (the
    DID is its repository's), else `[]`; `[]` too for a site under a path (see above)."""
    channels = standard_channels(raw_channels)
    if not channels or urlsplit(site_url).path not in ("", "/"):
        return []
    uris = document_uris(ledger_path, {channels[0]: raw_channels[channels[0]]}, sandbox=sandbox)
    if not uris:
        return []
    from mkdocs_syndicate.channels.standard import PUBLICATION, publication_rkey

    did = next(iter(sorted(uris.values()))).removeprefix("at://").split("/", 1)[0]
    return [(WELL_KNOWN, f"at://{did}/{PUBLICATION}/{publication_rkey(site_url, channels[0])}")]


def document_head_tag(uri: str) -> HeadTag:
    """The post page's `<link rel="site.standard.document" href="at://…">`."""
    from html import escape

    from mkdocs_syndicate.content.pagehtml import HeadTag

    return HeadTag(f'<link rel="site.standard.document" href="{escape(uri, quote=True)}">', "link", "rel", DOCUMENT_REL)


def _is_document_uri(value: str | None) -> bool:
    """`at://did:…/site.standard.document/<key>`, and nothing a hand edit could turn into markup."""
    import re

    return isinstance(value, str) and bool(
        re.fullmatch(r"at://did:[a-z]+:[A-Za-z0-9._:%-]+/site\.standard\.document/[A-Za-z0-9._:~-]{1,512}", value)
    )
