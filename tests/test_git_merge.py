"""The three-way merge of ledgers after a lost push (ledger/gitmirror.py), without git: which pairs
are contested (take theirs, re-plan) and what a merge keeps."""

from __future__ import annotations

import pytest

from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.ledger.merge import Pair, changed_pairs, contested_pairs, merge, without_unpushed_in_flight
from mkdocs_syndicate.ledger.schema import PostEntry, Posts, Record, State

pytestmark = pytest.mark.unit

AT = "2026-12-03T10:00:00Z"


def ledger(**records: Record) -> Posts:
    """posts keyed by `post__channel` keywords, e.g. ledger(a__masto=Record(...))."""
    posts: Posts = {}
    for name, record in records.items():
        key, channel = name.split("__")
        entry = posts.setdefault(f"blog/{key}/", PostEntry(f"https://example.com/blog/{key}/", key.upper(), {}))
        entry.channels[channel] = record
    return posts


def flight(at: str = AT) -> Record:
    return Record(State.IN_FLIGHT, 1, at, idempotency_key="k", created_at=at)


def done(remote_id: str = "1") -> Record:
    return Record(State.DONE, 1, AT, remote_id=remote_id)


def test_their_change_to_a_pair_we_left_alone_merges():
    base = ledger(a__masto=flight())
    ours = ledger(a__masto=done())
    theirs = ledger(a__masto=flight(), b__masto=flight())
    assert contested_pairs(base, ours, theirs, set()) == []
    assert merge(base, ours, theirs) == ledger(a__masto=done(), b__masto=flight())


def test_both_changing_a_pair_differently_is_contested():
    base = ledger(a__masto=flight())
    assert contested_pairs(base, ledger(a__masto=done("1")), ledger(a__masto=done("2")), set()) == [
        Pair("blog/a/", "masto")
    ]


def test_equal_finished_records_merge():
    base = ledger(a__masto=flight())
    assert contested_pairs(base, ledger(a__masto=done()), ledger(a__masto=done()), set()) == []


def test_equal_in_flight_records_are_two_claims_and_contested():
    """Regression: same second, same key, same text; only the pushed claim may send."""
    assert contested_pairs({}, ledger(a__devto=flight()), ledger(a__devto=flight()), set()) == [
        Pair("blog/a/", "devto")
    ]


def test_equal_in_flight_records_of_an_at_least_once_channel_merge():
    """A second IndexNow ping is harmless: two equal claims on it need no winner."""
    both = ledger(a__ping=flight())
    assert contested_pairs({}, both, ledger(a__ping=flight()), set(), exclusive={"masto"}) == []
    assert contested_pairs({}, both, ledger(a__ping=flight()), set(), exclusive={"ping"}) == [Pair("blog/a/", "ping")]


def test_their_change_to_a_pair_of_our_plan_is_contested():
    assert contested_pairs({}, {}, ledger(a__devto=flight()), {("blog/a/", "devto")}) == [Pair("blog/a/", "devto")]


def test_an_unpushed_in_flight_is_dropped_and_a_pushed_one_kept():
    base = ledger(a__masto=flight("2026-12-03T09:00:00Z"))
    ours = ledger(a__masto=flight(), b__masto=flight(), c__masto=done())
    assert without_unpushed_in_flight(ours, base) == ledger(a__masto=flight("2026-12-03T09:00:00Z"), c__masto=done())


def test_changed_pairs_compares_by_value_and_skips_shared_entries():
    """Entries are copied on write, so one both ledgers hold is unchanged; a copy equal in value is
    unchanged too, and one changed record in it is found."""
    base = ledger(a__masto=done(), b__masto=flight())
    shared = dict(base)
    assert changed_pairs(base, shared) == set()
    copied = ledger(a__masto=done(), b__masto=flight())
    assert changed_pairs(base, copied) == set()
    copied["blog/b/"].channels["masto"] = done("9")
    assert changed_pairs(base, copied) == {("blog/b/", "masto")}


def test_the_report_is_the_ledger_as_pushed_one_line_per_pair():
    from mkdocs_syndicate.engine.results import PairResult
    from mkdocs_syndicate.engine.syndication import as_recorded

    posts = {
        "a/": PostEntry(
            "u",
            "t",
            {"m": Record(State.DONE, 1, "2026-12-02T07:00:00Z"), "p": Record(State.DONE, 1, "2026-12-02T07:00:00Z")},
        ),
        "b/": PostEntry("u", "t", {"m": Record(State.FAILED, 1, "2026-12-02T07:00:00Z", error="x")}),
    }
    said = [
        PairResult("a/", "m", PairState.NOT_ATTEMPTED, "the run stopped: a race"),  # round 1
        PairResult("a/", "p", PairState.NOT_ATTEMPTED, "another run changed this pair"),  # theirs, now done
        PairResult("b/", "m", PairState.NOT_ATTEMPTED, "the run stopped"),
        PairResult("a/", "m", PairState.DONE, "sent"),  # round 2
        PairResult("b/", "m", PairState.FAILED, "refused"),
    ]
    assert [(r.post_key, r.channel, r.state) for r in as_recorded(said, posts)] == [
        ("a/", "m", "done"),
        ("b/", "m", "failed"),
    ]
