"""`mkdocs-syndicate` subcommands through click's runner, against a site built once by a real
`mkdocs build` (which saves its posts) and the loopback emulators."""

from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import site_channels, write_ledger
from sites import mkdocs, post, write_site

from mkdocs_syndicate.cli import main
from mkdocs_syndicate.ledger.format import dump
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.timeutil import to_iso

pytestmark = pytest.mark.http

KEYS = ["posts/a/", "posts/b/", "posts/c/"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A three-post site built once in plan mode (so its posts are saved); copied per test."""
    folder = tmp_path_factory.mktemp("built")
    config = write_site(
        folder,
        {
            "mode": "plan",
            "channels": {
                "masto": {"type": "mastodon", "instance": "http://127.0.0.1:1/mastodon", "token": "t"},
                "ping": {"type": "indexnow", "endpoint": "http://127.0.0.1:1/indexnow", "key": "site-key-1234"},
            },
        },
        {"a.md": post("Alpha", "2026-11-20"), "b.md": post("Beta", "2026-11-21"), "c.md": post("Gamma", "2026-11-22")},
    )
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    return folder


@pytest.fixture
def site(built, tmp_path, sandbox):
    """The built site, its channels pointed at this test's emulator."""
    folder = tmp_path / "site"
    shutil.copytree(built, folder)
    config = folder / "mkdocs.yml"
    import yaml

    data = yaml.safe_load(config.read_text())
    data["plugins"][0]["syndicate"]["channels"] = site_channels(sandbox)
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    sandbox.key_file_root = folder / "site"
    return config


def cli(config, *args, env=None):
    runner = CliRunner()
    base = {
        "CI": None,
        "GITHUB_EVENT_NAME": None,
        "CI_MERGE_REQUEST_IID": None,
        "SYNDICATE_MODE": None,
        "USER": "tester",
        "GIT_AUTHOR_NAME": None,
        "GITHUB_ACTOR": None,
    }
    return runner.invoke(
        main, [args[0], "-f", str(config), *args[1:]], env={**base, **(env or {})}, catch_exceptions=False
    )


def statuses(sandbox):
    return sandbox.snapshot()["mastodon"]["statuses"]


def ledger(config):
    return Ledger.read(config.parent / "ledger.yml")


# ------------------------------------------------------------------ status


def test_status_of_a_fresh_site_shows_every_pair_pending(site, sandbox):
    result = cli(site, "status")
    assert result.exit_code == 0, result.output
    assert result.output.count("pending") >= 6 and "totals: 6 pending" in result.output
    data = json.loads(cli(site, "status", "--json").output)
    assert data["totals"] == {"pending": 6} and data["build_seen"] is True
    assert [p["key"] for p in data["posts"]] == KEYS
    assert cli(site, "status", "--check").exit_code == 0  # pending is not trouble
    assert sandbox.requests() == []


def test_status_check_fails_on_in_flight_and_failed_and_shows_their_age(site, sandbox):
    two_hours_ago = to_iso(dt.datetime.now(dt.UTC) - dt.timedelta(hours=2))
    write_ledger(
        site.parent / "ledger.yml",
        {
            ("posts/a/", "masto"): Record(State.IN_FLIGHT, 1, two_hours_ago, idempotency_key="k" * 64),
            ("posts/b/", "masto"): Record(State.FAILED, 2, two_hours_ago, error="422 refused: text too long"),
        },
    )
    result = cli(site, "status")
    assert "2 h ago" in result.output and "422 refused: text too long" in result.output
    assert cli(site, "status", "--check").exit_code == 1
    data = json.loads(cli(site, "status", "--json").output)
    masto_a = data["posts"][0]["channels"]["masto"]
    assert masto_a["state"] == "in_flight" and 7190 <= masto_a["age_seconds"] <= 7300


def test_status_check_does_not_fail_on_the_indexnow_wait_right_after_a_post(site, sandbox):
    # Issue 38: IndexNow answers 202 until the engine has fetched the key file; the ping's record
    # stays in_flight and the next run pings again. Expected work, not a person's.
    write_ledger(
        site.parent / "ledger.yml",
        {
            ("posts/a/", "masto"): Record(State.DONE, 1, "2026-12-01T10:00:00Z", remote_url="https://m.example/@me/1"),
            ("posts/a/", "ping"): Record(
                State.IN_FLIGHT, 1, "2026-12-01T10:00:00Z", error="202 accepted, key validation pending; pinged again"
            ),
        },
    )
    result = cli(site, "status", "--check", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "202 accepted, key validation pending; pinged again (expected: the next run sends again)" in result.output
    write_ledger(  # an at-most-once channel's in_flight still needs a read, or a person
        site.parent / "ledger.yml",
        {("posts/a/", "masto"): Record(State.IN_FLIGHT, 1, "2026-12-01T10:00:00Z", idempotency_key="k" * 64)},
    )
    assert cli(site, "status", "--check").exit_code == 1


def test_status_shows_each_channels_last_success_and_last_failure_from_the_ledger(site, sandbox):
    write_ledger(
        site.parent / "ledger.yml",
        {
            ("posts/a/", "masto"): Record(State.DONE, 1, "2026-12-01T10:00:00Z", remote_url="https://m.example/@me/1"),
            ("posts/b/", "masto"): Record(State.DONE, 1, "2026-12-02T10:00:00Z", remote_url="https://m.example/@me/2"),
            ("posts/c/", "masto"): Record(
                State.FAILED, 1, "2026-12-03T10:00:00Z", error="credentials: 401 The access token was revoked"
            ),
        },
    )
    lines = cli(site, "status", env={"COLUMNS": "200"}).output.splitlines()
    masto = next(line for line in lines if line.startswith("masto: "))
    assert masto.startswith("masto: last success 2026-12-02 (")
    assert "; last failure 2026-12-03 (" in masto and masto.endswith("): credentials: 401 The access token was revoked")
    assert (
        next(line for line in lines if line.startswith("ping: ")) == "ping: no success on record; no failure on record"
    )
    data = json.loads(cli(site, "status", "--json").output)
    assert data["channel_history"]["masto"] == {
        "last_success": "2026-12-02T10:00:00Z",
        "last_failure_at": "2026-12-03T10:00:00Z",
        "last_failure": "credentials: 401 The access token was revoked",
    }
    assert sandbox.requests() == []  # from the ledger alone


def test_status_fits_80_columns_lists_undone_first_and_counts_the_done(site, sandbox):
    long_key = "posts/" + "a-very-long-post-slug-" * 4 + "/"
    long_error = "422 refused: " + "the server explains at length " * 10
    write_ledger(
        site.parent / "ledger.yml",
        {
            ("posts/a/", "masto"): Record(State.DONE, 1, "2026-12-01T10:00:00Z", remote_url="https://m.example/@me/1"),
            ("posts/a/", "ping"): Record(State.DONE, 1, "2026-12-01T10:00:00Z"),
            ("posts/b/", "masto"): Record(State.FAILED, 2, "2026-12-01T10:00:00Z", error=long_error),
            (long_key, "masto"): Record(State.SKIPPED, 0, "2026-12-01T10:00:00Z", note="adopted"),
        },
    )
    result = cli(site, "status", env={"COLUMNS": "80"})
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines), "\n".join(line for line in lines if len(line) > 80)
    rows = [line for line in lines if "posts/" in line]
    assert rows[0].startswith("failed") and "(try 2) 422 refused" in lines[lines.index(rows[0]) + 1]
    assert not any("done" in row or "skipped" in row for row in rows)  # counted, not listed
    assert "not listed: 2 done, 1 skipped (--all lists them)" in result.output
    everything = cli(site, "status", "--all", env={"COLUMNS": "80"})
    assert "https://m.example/@me/1" in everything.output
    only = cli(site, "status", "--state", "pending", "--channel", "ping")
    assert [line.split()[-1] for line in only.output.splitlines() if "posts/" in line] == ["posts/b/", "posts/c/"]
    assert "posts/a/" not in cli(site, "status", "--post", "posts/b").output


def test_the_command_finds_properdocs_yml(tmp_path):
    config = write_site(tmp_path, {"channels": {}}, {})
    config.rename(tmp_path / "properdocs.yml")
    runner = CliRunner()
    import os

    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        result = runner.invoke(main, ["status"], catch_exceptions=False)
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0 and "ledger.yml" in result.output, result.output


# ------------------------------------------------------------------ plan


def test_plan_shows_exactly_what_would_go_out_and_sends_nothing(site, sandbox):
    write_ledger(
        site.parent / "ledger.yml",
        {("posts/a/", "masto"): Record(State.IN_FLIGHT, 1, "2026-12-01T10:00:00Z", idempotency_key="k" * 64)},
    )
    result = cli(site, "plan")
    assert result.exit_code == 0, result.output
    assert "6 pair(s) would be sent, 1 after a verify read" in result.output
    assert "masto · posts/a/ · verify first (in_flight since 2026-12-01T10:00:00Z" in result.output
    assert "masto · posts/b/ · send — " in result.output and "/500 characters" in result.output
    assert "    Beta\n" in result.output and "    https://example.com/posts/b/" in result.output
    assert "ping · posts/c/ · send" in result.output
    assert sandbox.requests() == []
    assert ledger(site).record("posts/a/", "masto").state == "in_flight"  # untouched


def test_commands_that_need_a_build_say_so(site, sandbox):
    shutil.rmtree(site.parent / ".syndicate-cache")
    for command in ("plan", "run", "adopt"):
        result = cli(site, command)
        assert result.exit_code == 1 and "run `mkdocs build` first" in result.output, (command, result.output)
    assert sandbox.requests() == []


# ------------------------------------------------------------------ run


def test_run_sends_the_last_builds_posts_then_nothing(site, sandbox):
    result = cli(site, "run")
    assert result.exit_code == 0, result.output
    assert [s["text"].splitlines()[0] for s in statuses(sandbox)] == ["Alpha", "Beta", "Gamma"]
    assert all(ledger(site).record(k, c).state == "done" for k in KEYS for c in ("masto", "ping"))
    requests = len(sandbox.requests())
    again = cli(site, "run")
    assert again.exit_code == 0 and "nothing pending" in again.output
    assert len(sandbox.requests()) == requests


def test_run_with_work_left_exits_non_zero_naming_the_pairs(site, sandbox):
    sandbox.add_fault(
        {
            "channel": "mastodon",
            "action": "status",
            "status": 422,
            "times": 3,
            "body": {"error": "Validation failed: Text character limit of 500 exceeded"},
        }
    )
    result = cli(site, "run")
    assert result.exit_code == 1
    assert "3 pair(s) left undone" in result.output and "(posts/a/, masto) failed: 422" in result.output


def test_run_sends_nothing_when_the_mode_is_off(site, sandbox):
    site.write_text(site.read_text().replace("mode: plan", "mode: 'off'"))
    result = cli(site, "run")
    assert result.exit_code == 0 and "mode: off — nothing sent" in result.output
    assert sandbox.requests() == []


def test_run_in_a_pull_request_under_auto_sends_nothing(site, sandbox):
    site.write_text(site.read_text().replace("mode: plan", "mode: auto"))
    result = cli(site, "run", env={"CI": "true", "GITHUB_EVENT_NAME": "pull_request"})
    assert result.exit_code == 0 and "pull_request build — nothing sent" in result.output
    assert sandbox.requests() == []


# ------------------------------------------------------------------ verify


def _in_flight_copy(site, sandbox, key="posts/a/", age=dt.timedelta(hours=2)):
    """Send everything, then turn one done record back into the in_flight it was, `age` ago."""
    assert cli(site, "run").exit_code == 0
    done = ledger(site).record(key, "masto")
    long_ago = to_iso(dt.datetime.now(dt.UTC) - age)
    posts = ledger(site).posts
    posts[key].channels["masto"] = Record(
        State.IN_FLIGHT, 1, long_ago, idempotency_key=done.idempotency_key, message_sha256=done.message_sha256
    )
    (site.parent / "ledger.yml").write_text(dump(posts))
    assert ledger(site).record(key, "masto").state == "in_flight"
    return done


def test_verify_finds_an_in_flight_post_with_reads_only(site, sandbox):
    done = _in_flight_copy(site, sandbox)
    before = len(sandbox.requests())
    result = cli(site, "verify")
    assert result.exit_code == 0, result.output
    assert ledger(site).record("posts/a/", "masto").remote_id == done.remote_id
    assert all(r["method"] == "GET" for r in sandbox.requests()[before:])
    assert len(statuses(sandbox)) == 3


def test_verify_inside_the_idempotency_window_still_reads(site, sandbox):
    """Regression: inside Mastodon's key window the runner's verify answers "absent" without a
    read (a resend with the key is harmless); `verify` sends nothing, so it must really read,
    or it would turn a sent post into a failed record that a later run posts again."""
    done = _in_flight_copy(site, sandbox, age=dt.timedelta(minutes=5))
    before = len(sandbox.requests())
    result = cli(site, "verify")
    assert result.exit_code == 0, result.output
    record = ledger(site).record("posts/a/", "masto")
    assert record.state == "done" and record.remote_id == done.remote_id
    assert [r["method"] for r in sandbox.requests()[before:]] and all(
        r["method"] == "GET" for r in sandbox.requests()[before:]
    )


def test_verify_proves_absent_and_leaves_it_for_the_next_run(site, sandbox):
    _in_flight_copy(site, sandbox)
    # The post never landed: neither the status nor its idempotency entry exists.
    sandbox.state["mastodon"]["statuses"] = [s for s in statuses(sandbox) if "Alpha" not in s["text"]]
    sandbox.state["mastodon"]["idempotency"] = {}
    before = len(sandbox.requests())
    result = cli(site, "verify")
    assert result.exit_code == 0, result.output
    record = ledger(site).record("posts/a/", "masto")
    assert record.state == "failed" and "the next run sends it" in record.error
    assert all(r["method"] == "GET" for r in sandbox.requests()[before:])
    again = cli(site, "run")
    assert again.exit_code == 0 and len(statuses(sandbox)) == 3, again.output


def test_verify_that_cannot_tell_exits_non_zero_asking_for_a_decision(site, sandbox):
    _in_flight_copy(site, sandbox)
    sandbox.add_fault({"channel": "mastodon", "action": "status", "status": 503, "match": "verify_credentials"})
    result = cli(site, "verify")
    assert result.exit_code == 1 and "need a decision" in result.output and "resolve" in result.output
    assert ledger(site).record("posts/a/", "masto").state == "in_flight"


# ------------------------------------------------------------------ resolve


def test_resolve_done_records_the_url_and_who_decided(site, sandbox):
    write_ledger(
        site.parent / "ledger.yml",
        {("posts/a/", "masto"): Record(State.IN_FLIGHT, 1, "2026-12-01T10:00:00Z", idempotency_key="k" * 64)},
    )
    result = cli(
        site,
        "resolve",
        "posts/a",
        "masto",
        "--done",
        "https://mastodon.social/@me/1",
        "--id",
        "1",
        "--note",
        "seen it on the timeline",
    )
    assert result.exit_code == 0, result.output
    record = ledger(site).record("posts/a/", "masto")
    assert (record.state, record.remote_url, record.remote_id) == ("done", "https://mastodon.social/@me/1", "1")
    assert record.note.startswith("resolved by hand by tester on ") and "seen it on the timeline" in record.note
    assert record.idempotency_key == "k" * 64
    assert "in_flight → done" in result.output


def test_resolve_retry_and_skip(site, sandbox):
    write_ledger(
        site.parent / "ledger.yml",
        {("posts/a/", "masto"): Record(State.IN_FLIGHT, 1, "2026-12-01T10:00:00Z", idempotency_key="k" * 64)},
    )
    assert cli(site, "resolve", "posts/a/", "masto", "--retry").exit_code == 0
    assert ledger(site).record("posts/a/", "masto").state == "failed"
    assert "already pending" in cli(site, "resolve", "posts/a/", "masto", "--retry").output
    # a pair with no record at all, named by its URL
    assert cli(site, "resolve", "https://example.com/posts/b/", "ping", "--skip").exit_code == 0
    assert ledger(site).record("posts/b/", "ping").state == "skipped"
    assert cli(site, "run").exit_code == 0
    assert sorted(s["text"].splitlines()[0] for s in statuses(sandbox)) == ["Alpha", "Beta", "Gamma"]
    pinged = {u for p in sandbox.snapshot()["indexnow"]["pings"] for u in p["urls"]}
    assert "https://example.com/posts/b/" not in pinged


def test_resolve_refuses_what_makes_no_sense(site, sandbox):
    assert cli(site, "resolve", "posts/a/", "masto").exit_code == 2
    assert cli(site, "resolve", "posts/a/", "masto", "--retry", "--skip").exit_code == 2
    missing = cli(site, "resolve", "posts/nope/", "masto", "--skip")
    assert missing.exit_code == 1 and "no post 'posts/nope/'" in missing.output
    assert cli(site, "resolve", "posts/a/", "nochannel", "--skip").exit_code == 1
    assert cli(site, "run").exit_code == 0
    done = cli(site, "resolve", "posts/a/", "masto", "--skip")
    assert done.exit_code == 1 and "is done (it went out); it cannot be skipped" in done.output


@pytest.mark.parametrize("decision", [["--skip"], ["--done", "https://m.example/@me/2"]], ids=["skip", "done"])
def test_resolve_on_a_deleted_thread_starts_a_new_record(site, sandbox, decision):
    """A thread whose copy was deleted (its parts named still): `--skip` and `--done URL` each
    start a new life, as `--retry` does, with nothing of the gone copy; never a traceback."""
    from mkdocs_syndicate.ledger.schema import Part

    parts = (Part("1", "https://m.example/@me/1"), Part("5", "https://m.example/@me/5"))
    done = Record(State.DONE, 1, "2026-12-01T10:00:00Z", remote_id="1", remote_url=parts[0].remote_url, parts=parts)
    write_ledger(site.parent / "ledger.yml", {("posts/a/", "masto"): done.gone("2026-12-02T10:00:00Z", "deleted")})
    result = cli(site, "resolve", "posts/a/", "masto", *decision)
    assert result.exit_code == 0 and result.exception is None, result.output
    record = ledger(site).record("posts/a/", "masto")
    assert record.state == ("skipped" if decision == ["--skip"] else "done") and record.parts == (), record


# ------------------------------------------------------------------ adopt


def test_adopt_marks_every_existing_pair_skipped_so_nothing_old_goes_out(site, sandbox):
    result = cli(site, "adopt")
    assert result.exit_code == 0, result.output
    assert "adopted 3 post(s): 6 pair(s) marked skipped" in result.output
    record = ledger(site).record("posts/a/", "masto")
    assert record.state == "skipped" and "adopted by tester" in record.note
    assert cli(site, "run").exit_code == 0 and sandbox.requests() == []


def test_adopt_before_a_date_leaves_newer_posts_pending(site, sandbox):
    result = cli(site, "adopt", "--before", "2026-11-22")
    assert "adopted 2 post(s): 4 pair(s) marked skipped" in result.output
    assert "1 post(s) dated 2026-11-22T00:00:00Z or later stay pending" in result.output
    assert cli(site, "run").exit_code == 0
    assert [s["text"].splitlines()[0] for s in statuses(sandbox)] == ["Gamma"]


# ------------------------------------------------------------------ channel ids: renamed, added


def _edit_plugin(config, change):
    import yaml

    data = yaml.safe_load(config.read_text())
    change(data["plugins"][0]["syndicate"])
    config.write_text(yaml.safe_dump(data, sort_keys=False))


def test_a_renamed_channel_is_refused_until_rename_channel_moves_its_records(site, sandbox):
    assert cli(site, "run").exit_code == 0
    sent, asked = len(statuses(sandbox)), len(sandbox.requests())
    assert sent == 3

    def rename(plugin):
        plugin["channels"]["mastodon"] = plugin["channels"].pop("masto")

    _edit_plugin(site, rename)
    result = cli(site, "run")
    assert result.exit_code != 0
    assert "'masto' has records" in result.output and "rename-channel masto mastodon" in result.output
    assert len(sandbox.requests()) == asked  # refused before any request

    result = cli(site, "rename-channel", "masto", "mastodon")
    assert result.exit_code == 0 and "3 post(s) moved" in result.output, result.output
    assert ledger(site).record("posts/a/", "mastodon").state == "done"
    assert ledger(site).record("posts/a/", "masto") is None
    result = cli(site, "run")
    assert result.exit_code == 0, result.output
    assert len(statuses(sandbox)) == sent


def test_an_old_channel_kept_disabled_is_not_taken_for_a_rename(site, sandbox):
    assert cli(site, "run").exit_code == 0

    def add_second(plugin):
        plugin["backlog"] = "adopt"
        plugin["channels"]["masto"]["enabled"] = False
        plugin["channels"]["masto2"] = dict(plugin["channels"]["masto"], enabled=True)

    _edit_plugin(site, add_second)
    result = cli(site, "run")
    assert result.exit_code == 0, result.output
    assert "masto2 is new to the ledger: 3 post(s)" in result.output


def test_a_channel_added_to_a_ledger_with_records_adopts_its_backlog(site, sandbox):
    """It used to get the whole archive, 10 posts a run, without a word."""
    assert cli(site, "run").exit_code == 0
    sent = len(statuses(sandbox))

    def add(plugin):
        plugin["backlog"] = "adopt"
        plugin["channels"]["masto2"] = dict(plugin["channels"]["masto"])

    _edit_plugin(site, add)
    assert "masto2 is new to the ledger" in cli(site, "plan").output
    result = cli(site, "run")
    assert result.exit_code == 0, result.output
    assert "masto2 is new to the ledger: 3 post(s)" in result.output and "marked skipped" in result.output
    assert len(statuses(sandbox)) == sent
    record = ledger(site).record("posts/c/", "masto2")
    assert record.state == "skipped" and "before this channel was added" in record.note


@pytest.mark.http
@pytest.mark.parametrize("at", ["", ', at: ""'])
def test_a_record_without_its_time_fails_check_and_every_command_before_any_request(site, sandbox, at):
    """A hand edit that drops `at` used to pass `check` and then crash `status` and `run`."""
    (site.parent / "ledger.yml").write_text(
        "version: 1\nposts:\n  blog/post-1/:\n    url: https://example.com/blog/post-1/\n    title: One\n"
        f"    channels:\n      masto: {{state: in_flight, attempts: 1{at}}}\n...\n"
    )
    checked = CliRunner().invoke(main, ["check", str(site.parent / "ledger.yml")])
    assert checked.exit_code == 1 and "ledger.yml:7: record (blog/post-1/, masto) has no 'at'" in checked.output
    for command in ("status", "run"):
        result = cli(site, command)
        assert result.exit_code == 1, (command, result.output)
        assert "ledger.yml:7: record (blog/post-1/, masto) has no 'at'" in result.output, (command, result.output)
    assert sandbox.requests() == []


@pytest.mark.http
def test_status_with_an_unknown_channel_id_names_the_known_ones(site):
    """`--channel mastadon` silently showed nothing: a typo looked like "all is well"."""
    result = cli(site, "status", "--channel", "mastadon")
    assert result.exit_code == 2 and "unknown channel id 'mastadon' (known: masto, ping)" in result.output, (
        result.output
    )
    assert cli(site, "status", "--channel", "masto").exit_code == 0


@pytest.mark.http
def test_verify_does_not_demand_weibos_rip_which_only_sharing_needs(site, sandbox):
    """`rip` is the user's IP, sent with each share; reading back never sends it."""
    import yaml

    data = yaml.safe_load(site.read_text())
    data["plugins"][0]["syndicate"]["channels"]["wb"] = {
        "type": "weibo",
        "api": sandbox.url + "/weibo/2",
        "access_token": "sandbox-weibo-access-token",
    }
    site.write_text(yaml.safe_dump(data, sort_keys=False))
    result = cli(site, "verify")
    assert result.exit_code == 0 and "rip" not in result.output, result.output
    sent = cli(site, "run")
    assert sent.exit_code == 1 and "channels.wb.rip: missing" in sent.output, sent.output
