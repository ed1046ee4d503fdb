"""The conversation under a post (issue 39), in a real browser: counts beside the "Also on" links,
nested replies from Mastodon, Bluesky and DEV sorted by their times, content warnings folded,
what the services hide left out, links kept as links, a "Reply on" link per copy, and an
invitation when nobody replied yet. The replies are the sandbox's emulators' answers."""

from __future__ import annotations

import datetime as dt
import functools
import http.server
import json
import re
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from channel_specs import SPECS
from conftest import TRUSTED_INDEXNOW_KEYS
from sites import mkdocs, post, write_site
from test_crosslinks import CHROMIUM_FLAGS, build_again_planning, chromium

from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import emulators
from mkdocs_syndicate.sandbox import SandboxServer

# The tests keep to one worker (xdist_group), so that the module's fixture
# (a site built and read in Chromium) is made once a run, not once a worker.
pytestmark = pytest.mark.xdist_group("conversation")


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def all(self, tag: str | None = None, cls: str | None = None) -> Iterator[Node]:
        for child in self.children:
            if isinstance(child, Node):
                if (tag is None or child.tag == tag) and (cls is None or cls in child.attrs.get("class", "").split()):
                    yield child
                yield from child.all(tag, cls)

    def first(self, tag: str | None = None, cls: str | None = None) -> Node:
        return next(self.all(tag, cls))

    def own(self, tag: str) -> list[Node]:
        """Direct children with that tag."""
        return [c for c in self.children if isinstance(c, Node) and c.tag == tag]


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Tree(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self._stack = [self.root]
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self._stack[-1].children.append(node)
        if tag not in VOID:
            self._stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self._stack) - 1, 0, -1):
            if self._stack[depth].tag == tag:
                del self._stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self._stack[-1].children.append(data)


def section(html: str) -> Node:
    return Tree(html).root.first("section", "syndicate-replies")


def author_of(item: Node) -> str:
    return item.first("p", "syndicate-reply-author").first("a").text()


def top_items(section_node: Node) -> list[Node]:
    return section_node.first("ol").own("li")


def replies_below(item: Node) -> list[Node]:
    lists = item.own("ol")
    return lists[0].own("li") if lists else []


def every_item(section_node: Node) -> list[Node]:
    return list(section_node.all("li", "syndicate-reply"))


def served(folder: Path) -> Any:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def dom(url: str, profile: Path) -> str:
    return subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=20000", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=180,
    ).stdout


def page_url(server: Any, site: Path, slug: str) -> str:
    (page,) = (site / "blog").rglob(f"{slug}/index.html")
    return f"http://127.0.0.1:{server.server_address[1]}/{page.relative_to(site).as_posix()}"


@dataclass
class Conversation:
    talk: str  # the DOM of the post with replies, after the script ran
    quiet: str  # the DOM of the post nobody replied to
    copies: dict[str, str]  # channel -> the copy's URL
    ids: dict[str, str]  # name -> a reply's id


@pytest.fixture(scope="module")
def conversation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Conversation]:
    chromium()
    tmp = tmp_path_factory.mktemp("conversation")
    with SandboxServer(tmp / "sandbox-state", emulators()) as sandbox:
        sandbox.emulators["indexnow"].trust(*TRUSTED_INDEXNOW_KEYS)
        channels = {
            "masto": SPECS["mastodon"].raw(sandbox),
            "bsky": SPECS["bluesky"].raw(
                sandbox, appview=f"{sandbox.url}/bluesky-appview", web_url=f"{sandbox.url}/bluesky"
            ),
            "devto": SPECS["forem"].raw(sandbox),
        }
        config = write_site(
            tmp,
            {"mode": "send", "comments": True, "channels": channels},
            {"a.md": post("Talked about", dt.date(2026, 11, 20)), "b.md": post("Quiet one", dt.date(2026, 11, 21))},
            blog=True,
        )
        assert mkdocs(config).returncode == 0
        book = Ledger.read(tmp / "ledger.yml")
        key = next(k for k in book.posts if "talked" in k)
        masto, bsky, dev = (book.record(key, c) for c in ("masto", "bsky", "devto"))
        assert masto and bsky and dev and masto.remote_id and bsky.remote_id and dev.remote_id
        ids: dict[str, str] = {}

        def m(name: str, parent: str, text: str, **details: Any) -> None:
            ids[name] = sandbox.add_reply("mastodon", parent, author=name, text=text, **details)["id"]

        def b(name: str, parent: str, text: str, **details: Any) -> None:
            ids[name] = sandbox.add_reply("bluesky", parent, author=name, text=text, **details)["uri"]

        def d(name: str, parent: str, text: str, **details: Any) -> None:
            ids[name] = sandbox.add_reply("forem", parent, author=name, text=text, **details)["id_code"]

        # Sorting: the services' times as dates. By the strings, 'bo-late' (2026-11-30T23:30Z)
        # would come before 'bo-early' (2026-12-01T08:00+09:00, i.e. 23:00Z), and 'ana' (23:15Z)
        # before both.
        b("bo-early", bsky.remote_id, "First, in Tokyo", at="2026-12-01T08:00:00+09:00")
        m(
            "ana",
            masto.remote_id,
            '<p>Good read. See <a href="https://example.org/more">this</a> and '
            '<a href="javascript:alert(1)">that</a></p>',
            at="2026-11-30T23:15:00Z",
        )
        b("bo-late", bsky.remote_id, "Then in London", at="2026-11-30T23:30:00Z")
        # Nesting, below 'ana': a chain deeper than the script shows.
        parent = ids["ana"]
        for level in range(1, 9):
            m(f"deep{level}", parent, f"<p>level {level}</p>", at=f"2026-12-01T0{level}:00:00Z")
            parent = ids[f"deep{level}"]
        b("bo-answer", ids["bo-early"], "Answering the first", at="2026-12-01T09:00:00Z")
        # Content warnings: Mastodon's spoiler text, a Bluesky label that warns.
        m(
            "cw",
            masto.remote_id,
            "<p>The butler did it.</p>",
            warning="Spoilers for the ending",
            at="2026-12-02T00:00:00Z",
        )
        b("labelled", bsky.remote_id, "Graphic words", labels=["graphic-media"], at="2026-12-02T01:00:00Z")
        # Hidden by the post's author (threadgate), labelled !hide, a third-party block, deleted:
        # none is shown, nor what is below them.
        b("hidden", bsky.remote_id, "Hidden by the author", hidden=True, at="2026-12-02T02:00:00Z")
        b("under-hidden", ids["hidden"], "Below the hidden one", at="2026-12-02T03:00:00Z")
        b("hide-label", bsky.remote_id, "Spam", labels=["!hide"], at="2026-12-02T04:00:00Z")
        b("blocked", bsky.remote_id, "From a blocked account", blocked=True, at="2026-12-02T05:00:00Z")
        b("deleted", bsky.remote_id, "Since deleted", deleted=True, at="2026-12-02T06:00:00Z")
        # DEV: a thread, one hidden by the author and one deleted (with their threads), and more
        # root threads than one page holds.
        d("dev-root", dev.remote_id, "<p>On DEV</p>", at="2026-12-03T00:00:00Z")
        d("dev-child", ids["dev-root"], "<p>Agreed, on DEV</p>", at="2026-12-03T01:00:00Z")
        d("dev-hidden", dev.remote_id, "<p>Hidden on DEV</p>", hidden=True, at="2026-12-03T02:00:00Z")
        d("dev-under-hidden", ids["dev-hidden"], "<p>Below it</p>", at="2026-12-03T03:00:00Z")
        d("dev-deleted", dev.remote_id, "<p>Deleted on DEV</p>", deleted=True, at="2026-12-03T04:00:00Z")
        for n in range(52):
            d(f"page{n}", dev.remote_id, f"<p>thread {n}</p>", at=f"2026-12-04T{n // 60:02d}:{n % 60:02d}:00Z")
        # Counts.
        sandbox.react("mastodon", masto.remote_id, likes=3, reposts=2)
        sandbox.react("bluesky", bsky.remote_id, likes=5, reposts=1)

        build_again_planning(config)
        server = served(tmp / "site")
        try:
            talk = dom(page_url(server, tmp / "site", "talked-about"), tmp / "profile-1")
            quiet = dom(page_url(server, tmp / "site", "quiet-one"), tmp / "profile-2")
        finally:
            server.shutdown()
            server.server_close()
        copies = {c: str(r.remote_url) for c in ("masto", "bsky", "devto") if (r := book.record(key, c))}
        yield Conversation(talk, quiet, copies, ids)


@pytest.mark.process
def test_replies_are_sorted_by_their_times_as_dates(conversation):
    names = [author_of(item) for item in top_items(section(conversation.talk))]
    assert names[:3] == ["bo-early", "ana", "bo-late"], names


@pytest.mark.process
def test_replies_are_nested_as_the_thread_is_down_to_a_depth_then_a_link(conversation):
    items = {author_of(item): item for item in top_items(section(conversation.talk))}
    assert [author_of(i) for i in replies_below(items["bo-early"])] == ["bo-answer"]
    level, chain = items["ana"], []
    while replies_below(level):
        (level,) = replies_below(level)
        chain.append(author_of(level))
    assert chain == ["deep1", "deep2", "deep3", "deep4", "deep5"]  # 6 levels with ana's
    more = level.first("a", "syndicate-replies-more")
    assert more.text() == "continue this thread on Mastodon" and more.attrs["href"].endswith(conversation.ids["deep5"])
    assert "deep6" not in section(conversation.talk).text()
    assert [author_of(i) for i in replies_below(items["Dev-Root"])] == ["Dev-Child"]


@pytest.mark.process
def test_each_reply_has_its_author_its_time_and_its_links_only_as_links(conversation):
    shown = section(conversation.talk)
    ana = next(i for i in top_items(shown) if author_of(i) == "ana")
    time = ana.first("time")
    assert time.attrs["datetime"] == "2026-11-30T23:15:00.000Z"
    words = ana.first("p", "syndicate-reply-text")
    links = [(a.attrs["href"], a.attrs.get("rel"), a.text()) for a in words.all("a")]
    assert links == [("https://example.org/more", "nofollow ugc", "this")]
    assert "and that" in words.text()  # javascript: is no link: only its words stay
    assert not list(shown.all("script")) and not list(shown.all("img"))
    assert all(list(item.all("time")) for item in every_item(shown))


@pytest.mark.process
def test_a_content_warning_is_shown_and_the_text_folded_behind_it(conversation):
    items = {author_of(item): item for item in top_items(section(conversation.talk))}
    for name, warning, words in (
        ("cw", "Content warning: Spoilers for the ending", "The butler did it."),
        ("labelled", "Content warning: graphic-media", "Graphic words"),
    ):
        details = items[name].first("details", "syndicate-reply-cw")
        assert "open" not in details.attrs  # folded until the reader opens it (a click, Enter, Space)
        assert details.first("summary").text() == warning
        assert details.first("p", "syndicate-reply-text").text() == words


@pytest.mark.process
def test_what_the_services_hide_stays_hidden(conversation):
    text = section(conversation.talk).text()
    for hidden in ("Hidden by the author", "Below the hidden one", "Spam", "From a blocked account", "Since deleted"):
        assert hidden not in text
    for hidden in ("Hidden on DEV", "Below it", "Deleted on DEV", "Comment deleted", "Comment hidden"):
        assert hidden not in text
    assert "Answering the first" in text


@pytest.mark.process
def test_counts_stand_beside_each_copy(conversation):
    links = Tree(conversation.talk).root.first("aside", "syndicate-links")
    said = {}
    anchors = list(links.first("p").children)
    for n, child in enumerate(anchors):
        if isinstance(child, Node) and child.tag == "a":
            after = anchors[n + 1] if n + 1 < len(anchors) else None
            said[child.text()] = (
                after.text() if isinstance(after, Node) and "syndicate-counts" in after.attrs.get("class", "") else ""
            )
    assert said["Mastodon"] == " (2 replies, 2 boosts, 3 favourites)", said
    # The AppView counts every direct reply, hidden or labelled ones too (not deleted ones).
    assert said["Bluesky"] == " (6 replies, 1 repost, 5 likes)", said


@pytest.mark.process
def test_dev_comments_are_read_page_after_page(conversation):
    names = [author_of(item) for item in top_items(section(conversation.talk))]
    assert "Dev-Root" in names and "Page0" in names and "Page51" in names  # 55 threads: two pages


@pytest.mark.process
def test_each_copy_has_a_reply_link_and_a_quiet_post_invites_the_first_reply(conversation):
    shown = section(conversation.talk)
    actions = shown.first("p", "syndicate-replies-actions")
    assert [(a.text(), a.attrs["href"]) for a in actions.all("a")] == [
        ("Reply on Mastodon", conversation.copies["masto"]),
        ("Reply on Bluesky", conversation.copies["bsky"]),
        ("Reply on DEV", conversation.copies["devto"] + "#comments"),
    ]
    quiet = section(conversation.quiet)
    assert not list(quiet.all("li"))
    invitation = quiet.first("p", "syndicate-replies-actions")
    assert invitation.text() == "No replies yet. Reply on Mastodon, Bluesky or DEV to comment."
    assert [a.text() for a in invitation.all("a")] == ["Mastodon", "Bluesky", "DEV"]


@pytest.mark.process
def test_the_replies_are_a_labelled_list_and_nothing_waits_busy(conversation):
    shown = section(conversation.talk)
    heading = shown.first("h2")
    assert shown.attrs["aria-labelledby"] == heading.attrs["id"] and heading.text() == "Replies"
    assert "aria-busy" not in shown.attrs and not list(shown.all("p", "syndicate-replies-status"))
    assert shown.own("ol") and all(li.tag == "li" for li in shown.first("ol").own("li"))


@pytest.mark.process
def test_an_appview_answer_with_blocked_missing_and_muted_replies_shows_only_the_rest(sandbox, tmp_path):
    """What an AppView may send (app.bsky.feed.defs): #blockedPost and #notFoundPost items, authors
    the viewer blocks, is blocked by or mutes, negated labels, and facets that point outside the
    text. The public AppView sends no viewer state without a session: a crafted answer, served
    as a file."""
    channels = {
        "bsky": SPECS["bluesky"].raw(sandbox, appview=f"{sandbox.url}/bluesky-appview", web_url="https://bsky.app")
    }
    config = write_site(
        tmp_path,
        {"mode": "send", "comments": True, "channels": channels},
        {"a.md": post("Crafted", dt.date(2026, 11, 20))},
        blog=True,
    )
    assert mkdocs(config).returncode == 0
    build_again_planning(config)

    def reply(name: str, text: str, **extra: Any) -> dict[str, Any]:
        author = {"did": f"did:plc:{name}", "handle": f"{name}.example", **extra.pop("author", {})}
        post_view = {
            "uri": f"at://did:plc:{name}/app.bsky.feed.post/1",
            "cid": "bafy",
            "author": author,
            "record": {"text": text, "createdAt": "2026-12-01T00:00:00Z", **extra.pop("record", {})},
            "indexedAt": "2026-12-01T00:00:00Z",
            **extra,
        }
        return {"$type": "app.bsky.feed.defs#threadViewPost", "post": post_view, "replies": []}

    word = "see example"  # a link facet on "example", and one that points past the text's end
    facets = [
        {
            "index": {"byteStart": 4, "byteEnd": 11},
            "features": [{"$type": "app.bsky.richtext.facet#link", "uri": "https://example.org/"}],
        },
        {
            "index": {"byteStart": 8, "byteEnd": 400},
            "features": [{"$type": "app.bsky.richtext.facet#link", "uri": "https://evil.example/"}],
        },
        {
            "index": {"byteStart": 0, "byteEnd": 3},
            "features": [{"$type": "app.bsky.richtext.facet#link", "uri": "javascript:alert(1)"}],
        },
    ]
    answer = {
        "thread": {
            "$type": "app.bsky.feed.defs#threadViewPost",
            "post": {"uri": "at://did:plc:me/app.bsky.feed.post/0", "likeCount": 2, "replyCount": 7, "record": {}},
            "replies": [
                {"$type": "app.bsky.feed.defs#blockedPost", "uri": "at://x/1", "blocked": True, "author": {"did": "x"}},
                {"$type": "app.bsky.feed.defs#notFoundPost", "uri": "at://x/2", "notFound": True},
                reply("blocker", "I block you", author={"viewer": {"blockedBy": True}}),
                reply("blocked", "You block me", author={"viewer": {"blocking": "at://me/block/1"}}),
                reply("muted", "You muted me", author={"viewer": {"muted": True}}),
                reply("spammer", "Account hidden", author={"labels": [{"val": "!hide"}]}),
                reply("negated", "A label taken back", labels=[{"val": "!hide"}, {"val": "!hide", "neg": True}]),
                reply("linker", word, record={"facets": facets, "createdAt": "2026-12-02T00:00:00Z"}),
                "not an object",
            ],
        }
    }
    (page,) = (tmp_path / "site" / "blog").rglob("crafted/index.html")
    (tmp_path / "site" / "thread.json").write_text(json.dumps(answer))
    html = page.read_text()
    html, found = re.subn(r'data-replies="[^"]*"', 'data-replies="/thread.json"', html)
    assert found == 1
    page.write_text(html)
    server = served(tmp_path / "site")
    try:
        shown = section(dom(page_url(server, tmp_path / "site", "crafted"), tmp_path / "profile"))
    finally:
        server.shutdown()
        server.server_close()
    assert [author_of(item) for item in every_item(shown)] == ["negated.example", "linker.example"]
    linker = every_item(shown)[1].first("p", "syndicate-reply-text")
    assert linker.text() == word
    assert [(a.attrs["href"], a.text()) for a in linker.all("a")] == [("https://example.org/", "example")]


@pytest.mark.process
def test_the_example_site_shows_counts_a_nested_thread_and_a_folded_warning(tmp_path):
    """Done for issue 39: the example site, its posts announced to a running sandbox and
    example-site/conversation.sh run as its comment says, shows the conversation."""
    import os
    import shutil
    import signal
    import socket
    import sys
    import time

    from sites import ROOT, command

    from mkdocs_syndicate.ledger.format import dump

    site = tmp_path / "example-site"
    shutil.copytree(ROOT / "example-site", site, ignore=shutil.ignore_patterns("site"))
    (tmp_path / "ledger.yml").write_text(dump({}), encoding="utf-8")
    config = site / "mkdocs.yml"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sandbox = command(config, "sandbox", "--port", str(port))
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / ".syndicate-sandbox" / "server.json").exists():
            assert time.monotonic() < deadline and sandbox.poll() is None, "the sandbox did not come up"
            time.sleep(0.05)
        assert mkdocs(config).returncode == 0
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        seeded = subprocess.run(
            ["sh", str(site / "conversation.sh")],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PATH": path},
        )
        assert seeded.returncode == 0, seeded.stderr
        assert mkdocs(config, env={"SYNDICATE_MODE": "plan"}).returncode == 0
        server = served(site / "site")
        try:
            html = dom(page_url(server, site / "site", "hello-fediverse"), tmp_path / "profile")
        finally:
            server.shutdown()
            server.server_close()
    finally:
        sandbox.send_signal(signal.SIGTERM)
        sandbox.communicate(timeout=30)
    counts = [span.text() for span in Tree(html).root.all("span", "syndicate-counts")]
    assert counts == [" (2 replies, 4 boosts, 12 favourites)", " (2 replies, 2 reposts, 8 likes)"]
    shown = section(html)
    items = {author_of(item): item for item in top_items(shown)}
    assert list(items) == ["dee", "ana", "cy", "Fay"]  # the spam the author hid is not shown
    (bo,) = replies_below(items["ana"])
    assert [author_of(i) for i in replies_below(bo)] == ["ana"]
    warning = items["cy"].first("details", "syndicate-reply-cw")
    assert warning.first("summary").text() == "Content warning: Rant about CI" and "open" not in warning.attrs
