"""Each post's page links to where it was announced, from the committed ledger, with no request."""

from __future__ import annotations

import datetime as dt
import json
from html.parser import HTMLParser
from typing import Any

import pytest
import yaml
from sites import mkdocs, post, write_site

from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.content.crosslinks import Copy, block_html, copies
from mkdocs_syndicate.content.portable import portable_markdown
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import clients


class Links(HTMLParser):
    """The `u-syndication` links of a page: [(rel, href, text)]."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[list[str]] = []
        self.blocks = 0
        self._in: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "aside" and "syndicate-links" in (attributes.get("class") or ""):
            self.blocks += 1
        if tag == "a" and "u-syndication" in (attributes.get("class") or "").split():
            self._in = [attributes.get("rel") or "", attributes.get("href") or "", ""]
            self.found.append(self._in)

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self._in[2] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._in = None


def done(url: str | None) -> Record:
    return Record(State.DONE, 1, "2026-11-20T10:00:00Z", remote_id="1", remote_url=url)


@pytest.mark.unit
def test_only_done_copies_with_a_web_url_of_configured_channels_are_shown_in_their_order():
    records = {
        "devto": done("https://dev.to/me/a-1"),
        "masto": done("https://m.example/@me/1"),
        "ping": done(None),
        "bsky": Record(State.IN_FLIGHT, 1, "2026-11-20T10:00:00Z"),
        "weibo": Record(State.FAILED, 1, "2026-11-20T10:00:00Z", error="x"),
        "gone": done("https://old.example/1"),
        "odd": done("javascript:alert(1)"),
    }
    labels = {
        "masto": "Mastodon",
        "bsky": "Bluesky",
        "devto": "DEV",
        "ping": "IndexNow",
        "weibo": "Weibo",
        "odd": "Odd",
    }
    assert copies(records, labels) == [
        Copy("masto", "Mastodon", "https://m.example/@me/1"),
        Copy("devto", "DEV", "https://dev.to/me/a-1"),
    ]
    assert copies(None, labels) == []


@pytest.mark.unit
def test_the_block_is_microformats_markup_and_escapes_what_it_quotes():
    block = block_html([Copy("masto", "Mastodon <social>", 'https://m.example/@me/1?a="b"&c')], "Also on:")
    assert block == (
        '<aside class="syndicate-links"><p>Also on: <a class="u-syndication" rel="syndication" '
        'href="https://m.example/@me/1?a=&quot;b&quot;&amp;c">Mastodon &lt;social&gt;</a></p></aside>'
    )
    assert block_html([]) == ""
    # DEV's body is the page's content: the block is the page's, not the article's.
    assert portable_markdown("<p>Text.</p>\n" + block, "https://example.com/a/") == "Text."


@pytest.mark.unit
def test_each_channel_is_called_by_its_service_or_its_label():
    from mkdocs_syndicate.content.crosslinks import labels
    from mkdocs_syndicate.registry import TYPES

    raw: dict[str, Any] = {
        "masto": {"type": "mastodon", "instance": "https://m.example", "token": "t" * 12},
        "forem": {"type": "forem", "api_key": "k" * 24, "label": "Our Forem"},
        "bsky": {"type": "bluesky", "handle": "me.example", "app_password": "p" * 19},
        "junk": "not a mapping",
    }
    services = {name: kind.service for name, kind in TYPES.items()}
    assert labels(raw, services) == {"masto": "Mastodon", "forem": "Our Forem", "bsky": "Bluesky"}
    del raw["junk"]
    parse_channels(raw, clients())  # `label` is a setting every channel takes
    with pytest.raises(ConfigError, match=r"channels.masto.label: must be text"):
        parse_channels({"masto": {**raw["masto"], "label": ""}}, clients())


def blog(folder, **plugin):
    channels = {
        "masto": {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1"},
        "devto": {"type": "forem", "api_key": "x-key-12", "label": "DEV Community"},
        "ping": {"type": "indexnow"},
    }
    posts = {
        "a.md": post("Announced", dt.date(2026, 11, 20)),
        "b.md": post("Kept home", dt.date(2026, 11, 21), syndicate=False),
    }
    return write_site(folder, {"mode": "send", "sandbox": True, "channels": channels, **plugin}, posts, blog=True)


def build_again_planning(config) -> None:
    """The site built once more in plan mode (a pull request's build: it sends nothing), so its
    pages link the copies the first build made."""
    site = yaml.safe_load(config.read_text())
    site["plugins"][-1]["syndicate"]["mode"] = "plan"
    config.write_text(yaml.safe_dump(site, sort_keys=False))
    built = mkdocs(config)
    assert built.returncode == 0, built.stderr


def page_html(folder, title: str) -> str:
    """The post's own page (Material's blog also shows it in its index and archive)."""
    (page,) = (folder / "site" / "blog").rglob(f"{title.lower().replace(' ', '-')}/index.html")
    return page.read_text()


@pytest.mark.process
def test_a_post_page_links_to_its_copies_from_the_next_build_on(tmp_path):
    config = blog(tmp_path)
    first = mkdocs(config)
    assert first.returncode == 0, first.stderr
    # The first build made the pages before announcing: no links yet, and none invented.
    assert Links(page_html(tmp_path, "Announced")).found == []

    book = Ledger.read(tmp_path / "ledger.yml")
    key = next(iter(book.posts))
    expected = [
        ["syndication", book.record(key, channel).remote_url, label]
        for channel, label in (("masto", "Mastodon"), ("devto", "DEV Community"))
    ]
    requests = len(json.loads((tmp_path / ".syndicate-sandbox" / "state.json").read_text())["requests"])

    site = yaml.safe_load(config.read_text())
    site["plugins"][-1]["syndicate"]["mode"] = "plan"  # a pull request's build: it sends nothing
    config.write_text(yaml.safe_dump(site, sort_keys=False))
    second = mkdocs(config)
    assert second.returncode == 0, second.stderr
    links = Links(page_html(tmp_path, "Announced"))
    assert links.found == expected and links.blocks == 1  # IndexNow's ping has no page to link to
    assert Links(page_html(tmp_path, "Kept home")).found == []
    # Nothing was asked of any service to make them.
    assert len(json.loads((tmp_path / ".syndicate-sandbox" / "state.json").read_text())["requests"]) == requests


@pytest.mark.process
def test_links_meta_only_gives_templates_the_data_and_false_gives_nothing(tmp_path):
    config = blog(tmp_path, links="meta-only")
    assert mkdocs(config).returncode == 0
    hook = tmp_path / "hook.py"
    hook.write_text(
        "import json, pathlib\n"
        "def on_page_context(context, page, config, nav):\n"
        "    if page.meta.get('syndication'):\n"
        "        pathlib.Path(config.config_file_path).parent.joinpath('meta.json').write_text(\n"
        "            json.dumps(page.meta['syndication']))\n"
    )
    site = yaml.safe_load(config.read_text())
    site["hooks"] = ["hook.py"]
    config.write_text(yaml.safe_dump(site, sort_keys=False))
    assert mkdocs(config).returncode == 0
    assert Links(page_html(tmp_path, "Announced")).found == []
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert [(m["channel"], m["service"]) for m in meta] == [("masto", "Mastodon"), ("devto", "DEV Community")]
    assert all(m["url"].startswith("http://127.0.0.1:") for m in meta)

    site["plugins"][-1]["syndicate"]["links"] = False
    (tmp_path / "meta.json").unlink()
    config.write_text(yaml.safe_dump(site, sort_keys=False))
    assert mkdocs(config).returncode == 0
    assert Links(page_html(tmp_path, "Announced")).found == [] and not (tmp_path / "meta.json").exists()

    site["plugins"][-1]["syndicate"]["links"] = "footer"
    config.write_text(yaml.safe_dump(site, sort_keys=False))
    wrong = mkdocs(config)
    assert wrong.returncode != 0 and "links: must be block, meta-only or false, not 'footer'" in wrong.stderr


@pytest.mark.process
def test_links_rebuild_builds_once_more_after_announcing_and_announces_nothing_twice(tmp_path):
    config = blog(tmp_path, links_rebuild=True)
    first = mkdocs(config)
    assert first.returncode == 0, first.stderr
    assert "building the pages again, with the links to the new copies (links_rebuild)" in first.stderr
    # This deploy's own pages carry the links, from the one run's announcements.
    links = Links(page_html(tmp_path, "Announced"))
    assert [text for _, _, text in links.found] == ["Mastodon", "DEV Community"]
    state = json.loads((tmp_path / ".syndicate-sandbox" / "state.json").read_text())
    assert len(state["mastodon"]["statuses"]) == 1 and len(state["forem"]["articles"]) == 1

    # Nothing new went out: no second build.
    again = mkdocs(config)
    assert again.returncode == 0, again.stderr
    assert "building the pages again" not in again.stderr
    assert Links(page_html(tmp_path, "Announced")).found == links.found
    assert len(json.loads((tmp_path / ".syndicate-sandbox" / "state.json").read_text())["mastodon"]["statuses"]) == 1


# ------------------------------------------------------------------ replies (comments: true)


@pytest.mark.unit
def test_replies_are_read_where_each_service_serves_them_without_a_token():
    from mkdocs_syndicate.channels.bluesky import BlueskyChannel
    from mkdocs_syndicate.channels.forem import ForemChannel
    from mkdocs_syndicate.channels.mastodon import MastodonChannel

    status = Record(State.DONE, 1, "2026-11-20T10:00:00Z", remote_id="1130", remote_url="https://m.example/@me/1130")
    assert (
        MastodonChannel.replies_url({"instance": "https://m.example/"}, status)
        == "https://m.example/api/v1/statuses/1130/context"
    )
    post_uri = "at://did:plc:abc/app.bsky.feed.post/3lxyz"
    bsky = Record(State.DONE, 1, "2026-11-20T10:00:00Z", remote_id=post_uri, remote_url="https://bsky.app/x")
    assert BlueskyChannel.replies_url({}, bsky) == (
        "https://public.api.bsky.app/xrpc/app.bsky.feed.getPostThread?"
        "uri=at%3A%2F%2Fdid%3Aplc%3Aabc%2Fapp.bsky.feed.post%2F3lxyz&depth=10"
    )
    # DEV's comments: public, paged (the script adds page and per_page).
    assert ForemChannel.replies_url({"api": "https://dev.to/api/"}, status) == "https://dev.to/api/comments?a_id=1130"


@pytest.mark.unit
def test_the_block_names_where_replies_are_read_only_with_the_script():
    from mkdocs_syndicate.content.crosslinks import Replies

    copy = Copy("masto", "Mastodon", "https://m.example/@me/1", Replies("mastodon", "https://m.example/api/x"))
    plain = block_html([copy], "Also on:")
    assert "data-replies" not in plain and "<script" not in plain
    with_script = block_html([copy, Copy("devto", "DEV", "https://dev.to/a")], "Also on:", "../assets/s.js")
    assert 'data-service-type="mastodon" data-replies="https://m.example/api/x"' in with_script
    assert with_script.endswith('<script src="../assets/s.js" defer></script></aside>')
    assert "<script" not in block_html([Copy("devto", "DEV", "https://dev.to/a")], "Also on:", "../assets/s.js")


@pytest.mark.http
def test_the_emulators_serve_public_replies_to_any_origin(sandbox, tmp_path, clock):
    import httpx
    from conftest import make_post
    from test_channel_contracts import SPECS, run

    for channel in ("mastodon", "bluesky"):
        run(tmp_path / channel, SPECS[channel].raw(sandbox), [make_post(1)], clock)
    record = Ledger.read(tmp_path / "mastodon" / "ledger.yml").record("blog/post-1/", "ch")
    sandbox.add_reply("mastodon", record.remote_id, author="ana", text="<p>Nice <b>post</b></p>")
    answer = httpx.get(f"{sandbox.url}/mastodon/api/v1/statuses/{record.remote_id}/context")  # no token
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "*"
    (reply,) = answer.json()["descendants"]
    assert reply["in_reply_to_id"] == record.remote_id and reply["content"] == "<p>Nice <b>post</b></p>"
    assert httpx.get(f"{sandbox.url}/mastodon/api/v1/statuses/999/context").status_code == 404

    uri = Ledger.read(tmp_path / "bluesky" / "ledger.yml").record("blog/post-1/", "ch").remote_id
    sandbox.add_reply("bluesky", uri, author="bo", text="Agreed")
    thread = httpx.get(f"{sandbox.url}/bluesky-appview/xrpc/app.bsky.feed.getPostThread", params={"uri": uri})
    assert thread.status_code == 200 and thread.headers["access-control-allow-origin"] == "*"
    assert thread.json()["thread"]["post"]["uri"] == uri
    assert [r["post"]["record"]["text"] for r in thread.json()["thread"]["replies"]] == ["Agreed"]
    missing = httpx.get(f"{sandbox.url}/bluesky-appview/xrpc/app.bsky.feed.getPostThread", params={"uri": uri + "x"})
    assert missing.status_code == 400 and missing.json()["error"] == "NotFound"


CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str:
    import os
    import shutil

    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: .ci/run installs Debian's chromium for this test")
        pytest.skip("no chromium here (Debian: apt-get install chromium); .ci/run installs it")
    return found


class ShownReplies(HTMLParser):
    """The replies the script rendered (its <section>), and any element it should never have made."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.items: list[str] = []
        self.scripts_inside = 0
        self._depth = 0
        self._item: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._depth:
            self._depth += 1
            self.scripts_inside += tag in ("script", "img", "iframe", "b")
            if tag == "li":
                self._item = []
                self.items.append("")
        elif tag == "section" and "syndicate-replies" in (dict(attrs).get("class") or ""):
            self._depth = 1

    def handle_endtag(self, tag: str) -> None:
        if self._depth:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth and self.items:
            self.items[-1] += data


@pytest.mark.process
def test_a_real_browser_shows_the_replies_as_text(sandbox, tmp_path):
    import functools
    import http.server
    import subprocess
    import threading

    from test_channel_contracts import SPECS

    channels = {
        "masto": SPECS["mastodon"].raw(sandbox),
        "bsky": SPECS["bluesky"].raw(
            sandbox, appview=f"{sandbox.url}/bluesky-appview", web_url=f"{sandbox.url}/bluesky"
        ),
    }
    config = write_site(
        tmp_path,
        {"mode": "send", "comments": True, "channels": channels},
        {"a.md": post("Announced", dt.date(2026, 11, 20))},
        blog=True,
    )
    assert mkdocs(config).returncode == 0
    book = Ledger.read(tmp_path / "ledger.yml")
    key = next(iter(book.posts))
    hostile = (
        "<p>Thanks! &lt;script&gt;alert(1)&lt;/script&gt;</p><script>document.title='owned'</script>"
        "<img src=x onerror=\"document.title='owned'\">"
    )
    sandbox.add_reply("mastodon", book.record(key, "masto").remote_id, author="ana", text=hostile)
    sandbox.add_reply(
        "bluesky", book.record(key, "bsky").remote_id, author="bo", text='<script>alert("x")</script> agreed'
    )
    build_again_planning(config)

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "site"))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        (page,) = (tmp_path / "site" / "blog").rglob("announced/index.html")
        url = f"http://127.0.0.1:{server.server_address[1]}/{page.relative_to(tmp_path / 'site').as_posix()}"

        def load(profile: str) -> str:
            return subprocess.run(
                [
                    chromium(),
                    *CHROMIUM_FLAGS,
                    f"--user-data-dir={tmp_path / profile}",
                    "--virtual-time-budget=15000",
                    "--dump-dom",
                    url,
                ],
                capture_output=True,
                text=True,
                timeout=120,
            ).stdout

        shown = load("profile")
        # The services down: no replies, and the plain links stay.
        for channel, path in (("mastodon", "GET /api/v1/statuses"), ("bluesky", "getPostThread")):
            sandbox.add_fault({"channel": channel, "match": path, "action": "status", "status": 503, "times": 5})
        degraded = load("profile-2")
        server.shutdown()
    assert ShownReplies(degraded).items == [] and len(Links(degraded).found) == 2
    rendered = ShownReplies(shown)
    assert len(rendered.items) == 2, shown[-3000:]
    ana = next(item for item in rendered.items if "ana" in item)
    assert "Thanks! <script>alert(1)</script>" in ana and "Mastodon" in ana
    bo = next(item for item in rendered.items if "bo" in item)
    assert '<script>alert("x")</script> agreed' in bo and "Bluesky" in bo
    assert rendered.scripts_inside == 0 and "<title>owned" not in shown


@pytest.mark.unit
def test_the_copies_cache_follows_the_ledgers_bytes(tmp_path):
    from conftest import write_ledger

    from mkdocs_syndicate.sources.ledger_copies import cache_path, done_copies

    ledger = tmp_path / "ledger.yml"
    assert done_copies(ledger) == {}  # no ledger yet: no links
    write_ledger(ledger, {("a/", "masto"): done("https://m.example/@me/1"), ("a/", "ping"): done(None)})
    first = done_copies(ledger)
    assert {k: {c: r.remote_url for c, r in v.items()} for k, v in first.items()} == {
        "a/": {"masto": "https://m.example/@me/1"}
    }
    assert cache_path(ledger).exists()
    write_ledger(ledger, {("a/", "masto"): done("https://m.example/@me/2")})  # changed: read again
    assert done_copies(ledger)["a/"]["masto"].remote_url == "https://m.example/@me/2"
    cache_path(ledger).write_text('{"format": 1, "ledger": "torn')  # a torn cache: read the ledger
    assert done_copies(ledger)["a/"]["masto"].remote_url == "https://m.example/@me/2"


class MoreLinks(HTMLParser):
    """The script's "more on <service>" links: [(href, text)]."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[list[str]] = []
        self._in = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self._in = tag == "a" and "syndicate-replies-more" in (attributes.get("class") or "")
        if self._in:
            self.found.append([attributes.get("href") or "", ""])

    def handle_data(self, data: str) -> None:
        if self._in:
            self.found[-1][1] += data

    def handle_endtag(self, tag: str) -> None:
        self._in = False


@pytest.mark.process
def test_a_real_browser_shows_at_most_200_replies_of_at_most_2000_characters(sandbox, tmp_path):
    """Issue 36: 20,000 replies made a 45 MB page after 13 s. The rest is a link away."""
    import functools
    import http.server
    import subprocess
    import threading

    from test_channel_contracts import SPECS

    config = write_site(
        tmp_path,
        {"mode": "send", "comments": True, "channels": {"masto": SPECS["mastodon"].raw(sandbox)}},
        {"a.md": post("Announced", dt.date(2026, 11, 20))},
        blog=True,
    )
    assert mkdocs(config).returncode == 0
    book = Ledger.read(tmp_path / "ledger.yml")
    copy = book.record(next(iter(book.posts)), "masto")
    # Mastodon gives a reader without a token 60 replies at most: a server without that cap.
    sandbox.set_quirks("mastodon", uncapped_context=True)
    sandbox.add_reply("mastodon", copy.remote_id, author="long", text="<p>" + "word " * 1000 + "</p>")
    for n in range(260):
        sandbox.add_reply("mastodon", copy.remote_id, author=f"r{n}", text=f"<p>reply {n}</p>")
    build_again_planning(config)

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "site"))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        (page,) = (tmp_path / "site" / "blog").rglob("announced/index.html")
        url = f"http://127.0.0.1:{server.server_address[1]}/{page.relative_to(tmp_path / 'site').as_posix()}"
        shown = subprocess.run(
            [
                chromium(),
                *CHROMIUM_FLAGS,
                f"--user-data-dir={tmp_path / 'profile'}",
                "--virtual-time-budget=15000",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        server.shutdown()
    rendered = ShownReplies(shown)
    assert len(rendered.items) == 200, (len(rendered.items), shown[-2000:])
    long = next(item for item in rendered.items if item.startswith("long"))
    assert 2000 < len(long) < 2100 and "word " * 300 in long and long.rstrip().endswith("more on Mastodon")
    assert "reply 198" in "".join(rendered.items) and "reply 199" not in "".join(rendered.items)
    more = MoreLinks(shown).found
    assert more[-1] == [copy.remote_url, "more on Mastodon"] and len(more) == 2, more
