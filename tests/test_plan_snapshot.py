"""A plan build that finds nothing pending lets the next one say so cheaply, and only while
nothing it rests on changed: the settings, the ledger, the posts, the mode, and the clock for
posts dated in the future. A build that sends never takes the shortcut."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from sites import mkdocs, post, write_site
from test_cheap_import import loaded

from mkdocs_syndicate.ledger.format import dump
from mkdocs_syndicate.ledger.schema import PostEntry, Record, State
from mkdocs_syndicate.sources import plan_snapshot

pytestmark = pytest.mark.process

CHANNELS = {
    "masto": {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1"},
    "ping": {"type": "indexnow", "key": "plan-key-1234"},
}


def all_done(folder, *keys):
    ledger = {}
    for key in keys:
        entry = ledger[key] = PostEntry(f"https://example.com/{key}", key)
        for channel in CHANNELS:
            entry.channels[channel] = Record(State.DONE, 1, "2026-12-01T00:00:00Z", remote_id="1")
    (folder / "ledger.yml").write_text(dump(ledger))


@pytest.fixture
def quiet_site(tmp_path):
    """A site whose two posts went out everywhere; one plan build has recorded that."""
    config = write_site(tmp_path, {"mode": "plan", "channels": CHANNELS}, {"a.md": post("A"), "b.md": post("B")})
    all_done(tmp_path, "posts/a/", "posts/b/")
    first = mkdocs(config)
    assert first.returncode == 0 and "nothing pending" in first.stderr, first.stderr
    assert plan_snapshot.snapshot_path(tmp_path / "ledger.yml").exists()
    return config


def test_the_next_plan_build_says_nothing_pending_without_loading_the_engine(quiet_site, tmp_path):
    modules = loaded("build", str(quiet_site))
    assert "mkdocs_syndicate.plugin" in modules
    assert not [
        m
        for m in modules
        if m.startswith(
            ("mkdocs_syndicate.engine.preview", "mkdocs_syndicate.channels", "mkdocs_syndicate.ledger.format")
        )
    ]
    again = mkdocs(quiet_site)
    assert again.returncode == 0 and "plan (mode: plan): nothing pending" in again.stderr
    assert (tmp_path / "site" / "plan-key-1234.txt").read_text() == "plan-key-1234"  # the key file is still published


def test_a_changed_ledger_is_planned_again(quiet_site, tmp_path):
    all_done(tmp_path, "posts/a/")  # b's records are gone (a revert, a hand edit)
    result = mkdocs(quiet_site)
    assert result.returncode == 0 and "would send posts/b/" in result.stderr, result.stderr


def test_a_corrupt_ledger_still_stops_the_build(quiet_site, tmp_path):
    ledger = tmp_path / "ledger.yml"
    ledger.write_text(ledger.read_text()[:-20])
    result = mkdocs(quiet_site)
    assert result.returncode != 0 and "ledger.yml" in result.stderr and "truncated" in result.stderr


def test_a_new_post_is_planned(quiet_site, tmp_path):
    (tmp_path / "docs" / "posts" / "c.md").write_text(post("C"))
    result = mkdocs(quiet_site)
    assert result.returncode == 0 and "would send posts/c/" in result.stderr, result.stderr


def test_changed_settings_are_validated_again(quiet_site, tmp_path):
    config = write_site(
        tmp_path,
        {"mode": "plan", "channels": {**CHANNELS, "masto": {**CHANNELS["masto"], "visibility": "everyone"}}},
        {},
    )
    result = mkdocs(config)
    assert result.returncode != 0 and "channels.masto.visibility" in result.stderr


def test_a_credential_that_turned_malformed_is_reported(tmp_path):
    channels = {**CHANNELS, "masto": {**CHANNELS["masto"], "token": "!ENV TOKEN"}}
    config = write_site(tmp_path, {"mode": "plan", "channels": channels}, {"a.md": post("A")})
    config.write_text(config.read_text().replace("'!ENV TOKEN'", "!ENV TOKEN"))
    all_done(tmp_path, "posts/a/")
    assert mkdocs(config, env={"TOKEN": "good-token"}).returncode == 0
    assert mkdocs(config, env={"TOKEN": "another-good-one"}).returncode == 0  # same shape: still quiet
    result = mkdocs(config, env={"TOKEN": "pasted with a newline\n"})
    assert result.returncode != 0 and "channels.masto.token" in result.stderr and "pasted" not in result.stderr


def test_a_build_that_sends_never_takes_the_shortcut(quiet_site, tmp_path):
    config = write_site(tmp_path, {"mode": "send", "sandbox": True, "channels": CHANNELS}, {})
    result = mkdocs(config)
    assert result.returncode == 0 and "sending" in result.stderr and "nothing pending" in result.stderr


def test_the_verdict_holds_only_until_a_future_post_comes_due():
    now = dt.datetime(2026, 12, 3, 12, tzinfo=dt.UTC)
    due = plan_snapshot.next_due(
        [now - dt.timedelta(days=1), now + dt.timedelta(hours=2), now + dt.timedelta(days=3)], now
    )
    assert due == now + dt.timedelta(hours=2)
    snapshot = {"inputs": "same", "due": due.strftime("%Y-%m-%dT%H:%M:%SZ")}
    assert plan_snapshot.still_quiet(snapshot, "same", now)
    assert not plan_snapshot.still_quiet(snapshot, "same", now + dt.timedelta(hours=2))
    assert not plan_snapshot.still_quiet(snapshot, "other", now)


def test_credentials_are_reduced_to_their_shape_in_the_fingerprint(tmp_path):
    names = {"mastodon": ["token"]}

    def fingerprint(token):
        return plan_snapshot.settings_fingerprint(
            {"channels": {"m": {"type": "mastodon", "token": token}}}, "https://example.com/", "plan", names
        )

    assert fingerprint("secret-one") == fingerprint("secret-two") != fingerprint(None) != fingerprint("")
    assert fingerprint("with space") != fingerprint("secret-one")
    assert plan_snapshot.settings_fingerprint({"channels": {"x": {"type": "new-type"}}}, None, "plan", names) is None
    path = tmp_path / "snapshot.json"
    plan_snapshot.save(
        path, settings=fingerprint("secret-one"), inputs="i", secret_names=names, site_files=[], due=None
    )
    assert "secret-one" not in path.read_text()
    assert json.loads(path.read_text())["settings"] == fingerprint("secret-one")
