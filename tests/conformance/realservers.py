"""The same lives against the real servers where tests/realserver/install put them: the reference
PDS (atproto's own server) for Bluesky and standard.site, Synapse for Matrix. Each section is
skipped, saying why, where its server is not installed; in CI (`CI=true`) the start fails
instead, as the realserver tier does (tests/realserver_pds.py `unavailable`)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from conftest import FakeClock

from conformance.life import Target, lives
from conformance.page import Section
from conformance.service import Held, Holdings, matrix_holdings
from mkdocs_syndicate.emulator_api import first_url
from mkdocs_syndicate.sandbox.matrix import USER as SANDBOX_USER

HERE = Path(__file__).resolve().parent.parent / "realserver"


def pinned(package: str) -> str:
    """The version tests/realserver/ pins for a package (npm's lock file, Synapse's requirements)."""
    if package == "synapse":
        for line in (HERE / "synapse-requirements.txt").read_text().splitlines():
            if line.lower().startswith("matrix-synapse=="):
                return line.split("==", 1)[1].split()[0]
        return "?"
    lock = json.loads((HERE / "package-lock.json").read_text())
    return str(lock.get("packages", {}).get(f"node_modules/{package}", {}).get("version", "?"))


@contextlib.contextmanager
def started(start: Callable[[], Iterator[Any]]) -> Iterator[tuple[Any, str]]:
    """(the server, "") while it runs, or (None, why it was skipped)."""
    running = start()
    try:
        server = next(running)
    except pytest.skip.Exception as skipped:
        yield None, str(skipped.msg)
        return
    try:
        yield server, ""
    finally:
        for _ in running:  # the fixture's own end: the server stopped
            pass


# ---------------------------------------------------------------- the PDS


def _records(pds: Any, did: str, collection: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, str | int] = {"repo": did, "collection": collection, "limit": 100}
        if cursor:
            params["cursor"] = cursor
        answer = httpx.get(f"{pds.url}/xrpc/com.atproto.repo.listRecords", params=params, timeout=30)
        answer.raise_for_status()
        body = answer.json()
        found += body["records"]
        cursor = body.get("cursor")
        if not cursor or not body["records"]:
            return found


def pds_holdings(pds: Any, handle: str, type_name: str) -> Holdings:
    """What the account holds, by listRecords: posts (their card's or text's link, their images'
    alt texts, the post they reply to) or standard.site documents (their publication's URL and path)."""
    did = pds.account(handle).did
    if type_name == "standard":
        sites = {r["uri"]: r["value"].get("url", "") for r in _records(pds, did, "site.standard.publication")}
        return Holdings(
            [
                Held(
                    r["uri"],
                    str(sites.get(r["value"].get("site"), "")).rstrip("/") + str(r["value"].get("path", "")),
                    f"{r['value'].get('title', '')}\n\n{r['value'].get('description', '')}",
                )
                for r in _records(pds, did, "site.standard.document")
            ]
        )
    held = []
    for r in _records(pds, did, "app.bsky.feed.post"):
        value = r["value"]
        embed = value.get("embed") or {}
        held.append(
            Held(
                r["uri"],
                (embed.get("external") or {}).get("uri") or first_url(value.get("text", "")),
                value.get("text", ""),
                ((value.get("reply") or {}).get("parent") or {}).get("uri", ""),
                tuple(str(image.get("alt", "")) for image in embed.get("images", [])),
            )
        )
    return Holdings(held)


def pds_section(folder: Path) -> Section:
    from realserver_pds import start_pds

    title, name = "Against the reference PDS (Bluesky, standard.site)", "pds"
    handles = {"bluesky": "alice.test", "standard": "bob.test"}
    with started(start_pds) as (pds, skipped):
        if pds is None:
            return Section(name, title, f"skipped: {skipped}", [])

        def settings(type_name: str) -> dict[str, Any]:
            account = pds.account(handles[type_name])
            return {"type": type_name, "service": pds.url, "handle": account.handle, "app_password": account.password}

        holdings = lambda t: pds_holdings(pds, handles[t], t)  # noqa: E731
        rows = lives(Target(name, settings, holdings, FakeClock(), ("bluesky", "standard")), folder)
    stamp = f"the reference PDS, @atproto/pds {pinned('@atproto/pds')} (tests/realserver/, started by pds.mjs)"
    return Section(name, title, stamp, rows)


# ---------------------------------------------------------------- Synapse


def synapse_holdings(synapse: Any) -> Holdings:
    """The room's messages and redactions, oldest first, as Element shows them; the uploads of
    the bot's account (the admin API's list of a user's media) that no event names."""
    events: list[dict[str, Any]] = []
    token = None
    query = {"dir": "b", "limit": "1000", "filter": json.dumps({"types": ["m.room.message", "m.room.redaction"]})}
    while True:
        page = httpx.get(
            synapse.client(f"/rooms/{quote(synapse.room_id, safe='')}/messages"),
            params={**query, **({"from": token} if token else {})},
            headers=synapse.users["admin"].auth,
            timeout=30,
        ).json()
        events += page["chunk"]
        if not page["chunk"] or not page.get("end"):
            break
        token = page["end"]
    user = synapse.users["alice"].user_id
    for event in events:  # Room reads a redaction's target from its content, as room v11 has it
        if event["type"] == "m.room.redaction" and "redacts" in event:
            event["content"] = {**event["content"], "redacts": event["redacts"]}
        if event.get("sender") == user:  # the bot's events, as the emulator's reader counts them
            event["sender"] = SANDBOX_USER
    media = httpx.get(
        f"{synapse.url}/_synapse/admin/v1/users/{quote(user, safe='')}/media",
        params={"limit": 1000},
        headers=synapse.users["admin"].auth,
        timeout=30,
    )
    media.raise_for_status()
    uploads: dict[str, Any] = {str(m["media_id"]): {} for m in media.json()["media"]}
    return matrix_holdings({"events": events[::-1], "media": uploads})


def synapse_section(folder: Path) -> Section:
    from realserver_synapse import start_synapse

    title, name = "Against Synapse (Matrix)", "synapse"
    with started(lambda: start_synapse(folder / "synapse")) as (synapse, skipped):
        if synapse is None:
            return Section(name, title, f"skipped: {skipped}", [])

        def settings(type_name: str) -> dict[str, Any]:
            return {
                "type": "matrix",
                "homeserver": synapse.url,
                "room_id": synapse.room_id,
                "access_token": synapse.users["alice"].token,
            }

        rows = lives(Target(name, settings, lambda t: synapse_holdings(synapse), FakeClock(), ("matrix",)), folder)
    return Section(name, title, f"Synapse {pinned('synapse')} (tests/realserver/, SQLite, on 127.0.0.1)", rows)


def realserver_sections(folder: Path) -> list[Section]:
    return [pds_section(folder), synapse_section(folder)]
