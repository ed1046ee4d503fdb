"""Bad input is refused by name before any network call; text from outside cannot drive a
terminal, forge a commit trailer, or leave half a credential behind in the ledger."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from conftest import SITE, ListReporter, make_post, mastodon_raw
from sites import write_site

from mkdocs_syndicate.cli import main
from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.content.posts import ChannelOverride, check_syndicate_id, parse_syndicate_meta
from mkdocs_syndicate.engine.preview import plan
from mkdocs_syndicate.engine.results import PairResult, PairState, RunReport
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import ConfigError, LedgerError, LedgerWriteError, PostError
from mkdocs_syndicate.ledger.gitmirror import commit_message
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.output.progress import summary_table
from mkdocs_syndicate.output.reporters import PlainReporter, undone_lines
from mkdocs_syndicate.registry import clients

pytestmark = pytest.mark.http

ESC = "\x1b"


def parse(raw):
    return parse_channels(raw, clients())


# ------------------------------------------------------------------ settings


@pytest.mark.parametrize("setting", ["min_interval", "timeout", "settle"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1, -0.5])
def test_numeric_channel_settings_refuse_nan_inf_and_negatives(setting, value):
    with pytest.raises(ConfigError, match=rf"channels\.x\.{setting}: must be a number of seconds"):
        parse({"x": {"type": "mastodon", setting: value}})


def test_settle_below_twice_the_timeout_is_refused_and_the_default_follows_the_timeout():
    with pytest.raises(ConfigError, match=r"channels\.x\.settle: 10 s is less than twice the timeout"):
        parse({"x": {"type": "mastodon", "timeout": 10, "settle": 10}})
    assert parse({"x": {"type": "mastodon"}})[0].settle == 600
    assert parse({"x": {"type": "mastodon", "timeout": 150}})[0].settle == 600
    assert parse({"x": {"type": "mastodon", "timeout": 300}})[0].settle == 600


@pytest.mark.parametrize(
    "setting, value, limit",
    [
        ("timeout", 1.0e300, "300"),
        ("timeout", 301, "300"),
        ("settle", 10**7, "604800"),
        ("min_interval", 86401, "86400"),
    ],
)
def test_duration_settings_past_their_documented_range_are_refused(setting, value, limit):
    """`timeout: 1.0e+300` was accepted and meant no timeout at all."""
    with pytest.raises(ConfigError, match=rf"channels\.x\.{setting}: .* is more than the {limit} this setting allows"):
        parse({"x": {"type": "mastodon", setting: value}})


@pytest.mark.parametrize(
    "value, problem",
    [
        ("tok en-1234", "white space"),
        ("secret-1234\n", "white space"),
        ("\tsecret-99", "white space"),
        ("sécrét-1234", "not printable ASCII"),
        ("secret\x00x", "not printable ASCII"),
    ],
)
def test_malformed_credentials_are_refused_without_echoing_them(value, problem):
    with pytest.raises(ConfigError, match=rf"channels\.x\.token: .*{problem}") as caught:
        parse({"x": {"type": "mastodon", "instance": "https://m.example", "token": value}})
    assert value.strip() not in str(caught.value)


def test_an_empty_credential_is_a_missing_one_so_plan_builds_of_forks_still_work():
    (channel,) = parse({"x": {"type": "mastodon", "instance": "https://m.example", "token": ""}})
    assert channel.options["token"] is None
    with pytest.raises(ConfigError, match=r"channels\.x\.token: missing \(or empty\)"):
        parse_options(
            {"x": {"type": "mastodon", "instance": "https://m.example", "token": ""}},
            ledger_path=SITE_LEDGER,
            site=SITE,
            sandbox=False,
            sending=True,
        )


SITE_LEDGER = None


def test_channel_ids_that_differ_only_by_case_are_refused():
    with pytest.raises(ConfigError, match=r"channels\.Masto: differs from channels\.masto only by case"):
        parse({"masto": {"type": "mastodon"}, "Masto": {"type": "mastodon"}})


@pytest.mark.parametrize(
    "setting, value",
    [
        ("max_wait", float("nan")),
        ("max_wait", -5),
        ("max_wait", float("inf")),
        ("stale_after_hours", -1),
        ("stale_after_hours", float("nan")),
        ("wait_until_live", float("inf")),
        ("wait_until_live", -3),
        ("max_wait", 1.0e300),
        ("wait_until_live", 86400),
        ("stale_after_hours", 10**9),
        ("backlog_days", 1e12),
    ],
)
def test_numeric_plugin_settings_refuse_nan_inf_negatives_and_values_past_their_range(tmp_path, setting, value):
    config = write_site(tmp_path, {"channels": {}, setting: value}, {})
    result = CliRunner().invoke(main, ["status", "-f", str(config)])
    assert result.exit_code == 1 and f"plugins.syndicate.{setting}" in result.output, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("port", ["0", "70000", "-1"])
def test_sandbox_port_out_of_range_is_refused(tmp_path, port):
    config = write_site(tmp_path, {"channels": {}}, {})
    result = CliRunner().invoke(main, ["sandbox", "-f", str(config), "--port", port])
    assert result.exit_code == 2 and "--port" in result.output and "1<=x<=65535" in result.output


# ------------------------------------------------------------------ posts and templates


@pytest.mark.parametrize(
    "template, error",
    [
        ("{{ 1 / 0 }}", "ZeroDivisionError"),
        ("{{ nope }}", "'nope' is undefined"),
        ("{{ title.missing() }}", "has no attribute"),
    ],
)
def test_a_template_that_raises_names_the_channel_and_the_post(tmp_path, template, error):
    options = parse_options(
        {"masto": {"type": "mastodon", "instance": "https://m.example", "template": template}},
        ledger_path=tmp_path / "ledger.yml",
        site=SITE,
        sandbox=False,
        sending=False,
    )
    with pytest.raises(
        PostError, match=rf"channels\.masto\.template: cannot render for docs/blog/post-1\.md: .*{error}"
    ):
        plan(options, [make_post(1)])


TEMPLATE_BOMBS = [
    ("{{ title * 10000000 }}", "a value of 60000000 characters"),
    ("{{ [title] * 100000000 }}", "a value of 100000000 characters"),
    ("{{ title|center(1000000000) }}", "a count or width of 1000000000"),
    ("{{ title.ljust(1000000000) }}", "a count or width of 1000000000"),
    ("{{ '%999999999s' % title }}", "a %-format width of 999999999"),
    ("{{ '%*s'|format(999999999, title) }}", "a count or width of 999999999"),
    ("{{ '{:>999999999}'.format(title) }}", "a call of str.format"),
    ("{{ (title * 3000)|replace('', title) }}", "a replace of more than"),
    ("{{ (title * 500)|list|join(title * 500) }}", "a join of more than"),
    ("{{ ((title ~ '\n') * 1000)|indent(width=(title * 100)) }}", "an indent of more than"),
    (
        "{% set ns = namespace(x=title) %}{% for i in range(100) %}{% set ns.x = ns.x ~ ns.x %}{% endfor %}{{ ns.x }}",
        "a value of more than",
    ),
    ("{% for i in range(900) %}{{ title * 10 }}{% endfor %}", "more than 20000 characters"),
]


@pytest.mark.parametrize("template, made", TEMPLATE_BOMBS)
def test_a_template_bomb_is_stopped_while_it_renders(tmp_path, template, made):
    """`{{ title * 10000000 }}` took 44 s and 1.1 GB: every value a template makes is bounded as
    it is made, and the message as it is written."""
    options = parse_options(
        {"masto": {"type": "mastodon", "instance": "https://m.example", "template": template}},
        ledger_path=tmp_path / "ledger.yml",
        site=SITE,
        sandbox=False,
        sending=False,
    )
    with pytest.raises(
        PostError,
        match=r"channels\.masto\.template: cannot render for docs/blog/post-1\.md: "
        rf"the template makes {re.escape(made)}",
    ):
        plan(options, [make_post(1)])


@pytest.mark.parametrize(
    "template, shape",
    [
        ("{% macro f(n) %}{{ f(n) }}{{ f(n) }}{% endmacro %}{{ f(1) }}", "'macro' is not available"),
        ("{% for a in tags %}{% if a %}{% for b in tags %}{% endfor %}{% endif %}{% endfor %}", "a loop inside a loop"),
    ],
)
def test_template_shapes_that_multiply_work_are_refused_with_the_config(shape, template):
    with pytest.raises(ConfigError, match=rf"channels\.x\.template: template line 1: {shape}"):
        parse({"x": {"type": "mastodon", "template": template}})


def test_ordinary_templates_still_render_with_loops_filters_and_formatting(tmp_path):
    template = (
        "{{ title|upper }} — {{ description|truncate(40) }} {% for t in tags %}#{{ t|replace(' ', '') }} "
        "{% endfor %}{{ '%-3s|'|format('x') }}{{ url }}"
    )
    options = parse_options(
        {"masto": {"type": "mastodon", "instance": "https://m.example", "template": template}},
        ledger_path=tmp_path / "ledger.yml",
        site=SITE,
        sandbox=False,
        sending=False,
    )
    text = plan(options, [make_post(1, tags=("mkdocs", "two words"))]).pairs[0].prepared.message.text
    assert text.startswith("POST 1") and "#mkdocs #twowords x  |https://example.com/blog/post-1/" in text, text


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_an_empty_front_matter_text_is_refused(text):
    with pytest.raises(PostError, match=r"docs/p\.md: front matter 'syndicate\.masto'\.text is empty"):
        parse_syndicate_meta({"masto": {"text": text}}, "docs/p.md")
    assert parse_syndicate_meta({"masto": {"text": "ok"}}, "docs/p.md")[1]["masto"] == ChannelOverride(True, "ok")


@pytest.mark.parametrize(
    "key, problem",
    [("x" * 513, "513 characters"), ("a\nb", "one line"), ("a\x1b[2Jb", "one line"), (" padded", "surrounding spaces")],
)
def test_a_bad_syndicate_id_is_refused(key, problem):
    with pytest.raises(PostError, match=rf"docs/p\.md: front matter 'syndicate_id' .*{problem}"):
        check_syndicate_id(key, "docs/p.md")
    assert check_syndicate_id("x" * 512, "docs/p.md")


# ------------------------------------------------------------------ the ledger's folder


def test_a_folder_where_the_lock_file_goes_is_one_clear_error(tmp_path):
    (tmp_path / ".syndicate-cache" / "ledger.yml.lock").mkdir(parents=True)
    with pytest.raises(
        LedgerError, match=r"cannot create the lock file \.syndicate-cache/ledger\.yml\.lock \(Is a directory\)"
    ):
        Ledger.open_for_writing(tmp_path / "ledger.yml")


def test_a_ledger_path_that_is_a_folder_is_one_clear_error(tmp_path):
    (tmp_path / "ledger.yml").mkdir()
    with pytest.raises(LedgerError, match="is a folder"):
        Ledger.open_for_writing(tmp_path / "ledger.yml")


def test_a_read_only_folder_fails_the_run_before_any_request(tmp_path, sandbox, clock, monkeypatch):
    import filelock

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(filelock.FileLock, "acquire", refuse)
    opts = parse_options(
        {"masto": mastodon_raw(sandbox)}, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    with pytest.raises(LedgerError, match=r"\(Permission denied\); is the folder writable\? Nothing was sent"):
        send(opts, [make_post(1)], ListReporter(), clock=clock)
    assert sandbox.requests() == []


def test_a_first_write_that_is_refused_stops_before_the_request(tmp_path, sandbox, clock, monkeypatch):
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    opts = parse_options(
        {"masto": mastodon_raw(sandbox)}, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    with pytest.raises(LedgerWriteError, match=r"could not write the ledger \(Permission denied\)"):
        send(opts, [make_post(1)], ListReporter(), clock=clock)
    assert sandbox.requests() == []


# ------------------------------------------------------------------ output

HOSTILE_TEXT = f"boom {ESC}[2J{ESC}]0;pwned\x07 \x9b31m line1\nSigned-off-by: mallory\r"


def test_server_text_with_control_characters_is_escaped_everywhere_it_is_shown():
    report = RunReport([PairResult(f"posts/{ESC}[31mred/", "masto", PairState.FAILED, HOSTILE_TEXT)])
    lines: list[str] = []
    PlainReporter(lines.append).pair_finished(report.results[0])
    from rich.console import Console

    console = Console(record=True, width=300, force_terminal=False)
    console.print(summary_table(report))
    for text in [*lines, *undone_lines(report), console.export_text()]:
        assert ESC not in text and "\x07" not in text and "\x9b" not in text and "\r" not in text
        assert "\\x1b" in text
    assert all("\n" not in line for line in [*lines, *undone_lines(report)])


def test_a_commit_message_is_one_line_whatever_the_key():
    message = commit_message([("posts/x/\n\nSigned-off-by: mallory <m@x>", "masto", "in_flight")])
    assert "\n" not in message and message.endswith("[skip ci]")


def test_a_credential_echoed_near_the_cut_is_redacted_before_the_error_is_shortened(tmp_path, sandbox, clock):
    token = "sandbox-mastodon-token"
    body = {"error": "x" * 190 + " " + token + " " + "y" * 300}
    sandbox.add_fault({"channel": "mastodon", "action": "status", "status": 422, "body": body})
    opts = parse_options(
        {"masto": mastodon_raw(sandbox)}, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
    )
    report = send(opts, [make_post(1)], ListReporter(), clock=clock)
    error = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "masto").error
    for text in (error, report.results[0].detail):
        assert "***" in text and not re.search(r"sandbox-m|andbox-ma", text), text
        assert len(text) <= 300
