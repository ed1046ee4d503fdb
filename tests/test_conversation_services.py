"""The emulators' public reads of a conversation, as the services document and implement them
(sources in mkdocs_syndicate/sandbox/conversations.py), and the commands that seed one."""

from __future__ import annotations

import json

import httpx
import pytest
from conftest import make_post
from test_channel_contracts import SPECS, run
from test_fidelity_3 import mastodon_status

from mkdocs_syndicate.ledger.store import Ledger

THREAD = "bluesky-appview/xrpc/app.bsky.feed.getPostThread"


def first_copy(tmp_path, sandbox, clock, channel: str) -> str:
    run(tmp_path / channel, SPECS[channel].raw(sandbox), [make_post(1)], clock)
    record = Ledger.read(tmp_path / channel / "ledger.yml").record("blog/post-1/", "ch")
    assert record is not None and record.remote_id
    return record.remote_id


@pytest.mark.http
def test_mastodon_shows_a_public_status_and_its_counts_without_a_token(sandbox, clock):
    """StatusesController#show authorizes a token only if one is given; REST::StatusSerializer
    counts replies, boosts and favourites; a status with a spoiler text is sensitive."""
    root = mastodon_status(sandbox, clock)
    reply = sandbox.add_reply("mastodon", root, author="ana", text="<p>It ends well</p>", warning="Spoilers")
    sandbox.add_reply("mastodon", reply["id"], author="bo", text="<p>Deeper</p>")
    sandbox.react("mastodon", root, likes=4, reposts=1)
    answer = httpx.get(f"{sandbox.url}/mastodon/api/v1/statuses/{root}", headers={"Origin": "https://blog.example"})
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "*"
    status = answer.json()
    assert (status["replies_count"], status["reblogs_count"], status["favourites_count"]) == (1, 1, 4)
    (shown, deeper) = httpx.get(f"{sandbox.url}/mastodon/api/v1/statuses/{root}/context").json()["descendants"]
    assert (shown["spoiler_text"], shown["sensitive"], shown["replies_count"]) == ("Spoilers", True, 1)
    assert deeper["in_reply_to_id"] == reply["id"] and deeper["spoiler_text"] == "" and not deeper["sensitive"]
    # A token that does not work is refused, even where none is needed; a private status is not found.
    bad = httpx.get(f"{sandbox.url}/mastodon/api/v1/statuses/{root}", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401
    private = mastodon_status(sandbox, clock, visibility="private")
    assert httpx.get(f"{sandbox.url}/mastodon/api/v1/statuses/{private}").status_code == 404


@pytest.mark.http
def test_mastodon_replies_keep_the_time_they_were_written(sandbox, clock):
    root = mastodon_status(sandbox, clock)
    late = sandbox.add_reply("mastodon", root, author="late", text="<p>b</p>", at="2026-12-01T10:00:00+09:00")
    early = sandbox.add_reply("mastodon", root, author="early", text="<p>a</p>", at="2026-12-01T00:30:00Z")
    # Mastodon writes UTC with milliseconds, and its ids follow the time (snowflakes).
    assert (late["created_at"], early["created_at"]) == ("2026-12-01T01:00:00.000Z", "2026-12-01T00:30:00.000Z")
    ids = [d["id"] for d in httpx.get(f"{sandbox.url}/mastodon/api/v1/statuses/{root}/context").json()["descendants"]]
    assert ids == [early["id"], late["id"]]
    with pytest.raises(ValueError, match="a mastodon reply has no 'labels' here"):
        sandbox.add_reply("mastodon", root, author="x", text="y", labels=["!hide"])


@pytest.mark.http
def test_the_appview_thread_has_the_threadgate_labels_counts_and_the_replies_a_reader_may_see(sandbox, tmp_path, clock):
    """AppView v1 getPostThread (packages/bsky/src/views/index.ts `thread`, `threadReplies`): the
    root's threadgate lists the hidden replies, which are still returned; labels stay on the
    post views; third-party blocks and deleted replies are left out with their replies."""
    uri = first_copy(tmp_path, sandbox, clock, "bluesky")
    first = sandbox.add_reply("bluesky", uri, author="ana", text="First", at="2026-12-01T09:00:00+09:00")
    nested = sandbox.add_reply("bluesky", first["uri"], author="bo", text="Nested")
    hidden = sandbox.add_reply("bluesky", uri, author="cy", text="Hidden", hidden=True, at="2026-12-01T01:00:00Z")
    labelled = sandbox.add_reply("bluesky", uri, author="di", text="Spam", labels=["!hide"], at="2026-12-01T02:00:00Z")
    sandbox.add_reply("bluesky", uri, author="ed", text="Blocked", blocked=True)
    gone = sandbox.add_reply("bluesky", uri, author="fi", text="Deleted", deleted=True)
    sandbox.add_reply("bluesky", gone["uri"], author="gu", text="Below the deleted one")
    sandbox.react("bluesky", uri, likes=7, reposts=2)

    answer = httpx.get(f"{sandbox.url}/{THREAD}", params={"uri": uri, "depth": 10})
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "*"
    thread = answer.json()["thread"]
    root = thread["post"]
    assert (root["likeCount"], root["repostCount"], root["replyCount"]) == (7, 2, 4)
    gate = root["threadgate"]
    assert gate["uri"] == uri.replace("app.bsky.feed.post", "app.bsky.feed.threadgate")
    assert gate["record"]["hiddenReplies"] == [hidden["uri"]] and gate["record"]["post"] == uri
    replies = {r["post"]["uri"]: r for r in thread["replies"]}
    # Newest first by sortAt, as the AppView's data plane reads them (tests/test_realserver_appview.py).
    assert list(replies) == [labelled["uri"], hidden["uri"], first["uri"]]
    assert all(r["$type"] == "app.bsky.feed.defs#threadViewPost" for r in thread["replies"])
    assert [label["val"] for label in replies[labelled["uri"]]["post"]["labels"]] == ["!hide"]
    assert replies[first["uri"]]["post"]["record"]["createdAt"] == "2026-12-01T09:00:00+09:00"
    assert replies[first["uri"]]["post"]["replyCount"] == 1
    (below,) = replies[first["uri"]]["replies"]
    assert below["post"]["uri"] == nested["uri"] and below["post"]["record"]["reply"]["root"]["uri"] == uri
    assert "replies" not in httpx.get(f"{sandbox.url}/{THREAD}", params={"uri": uri, "depth": 0}).json()["thread"]


@pytest.mark.http
def test_dev_serves_an_articles_comment_threads_page_by_page_to_any_origin(sandbox, tmp_path, clock):
    """forem/forem Api::CommentsController#index: root comments paged by page and per_page (50 by
    default), each with its children; hidden and deleted comments keep their place with an empty
    user; the Origin is echoed (config/initializers/cors.rb); an article not there is a 404."""
    article = first_copy(tmp_path, sandbox, clock, "forem")
    root = sandbox.add_reply("forem", article, author="ana", text="<p>Nice</p>")
    child = sandbox.add_reply("forem", root["id_code"], author="bo", text="<p>Agreed</p>")
    sandbox.add_reply("forem", article, author="cy", text="<p>Rude</p>", hidden=True)
    for n in range(50):
        sandbox.add_reply("forem", article, author=f"r{n}", text=f"<p>{n}</p>")
    url = f"{sandbox.url}/forem/api/comments"
    first = httpx.get(url, params={"a_id": article}, headers={"Origin": "https://blog.example"})
    assert first.status_code == 200 and first.headers["access-control-allow-origin"] == "https://blog.example"
    threads = first.json()
    assert len(threads) == 50 and threads[0]["id_code"] == root["id_code"]
    assert [c["id_code"] for c in threads[0]["children"]] == [child["id_code"]]
    assert threads[0]["user"]["username"] == "ana" and threads[0]["body_html"] == "<p>Nice</p>"
    assert threads[1]["user"] == {} and "hidden by post author" in threads[1]["body_html"]
    second = httpx.get(url, params={"a_id": article, "page": 2}).json()
    assert [c["body_html"] for c in second] == ["<p>48</p>", "<p>49</p>"]
    assert len(httpx.get(url, params={"a_id": article, "per_page": 5}).json()) == 5
    assert httpx.get(url, params={"a_id": "999999"}).status_code == 404
    assert "api-key" not in json.dumps(dict(first.request.headers)).lower()  # no key was needed
