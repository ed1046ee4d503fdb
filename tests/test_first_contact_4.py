"""Issue 36, a first contact's findings (fourth set): what an outside probe met on a first try."""

from __future__ import annotations

from pathlib import Path

import pytest

from mkdocs_syndicate.ledger.schema import State

# ------------------------------------------------------------------ the sandbox's wait_until_live


@pytest.mark.unit
def test_the_sandbox_finds_a_built_post_whose_url_is_percent_encoded(tmp_path):
    from mkdocs_syndicate.net.liveness import in_built_site

    for folder in ("café", "two words"):  # MkDocs names the files as the sources, page.url encodes them
        (tmp_path / "posts" / folder).mkdir(parents=True)
        (tmp_path / "posts" / folder / "index.html").write_text("<html></html>", encoding="utf-8")
    (tmp_path / "posts" / "flat é.html").write_text("<html></html>", encoding="utf-8")
    urls = [
        "https://example.com/posts/caf%C3%A9/",
        "https://example.com/posts/two%20words/",
        "https://example.com/posts/flat%20%C3%A9.html",
    ]
    assert in_built_site(urls, "https://example.com/", str(tmp_path)) == dict.fromkeys(urls)


@pytest.mark.unit
def test_the_sandbox_never_looks_outside_site_dir_for_a_post(tmp_path):
    from mkdocs_syndicate.net.liveness import _built_file

    (tmp_path / "site").mkdir()
    (tmp_path / "secret.html").write_text("x", encoding="utf-8")
    assert _built_file(str(tmp_path / "site"), "%2E%2E/secret.html") is None
    assert _built_file(str(tmp_path / "site"), "posts/a/") == (tmp_path / "site" / "posts/a/index.html").resolve()


# ------------------------------------------------------------------ settings said as the user writes them


def loaded(folder, text: str):
    """mkdocs.yml loaded as MkDocs loads it (no build): the config and the plugin's settings."""
    from mkdocs.config import load_config

    (folder / "docs").mkdir(exist_ok=True)
    path = folder / "mkdocs.yml"
    path.write_text(text, encoding="utf-8")
    config = load_config(str(path))
    return config, config.plugins["syndicate"].config


@pytest.mark.unit
def test_a_missing_site_url_is_named_as_the_top_level_setting_it_is(tmp_path):
    from mkdocs_syndicate.config.site import options_from
    from mkdocs_syndicate.errors import ConfigError

    config, settings = loaded(tmp_path, "site_name: T\nplugins:\n  - syndicate:\n      channels: {}\n")
    with pytest.raises(ConfigError) as caught:
        options_from(config, settings, sending=True)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'mkdocs.yml'}: site_url: required"), message
    assert "plugins.syndicate" not in message and "top level" in message

    # Said with the plugin's own wrong settings, each where it is.
    channel = "{masto: {type: mastodon, instance: 'https://m.example', tokne: x}}"
    config, settings = loaded(tmp_path, f"site_name: T\nplugins:\n  - syndicate:\n      channels: {channel}\n")
    with pytest.raises(ConfigError) as caught:
        options_from(config, settings, sending=True)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(f"{tmp_path / 'mkdocs.yml'}: site_url: required"), lines
    assert any(": plugins.syndicate.channels.masto.tokne: unknown setting" in line for line in lines), lines


@pytest.mark.unit
@pytest.mark.parametrize("written", ["devto", "dev", "dev.to", "DEV.to"])
def test_a_channel_typed_after_dev_says_dev_is_type_forem(written):
    from mkdocs_syndicate.config.channels import parse_channels
    from mkdocs_syndicate.errors import ConfigError
    from mkdocs_syndicate.registry import clients

    with pytest.raises(ConfigError) as caught:
        parse_channels({"dev": {"type": written, "api_key": "x-key-12"}}, clients())
    assert caught.value.setting == "channels.dev.type"
    assert f"unknown channel type {written!r}; DEV is type forem (known: " in str(caught.value)


@pytest.mark.unit
def test_a_misspelt_channel_setting_or_type_gets_the_nearest_name():
    from mkdocs_syndicate.config.channels import parse_channels
    from mkdocs_syndicate.errors import ConfigError
    from mkdocs_syndicate.registry import clients

    with pytest.raises(ConfigError) as caught:
        parse_channels(
            {"masto": {"type": "mastodon", "instance": "https://m.example", "tokne": "x-token-1"}}, clients()
        )
    assert caught.value.setting == "channels.masto.tokne"
    assert "unknown setting for type mastodon; did you mean 'token'? (allowed: " in str(caught.value)

    with pytest.raises(ConfigError) as caught:
        parse_channels({"masto": {"type": "mastadon"}}, clients())
    assert "unknown channel type 'mastadon'; did you mean 'mastodon'?" in str(caught.value)


# ------------------------------------------------------------------ Bluesky's cut


def bluesky_text(description: str) -> tuple[str, int]:
    from conftest import SITE, channel_settings, make_post

    from mkdocs_syndicate.channels.bluesky import BlueskyChannel

    (settings,) = channel_settings(
        {"b": {"type": "bluesky", "handle": "me.bsky.social", "app_password": "abcd-efgh-ijkl-mnop"}}
    )
    message = BlueskyChannel(settings, SITE).prepare(make_post(3, description=description)).message
    return message.text, message.length


@pytest.mark.unit
def test_bluesky_shortens_a_description_at_a_word_with_an_ellipsis():
    from mkdocs_syndicate.content.textcut import grapheme_length

    description = "The ledger is a YAML file committed next to mkdocs.yml, so every build knows what went out. " * 5
    text, length = bluesky_text(description)
    said = text.split("\n\n")[1]
    assert said.endswith("…") and length <= 300 and grapheme_length(text) == length
    cut = said[:-1]
    assert description.startswith(cut) and description[len(cut)] == " ", said[-30:]  # was "…so every build kn…"

    # Graphemes as Bluesky counts them: a family emoji is one (seven code points).
    family = "👩\u200d👩\u200d👧\u200d👦"
    text, length = bluesky_text(f"{family}{family} word " * 80)
    said = text.split("\n\n")[1]
    assert length <= 300 and grapheme_length(text) == length and said.endswith("word…")
    assert len(text) > 300  # in code points it is longer: the limit is not theirs


@pytest.mark.unit
def test_a_description_without_spaces_is_cut_where_it_must_not_at_its_last_space():
    """A guard on the word rule (this passed before it too): Japanese has no spaces to cut at,
    and one space early in a text must not cost it the rest."""
    for description in ("これは日本語の説明文です" * 40, "Vorwort: " + "Donaudampfschifffahrt" * 20):
        text, length = bluesky_text(description)
        assert 295 <= length <= 300 and text.split("\n\n")[1].endswith("…"), text


# ------------------------------------------------------------------ DEV's body whatever wraps the content

# What mkdocs-glightbox (0.5) hands on as page.content: selectolax's `tree.html`, a whole document.
GLIGHTBOX_CONTENT = (
    '<html><head></head><body><h1 id="lightbox-post">Lightbox post</h1>\n'
    '<p>Body with an image <a class="glightbox" data-type="image" href="pic.png">'
    '<img alt="a" src="pic.png"></a>.</p></body></html>'
)


@pytest.mark.unit
def test_the_title_heading_goes_when_a_plugin_wraps_the_content_in_a_document():
    from selectolax.lexbor import LexborHTMLParser

    from mkdocs_syndicate.content.portable import portable_markdown

    # The shape is glightbox's own: its parser wraps any fragment so.
    assert LexborHTMLParser("<h1>T</h1>").html == "<html><head></head><body><h1>T</h1></body></html>"
    markdown = portable_markdown(GLIGHTBOX_CONTENT, "https://blog.mysite.org/posts/one/", "Lightbox post")
    assert markdown == (
        "Body with an image [![a](https://blog.mysite.org/posts/one/pic.png)](https://blog.mysite.org/posts/one/pic.png)."
    )
    wrapped = '<!DOCTYPE html>\n<div class="content">\n<!-- a theme -->\n<h1>Lightbox post</h1><p>Body.</p></div>'
    assert portable_markdown(wrapped, "https://blog.mysite.org/posts/one/", "Lightbox post") == "Body."
    # Only a heading that comes first: text before it keeps it.
    kept = "<div>Before <h1>Lightbox post</h1></div>"
    assert "# Lightbox post" in portable_markdown(kept, "https://blog.mysite.org/posts/one/", "Lightbox post")


@pytest.mark.process
def test_dev_gets_the_title_once_from_a_site_that_uses_glightbox(tmp_path):
    import base64
    import json

    from sites import mkdocs, post, write_site

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    channels = {"devto": {"type": "forem", "api_key": "x-key-12", "min_interval": 0}}
    text = post("Lightbox post").replace("Body of Lightbox post.", "Body with an image ![a](pic.png).")
    config = write_site(tmp_path, {"mode": "send", "sandbox": True, "channels": channels}, {"one.md": text})
    (tmp_path / "docs" / "posts" / "pic.png").write_bytes(base64.b64decode(png))
    site = config.read_text(encoding="utf-8").replace("plugins:\n", "plugins:\n- glightbox\n")
    config.write_text(site, encoding="utf-8")

    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    assert 'class="glightbox"' in (tmp_path / "site" / "posts" / "one" / "index.html").read_text(encoding="utf-8")
    (article,) = json.loads((tmp_path / ".syndicate-sandbox" / "state.json").read_text())["forem"]["articles"]
    assert article["title"] == "Lightbox post"
    assert article["body_markdown"].startswith("Body with an image [![a]("), article["body_markdown"]
    assert "Lightbox post" not in article["body_markdown"]


# ------------------------------------------------------------------ two sites' sandboxes


@pytest.mark.http
def test_a_run_s_sandbox_links_to_the_port_it_bound_when_another_sandbox_holds_the_default(
    tmp_path, monkeypatch, clock
):
    """Another site's `mkdocs-syndicate sandbox` on the default address: links there reached it
    (a 401, not this site's post). Stood in for by a sandbox on a port of its own, made the default."""
    from urllib.parse import urlsplit

    import httpx
    from conftest import SITE, ListReporter, make_post

    from mkdocs_syndicate.config.run import parse_options
    from mkdocs_syndicate.engine.syndication import send
    from mkdocs_syndicate.ledger.store import Ledger
    from mkdocs_syndicate.registry import emulators
    from mkdocs_syndicate.sandbox import SandboxServer

    with SandboxServer(tmp_path / "other-site", emulators()) as other:
        monkeypatch.setattr("mkdocs_syndicate.sandbox.server.DEFAULT_PUBLIC_BASE", other.url)
        options = parse_options(
            {"masto": {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1"}},
            ledger_path=tmp_path / "ledger.yml",
            site=SITE,
            sandbox=True,
            sending=True,
        )
        report = send(options, [make_post(1)], ListReporter(), clock=clock)
        assert [r.state for r in report.results] == ["done"]
        link = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "masto").remote_url
        port = urlsplit(link).port
        assert port != urlsplit(other.url).port, link
        assert httpx.get(link.replace(f":{port}/", f":{urlsplit(other.url).port}/")).status_code != 200
        (note,) = report.warnings
        assert f"{other.url} is taken" in note and f"`mkdocs-syndicate sandbox --port {port}`" in note
        # A run that makes no link says nothing of the port its links would have used.
        again = send(options, [make_post(1)], ListReporter(), clock=clock)
        assert again.results == [] and again.warnings == [], again.warnings

        # This site's own links are served by this site's sandbox on that port, after the run.
        with SandboxServer(
            tmp_path / ".syndicate-sandbox", emulators(), port=port, public_base=f"http://127.0.0.1:{port}"
        ):
            assert httpx.get(link).status_code == 200


# ------------------------------------------------------------------ links_rebuild builds what the build built


def rebuilding_site(folder):
    from sites import post, write_site

    channels = {"masto": {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1"}}
    plugin = {"mode": "send", "sandbox": True, "links_rebuild": True, "channels": channels}
    return write_site(folder, plugin, {"one.md": post("One")})


def syndication_links(page) -> int:
    return page.read_text(encoding="utf-8").count("u-syndication")


@pytest.mark.process
def test_links_rebuild_builds_with_the_command_line_s_settings(tmp_path):
    """`mkdocs build --no-directory-urls` announced posts/one.html, and the rebuild made
    posts/one/index.html instead (the announced link a 404); `-t readthedocs` was lost too."""
    from sites import mkdocs

    config = rebuilding_site(tmp_path / "flat")
    result = mkdocs(config, "build", "--no-directory-urls")
    assert result.returncode == 0, result.stderr
    assert "posts/one.html done" in result.stderr and "building the pages again" in result.stderr
    site = tmp_path / "flat" / "site"
    assert not (site / "posts" / "one").exists()
    assert syndication_links(site / "posts" / "one.html") == 1

    config = rebuilding_site(tmp_path / "themed")
    result = mkdocs(config, "build", "-t", "readthedocs")
    assert result.returncode == 0, result.stderr
    page = tmp_path / "themed" / "site" / "posts" / "one" / "index.html"
    assert syndication_links(page) == 1 and "rst-content" in page.read_text(encoding="utf-8")


@pytest.mark.process
def test_links_rebuild_imports_nothing_from_the_working_folder(tmp_path):
    import os
    import subprocess
    import sys

    config = rebuilding_site(tmp_path)
    (tmp_path / "mkdocs.py").write_text('raise SystemExit("the working folder\'s mkdocs.py ran")\n', encoding="utf-8")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("CI", "GITHUB_", "SYNDICATE_"))}}
    result = subprocess.run(
        [sys.executable, "-P", "-m", "mkdocs", "build", "-f", str(config)],
        cwd=tmp_path,
        env={**env, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "working folder's mkdocs.py" not in result.stderr
    assert syndication_links(tmp_path / "site" / "posts" / "one" / "index.html") == 1


@pytest.mark.process
def test_links_rebuild_refuses_a_config_from_standard_input_before_sending(tmp_path):
    import os
    import subprocess
    import sys

    config = rebuilding_site(tmp_path)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("CI", "GITHUB_", "SYNDICATE_"))}}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", "-"],
        input=config.read_text(encoding="utf-8"),
        cwd=tmp_path,
        env={**env, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "links_rebuild: the pages cannot be built again from a config read from standard input (-f -)" in (
        result.stderr
    )
    assert not (tmp_path / ".syndicate-sandbox").exists() and not (tmp_path / "ledger.yml").exists()


@pytest.mark.unit
def test_a_page_reads_replies_from_the_sandbox_that_made_the_copy():
    from mkdocs_syndicate.ledger.schema import Record
    from mkdocs_syndicate.sources.ledger_copies import replies_locator

    channels = {"masto": {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1"}}
    replies_of = replies_locator(channels, sandbox=True)
    moved = Record(
        State.DONE, 1, "2026-11-20T10:00:00Z", remote_id="7", remote_url="http://127.0.0.1:45273/mastodon/@sandbox/7"
    )
    assert replies_of("masto", moved).url == "http://127.0.0.1:45273/mastodon/api/v1/statuses/7/context"
    usual = Record(
        State.DONE, 1, "2026-11-20T10:00:00Z", remote_id="7", remote_url="http://127.0.0.1:8787/mastodon/@sandbox/7"
    )
    assert replies_of("masto", usual).url == "http://127.0.0.1:8787/mastodon/api/v1/statuses/7/context"


# ------------------------------------------------------------------ a placeholder site_url


def site_options(url: str, *, sandbox: bool = False, instance: str = "https://mastodon.social"):
    from mkdocs_syndicate.config.run import Site, parse_options

    channels = {"masto": {"type": "mastodon", "instance": instance, "token": "x-token-1"}}
    return parse_options(
        channels, ledger_path=Path("/nowhere/ledger.yml"), site=Site(url, "S"), sandbox=sandbox, sending=False
    )


@pytest.mark.unit
@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "https://EXAMPLE.org./blog/",
        "https://www.example.net/",
        "https://blog.example/",
        "https://my.site.test/",
        "https://x.invalid/",
        "http://localhost:8000/",
        "http://docs.localhost/",
        "http://127.0.0.1:8000/",
    ],
)
def test_a_reserved_site_url_is_warned_of_when_posts_go_out(url):
    from mkdocs_syndicate.output.siteurl import placeholder

    warning, text = placeholder(site_options(url))
    assert warning and text.startswith(f"site_url {url}: ") and "set site_url in mkdocs.yml" in text


@pytest.mark.unit
def test_a_real_site_url_or_the_sandbox_s_own_address_is_not_warned_of():
    from mkdocs_syndicate.output.siteurl import placeholder

    for url in ("https://blog.mysite.org/", "https://user.github.io/project/", "https://example.company.com/"):
        assert placeholder(site_options(url)) is None
    assert placeholder(site_options("http://localhost:8000/", sandbox=True)) is None
    # Nothing goes public in a rehearsal: a note, not a warning (it does not fail --strict).
    assert placeholder(site_options("https://example.com/", sandbox=True))[0] is False
    assert placeholder(site_options("https://example.com/", instance="http://127.0.0.1:9"))[0] is False


@pytest.mark.process
def test_a_plan_build_says_where_links_lead_and_warns_of_the_readme_s_placeholder(tmp_path):
    from sites import mkdocs, post, write_site

    channels = {"masto": {"type": "mastodon", "instance": "https://mastodon.social", "token": "x-token-1"}}
    config = write_site(tmp_path / "placeholder", {"mode": "plan", "channels": channels}, {"one.md": post("One")})
    result = mkdocs(config, "build", "--strict")
    assert result.returncode != 0
    assert "syndicate: the posts' links are under site_url https://example.com/" in result.stderr
    (warning,) = [line for line in result.stderr.splitlines() if line.startswith("WARNING") and "site_url" in line]
    assert "example.com is reserved for examples (RFC 2606)" in warning

    real = write_site(
        tmp_path / "real",
        {"mode": "plan", "channels": channels},
        {"one.md": post("One")},
        site_url="https://blog.mysite.org/",
    )
    result = mkdocs(real, "build", "--strict")
    assert result.returncode == 0, result.stderr
    assert "the posts' links are under site_url https://blog.mysite.org/" in result.stderr


@pytest.mark.http
def test_the_sandbox_says_it_reads_the_indexnow_key_from_the_built_site_not_the_web(tmp_path, clock):
    """The example site's first run said only "the engines fetch https://example.com/<key>.txt":
    the sandbox's engine reads the built site, where a missing file is fixed by building."""
    from conftest import ListReporter, make_post

    from mkdocs_syndicate.config.run import Site, parse_options
    from mkdocs_syndicate.engine.syndication import send

    site_dir = tmp_path / "site"
    site_dir.mkdir()
    options = parse_options(
        {"ping": {"type": "indexnow", "key": "a-real-key-0001"}},
        ledger_path=tmp_path / "ledger.yml",
        site=Site("https://blog.mysite.org/", "S", str(site_dir)),
        sandbox=True,
        sending=True,
    )
    post = make_post(1, url="https://blog.mysite.org/blog/post-1/")
    (result,) = send(options, [post], ListReporter(), clock=clock).results
    expected = f"the sandbox's engine reads it from the built site: {site_dir / 'sandbox-indexnow-key-0001.txt'}"
    assert result.state == "waiting" and expected in result.detail, result.detail
    assert "(the engines fetch https://blog.mysite.org/sandbox-indexnow-key-0001.txt; " in result.detail
    # The engine found no key file there: the fix is to build the site, not to deploy it.
    (refused,) = send(options, [post], ListReporter(), clock=clock).results
    assert refused.state == "failed" and "403 key not accepted: " in refused.detail
    served = "(served as https://blog.mysite.org/sandbox-indexnow-key-0001.txt)"
    assert f"{site_dir / 'sandbox-indexnow-key-0001.txt'} {served} is missing" in refused.detail
    assert "(build the site, then run again)" in refused.detail


@pytest.mark.http
def test_a_sites_sandbox_links_keep_one_port_from_run_to_run_when_8787_is_taken(tmp_path, clock, monkeypatch):
    """Each run picked a new port when 8787 was taken, so the links the ledger recorded stopped
    working (issue 53): the port chosen the first time is kept in the site's sandbox state."""
    from urllib.parse import urlsplit

    from conftest import SITE, ListReporter, make_post

    from mkdocs_syndicate.config.run import parse_options
    from mkdocs_syndicate.engine.syndication import send
    from mkdocs_syndicate.ledger.store import Ledger
    from mkdocs_syndicate.registry import emulators
    from mkdocs_syndicate.sandbox import SandboxServer

    with SandboxServer(tmp_path / "other-site", emulators()) as other:
        monkeypatch.setattr("mkdocs_syndicate.sandbox.server.DEFAULT_PUBLIC_BASE", other.url)
        options = parse_options(
            {"masto": {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1"}},
            ledger_path=tmp_path / "ledger.yml",
            site=SITE,
            sandbox=True,
            sending=True,
        )
        ports = []
        for n in (1, 2):
            send(options, [make_post(n)], ListReporter(), clock=clock)
            link = Ledger.read(tmp_path / "ledger.yml").record(f"blog/post-{n}/", "masto").remote_url
            ports.append(urlsplit(link).port)
        assert ports[0] == ports[1] and ports[0] != urlsplit(other.url).port, ports
        assert (tmp_path / ".syndicate-sandbox" / "links-port").read_text().strip() == str(ports[0])
