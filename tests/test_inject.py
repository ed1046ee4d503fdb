"""`mkdocs-syndicate inject`: the plugin's page side put into pages any generator built, by
splicing at the places a parser finds (content/pagehtml.py, sources/inject.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write_ledger
from test_crosslinks import Links

from mkdocs_syndicate.content.crosslinks import Copy, block_html
from mkdocs_syndicate.content.pagehtml import Additions, creator_head_tag, handle_problem
from mkdocs_syndicate.content.pagehtml import added as spliced
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.sources.inject import Settings, inject
from mkdocs_syndicate.sources.standard_site import WELL_KNOWN

AT = "2026-12-01T00:00:00Z"
SITE = "https://example.com/"
DOC = "at://did:plc:abcdefghijklmnopqrstuvwx/site.standard.document/3mabcdefghij2"
MASTO = {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1"}

PAGE = (
    '<!doctype html>\r\n<html><head><meta charset="utf-8"><title>A</title></head>\r\n'
    '<body><nav><a href="/">home</a></nav><article class="post"><h1>A</h1><p>Text &amp; more.</p>'
    "<script>if (a < b) { x = '</article>'; } // <!-- syndicate --></script>"
    "</article><footer>f</footer></body></html>\r\n"
)
BLOCK = block_html([Copy("masto", "Mastodon", "https://m.example/@me/1")])


def done(url: str | None, remote_id: str = "1") -> Record:
    return Record(State.DONE, 1, AT, remote_id=remote_id, remote_url=url)


@pytest.mark.unit
def test_the_block_goes_at_the_end_of_the_article_and_every_other_byte_stays():
    result = spliced(PAGE, Additions((creator_head_tag("@me@m.example"),), BLOCK))
    # The article is an h-entry now (the page had none), the block ends it, the head has the tag.
    assert result.html == PAGE.replace('<article class="post">', '<article class="post h-entry">').replace(
        "</script></article>", "</script>" + BLOCK + "</article>"
    ).replace("</head>", '<meta name="fediverse:creator" content="@me@m.example">\n</head>')
    assert result.changed == ["added fediverse:creator", "added the links", "made <article> an h-entry"]
    again = spliced(result.html, Additions((creator_head_tag("@me@m.example"),), BLOCK))
    assert again.html == result.html and again.changed == []


@pytest.mark.unit
def test_the_authors_marker_then_the_selector_then_article_then_main_say_where():
    marked = PAGE.replace("<footer>", "<footer><!-- syndicate -->")
    assert "<!-- syndicate -->" + BLOCK in spliced(marked, Additions(block=BLOCK, selector="article")).html
    assert "f" + BLOCK + "</footer>" in spliced(PAGE, Additions(block=BLOCK, selector="body > footer")).html
    mained = "<html><head></head><body><main><p>x</p></main></body></html>"
    assert spliced(mained, Additions(block=BLOCK)).html == mained.replace("<main>", '<main class="h-entry">').replace(
        "</main>", BLOCK + "</main>"
    )
    bare = "<html><head></head><body><p>x</p></body></html>"
    nowhere = spliced(bare, Additions(block=BLOCK))
    assert nowhere.html == bare and "no <article> or <main>" in (nowhere.problem or "")
    unmatched = spliced(PAGE, Additions(block=BLOCK, selector="#nope"))
    assert unmatched.html == PAGE and "#nope" in (unmatched.problem or "")


@pytest.mark.unit
def test_a_page_of_its_own_h_entry_and_creator_keeps_them_and_a_changed_block_is_replaced():
    own = PAGE.replace('<article class="post">', '<div class="h-entry"><article class="post">').replace(
        "<title>A</title>", '<title>A</title><meta name="fediverse:creator" content="@author@x.example">'
    )
    first = spliced(own, Additions((creator_head_tag("@me@m.example"),), BLOCK)).html
    assert '<article class="post">' in first and "@me@m.example" not in first
    changed = block_html([Copy("masto", "Mastodon", "https://m.example/@me/2")])
    second = spliced(first, Additions(block=changed))
    assert second.html == first.replace(BLOCK, changed) and second.changed == ["replaced the links"]
    assert spliced(first, Additions(block="")).html == own  # no copy left: the block taken out


@pytest.mark.unit
def test_hostile_values_are_text_in_the_page():
    url = 'https://m.example/@me/1?a="><script>alert(1)</script>'
    block = block_html([Copy("masto", 'Masto<b>don</b>"', url)])
    page = spliced(PAGE, Additions((creator_head_tag("@me@m.example"),), block)).html
    links = Links(page)
    assert links.found == [["syndication", url, 'Masto<b>don</b>"']]
    assert page.count("<script>") == PAGE.count("<script>")


@pytest.mark.unit
@pytest.mark.parametrize(
    ("value", "fine"),
    [
        ("@me@mastodon.social", True),
        ("@first.last@social.example.org", True),
        ("me@mastodon.social", False),
        ("@me", False),
        ('@me@x.example"><script>', False),
        ("@me@localhost", False),
        (42, False),
    ],
)
def test_fediverse_creator_is_an_account(value, fine):
    assert (handle_problem(value) is None) is fine


def site(tmp_path: Path, pages: dict[str, str]) -> Path:
    folder = tmp_path / "site"
    for name, text in pages.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(text.encode("utf-8"))
    return folder


def settings(tmp_path: Path, channels: dict, **extra) -> Settings:
    return Settings(tmp_path / "ledger.yml", channels, SITE, tmp_path / "site", **extra)


@pytest.mark.unit
def test_inject_changes_the_pages_with_copies_only_and_a_second_run_nothing(tmp_path):
    folder = site(tmp_path, {"a/index.html": PAGE, "b/index.html": PAGE, "c.html": PAGE, "index.html": PAGE})
    os.chmod(folder / "a" / "index.html", 0o640)
    write_ledger(
        tmp_path / "ledger.yml",
        {
            ("a/", "masto"): done("https://m.example/@me/1"),
            ("b/", "masto"): Record(State.FAILED, 1, AT, error="x"),
            ("gone/", "masto"): done("https://m.example/@me/3"),  # a post no longer built
            ("../../etc/", "masto"): done("https://m.example/@me/4"),  # a hand-edited ledger
        },
    )
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    done_ = inject(settings(tmp_path, {"masto": MASTO}, fediverse_creator="@me@m.example"))
    assert list(done_.changed) == ["a/index.html"] and done_.problems == []
    assert [line.split(":")[0] for line in done_.missing] == ["../../etc/", "gone/"]
    page = (folder / "a" / "index.html").read_bytes().decode()
    assert Links(page).found == [["syndication", "https://m.example/@me/1", "Mastodon"]]
    assert '<meta name="fediverse:creator" content="@me@m.example">' in page and "\r\n" in page
    assert oct(os.stat(folder / "a" / "index.html").st_mode & 0o777) == "0o640"
    after = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert {p for p in after if after[p] != before.get(p)} == {folder / "a" / "index.html"}
    second = inject(settings(tmp_path, {"masto": MASTO}, fediverse_creator="@me@m.example"))
    assert second.changed == {} and second.unchanged == 1
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == after


@pytest.mark.unit
def test_inject_writes_the_replies_script_and_standard_sites_files(tmp_path):
    folder = site(tmp_path, {"blog/a/index.html": PAGE, "blog/b.html": PAGE})
    channels = {"masto": MASTO, "std": {"type": "standard", "handle": "me.example", "app_password": "x"}}
    write_ledger(
        tmp_path / "ledger.yml",
        {
            ("blog/a/", "masto"): done("https://m.example/@me/1"),
            ("blog/b.html", "std"): done(None, DOC),
        },
    )
    done_ = inject(settings(tmp_path, channels, comments=True))
    assert sorted(done_.files) == [WELL_KNOWN, "assets/syndicate/comments.js"]
    a = (folder / "blog" / "a" / "index.html").read_text()
    assert 'data-service-type="mastodon"' in a and 'src="../../assets/syndicate/comments.js" defer' in a
    b = (folder / "blog" / "b.html").read_text()
    assert f'<link rel="site.standard.document" href="{DOC}">' in b and "syndicate-links" not in b
    assert (folder / WELL_KNOWN).read_text().startswith("at://did:plc:abcdefghijklmnopqrstuvwx/")
    assert inject(settings(tmp_path, channels, comments=True)).files == []


@pytest.mark.process
def test_the_plugin_writes_fediverse_creator_on_post_pages_the_posts_own_first(tmp_path):
    import datetime as dt

    from sites import mkdocs, post, write_site

    config = write_site(
        tmp_path,
        {"mode": "plan", "fediverse_creator": "@site@m.example", "channels": {"masto": MASTO}},
        {
            "a.md": post("Site wide", dt.date(2026, 11, 20)),
            "b.md": post("Guest", dt.date(2026, 11, 21), fediverse_creator="@guest@other.example"),
        },
        blog=True,
    )
    built = mkdocs(config)
    assert built.returncode == 0, built.stderr

    def creators(path: Path) -> list[str]:
        text = path.read_text()
        return [part.split('"', 1)[0] for part in text.split('<meta name="fediverse:creator" content="')[1:]]

    (a,) = (tmp_path / "site" / "blog").rglob("site-wide/index.html")
    (b,) = (tmp_path / "site" / "blog").rglob("guest/index.html")
    assert creators(a) == ["@site@m.example"] and creators(b) == ["@guest@other.example"]
    assert creators(tmp_path / "site" / "index.html") == []  # not a post
    (tmp_path / "docs" / "blog" / "posts" / "c.md").write_text(
        post("Bad", dt.date(2026, 11, 22), fediverse_creator="guest"), encoding="utf-8"
    )
    refused = mkdocs(config)
    assert refused.returncode != 0
    assert "blog/posts/c.md: front matter fediverse_creator: must be an account as @user@instance" in refused.stderr


# ---------------------------------------------------------------------- real generators, a real browser

HOSTILE_TAIL = "?x=\"'><script>document.title='owned'</script>"
# A strict policy: no inline script, scripts from the site only; the replies are read from the
# emulators (another origin), which connect-src allows.
CSP = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; connect-src *; style-src 'self' 'unsafe-inline'"


def _generated_blog(name: str, folder: Path) -> tuple[list[str], Path, str]:
    """A Hugo or Zensical blog built by the generator, without the recipes' comments partial
    (inject does its work): the build command, the built site, its feed."""
    import sys

    from test_recipes import generator, hugo_blog, zensical_blog

    if name == "hugo":
        hugo_blog(folder, full_content=True)  # no comments partial: the layout calls none
        return [generator("hugo"), "--quiet"], folder / "public", "public/index.xml"
    zensical_blog(folder)  # the theme as it is, no override
    return [sys.executable, "-m", "zensical", "build", "--clean"], folder / "site", "site/feed_rss_created.xml"


def _served_look(site_dir: Path, page: Path, folder: Path, scheme: str) -> str:
    """The page's DOM after its scripts ran in headless Chromium, in the light or dark colour
    scheme, served with a strict Content-Security-Policy; a screenshot beside it, to look at."""
    import functools
    import http.server
    import subprocess
    import threading

    from test_crosslinks import CHROMIUM_FLAGS, chromium

    class Strict(http.server.SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            self.send_header("Content-Security-Policy", CSP)
            super().end_headers()

        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Strict, directory=str(site_dir))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/{page.relative_to(site_dir).as_posix()}"
        flags = [
            *CHROMIUM_FLAGS,
            f"--blink-settings=preferredColorScheme={0 if scheme == 'dark' else 1}",
            "--virtual-time-budget=15000",
            "--window-size=1000,1400",
        ]

        def chrome(*extra: str) -> str:
            done = subprocess.run(
                [chromium(), *flags, f"--user-data-dir={folder / ('profile-' + scheme)}", *extra, url],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=folder,
            )
            return done.stdout

        shown = chrome("--dump-dom")
        chrome(f"--screenshot={folder / f'look-{scheme}.png'}")
        server.shutdown()
    return shown


@pytest.mark.process
@pytest.mark.parametrize("name", ["hugo", "zensical"])
def test_inject_on_a_real_generators_build_shows_links_and_replies_as_text_light_and_dark(tmp_path, sandbox, name):
    import subprocess
    import sys
    from dataclasses import replace

    import yaml
    from test_crosslinks import ShownReplies
    from test_recipes import BLOG, build, quiet_env, social, syndicate_yml

    from mkdocs_syndicate.ledger.format import dump, parse

    command, site_dir, feed = _generated_blog(name, tmp_path)
    build(command, tmp_path)
    syndicate_yml(tmp_path, social(sandbox), mode="send", fediverse_creator="@me@m.example", site_dir=site_dir.name)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mkdocs_syndicate.cli", *args],
            cwd=tmp_path,
            env=quiet_env(),
            capture_output=True,
            text=True,
            timeout=180,
        )

    announced = cli("run", "-f", "syndicate.yml", "--feed", feed)
    assert announced.returncode == 0, announced.stdout + announced.stderr
    ledger = tmp_path / "ledger.yml"
    posts = parse(ledger.read_text(), "ledger.yml")
    key = next(k for k in posts if "hello-fediverse" in k)
    masto = posts[key].channels["masto"]
    sandbox.add_reply(
        "mastodon",
        masto.remote_id,
        author="ana",
        text="<p>Welcome! &lt;b&gt;x&lt;/b&gt;</p><script>document.title='owned'</script>",
    )
    # A hand-edited ledger's copy URL with quotes and markup in it: a link, its text the service's.
    posts[key].channels["masto"] = replace(masto, remote_url=str(masto.remote_url) + HOSTILE_TAIL)
    ledger.write_text(dump(posts), encoding="utf-8")

    build(command, tmp_path)  # the next deploy's build, then inject
    pages = {p: p.read_bytes() for p in site_dir.rglob("*.html")}
    injected = cli("inject", "-f", "syndicate.yml", str(site_dir))
    assert injected.returncode == 0, injected.stderr
    page = next(p for p in pages if "hello-fediverse" in p.as_posix())
    changed = {p for p in pages if p.read_bytes() != pages[p]}
    assert {p.relative_to(site_dir).parent.name for p in changed} == {
        "hello-fediverse",
        "second" if name == "hugo" else "second-post",
    }
    assert f"{page.relative_to(site_dir).as_posix()}: " in injected.stderr and "2 page(s) changed" in injected.stderr
    after = {p: p.read_bytes() for p in site_dir.rglob("*") if p.is_file()}
    again = cli("inject", "-f", "syndicate.yml", str(site_dir))
    assert again.returncode == 0 and "0 page(s) changed, 2 already up to date" in again.stderr, again.stderr
    assert {p: p.read_bytes() for p in site_dir.rglob("*") if p.is_file()} == after  # not a byte
    source = page.read_text()
    assert '<meta name="fediverse:creator" content="@me@m.example">' in source and "h-entry" in source

    for scheme in ("light", "dark"):
        shown = _served_look(site_dir, page, tmp_path, scheme)
        links = Links(shown)
        assert links.blocks == 1, shown[-3000:]
        assert [text for _, _, text in links.found] == ["Mastodon", "Bluesky"]
        assert links.found[0][1] == str(masto.remote_url) + HOSTILE_TAIL
        replies = ShownReplies(shown)
        assert [item for item in replies.items if "ana" in item and "Welcome! <b>x</b>" in item], shown[-3000:]
        assert replies.scripts_inside == 0 and "<title>owned" not in shown and "owned</title>" not in shown
        assert (tmp_path / f"look-{scheme}.png").stat().st_size > 0
    assert yaml.safe_load((tmp_path / "syndicate.yml").read_text())["site_url"] == BLOG
