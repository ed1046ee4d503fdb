"""One conversation on Bluesky, made on the real AppView (tests/test_realserver_appview.py) and on
the sandbox's emulator (here), and the shape both getPostThread answers are compared in: every
key, every count, every reply's text, labels, order and nesting, each at:// URI as the name of
the post it names; what only differs between two networks (DIDs, CIDs, handles, times, the
post's own text, which the channel's tests check) as "<str>"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from channel_specs import SPECS
from conftest import FakeClock, ListReporter, make_post

from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sandbox import SandboxServer

# (name, who, the parent's name, text, what is done to it); "post" is the post itself.
THREAD = (
    ("first", "bob", "post", "First reply", None),
    ("nested", "carol", "first", "An answer to the first", None),
    ("hidden", "dan", "post", "Spam the author hid", "hidden"),
    ("under-hidden", "bob", "hidden", "Below the hidden one", None),
    ("labelled", "carol", "post", "Labelled to hide", "!hide"),
    ("warned", "dan", "post", "Graphic words", "graphic-media"),
)
LIKES, REPOSTS = 2, 1

# Set by a profile record (app.bsky.actor.profile): the AppView's accounts have none, the
# emulator's repliers a display name.
PROFILE_FIELDS = frozenset({"displayName", "avatar", "createdAt", "pronouns", "description"})
KEPT = frozenset({"$type", "val", "allowSubscriptions", "langs"})
TEXTS = frozenset(text for _, _, _, text, _ in THREAD)


def shape(value: Any, names: dict[str, str], key: str = "") -> Any:
    if isinstance(value, dict):
        ours = names.get(value.get("uri", "")) == "post" and "record" in value
        return {
            # Our post's record is what the channel sent (its own tests check it): its keys only.
            k: sorted(v) if ours and k == "record" else shape(v, names, k)
            for k, v in sorted(value.items())
            if not (key == "author" and k in PROFILE_FIELDS)
        }
    if isinstance(value, list):
        return [shape(v, names, key) for v in value]
    if isinstance(value, str):
        if value in names:
            return names[value]
        if key in KEPT or (key == "text" and value in TEXTS):
            return value
        return "<str>"
    return value


def differences(got: Any, want: Any, path: str = "") -> list[str]:
    """Where two shapes differ, one line each ("path: got != want"), for a message that says it."""
    if isinstance(got, dict) and isinstance(want, dict):
        found = [f"{path}.{k}: missing (has {shape_of(want[k])})" for k in want if k not in got]
        found += [f"{path}.{k}: extra ({shape_of(got[k])})" for k in got if k not in want]
        return found + [line for k in got if k in want for line in differences(got[k], want[k], f"{path}.{k}")]
    if isinstance(got, list) and isinstance(want, list):
        if len(got) != len(want):
            return [f"{path}: {len(got)} items != {len(want)}: {shape_of(got)} != {shape_of(want)}"]
        return [
            line for n, (a, b) in enumerate(zip(got, want, strict=True)) for line in differences(a, b, f"{path}[{n}]")
        ]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


def shape_of(value: Any) -> str:
    return repr(value)[:120]


def announced(sandbox: SandboxServer, folder: Path) -> str:
    """A post announced to the sandbox's Bluesky by the channel: its at:// URI."""
    folder.mkdir(parents=True, exist_ok=True)
    post = make_post(1, title="Talked about")
    options = parse_options(
        {"bsky": SPECS["bluesky"].raw(sandbox)},
        ledger_path=folder / "ledger.yml",
        site=Site("https://example.com/", "Example"),
        sandbox=False,
        sending=True,
    )
    report = send(options, [post], ListReporter(), clock=FakeClock())
    assert not report.undone
    record = Ledger.read(folder / "ledger.yml").record(post.key, "bsky")
    assert record is not None and record.remote_id
    return str(record.remote_id)


def emulated(sandbox: SandboxServer, root_uri: str) -> tuple[dict[str, Any], dict[str, str]]:
    """THREAD on the sandbox's Bluesky below our post `root_uri`: its getPostThread answer as a
    browser asks it (the comments script's URL), and the names of its posts' URIs."""
    names = {root_uri: "post"}
    uris = {"post": root_uri}
    for n, (name, who, parent, text, done) in enumerate(THREAD):
        made = sandbox.add_reply(
            "bluesky",
            uris[parent],
            author=who,
            text=text,
            at=f"2026-12-01T00:00:0{n}.000Z",
            hidden=done == "hidden",
            labels=[done] if done and done != "hidden" else [],
        )
        uris[name] = made["uri"]
        names[made["uri"]] = name
    sandbox.react("bluesky", root_uri, likes=LIKES, reposts=REPOSTS)
    answer = httpx.get(
        f"{sandbox.url}/bluesky-appview/xrpc/app.bsky.feed.getPostThread", params={"uri": root_uri, "depth": "10"}
    )
    answer.raise_for_status()
    return answer.json(), names
