"""A service's answer naming the copy's URL on another host (issue 53): a proxy's rewrite, a
broken or hostile server. It was recorded as the copy's URL (the post page no longer linked it,
but the ledger, the report and every later reader had it). Now it is suspect: the copy's URL in
the service's own form is recorded instead, and the record's note and the run's report say so."""

from __future__ import annotations

import json

import pytest
from conftest import SITE, ListReporter, make_post
from rawserver import RawServer, answer

from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.http

POST = make_post(1)


def mastodon_status(conn, head):
    if head.startswith(b"POST /api/v1/statuses"):
        status = {
            "id": "109",
            "url": "https://evil.example/@me/109",
            "uri": "https://evil.example/users/me/statuses/109",
            "account": {"id": "1", "username": "me", "acct": "me"},
            "content": f'<p>Post 1 <a href="{POST.url}">{POST.url}</a></p>',
        }
        conn.sendall(answer(200, json.dumps(status).encode()))
    else:
        conn.sendall(answer(404, b'{"error": "Record not found"}'))


def forem_article(conn, head):
    if head.startswith(b"POST /api/articles"):
        article = {"id": 77, "url": "https://dev.to.evil.example/me/post-1-4k2", "path": "/me/post-1-4k2"}
        conn.sendall(answer(201, json.dumps(article).encode()))
    else:
        conn.sendall(answer(404, b'{"error": "not found"}'))


CASES = {
    "mastodon": (
        mastodon_status,
        lambda url: {"type": "mastodon", "instance": url, "token": "tok-12345678"},
        "/@me/109",
    ),
    "forem": (
        forem_article,
        lambda url: {"type": "forem", "api": url + "/api", "api_key": "key-12345678"},
        "/me/post-1-4k2",
    ),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_a_copy_url_on_another_host_is_recorded_as_suspect_in_the_services_own_form(tmp_path, clock, kind):
    respond, raw, own_path = CASES[kind]
    with RawServer(respond) as server:
        options = parse_options(
            {"ch": raw(server.url)}, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True
        )
        report = send(options, [POST], ListReporter(), clock=clock)
        own = server.url + own_path
    (result,) = report.results
    record = Ledger.read(tmp_path / "ledger.yml").record(POST.key, "ch")
    assert result.state == "done" and record.state == "done", result
    assert record.remote_url == own and result.remote_url == own, (record, result)
    said = "suspect: the service answered with the copy's URL on another host"
    assert said in (record.note or "") and said in result.detail, (record.note, result.detail)
    assert "evil.example" in result.detail and f"{own} recorded, the service's own form" in result.detail
    assert "evil.example/" not in (tmp_path / "ledger.yml").read_text()  # its host named, never its URL
