"""Issue 36, text that reaches people: a feed's control characters and bidi overrides never reach
a public post, a terminal or a page; a channel id cannot forge a log line; front-matter text has
its URL set apart; syndicate.yml's site_url and keys are checked."""

from __future__ import annotations

import json
import logging
import re
import textwrap

import pytest
from click.testing import CliRunner
from conftest import make_post, write_ledger
from sites import write_site

from mkdocs_syndicate import safety
from mkdocs_syndicate.channels.forem import ForemChannel
from mkdocs_syndicate.cli import main
from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.config.run import Site
from mkdocs_syndicate.config.standalone import load_standalone
from mkdocs_syndicate.content.messages import render_message
from mkdocs_syndicate.content.posts import ChannelOverride
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import clients
from mkdocs_syndicate.sandbox.dashboard import page

pytestmark = pytest.mark.unit

ESC, BEL = "\x1b", "\x07"
OSC8_LINK = f"{ESC}]8;;https://evil.example/{ESC}\\click here{ESC}]8;;{ESC}\\"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
HOSTILE = f"Release {ESC}[31mnotes{ESC}[0m{BEL} {OSC8_LINK} \u202egnp.exe\u202c \u2067x\u2069 \x9b2J\x85end"
CONTROLS = ["\x1b", "\x07", "\x9b", "\x85", *BIDI]


def hostile_in(text: str) -> list[str]:
    """What acts on a terminal or reorders the text: none may be left as it is."""
    return [repr(ch) for ch in CONTROLS if ch in text]


def test_public_text_keeps_the_words_and_drops_the_escapes():
    assert safety.public_text(HOSTILE) == "Release notes click here gnp.exe x end"
    assert safety.public_text("Two\r\nlines\tand a tab; עברית\u200f and 👩\u200d💻") == (
        "Two\nlines\tand a tab; עברית\u200f and 👩\u200d💻"
    )


def test_a_feeds_control_and_bidi_characters_never_reach_a_public_post():
    post = make_post(1, title=HOSTILE, description=HOSTILE, tags=(f"tag{ESC}[1m", "rtl\u202eok"))
    message = render_message(
        post,
        "masto",
        "{{ title }} — {{ description }} {{ tags | join(' ') }} {{ hashtags }} {{ url }} {{ site_name }}",
        None,
        f"Site{BEL}\u202e",
        where="channels.masto.template",
    )
    assert hostile_in(message.text) == [] and "Release notes" in message.text, message.text
    assert "evil.example" not in message.text  # an OSC 8 link's target goes with its escapes
    assert "tag rtlok" in message.text
    article = ForemChannel(parse_channels({"dev": {"type": "forem"}}, clients())[0], Site("https://example.com/", "S"))
    fields = article.article(post)["article"]
    assert hostile_in(fields["title"] + fields["description"] + " ".join(fields["tags"])) == [], fields


def test_front_matter_text_has_its_url_set_apart_like_a_templates():
    post = make_post(1)
    post.overrides["masto"] = ChannelOverride(text=f"新しい記事 {post.url}。{ESC}[2J")
    message = render_message(post, "masto", "{{ url }}", None, "S", where="channels.masto.template")
    assert message.text == f"新しい記事 {post.url} 。"


@pytest.mark.parametrize("bad", ["mas\nto", "masto\r", "ma\x1b[2Jsto", "mas\u202eto", "ma\u200bsto", "m\x85"])
def test_a_channel_id_with_control_characters_is_refused_naming_it(bad):
    with pytest.raises(ConfigError, match=r"channels\.\S+: a channel id must be one line of visible characters") as e:
        parse_channels({bad: {"type": "indexnow"}}, clients())
    assert "\n" not in str(e.value) and hostile_in(str(e.value)) == []


def test_the_dashboard_shows_channel_ids_as_text():
    html = page({"mastodon": []}, {"mastodon": ['<img src=x onerror="alert(1)">', "a&b"]}).decode()
    assert "<img" not in html and "&lt;img src=x" in html and "a&amp;b" in html


# ------------------------------------------------------------------ the command's output


@pytest.fixture
def site(tmp_path):
    channels = {"masto": {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1234"}}
    config = write_site(tmp_path, {"channels": channels}, {})
    key = f"posts/{ESC}[31mred\u202e\u200b/"
    write_ledger(
        tmp_path / "ledger.yml",
        {
            ("posts/a/", "masto"): Record(State.IN_FLIGHT, 1, "2026-12-01T10:00:00Z", idempotency_key="k" * 64),
            (key, "masto"): Record(State.FAILED, 1, "2026-12-01T10:00:00Z", error=f"no{BEL}\u2066pe\x85"),
        },
    )
    return config


def cli(config, *args):
    return CliRunner().invoke(main, [args[0], "-f", str(config), *args[1:]], env={"USER": "tester"})


def test_resolve_shows_note_and_by_with_their_escapes_inert(site):
    result = cli(
        site, "resolve", "posts/a", "masto", "--retry", "--note", f"x{ESC}]0;pwned{BEL}\ny", "--by", "\u202eme"
    )
    assert result.exit_code == 0, result.output
    assert hostile_in(result.output) == [] and result.output.count("\n") == 1, repr(result.output)
    assert "\\x1b]0;pwned\\x07\\x0ay" in result.output and "\\u202eme" in result.output


def test_rename_channel_refuses_a_new_id_that_could_forge_a_line(site):
    result = cli(site, "rename-channel", "masto", f"new\n{ESC}[2Jfake")
    assert result.exit_code == 2 and hostile_in(result.output) == [] and "NEW" in result.output, repr(result.output)
    assert Ledger.read(site.parent / "ledger.yml").record("posts/a/", "masto") is not None


def test_status_shows_keys_and_errors_with_invisible_and_bidi_characters_escaped(site):
    for args in (["status"], ["status", "--all"], ["status", "--json"]):
        result = cli(site, *args)
        assert result.exit_code == 0, result.output
        assert hostile_in(result.output) == [] and "\u200b" not in result.output, repr(result.output)
    data = json.loads(cli(site, "status", "--json").output)  # still the same JSON
    assert f"posts/{ESC}[31mred\u202e\u200b/" in [p["key"] for p in data["posts"]]


def test_the_plugins_log_lines_show_escapes_inert(caplog):
    logger = logging.getLogger("test.printable")
    logger.addFilter(safety.PrintableRecords())
    with caplog.at_level(logging.INFO, logger="test.printable"):
        logger.info("title: %s", HOSTILE)
    assert hostile_in(caplog.records[0].getMessage()) == [] and "\\x1b[31m" in caplog.records[0].getMessage()
    from mkdocs_syndicate.plugin import log

    assert any(isinstance(f, safety.PrintableRecords) for f in log.logger.filters)


# ------------------------------------------------------------------ syndicate.yml


@pytest.mark.parametrize(
    "site_url, problem",
    [
        ("javascript:alert(1)//", "is not an http(s) URL"),
        ("example.com/blog/", "is not an http(s) URL"),
        ("//example.com/", "is not an http(s) URL"),
        ("http://example.com/", "is plain http:// on a public host"),
        ("https://me:pw-1234@example.com/", "has a user name or password"),
    ],
)
def test_syndicate_yml_site_url_is_checked(tmp_path, site_url, problem):
    path = tmp_path / "syndicate.yml"
    path.write_text(f"site_url: {json.dumps(site_url)}\n")
    with pytest.raises(ConfigError, match=rf"syndicate\.yml: site_url: .*{re.escape(problem)}") as caught:
        load_standalone(path)
    assert "pw-1234" not in str(caught.value)


def test_syndicate_yml_site_url_may_be_http_on_loopback(tmp_path):
    path = tmp_path / "syndicate.yml"
    path.write_text("site_url: http://127.0.0.1:8000/\n")
    assert load_standalone(path)[0].site_url == "http://127.0.0.1:8000/"


@pytest.mark.parametrize(
    "text, key, line, first",
    [
        ("site_url: https://a.example/\nmode: plan\nmode: send\n", "mode", 3, 2),
        ("site_url: https://a.example/\nchannels:\n  a: {type: indexnow}\n  a: {type: mastodon}\n", "a", 4, 3),
        ("site_url: https://a.example/\nchannels: {a: {type: indexnow, type: mastodon}}\n", "type", 2, 2),
    ],
)
def test_a_key_given_twice_in_syndicate_yml_is_an_error_naming_it_and_its_line(tmp_path, text, key, line, first):
    path = tmp_path / "syndicate.yml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"syndicate\.yml:{line}: '{key}' is given twice .*first on line {first}"):
        load_standalone(path)


def test_yaml_merge_keys_are_not_taken_for_duplicates(tmp_path):
    path = tmp_path / "syndicate.yml"
    path.write_text(
        textwrap.dedent("""\
        site_url: https://a.example/
        channels:
          a: &ping {type: indexnow, enabled: false}
          b: {<<: *ping, enabled: true}
        """)
    )
    assert load_standalone(path)[1].channels["b"] == {"type": "indexnow", "enabled": True}


def test_a_feeds_title_and_description_reach_the_post_without_their_escapes(tmp_path):
    from mkdocs_syndicate.sources.feed import read_feed

    feed = tmp_path / "feed.json"
    feed.write_text(
        json.dumps(
            {
                "version": "https://jsonfeed.org/version/1.1",
                "title": "Blog",
                "items": [
                    {
                        "id": "1",
                        "url": "https://example.com/posts/a/",
                        "title": HOSTILE,
                        "summary": HOSTILE,
                        "content_html": "<p>Body</p>",
                        "date_published": "2026-11-20T10:00:00Z",
                    }
                ],
            }
        )
    )
    (found,) = read_feed(str(feed), "https://example.com/")
    for text in (found.title, found.summary):
        assert hostile_in(text) == [] and "\\x1b" not in text and "evil.example" not in text, text
    assert found.title == "Release notes click here gnp.exe x end"


@pytest.mark.http
def test_verify_names_the_records_it_cannot_settle_on_escaped_lines(tmp_path, sandbox):
    from conftest import mastodon_raw

    config = write_site(tmp_path, {"channels": {"masto": mastodon_raw(sandbox)}}, {})
    key = f"posts/{ESC}]0;pwned{BEL}\nx/"
    write_ledger(
        tmp_path / "ledger.yml",
        {(key, "masto"): Record(State.IN_FLIGHT, 1, "2026-12-01T10:00:00Z", idempotency_key="k" * 64)},
    )
    sandbox.add_fault({"channel": "mastodon", "match": "GET ", "action": "status", "status": 503, "times": 100})
    result = cli(config, "verify")
    assert result.exit_code == 1 and "need a decision" in result.output, result.output
    assert hostile_in(result.output) == [] and "posts/\\x1b]0;pwned\\x07\\x0ax/" in result.output, result.output
