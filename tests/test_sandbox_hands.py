"""The sandbox's faults for a post's later life: `undone_after`, a service that answers an edit
or a delete as made and keeps nothing of it, and `by_hand_before`, the service's user acting by
hand on what a request names just before it arrives (docs/sandbox.md)."""

from __future__ import annotations

import httpx
import pytest
from channel_specs import SPECS

pytestmark = pytest.mark.http


def _status(sandbox, text: str) -> tuple[str, dict[str, str], str]:
    raw = SPECS["mastodon"].raw(sandbox)
    base, headers = raw["instance"], {"Authorization": f"Bearer {raw['token']}"}
    made = httpx.post(f"{base}/api/v1/statuses", data={"status": text}, headers=headers)
    made.raise_for_status()
    return f"{base}/api/v1/statuses/{made.json()['id']}", headers, made.json()["id"]


def test_undone_after_answers_as_the_service_does_and_keeps_nothing(sandbox):
    url, headers, _ = _status(sandbox, "the first text")
    sandbox.add_fault({"channel": "mastodon", "match": "PUT /api/v1/statuses/", "action": "undone_after"})
    answer = httpx.put(url, data={"status": "the new text"}, headers=headers)
    assert answer.status_code == 200 and "the new text" in answer.json()["content"]  # its own answer
    assert httpx.get(f"{url}/source", headers=headers).json()["text"] == "the first text"
    assert sandbox.faults == []  # used up: the next edit is made
    httpx.put(url, data={"status": "the new text"}, headers=headers).raise_for_status()
    assert httpx.get(f"{url}/source", headers=headers).json()["text"] == "the new text"


def test_by_hand_before_deletes_the_status_the_request_names_first(sandbox):
    url, headers, _ = _status(sandbox, "a status")
    sandbox.add_fault(
        {"channel": "mastodon", "match": "PUT /api/v1/statuses/", "action": "by_hand_before", "hand": "delete"}
    )
    answer = httpx.put(url, data={"status": "edited"}, headers=headers)
    assert answer.status_code == 404 and answer.json() == {"error": "Record not found"}
    assert sandbox.snapshot()["mastodon"]["statuses"] == []


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ({"channel": "mastodon", "action": "by_hand_before", "hand": "unpublish"}, "knows no 'unpublish'"),
        ({"channel": "matrix", "action": "by_hand_before", "hand": "redact"}, "known: none"),
    ],
)
def test_a_hand_or_action_the_emulator_does_not_know_is_refused_by_name(sandbox, fault, words):
    with pytest.raises(ValueError, match=words):
        sandbox.add_fault(fault)
    refused = httpx.post(f"{sandbox.url}/_sandbox/faults", json=fault)
    assert refused.status_code == 400 and words in refused.json()["error"]
