"""The emulators behave like the services (docs/design/services.md), over real HTTP."""

import json

import httpx
import pytest

from mkdocs_syndicate.registry import emulators
from mkdocs_syndicate.sandbox import SandboxServer

pytestmark = pytest.mark.http

AUTH = {"Authorization": "Bearer sandbox-mastodon-token"}


@pytest.fixture
def api(sandbox):
    with httpx.Client(base_url=sandbox.url) as client:
        yield client


def post_status(api, text="Hello https://example.com/a/", key=None):
    headers = {**AUTH, **({"Idempotency-Key": key} if key else {})}
    return api.post("/mastodon/api/v1/statuses", data={"status": text}, headers=headers)


def test_mastodon_create_returns_200_status_with_string_id_and_linked_content(api):
    response = post_status(api)
    assert response.status_code == 200
    status = response.json()
    assert isinstance(status["id"], str) and status["url"].endswith(status["id"])
    assert 'href="https://example.com/a/"' in status["content"] and status["card"] is None
    assert response.headers["X-RateLimit-Limit"] == "300"
    assert response.headers["X-RateLimit-Reset"].endswith("Z")


def test_mastodon_idempotency_key_replays_the_original_without_comparing_the_body(api, sandbox):
    first = post_status(api, "one", key="k1").json()
    again = post_status(api, "two, different", key="k1").json()
    assert again["id"] == first["id"] and len(sandbox.snapshot()["mastodon"]["statuses"]) == 1


def test_mastodon_key_expires_after_its_ttl(api, sandbox):
    sandbox.idempotency_ttl = 0
    first = post_status(api, "one", key="k1").json()
    assert post_status(api, "one", key="k1").json()["id"] != first["id"]


def test_mastodon_failed_validation_leaves_no_key_behind(api, sandbox):
    assert post_status(api, "x" * 501, key="k2").status_code == 422
    assert "character limit of 500" in post_status(api, "x" * 501).json()["error"]
    assert post_status(api, "fits", key="k2").status_code == 200


def test_mastodon_url_counts_23(api):
    assert post_status(api, "x" * 470 + " https://example.com/" + "y" * 100).status_code == 200


def test_mastodon_auth_and_listing_with_link_pagination(api):
    assert api.post("/mastodon/api/v1/statuses", data={"status": "x"}).status_code == 401
    ids = [post_status(api, f"s{n}").json()["id"] for n in range(5)]
    me = api.get("/mastodon/api/v1/accounts/verify_credentials", headers=AUTH).json()
    page = api.get(f"/mastodon/api/v1/accounts/{me['id']}/statuses", params={"limit": 2}, headers=AUTH)
    assert [s["id"] for s in page.json()] == ids[::-1][:2]
    following = api.get(page.links["next"]["url"], headers=AUTH)
    assert [s["id"] for s in following.json()] == ids[::-1][2:4]


def test_mastodon_instance_limits(api):
    config = api.get("/mastodon/api/v2/instance").json()["configuration"]["statuses"]
    assert config == {"max_characters": 500, "characters_reserved_per_url": 23, "max_media_attachments": 4}


def test_faults_429_drop_and_control_api(api, sandbox):
    api.post("/_sandbox/faults", json={"channel": "mastodon", "action": "status", "status": 429, "reset_in": 60})
    limited = post_status(api)
    assert limited.status_code == 429 and limited.headers["X-RateLimit-Remaining"] == "0"
    assert "Retry-After" not in limited.headers  # Mastodon sends none
    api.post("/_sandbox/faults", json={"channel": "mastodon", "action": "drop_after"})
    with pytest.raises(httpx.RemoteProtocolError):
        post_status(api)
    assert len(api.get("/_sandbox/state").json()["mastodon"]["statuses"]) == 1  # committed anyway


def test_state_survives_a_restart(tmp_path):
    with SandboxServer(tmp_path / "s", emulators()) as first:
        httpx.post(first.url + "/mastodon/api/v1/statuses", data={"status": "kept"}, headers=AUTH)
    with SandboxServer(tmp_path / "s", emulators()) as second:
        assert [s["text"] for s in second.snapshot()["mastodon"]["statuses"]] == ["kept"]
    json.loads((tmp_path / "s" / "state.json").read_text())


def ping(api, **body):
    payload = {"host": "example.com", "key": "abcdefgh1", "urlList": ["https://example.com/a/"], **body}
    return api.post("/indexnow", json=payload)


def checked(sandbox, key="abcdefgh1", timeout=5.0):
    """The engine's key check runs after its answer: wait for its verdict."""
    import time

    deadline = time.monotonic() + timeout
    while sandbox.snapshot()["indexnow"]["keys"].get(key) == "pending" and time.monotonic() < deadline:
        time.sleep(0.01)
    return sandbox.snapshot()["indexnow"]["keys"].get(key)


def test_indexnow_202_until_the_engine_has_fetched_the_key_file_then_200(api, sandbox, tmp_path):
    sandbox.key_file_root = tmp_path  # the built site, served at /_site/
    (tmp_path / "abcdefgh1.txt").write_text("abcdefgh1")
    assert ping(api).status_code == 202
    assert checked(sandbox) == "valid"
    assert ping(api).status_code == 200
    assert api.get("/indexnow", params={"url": "https://example.com/b/", "key": "abcdefgh1"}).status_code == 200


def test_indexnow_key_file_missing_then_deployed(api, sandbox, tmp_path):
    sandbox.key_file_root = tmp_path
    assert ping(api).status_code == 202  # received; validation pending
    assert checked(sandbox) == "invalid"
    assert ping(api).status_code == 403  # and the engine looks again
    (tmp_path / "abcdefgh1.txt").write_text("abcdefgh1")
    assert checked(sandbox) in ("valid", "invalid")
    for _ in range(50):
        if ping(api).status_code == 200:
            break
    assert checked(sandbox) == "valid" and ping(api).status_code == 200


def test_indexnow_key_file_from_a_loopback_site_over_http(api, sandbox):
    from rawserver import RawServer, answer

    with RawServer(lambda conn, head: conn.sendall(answer(200, b"abcdefgh1\n"))) as site:
        body = {"host": "127.0.0.1", "urlList": [f"{site.url}/a/"], "keyLocation": f"{site.url}/abcdefgh1.txt"}
        assert ping(api, **body).status_code == 202
        assert checked(sandbox) == "valid"
        assert site.seen == ["GET /abcdefgh1.txt HTTP/1.1"]
        assert ping(api, **body).status_code == 200


def test_indexnow_site_out_of_reach_stays_pending(api, sandbox):
    assert ping(api).status_code == 202
    assert ping(api).status_code == 202


def test_indexnow_rejections(api, sandbox, tmp_path):
    assert ping(api, key="short").status_code == 422
    assert ping(api, urlList=["https://other.example/a/"]).status_code == 422
    assert api.post("/indexnow", content=b"not json").status_code == 400


def test_stopping_the_sandbox_lets_the_engine_finish_checking_the_key(tmp_path, monkeypatch):
    """Regression: a build stopped its sandbox right after the last ping; on a busy machine the
    key fetch had not happened yet, so the next build got 202 again instead of 200."""
    import time

    site = tmp_path / "site"
    site.mkdir()
    (site / "abcdefgh1.txt").write_text("abcdefgh1")
    with SandboxServer(tmp_path / "state", emulators(), key_file_root=site) as server:
        engine = server.emulators["indexnow"]
        slow_check = engine._check

        def busy_machine(key: str, location: str) -> None:
            time.sleep(0.5)
            slow_check(key, location)

        monkeypatch.setattr(engine, "_check", busy_machine)
        with httpx.Client(base_url=server.url) as client:
            assert ping(client).status_code == 202
    assert json.loads((tmp_path / "state" / "state.json").read_text())["indexnow"]["keys"]["abcdefgh1"] == "valid"


def test_answers_are_not_held_back_by_nagle(tmp_path, monkeypatch):
    """Regression: headers and body leave as two writes; with Nagle's algorithm on, the body
    waited for the client's delayed ACK (40 ms on Linux) on some answers, a stall no service adds
    and one that made every benchmark against the emulators slower than its stated latency."""
    import socket
    import socketserver

    nodelay = []
    setup = socketserver.StreamRequestHandler.setup

    def watched(handler):
        setup(handler)
        nodelay.append(handler.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    monkeypatch.setattr(socketserver.StreamRequestHandler, "setup", watched)
    with SandboxServer(tmp_path / "s", emulators()) as server, httpx.Client(base_url=server.url) as client:
        assert post_status(client).status_code == 200
    assert nodelay and all(nodelay), nodelay


def test_the_indexnow_engine_takes_only_urls_under_the_key_locations_folder(sandbox):
    """indexnow.org: a key file in a folder covers the URLs under that folder only; one at the
    host's root covers the host."""
    import httpx

    def ping(location, *urls):
        return httpx.post(
            f"{sandbox.url}/indexnow",
            json={"host": "user.github.io", "key": "project-key-0002", "keyLocation": location, "urlList": list(urls)},
        )

    assert (
        ping("https://user.github.io/project/project-key-0002.txt", "https://user.github.io/other/post/").status_code
        == 422
    )
    assert (
        ping("https://user.github.io/project/project-key-0002.txt", "https://user.github.io/project/post/").status_code
        == 202
    )
    assert ping("https://user.github.io/project-key-0002.txt", "https://user.github.io/other/post/").status_code in (
        202,
        403,
    )


def test_every_received_post_has_a_public_page_where_its_links_point(tmp_path, sandbox):
    """The ledger's remote_url, the dashboard and the run log link to a received post; those
    links answered 401 or 400 JSON. Each now opens the post's page, as on the real services."""
    from urllib.parse import urlsplit

    from conftest import SITE, ListReporter, make_post
    from test_channel_contracts import SPECS

    from mkdocs_syndicate.config.run import parse_options
    from mkdocs_syndicate.engine.syndication import send
    from mkdocs_syndicate.ledger.store import Ledger

    # Every type whose copies have a web page (a standard.site document is a record: its page is the post).
    channels = {spec.type: spec.raw(sandbox) for spec in SPECS.values() if spec.web_copies}
    # The web addresses a sandbox run sets (each emulator's client_options), not the real sites'.
    channels["weibo"]["web_url"] = sandbox.url + "/weibo/status"
    channels["bluesky"]["web_url"] = sandbox.url + "/bluesky"
    options = parse_options(channels, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True)
    post = make_post(1, title="Tom & <Jerry>")
    report = send(options, [post], ListReporter())
    assert [r.state for r in report.results] == ["done"] * len(channels), report.results
    book = Ledger.read(tmp_path / "ledger.yml")
    for channel in channels:
        url = book.record("blog/post-1/", channel).remote_url
        page = httpx.get(sandbox.url + urlsplit(url).path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html"), (channel, page.text)
        assert "Tom &amp; &lt;Jerry&gt;" in page.text and "<Jerry>" not in page.text, (channel, page.text)
    assert httpx.get(sandbox.url + "/mastodon/@sandbox/1").status_code != 200  # no such post


def test_a_misspelt_fault_is_refused_not_ignored(sandbox):
    """A fault the server does not know would leave every request unharmed: the test that set it
    would then pass without testing anything."""
    with pytest.raises(ValueError, match="unknown fault action 'dorp_after'"):
        sandbox.add_fault({"channel": "mastodon", "action": "dorp_after"})


# ---------------------------------------------------------------- a rehearsal's ledger is not a real one


def test_a_rehearsals_records_are_not_real_ones(tmp_path, sandbox):
    """Issue 36: after `sandbox: true` runs, switching to the real channels said "nothing pending"
    and post pages linked "Also on" to http://127.0.0.1:8787/... A sandbox run's records carry
    `sandbox: true`; a real run treats them as no record (once saying so), replaces them as it
    goes, and adopts the backlog again; a page of a real build never links a rehearsal's copy; a
    later rehearsal leaves the real records as they are."""
    import datetime as dt

    from conftest import SITE, ListReporter, make_post, mastodon_raw

    from mkdocs_syndicate.config.run import parse_options
    from mkdocs_syndicate.engine.preview import plan
    from mkdocs_syndicate.engine.syndication import send
    from mkdocs_syndicate.ledger.store import Ledger
    from mkdocs_syndicate.sources.ledger_copies import done_copies

    path = tmp_path / "ledger.yml"
    old = make_post(9, date=dt.datetime(2020, 1, 9, tzinfo=dt.UTC))  # before syndication started: adopted
    posts = [old, make_post(1), make_post(2)]

    def options(rehearsal: bool):
        channels = {"masto": {"type": "mastodon"} if rehearsal else mastodon_raw(sandbox)}
        return parse_options(
            channels, ledger_path=path, site=SITE, sandbox=rehearsal, sending=True, backlog="adopt", backlog_days=400
        )

    rehearsed = send(options(True), posts, ListReporter())
    assert [r.state for r in rehearsed.results] == ["done", "done"] and sandbox.requests() == []
    records = Ledger.read(path).posts
    assert {k: (e.channels["masto"].state, e.channels["masto"].sandbox) for k, e in records.items()} == {
        "blog/post-9/": ("skipped", True),
        "blog/post-1/": ("done", True),
        "blog/post-2/": ("done", True),
    }
    assert path.read_text().count("sandbox: true") == 3
    assert done_copies(path) == {} and set(done_copies(path, sandbox=True)) == {"blog/post-1/", "blog/post-2/"}

    assert [p.post.key for p in plan(options(False), posts).pairs] == ["blog/post-1/", "blog/post-2/"]
    real = send(options(False), posts, ListReporter())
    assert real.notes == ["3 sandbox record(s) ignored (a rehearsal's): these pairs will be announced for real"]
    assert real.adoption is not None and [p.key for p in real.adoption.posts] == ["blog/post-9/"]
    assert [r.state for r in real.results] == ["done", "done"]
    assert len(sandbox.snapshot()["mastodon"]["statuses"]) == 2
    records = Ledger.read(path).posts
    assert {k: (e.channels["masto"].state, e.channels["masto"].sandbox) for k, e in records.items()} == {
        "blog/post-9/": ("skipped", False),
        "blog/post-1/": ("done", False),
        "blog/post-2/": ("done", False),
    }
    assert "sandbox: true" not in path.read_text()
    for sandbox_build in (False, True):  # the real copies, on every build
        copies = done_copies(path, sandbox=sandbox_build)
        assert set(copies) == {"blog/post-1/", "blog/post-2/"}
        assert all(records["masto"].remote_url for records in copies.values())

    again = send(options(False), posts, ListReporter())
    assert again.results == [] and again.notes == []
    assert plan(options(True), posts).pairs == []  # a rehearsal never re-announces a real copy
