"""The comments script against Bluesky's real AppView (issue 39): a post announced by the plugin to
the reference PDS, replies to it (one nested, one the author hid with a threadgate, one below the
hidden one, one the moderation service labelled !hide, one labelled graphic-media), likes and a
repost, all indexed by the AppView @atproto/dev-env runs (tests/realserver_appview.py); then the
post's page in Chromium, and the AppView's getPostThread answer beside the sandbox emulator's for
the same thread."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from appview_thread import LIKES, REPOSTS, THREAD, announced, differences, emulated, shape
from realserver_appview import AppView, start_appview
from sites import mkdocs, post, write_site
from test_conversation import Tree, author_of, dom, every_item, page_url, replies_below, section, served, top_items
from test_crosslinks import build_again_planning, chromium

from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import emulators
from mkdocs_syndicate.sandbox import SandboxServer

# One worker runs the module (pytest-xdist's loadgroup, conftest.py): the network starts once.
pytestmark = [pytest.mark.realserver, pytest.mark.xdist_group("realserver-appview")]


@dataclass
class Real:
    appview: AppView
    html: str  # the post's page after the script ran
    answer: dict[str, Any]  # the AppView's getPostThread for the post, as the page asks it
    names: dict[str, str]  # at:// URI -> name in THREAD ("post" for the post)
    timings: dict[str, float]
    emulated: dict[str, Any]  # the sandbox emulator's answer for the same thread
    emulated_names: dict[str, str]


def session(pds: str, handle: str, password: str) -> tuple[str, dict[str, str]]:
    answer = httpx.post(
        f"{pds}/xrpc/com.atproto.server.createSession", json={"identifier": handle, "password": password}
    )
    answer.raise_for_status()
    body = answer.json()
    return body["did"], {"Authorization": f"Bearer {body['accessJwt']}"}


def create(pds: str, auth: tuple[str, dict[str, str]], collection: str, record: dict, **extra: str) -> dict:
    did, headers = auth
    answer = httpx.post(
        f"{pds}/xrpc/com.atproto.repo.createRecord",
        json={"repo": did, "collection": collection, "record": {"$type": collection, **record}, **extra},
        headers=headers,
    )
    answer.raise_for_status()
    return dict(answer.json())


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Real]:
    chromium()
    tmp = tmp_path_factory.mktemp("appview")
    started = time.monotonic()
    for appview in start_appview():
        timings = dict(appview.timings)
        alice = appview.account("alice.test")
        channel = {
            "type": "bluesky",
            "service": appview.pds,
            "handle": alice.handle,
            "app_password": alice.password,
            "appview": appview.url,
        }
        config = write_site(
            tmp,
            {"mode": "send", "comments": True, "channels": {"bsky": channel}},
            {"a.md": post("Talked about", dt.date(2026, 11, 20))},
            blog=True,
        )
        built = mkdocs(config)
        assert built.returncode == 0, built.stderr
        record = Ledger.read(tmp / "ledger.yml").record(next(iter(Ledger.read(tmp / "ledger.yml").posts)), "bsky")
        assert record is not None and record.state == "done" and record.remote_id
        root_uri = record.remote_id
        got = httpx.get(
            f"{appview.pds}/xrpc/com.atproto.repo.getRecord",
            params={"repo": alice.did, "collection": "app.bsky.feed.post", "rkey": root_uri.rsplit("/", 1)[-1]},
        ).json()
        refs = {"post": {"uri": root_uri, "cid": got["cid"]}}
        names = {root_uri: "post"}
        sessions = {a.handle: session(appview.pds, a.handle, a.password) for a in appview.accounts}
        for name, who, parent, words, _ in THREAD:
            reply = {"root": refs["post"], "parent": refs[parent]}
            made = create(
                appview.pds,
                sessions[f"{who}.test"],
                "app.bsky.feed.post",
                {"text": words, "createdAt": now(), "langs": ["en"], "reply": reply},
            )
            refs[name] = {"uri": made["uri"], "cid": made["cid"]}
            names[made["uri"]] = name
            time.sleep(0.01)  # distinct createdAt, in order
        # The author hides one reply: the threadgate's record key is the post's.
        create(
            appview.pds,
            sessions[alice.handle],
            "app.bsky.feed.threadgate",
            {"post": root_uri, "hiddenReplies": [refs["hidden"]["uri"]], "createdAt": now()},
            rkey=root_uri.rsplit("/", 1)[-1],
        )
        for who in ("bob.test", "carol.test", "dan.test")[:LIKES]:
            create(appview.pds, sessions[who], "app.bsky.feed.like", {"subject": refs["post"], "createdAt": now()})
        for who in ("dan.test", "carol.test", "bob.test")[:REPOSTS]:
            create(appview.pds, sessions[who], "app.bsky.feed.repost", {"subject": refs["post"], "createdAt": now()})
        appview.sync()
        for name, _, _, _, done in THREAD:
            if done and done != "hidden":
                appview.label(refs[name]["uri"], refs[name]["cid"], done)
        timings["seeded"] = time.monotonic() - started
        build_again_planning(config)
        (page,) = (tmp / "site" / "blog").rglob("talked-about/index.html")
        assert f"{appview.url}/xrpc/app.bsky.feed.getPostThread" in page.read_text()
        answer = httpx.get(
            f"{appview.url}/xrpc/app.bsky.feed.getPostThread", params={"uri": root_uri, "depth": "10"}
        ).json()
        server = served(tmp / "site")
        try:
            html = dom(page_url(server, tmp / "site", "talked-about"), tmp / "profile")
        finally:
            server.shutdown()
            server.server_close()
        timings["shown"] = time.monotonic() - started
        with SandboxServer(tmp / "sandbox-state", emulators()) as sandbox:
            mimic, mimic_names = emulated(sandbox, announced(sandbox, tmp / "sandboxed"))
        recording = os.environ.get("SYNDICATE_RECORD_APPVIEW")
        if recording:  # how tests/data/appview-thread.json was made (docs/development.md)
            Path(recording).write_text(json.dumps(shape(answer, names), indent=1, sort_keys=True) + "\n")
        yield Real(appview, html, answer, names, timings, mimic, mimic_names)


def test_the_reader_sees_the_replies_nested_without_the_hidden_ones(real: Real) -> None:
    shown = section(real.html)
    items = {author_of(item): item for item in top_items(shown)}
    assert list(items) == ["bob.test", "dan.test"], list(items)
    assert [author_of(i) for i in replies_below(items["bob.test"])] == ["carol.test"]
    text = shown.text()
    assert "First reply" in text and "An answer to the first" in text
    for hidden in ("Spam the author hid", "Below the hidden one", "Labelled to hide"):
        assert hidden not in text
    warning = items["dan.test"].first("details", "syndicate-reply-cw")
    assert warning.first("summary").text() == "Content warning: graphic-media" and "open" not in warning.attrs
    assert len(every_item(shown)) == 3
    counts = Tree(real.html).root.first("span", "syndicate-counts").text()
    assert counts == " (4 replies, 1 repost, 2 likes)", counts  # the AppView counts hidden and labelled replies


def test_the_emulator_answers_getpostthread_as_the_appview_does(real: Real) -> None:
    """Field by field: every key, count, label, text, the order and the nesting."""
    assert differences(shape(real.emulated, real.emulated_names), shape(real.answer, real.names)) == []


def test_the_appview_starts_in_the_time_the_tier_allows(real: Real) -> None:
    """Postgres, Redis and the network up, the thread made and shown: measured, said, bounded."""
    print(" ".join(f"{step} {seconds:.1f} s" for step, seconds in real.timings.items()))
    assert real.timings["appview"] < 180


def test_the_labels_are_the_moderation_services_own(real: Real) -> None:
    """Applied through Ozone (emitEvent) and issued by it: the AppView shows them with Ozone's DID."""
    labelled = {
        real.names[reply["post"]["uri"]]: [(label["val"], label["src"]) for label in reply["post"]["labels"]]
        for reply in real.answer["thread"]["replies"]
    }
    assert labelled["labelled"] == [("!hide", real.appview.labeler)]
    assert labelled["warned"] == [("graphic-media", real.appview.labeler)]
    assert labelled["first"] == labelled["hidden"] == []
