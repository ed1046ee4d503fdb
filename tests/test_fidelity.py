"""Where client and emulator were wrong together (../shared/reference/fidelity-findings.md): each
test pins the service's documented rule, so a client that drifts from it fails against its
emulator, and an emulator that drifts fails here."""

from __future__ import annotations

import pytest

from conftest import SITE, ListReporter, make_post
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger import Ledger
from mkdocs_syndicate.syndication import parse_options, send
from test_channel_contracts import SPECS


def run(folder, channels, posts, clock, **options):
    folder.mkdir(parents=True, exist_ok=True)
    opts = parse_options(channels, ledger_path=folder / "ledger.yml", site=SITE, sandbox=False, sending=True,
                         **options)
    return send(opts, posts, ListReporter(), clock=clock)


# ------------------------------------------------------------------ Weibo: rip is required

def weibo(sandbox, **extra):
    raw = SPECS["weibo"].raw(sandbox, **extra)
    return {"weibo": raw}


def test_weibo_send_mode_requires_rip_naming_the_setting(tmp_path, sandbox):
    channels = weibo(sandbox)
    del channels["weibo"]["rip"]
    with pytest.raises(ConfigError, match=r"channels\.weibo\.rip: missing .*public IP address.*WEIBO_RIP"):
        parse_options(channels, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True)
    with pytest.raises(ConfigError, match=r"channels\.weibo\.rip: missing"):  # the sandbox too
        parse_options(channels, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=True, sending=True)
    parse_options(channels, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=False)


@pytest.mark.parametrize("value", ["localhost", "1.2.3", "my-ip", "203.0.113.7/24"])
def test_weibo_rip_must_be_an_ip_address(tmp_path, sandbox, value):
    with pytest.raises(ConfigError, match=r"channels\.weibo\.rip: .* is not an IP address"):
        parse_options(weibo(sandbox, rip=value), ledger_path=tmp_path / "l.yml", site=SITE, sandbox=False,
                      sending=True)


def test_weibo_sends_rip_and_the_emulator_refuses_a_share_without_it(tmp_path, sandbox, clock):
    import httpx

    report = run(tmp_path, weibo(sandbox, rip="2001:db8::7"), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"]
    answer = httpx.post(f"{sandbox.url}/weibo/2/statuses/share.json",
                        data={"access_token": "sandbox-weibo-access-token", "status": "x https://example.com/"})
    assert answer.status_code == 400 and answer.json()["error_code"] == 10016
    assert "rip" in answer.json()["error"]


# ------------------------------------------------------------------ IndexNow: 202 is not done

def test_indexnow_202_keeps_the_urls_for_the_next_run_until_a_200(tmp_path, sandbox, clock):
    site = tmp_path / "site"
    site.mkdir()
    (site / "fresh-key-0001.txt").write_text("fresh-key-0001")   # the built (deployed) site
    sandbox.key_file_root = site
    channels = {"ping": {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "fresh-key-0001"}}
    posts = [make_post(1), make_post(2)]
    first = run(tmp_path, channels, posts, clock)
    assert [r.state for r in first.results] == ["waiting", "waiting"] and not first.undone
    record = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "ping")
    assert record.state == "in_flight" and record.error.startswith("202 accepted, key validation pending")
    from test_sandbox import checked
    assert checked(sandbox, "fresh-key-0001") == "valid"  # the engine fetched the key file over HTTP

    second = run(tmp_path, channels, posts, clock)
    assert [r.state for r in second.results] == ["done", "done"]
    assert Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "ping").state == "done"
    assert len(sandbox.snapshot()["indexnow"]["pings"]) == 2
    assert run(tmp_path, channels, posts, clock).results == []


def test_indexnow_key_file_never_deployed_fails_with_403_after_the_202(tmp_path, sandbox, clock):
    sandbox.key_file_root = tmp_path / "empty-site"
    (tmp_path / "empty-site").mkdir()
    channels = {"ping": {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "fresh-key-0002"}}
    run(tmp_path, channels, [make_post(1)], clock)
    from test_sandbox import checked
    assert checked(sandbox, "fresh-key-0002") == "invalid"
    report = run(tmp_path, channels, [make_post(1)], clock)
    assert [r.state for r in report.results] == ["failed"]
    assert "403" in report.results[0].detail and "deploy the site" in report.results[0].detail
