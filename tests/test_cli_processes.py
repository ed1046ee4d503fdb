"""`mkdocs-syndicate` as real processes: the foreground sandbox and its page over HTTP, and Ctrl-C
or SIGTERM during a pacing wait (the command's and a build's)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest
from conftest import mastodon_raw
from sites import command, mkdocs, post, write_site

from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process

POSTS = {"a.md": post("Alpha", "2026-11-20"), "b.md": post("Beta", "2026-11-21")}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(predicate, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def test_sandbox_command_serves_what_each_channel_received(tmp_path):
    config = write_site(
        tmp_path,
        {
            "mode": "send",
            "sandbox": True,
            "channels": {
                "masto": {"type": "mastodon"},
                "ping": {"type": "indexnow"},
                "bsky": {"type": "bluesky"},
                "wb": {"type": "weibo", "rip": "203.0.113.7"},
            },
        },
        POSTS,
    )
    port = free_port()
    server = command(config, "sandbox", "--port", str(port))
    advert = tmp_path / ".syndicate-sandbox" / "server.json"
    try:
        wait_for(advert.exists, "the sandbox to come up")
        assert json.loads(advert.read_text())["url"] == f"http://127.0.0.1:{port}"
        build = mkdocs(config)
        assert build.returncode == 0, build.stderr
        page = httpx.get(f"http://127.0.0.1:{port}/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        for channel in ("mastodon", "bluesky", "indexnow", "forem", "weibo"):
            assert f'data-channel="{channel}"' in page.text
        assert "Alpha" in page.text and "Beta" in page.text and "DUPLICATE" not in page.text
        received = httpx.get(f"http://127.0.0.1:{port}/_sandbox/received").json()
        assert len(received["mastodon"]) == 2 and len(received["bluesky"]) == 2  # the build sent here

        # Every link follows --port (Weibo's and Bluesky's too); the page names the site's channel
        # ids, gives one time format and links each received post.
        book = Ledger.read(tmp_path / "ledger.yml")
        for channel in ("masto", "bsky", "wb"):
            assert book.record("posts/a/", channel).remote_url.startswith(f"http://127.0.0.1:{port}/"), channel
        assert "masto <small>(mastodon)</small>" in page.text and "wb <small>(weibo)</small>" in page.text
        assert f'<a href="http://127.0.0.1:{port}/weibo/status/' in page.text
        import re

        assert re.search(r"<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</time>", page.text)

        # Something (not us) posts Alpha a second time: the page says so.
        httpx.post(
            f"http://127.0.0.1:{port}/mastodon/api/v1/statuses",
            headers={"Authorization": "Bearer sandbox-mastodon-token"},
            data={"status": "Alpha again https://example.com/posts/a/"},
        )
        dashboard = httpx.get(f"http://127.0.0.1:{port}/").text
        assert dashboard.count("DUPLICATE") == 2 and "2 duplicate" in dashboard
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert "sandbox stopped" in err and not advert.exists()
    assert "masto: POST /api/v1/statuses → 200" in err  # a line per request received


STOPS = [
    pytest.param(signal.SIGINT, 130, "interrupted (Ctrl-C)", id="ctrl-c"),
    pytest.param(signal.SIGTERM, 143, "terminated (SIGTERM)", id="sigterm"),
]  # docker stop, eviction


@pytest.mark.parametrize(("signum", "code", "said"), STOPS)
def test_ctrl_c_during_a_wait_stops_cleanly_and_says_what_is_left(tmp_path, sandbox, signum, code, said):
    config = write_site(
        tmp_path,
        {
            "mode": "plan",
            "channels": {"masto": mastodon_raw(sandbox, min_interval=60)},
        },
        POSTS,
    )
    assert mkdocs(config).returncode == 0  # saves the posts for `run`
    ledger = tmp_path / "ledger.yml"
    run = command(config, "run")
    try:
        wait_for(lambda: ledger.exists() and "state: done" in ledger.read_text(), "the first post to go out")
        time.sleep(0.3)  # now waiting out the 60 s pacing before the second
        run.send_signal(signum)
        _, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == code, err
    assert f"{said}: 1 pair(s) finished, 1 left for the next run" in err
    assert "(posts/b/, masto) pending" in err and "Traceback" not in err
    book = Ledger.read(ledger)
    assert book.record("posts/a/", "masto").state == "done" and book.record("posts/b/", "masto") is None
    assert len(sandbox.snapshot()["mastodon"]["statuses"]) == 1


def test_sigterm_during_a_builds_run_fails_the_build_saying_what_is_left(tmp_path, sandbox):
    """The plugin's run (the end of `mkdocs build` in CI) stops on SIGTERM as the command's does;
    MkDocs reports it as the build's error (exit 1)."""
    config = write_site(
        tmp_path,
        {
            "mode": "send",
            "channels": {"masto": mastodon_raw(sandbox, min_interval=60)},
        },
        POSTS,
    )
    ledger = tmp_path / "ledger.yml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_"))}
    build = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(config)],
        cwd=tmp_path,
        env={**env, "NO_MKDOCS_2_WARNING": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: ledger.exists() and "state: done" in ledger.read_text(), "the first post to go out")
        time.sleep(0.3)  # now waiting out the 60 s pacing before the second
        build.send_signal(signal.SIGTERM)
        _, err = build.communicate(timeout=30)
    finally:
        if build.poll() is None:
            build.kill()
    assert build.returncode == 1, err
    assert "terminated (SIGTERM): 1 pair(s) finished, 1 left for the next run" in err
    assert "(posts/b/, masto) pending" in err and "Traceback" not in err
    assert Ledger.read(ledger).record("posts/a/", "masto").state == "done"


def test_sandbox_reply_and_react_seed_a_conversation_with_or_without_a_running_sandbox(tmp_path):
    """Issue 39: a person seeds replies (nested, with a content warning, labelled) and likes from
    the command line, for `comments: true` to show; ids are printed for `--to`."""
    channels = {
        "masto": {"type": "mastodon"},
        "bsky": {"type": "bluesky"},
        "wb": {"type": "weibo", "rip": "203.0.113.7"},
    }
    config = write_site(tmp_path, {"mode": "send", "sandbox": True, "comments": True, "channels": channels}, POSTS)
    assert mkdocs(config).returncode == 0
    book = Ledger.read(tmp_path / "ledger.yml")
    status = book.record("posts/a/", "masto").remote_id

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        process = command(config, "sandbox", *args)
        out, err = process.communicate(timeout=60)
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)

    # No sandbox running: the state folder is changed, and the next sandbox serves it.
    first = run(
        "reply", "posts/a/", "masto", "--author", "ana", "--text", "<p>Who did it?</p>", "--warning", "Spoilers"
    )
    assert first.returncode == 0, first.stderr
    reply_id = re.search(r"reply (\d+) added", first.stdout)[1]
    assert f"--to {reply_id}" in first.stdout
    port = free_port()
    server = command(config, "sandbox", "--port", str(port))
    try:
        wait_for((tmp_path / ".syndicate-sandbox" / "server.json").exists, "the sandbox to come up")
        # A sandbox running: the commands go to it.
        nested = run("reply", "posts/a", "masto", "--author", "bo", "--text", "<p>The butler</p>", "--to", reply_id)
        assert nested.returncode == 0, nested.stderr
        assert run("react", "posts/a/", "masto", "--likes", "3", "--reposts", "1").returncode == 0
        labelled = run("reply", "posts/a/", "bsky", "--text", "Gory", "--label", "graphic-media")
        assert labelled.returncode == 0, labelled.stderr
        base = f"http://127.0.0.1:{port}"
        (ana, bo) = httpx.get(f"{base}/mastodon/api/v1/statuses/{status}/context").json()["descendants"]
        assert (ana["spoiler_text"], ana["sensitive"], bo["in_reply_to_id"]) == ("Spoilers", True, ana["id"])
        counts = httpx.get(f"{base}/mastodon/api/v1/statuses/{status}").json()
        assert (counts["favourites_count"], counts["reblogs_count"], counts["replies_count"]) == (3, 1, 1)
        uri = book.record("posts/a/", "bsky").remote_id
        thread = httpx.get(f"{base}/bluesky-appview/xrpc/app.bsky.feed.getPostThread", params={"uri": uri}).json()
        assert [label["val"] for label in thread["thread"]["replies"][0]["post"]["labels"]] == ["graphic-media"]
        # Wrong input says what is wrong.
        for args, says in (
            (("reply", "posts/zz/", "masto", "--text", "x"), "'posts/zz/' has no copy on masto"),
            (("reply", "posts/a/", "nope", "--text", "x"), "no channel 'nope' in the site's settings"),
            (("reply", "posts/a/", "wb", "--text", "x"), "wb (weibo) has no public replies to show"),
            (("reply", "posts/a/", "masto", "--text", "x", "--label", "!hide"), "a mastodon reply has no 'labels'"),
        ):
            wrong = run(*args)
            assert wrong.returncode != 0 and says in wrong.stderr, (args, wrong.stderr)
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)
