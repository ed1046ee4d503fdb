"""The emulators answer as the real servers do where the fifth fidelity audit found them apart,
by raw HTTP against the sandbox server (never through our clients). Each test names the server's
own rule: Mastodon's source (rack_attack.rb, RateLimiter, UpdateStatusService, MediaController),
the reference PDS's (packages/pds) and Synapse 1.163.2's; where the real server runs here, a
realserver test beside it (tests/test_realserver_bluesky.py, tests/test_realserver_matrix.py)
holds the emulator to the server's own answer."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import httpx
import matrix_scenarios
import pds_scenarios
import pytest
from pds_scenarios import Account
from test_media_emulators import Clock

from mkdocs_syndicate.sandbox import media_files
from mkdocs_syndicate.sandbox.mastodon_tokens import STATUSES_ONLY_TOKEN, TOKEN

pytestmark = pytest.mark.http

MASTO = {"Authorization": f"Bearer {TOKEN}"}
WINDOW_START = 1_800_003_600.0  # a multiple of 1,800 and of 10,800: a window of each limit starts here


@pytest.fixture
def clock(sandbox) -> Clock:
    sandbox.now = clock = Clock(WINDOW_START)
    return clock


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _masto(sandbox, method: str, path: str, token: str = TOKEN, **kwargs) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.request(method, f"{sandbox.url}/mastodon{path}", headers=headers, **kwargs)


def _status(sandbox, text: str) -> str:
    answer = _masto(sandbox, "POST", "/api/v1/statuses", data={"status": text})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["id"])


def _upload(sandbox, *, description: str | None = None, v: int = 2) -> httpx.Response:
    fields = {"description": description} if description is not None else {}
    files = {"file": ("a.png", media_files.png(), "image/png")}
    return _masto(sandbox, "POST", f"/api/v{v}/media", files=files, data=fields)


# ---------------------------------------------------------------- Mastodon: Rack::Attack


def test_mastodon_deletes_are_30_per_30_minutes_per_account_in_windows_aligned_to_the_epoch(sandbox, clock):
    """rack_attack.rb `throttle_api_delete`: 30 per 30 minutes, keyed by the account (both of its
    tokens share it), counted in fixed windows, before the controller (an unknown id counts and is
    refused too); the throttled responder's 429 has X-RateLimit-* and no Retry-After."""
    clock.at = WINDOW_START + 600
    ids = [_status(sandbox, f"status {n}") for n in range(32)]
    answers = [
        _masto(sandbox, "DELETE", f"/api/v1/statuses/{status_id}", token=(TOKEN, STATUSES_ONLY_TOKEN)[n % 2])
        for n, status_id in enumerate(ids[:30])
    ]
    assert [a.status_code for a in answers] == [200] * 30
    assert [a.headers["X-RateLimit-Limit"] for a in answers[:2]] == ["30", "30"]
    assert [a.headers["X-RateLimit-Remaining"] for a in (answers[0], answers[-1])] == ["29", "0"]
    refused = _masto(sandbox, "DELETE", f"/api/v1/statuses/{ids[30]}")
    assert refused.status_code == 429 and refused.json() == {"error": "Too many requests"}
    assert {k: refused.headers.get(k) for k in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "Retry-After")} == {
        "X-RateLimit-Limit": "30",
        "X-RateLimit-Remaining": "0",
        "Retry-After": None,
    }
    assert refused.headers["X-RateLimit-Reset"] == _iso(WINDOW_START + 1800)
    assert _masto(sandbox, "GET", f"/api/v1/statuses/{ids[30]}").status_code == 200  # not deleted
    assert _masto(sandbox, "DELETE", "/api/v1/statuses/12345").status_code == 429  # before the controller
    clock.at = WINDOW_START + 1800  # the next window, not 30 minutes after the first delete
    assert _masto(sandbox, "DELETE", f"/api/v1/statuses/{ids[30]}").status_code == 200


def test_mastodon_uploads_are_30_per_30_minutes_in_epoch_windows_counting_refused_ones(sandbox, clock):
    """rack_attack.rb `throttle_api_media`: every POST to /api/v1/media or /api/v2/media counts,
    one MediaAttachment refused with 422 too, in windows aligned to the epoch."""
    clock.at = WINDOW_START + 1790
    assert _upload(sandbox, description="x" * 1501).status_code == 422
    assert [_upload(sandbox, v=1 + n % 2).status_code for n in range(29)] == [200] * 29
    refused = _upload(sandbox)
    assert refused.status_code == 429 and refused.json() == {"error": "Too many requests"}
    assert (refused.headers["X-RateLimit-Limit"], refused.headers["X-RateLimit-Remaining"]) == ("30", "0")
    assert refused.headers["X-RateLimit-Reset"] == _iso(WINDOW_START + 1800)
    assert "Retry-After" not in refused.headers
    clock.at += 11  # a new window ten seconds later: no rolling half hour
    accepted = _upload(sandbox)
    assert accepted.status_code == 200 and accepted.headers["X-RateLimit-Remaining"] == "29"


def test_mastodon_an_injected_429_carries_the_limit_of_its_route(sandbox, clock):
    """The same fault on a delete, an upload, a status and another call: each 429 speaks for the
    limit that request meets (30 per 30 min, 30 per 30 min, 300 per 3 h, 300 per 5 min)."""
    status_id = _status(sandbox, "to be deleted")
    cases = [
        ("DELETE", f"/api/v1/statuses/{status_id}", "30"),
        ("POST", "/api/v2/media", "30"),
        ("POST", "/api/v1/statuses", "300"),
        ("GET", "/api/v1/accounts/verify_credentials", "300"),
    ]
    for method, path, limit in cases:
        sandbox.add_fault({"channel": "mastodon", "action": "status", "status": 429, "match": f"{method} {path}"})
        refused = _masto(sandbox, method, path, data={"status": "x"} if method == "POST" else None)
        assert refused.status_code == 429, (method, path)
        assert (refused.headers["X-RateLimit-Limit"], "Retry-After" in refused.headers) == (limit, False), path
    delete_window_end = _iso(WINDOW_START + 1800)
    sandbox.add_fault({"channel": "mastodon", "action": "status", "status": 429, "match": "DELETE"})
    assert _masto(sandbox, "DELETE", f"/api/v1/statuses/{status_id}").headers["X-RateLimit-Reset"] == (
        delete_window_end
    )


# ---------------------------------------------------------------- Mastodon: edits


def test_mastodon_edits_count_in_the_statuses_family_with_new_statuses(sandbox, clock):
    """StatusEdit `rate_limit by: :account, family: :statuses`: each edit is one of the 300 per
    3 hours new statuses use; the 301st is 429 and changes nothing."""
    status_id = _status(sandbox, "version 0")
    edits = [
        _masto(sandbox, "PUT", f"/api/v1/statuses/{status_id}", data={"status": f"version {n}"}) for n in range(1, 8)
    ]
    assert [e.headers["X-RateLimit-Remaining"] for e in (edits[0], edits[-1])] == ["298", "292"]
    for n in range(8, 300):
        assert _masto(sandbox, "PUT", f"/api/v1/statuses/{status_id}", data={"status": f"version {n}"}).is_success
    refused = _masto(sandbox, "PUT", f"/api/v1/statuses/{status_id}", data={"status": "one too many"})
    assert refused.status_code == 429 and refused.json() == {"error": "Too many requests"}
    assert (refused.headers["X-RateLimit-Limit"], refused.headers["X-RateLimit-Remaining"]) == ("300", "0")
    assert refused.headers["X-RateLimit-Reset"] == _iso(WINDOW_START + 3 * 3600)
    source = _masto(sandbox, "GET", f"/api/v1/statuses/{status_id}/source").json()
    assert source["text"] == "version 299"
    assert _masto(sandbox, "POST", "/api/v1/statuses", data={"status": "new"}).status_code == 429


def test_mastodon_an_edit_that_changes_nothing_records_no_revision(sandbox, clock):
    """UpdateStatusService: no significant change raises NoChangesSubmittedError, answered 200
    with the status as it was: no new `edited_at`, and nothing counted."""
    status_id = _status(sandbox, "as it was")
    same = _masto(sandbox, "PUT", f"/api/v1/statuses/{status_id}", data={"status": "as it was"})
    assert same.status_code == 200 and same.json()["edited_at"] is None
    assert same.headers["X-RateLimit-Remaining"] == "299"
    clock.at += 60
    changed = _masto(sandbox, "PUT", f"/api/v1/statuses/{status_id}", data={"status": "changed"}).json()
    clock.at += 60
    again = _masto(sandbox, "PUT", f"/api/v1/statuses/{status_id}", data={"status": "changed"})
    assert again.json()["edited_at"] == changed["edited_at"] is not None
    assert again.headers["X-RateLimit-Remaining"] == "298"


# ---------------------------------------------------------------- Mastodon: media processing that failed


def test_mastodon_media_whose_processing_failed_is_422_to_get_and_put_but_attachable(sandbox, clock):
    """Api::V1::MediaController `check_processing`: 422 "Error processing thumbnail for uploaded
    media" once processing failed; validate_media! lets it through (`not_processed?` is false)."""
    sandbox.set_quirks("mastodon", media_always_async=True, media_processing_fails=True, media_processing_polls=1)
    media_id = _upload(sandbox).json()["id"]
    polls = [_masto(sandbox, "GET", f"/api/v1/media/{media_id}") for _ in range(2)]
    assert [p.status_code for p in polls] == [206, 422]
    assert polls[1].json() == {"error": "Error processing thumbnail for uploaded media"}
    put = _masto(sandbox, "PUT", f"/api/v1/media/{media_id}", data={"description": "alt"})
    assert put.status_code == 422 and put.json() == polls[1].json()
    attached = _masto(sandbox, "POST", "/api/v1/statuses", data={"status": "with it", "media_ids[]": [media_id]})
    assert attached.status_code == 200 and [m["id"] for m in attached.json()["media_attachments"]] == [media_id]


# ---------------------------------------------------------------- the PDS (Bluesky and standard.site)
# What the reference PDS 0.5.35 answered to each scenario (tests/pds_scenarios.py), measured here:
# tests/test_realserver_bluesky.py runs them against it and against the emulator side by side.

LIMITS = "Invalid com.atproto.repo.listRecords params: "
PDS_ANSWERS = {
    "swap": [(200, "", ""), (200, "", ""), (400, "InvalidSwap", "Record was at null"), (400, "RecordNotFound", "")],
    "dereferenced": [
        (200, "", ""),
        (200, "", ""),
        (400, "BlobNotFound", "Could not find blob: A"),
        (200, "", ""),
        (400, "BlobNotFound", "Could not find blob: B"),
        *[(200, "", "")] * 4,
    ],
    "refs": [
        (200, "", ""),
        (200, "", ""),
        (
            400,
            "InvalidMimeType",
            "Referenced Mimetype does not match stored blob. Expected: image/png, Got: image/jpeg",
        ),
    ],
    "limits": [
        (400, "InvalidRequest", LIMITS + "integer too small (minimum 1, got 0)"),
        (400, "InvalidRequest", LIMITS + "integer too big (maximum 100, got 101)"),
        (400, "InvalidRequest", LIMITS + "integer too small (minimum 1, got -5)"),
        (400, "InvalidRequest", LIMITS + 'Expected integer value type (got "abc")'),
        *[(200, "", "")] * 3,
    ],
}


def pds_scenarios_of(account: Account, prefix: str = "3lsyn") -> dict[str, list[pds_scenarios.Said]]:
    """Each scenario once, under record keys of its own (TIDs) starting with `prefix`."""

    def keys(letter: str) -> list[str]:
        return [f"{prefix}{letter}{c}aaaaaa" for c in "234567a"]

    return {
        "swap": pds_scenarios.swap_on_a_deleted_record(account, keys("a")[0]),
        "dereferenced": pds_scenarios.blobs_their_last_record_stopped_naming(account, keys("b"), 41),
        "refs": pds_scenarios.refs_of_a_permanent_and_a_temporary_blob(account, keys("c"), 51),
        "limits": pds_scenarios.list_records_limits(account),
    }


def _sandbox_account(sandbox, service: str = "bluesky") -> Account:
    return Account(f"{sandbox.url}/{service}", "sandbox.bsky.social", "sandbox-bsky-app-password")


@pytest.mark.parametrize("scenario", sorted(PDS_ANSWERS))
def test_the_pds_emulator_answers_as_the_reference_pds(sandbox, scenario):
    """putRecord's swap over no record is InvalidSwap "Record was at null" (repo/transactor.ts
    formatCommit), so a deleted record is not brought back; a blob its last record stopped naming
    is deleted at once (blob/transactor.ts deleteDereferencedBlobs), one another record names is
    kept; a permanent blob's reference is not checked again, a temporary one's is
    (verifyBlobAndMakePermanent); listRecords' `limit` is an integer from 1 to 100 (its lexicon)."""
    assert pds_scenarios_of(_sandbox_account(sandbox))[scenario] == PDS_ANSWERS[scenario]


def test_standard_sites_pds_checks_list_records_limits_too(sandbox):
    account = _sandbox_account(sandbox, "standard")
    assert pds_scenarios.list_records_limits(account, "site.standard.document") == PDS_ANSWERS["limits"]


# ---------------------------------------------------------------- Matrix (Synapse 1.163.2)
# What Synapse answered to each scenario (tests/matrix_scenarios.py), measured here:
# tests/test_realserver_matrix.py runs them against it and against the emulator side by side.

MATRIX_ANSWERS: dict[str, list[Any]] = {
    "redact another's": [(403, "M_FORBIDDEN", "You don't have permission to redact events"), matrix_scenarios.MESSAGE],
    "no JSON, no room": [(400, "M_NOT_JSON"), (403, "M_FORBIDDEN"), (400, "M_NOT_JSON")],
    "cached replays": [200, (200, True), (400, "M_NOT_JSON"), (200, True), (200, 200, True)],
    "rate limit order": [
        *[200] * 3,
        (429, "M_LIMIT_EXCEEDED", True, True),
        (200, True),
        (429, "M_LIMIT_EXCEEDED"),
        (200, True),
        (429, "M_LIMIT_EXCEEDED"),
    ],
}


def matrix_scenarios_of(
    room: matrix_scenarios.Room, theirs: str, elsewhere: str, limit: Callable[[], None]
) -> dict[str, list[Any]]:
    """Each scenario once, in `room` (another user's event `theirs` in it; `elsewhere` a room
    that does not exist); `limit()` stops every new event of the room's user (its rc_message)."""
    return {
        "redact another's": matrix_scenarios.redact_anothers(room, theirs),
        "no JSON, no room": matrix_scenarios.no_json_to_no_room(room, elsewhere),
        "cached replays": matrix_scenarios.cached_replays(room),
        "rate limit order": matrix_scenarios.rate_limit_order(room, limit),  # last: it stays limited
    }


def sandbox_matrix_scenarios(sandbox) -> dict[str, list[Any]]:
    from channel_specs import SPECS

    settings = SPECS["matrix"].raw(sandbox)
    room = matrix_scenarios.Room(settings["homeserver"], settings["access_token"], settings["room_id"])
    theirs = sandbox.emulators["matrix"].add_foreign(matrix_scenarios.MESSAGE["body"])

    def limit() -> None:
        sandbox.set_quirks("matrix", rc_message={"per_second": 1, "burst_count": 0})

    return matrix_scenarios_of(room, theirs, "!nosuchroom:matrix.test", limit)


@pytest.mark.parametrize("scenario", sorted(MATRIX_ANSWERS))
def test_the_matrix_emulator_answers_as_synapse(sandbox, scenario):
    """A member below the room's `redact` power level may not redact another user's event (403,
    handlers/message.py); a body that is no JSON is 400 before the room is looked up
    (RoomSendEventRestServlet._do); a repeat of a PUT is answered from the HTTP transaction cache
    before its body is parsed, and only a success is kept (rest/client/transactions.py);
    rc_message stands after that cache and before the transaction table for a send, after the
    redaction servlet's own lookup for a redaction (handlers/message.py)."""
    assert sandbox_matrix_scenarios(sandbox)[scenario] == MATRIX_ANSWERS[scenario]


# ---------------------------------------------------------------- DEV / Forem: Article's validations


def _article(sandbox, n: int, **fields) -> httpx.Response:
    from mkdocs_syndicate.sandbox.forem import ACCEPT, API_KEY

    article = {"title": f"Article {n}", "body_markdown": "text", "published": True, **fields}
    headers = {"api-key": API_KEY, "Accept": ACCEPT}
    return httpx.post(f"{sandbox.url}/forem/api/articles", headers=headers, json={"article": article})


def test_forem_refuses_a_canonical_url_on_a_host_without_a_dot_or_with_spaces(sandbox):
    """article.rb validates canonical_url with validate_url's `no_local` (the host must hold a
    dot, so an IP address passes) and `canonical_url_must_not_have_spaces` ([[:space:]])."""
    answers = [
        _article(sandbox, n, canonical_url=url)
        for n, url in enumerate(
            [
                "http://localhost:8000/blog/post/",
                "https://intranet/post/",
                "https://example.com/a post/",
                "https://example.com/a\u3000post/",
                "http://127.0.0.1:8000/blog/post/",
                "https://blog.example.com/post/",
            ]
        )
    ]
    said = [(a.status_code, a.json().get("error")) for a in answers]
    not_valid, spaces = "Canonical url is not a valid URL.", "Canonical url must not have spaces."
    assert said[:4] == [
        (422, not_valid),
        (422, not_valid),
        (422, f"{not_valid} {spaces}"),
        (422, f"{not_valid} {spaces}"),
    ]
    assert [status for status, _ in said[4:]] == [201, 201]


def test_forem_counts_the_body_s_800_kb_in_bytes(sandbox):
    """`validates :body_markdown, bytesize: {maximum: 800.kilobytes}`: UTF-8 bytes, so 273,067
    CJK characters (819,201 bytes) are too long where 819,200 ASCII ones are not."""
    at_limit = _article(sandbox, 1, body_markdown="a" * 819_200)
    over = _article(sandbox, 2, body_markdown="日" * 273_067)
    assert at_limit.status_code == 201
    assert (over.status_code, over.json()["error"]) == (422, "Body markdown is too long.")


def test_forem_rack_attack_throttles_one_write_and_three_gets_a_second_as_plain_text(sandbox, clock):
    """Quirk `rack_attack`: DEV's `api_write_throttle` (1 a second per IP and api-key, POST, PUT
    and DELETE alike) and `api_throttle` (3 GETs a second per IP), in epoch-aligned windows,
    answered by Rack::Attack's default responder: 429, "Retry later", Retry-After the seconds left."""
    from mkdocs_syndicate.sandbox.forem import ACCEPT, API_KEY

    sandbox.set_quirks("forem", rack_attack=True)
    headers = {"api-key": API_KEY, "Accept": ACCEPT}
    first = _article(sandbox, 1)
    assert first.status_code == 201, first.text
    article = f"{sandbox.url}/forem/api/articles/{first.json()['id']}"
    second, edit = _article(sandbox, 2), httpx.put(article, headers=headers, json={"article": {"title": "Edited"}})
    assert [(a.status_code, a.text, a.headers.get("Retry-After")) for a in (second, edit)] == [
        (429, "Retry later\n", "1")
    ] * 2
    gets = [httpx.get(article, headers=headers).status_code for _ in range(3)]
    comments = httpx.get(f"{sandbox.url}/forem/api/comments", params={"a_id": first.json()["id"]})
    assert (gets, comments.status_code, comments.text) == ([200, 200, 200], 429, "Retry later\n")
    clock.at += 1  # the next window
    assert _article(sandbox, 3).status_code == 201 and httpx.get(article, headers=headers).status_code == 200


# ---------------------------------------------------------------- Weibo: the daily budget


def test_weibo_allows_an_authorised_user_100_api_calls_a_day_reads_and_shares_alike(sandbox, clock):
    """open.weibo.com/wiki/Rate-limiting: one authorised user of an app may call the open API 100
    times a day in all; past it, error 10023 "User requests out of rate limit!" on every API, until
    the next day (Beijing time, here)."""
    from mkdocs_syndicate.sandbox.weibo import TOKEN

    clock.at = 1_800_028_800.0 - 60  # a minute before midnight in Beijing (16:00 UTC)
    api = f"{sandbox.url}/weibo/2"

    def timeline() -> httpx.Response:
        return httpx.get(f"{api}/statuses/user_timeline.json", params={"access_token": TOKEN})

    def share() -> httpx.Response:
        form = {"access_token": TOKEN, "rip": "203.0.113.7", "status": "Hello https://example.com/a/"}
        return httpx.post(f"{api}/statuses/share.json", data=form)

    assert share().status_code == 200
    assert {timeline().status_code for _ in range(99)} == {200}
    refused = [timeline(), share()]
    assert [(a.status_code, a.json()["error_code"], a.json()["request"]) for a in refused] == [
        (403, 10023, "/2/statuses/user_timeline.json"),
        (403, 10023, "/2/statuses/share.json"),
    ]
    assert refused[0].json()["error"] == "User requests out of rate limit!"
    clock.at += 60  # the next day in Beijing
    assert timeline().status_code == 200


def test_forem_stores_a_title_with_its_whitespace_runs_made_one_space(sandbox):
    """article.rb `normalize_title` (before validation): `gsub(/\\s+/, " ").strip`, so the article
    is stored, listed and shown under the normalised title, on create and on edit alike; Ruby's
    `\\s` is ASCII whitespace, so a no-break space stays."""
    from mkdocs_syndicate.sandbox.forem import ACCEPT, API_KEY

    made = _article(sandbox, 0, title="  Two  spaces\tand\na newline  ")
    assert (made.status_code, made.json()["title"]) == (201, "Two spaces and a newline")
    article = f"{sandbox.url}/forem/api/articles/{made.json()['id']}"
    headers = {"api-key": API_KEY, "Accept": ACCEPT}
    edited = httpx.put(article, headers=headers, json={"article": {"title": "Edited \u00a0 twice  "}})
    assert edited.json()["title"] == httpx.get(article, headers=headers).json()["title"] == "Edited \u00a0 twice"
