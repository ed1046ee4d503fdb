"""How a pair's way ends, word by word: the record written and the text reported for each of the
policy's ending steps, from the attempt's facts (engine/endings.py), and the records a request
writes (engine/records.py). Pure functions: no runner, no server."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mkdocs_syndicate.channels.base import Found, Kind, Outcome
from mkdocs_syndicate.engine.endings import ENDING_STEPS, ERROR_LENGTH, End, Facts, clean, ending, error_text
from mkdocs_syndicate.engine.policy import Action, Step
from mkdocs_syndicate.engine.records import not_made
from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.timeutil import epoch_to_iso

pytestmark = pytest.mark.unit

NOW = "2026-12-05T05:00:00Z"
AT = 1_800_000_000.0
TOKEN = "s3cr3t-t0ken-value"
IN_FLIGHT = Record(
    State.IN_FLIGHT, 2, "2026-12-05T04:59:00Z", idempotency_key="k-1", created_at="c", message_sha256="h"
)


def facts(event=Kind.DONE, **given) -> Facts:
    return Facts("masto", [TOKEN], event, NOW, **given)


def end(step, event=Kind.DONE, current=IN_FLIGHT, **given) -> End:
    action = given.pop("action", Action(step))
    return ending(facts(event, **given), current, action)


def test_every_ending_step_has_an_ending():
    ending_steps = {Step.DONE, Step.DELETED, Step.FAIL, Step.STOP_LANE, Step.RELEASE, Step.AWAIT, Step.LEAVE}
    assert ending_steps | {Step.REVIEW, Step.HOLD} == ENDING_STEPS


# ---------------------------------------------------------------- done: which words, which name


def test_a_send_answered_done_says_sent_and_keeps_the_answers_name():
    outcome = Outcome(Kind.DONE, remote_id="r1", remote_url="https://m/1")
    got = end(Step.DONE, outcome=outcome, found=("read-id", "https://read"))
    assert (got.state, got.text, got.remote_url) == (PairState.DONE, "sent", "https://m/1")
    assert got.record == replace(IN_FLIGHT, state=State.DONE, at=NOW, remote_id="r1", remote_url="https://m/1")


def test_a_read_that_found_it_after_a_send_says_confirmed_by_a_read_with_the_reads_name():
    got = end(Step.DONE, Found.FOUND, found=("read-id", "https://read"), sends=1)
    assert (got.text, got.remote_url) == ("sent (confirmed by a read)", "https://read")
    assert got.record is not None and got.record.remote_id == "read-id"


def test_a_read_before_any_send_says_an_earlier_run_sent_it():
    got = end(Step.DONE, Found.FOUND, found=("read-id", None), sends=0)
    assert got.text == "found by verify (sent by an earlier run)"


def test_a_batch_says_how_many_urls_it_pinged():
    assert end(Step.DONE, batch=3).text == "pinged with 3 URL(s)"


def test_the_policys_reason_wins_over_the_usual_words_and_becomes_the_records_note():
    reason = "received 5 times and never confirmed"
    got = end(Step.DONE, Kind.ACCEPTED, batch=3, action=Action(Step.DONE, reason=reason))
    assert got.text == reason and got.record is not None and got.record.note == reason


def test_a_removed_pages_ping_ends_deleted():
    pinged = replace(IN_FLIGHT, op="delete")
    got = end(Step.DONE, current=pinged, batch=2)
    assert (got.state, got.text) == (PairState.DELETED, "pinged as removed, with 2 URL(s)")
    assert got.record is not None and (got.record.state, got.record.note) == (State.DELETED, "the post was removed")


# ---------------------------------------------------------------- deleted, waiting, left in_flight


def test_deleted_says_the_servers_reason_cleaned_else_the_policys():
    got = end(Step.DELETED, Found.ABSENT, reason=f"gone\nfor {TOKEN}")
    assert (got.state, got.text) == (PairState.DELETED, "gone\\x0afor ***")
    assert got.record is not None and got.record.note == got.text
    assert end(Step.DELETED, Found.ABSENT, action=Action(Step.DELETED, reason="copy gone")).text == "copy gone"


def test_await_keeps_the_record_and_writes_the_wait_as_its_error():
    got = end(Step.AWAIT, Kind.REFUSED, reason="not live yet", action=Action(Step.AWAIT, reason="waiting"))
    assert (got.state, got.text) == (PairState.WAITING, "not live yet; waiting")
    assert got.record == replace(IN_FLIGHT, error="not live yet; waiting")


def test_leave_writes_nothing_and_says_the_answer_the_cause_and_the_policy_once_each():
    outcome = Outcome(Kind.AMBIGUOUS, error="timed out")
    action = Action(Step.LEAVE, at=AT, needs_review=True, reason="outcome unknown")
    got = end(Step.LEAVE, Kind.AMBIGUOUS, outcome=outcome, reason="timed out", action=action)
    assert got.record is None and got.state == PairState.IN_FLIGHT and got.needs_review
    assert got.text == f"needs review: timed out; outcome unknown (after {epoch_to_iso(AT)})"
    other = end(Step.LEAVE, Found.UNKNOWN, outcome=outcome, reason="read failed", action=Action(Step.LEAVE))
    assert (other.text, other.needs_review) == ("timed out; read failed", False)
    assert end(Step.LEAVE, Kind.AMBIGUOUS, current=None).text == "unknown error"


# ---------------------------------------------------------------- failed, stopped, released


def test_a_refusal_fails_the_in_flight_record_and_takes_back_its_attempt():
    got = end(Step.FAIL, Kind.REFUSED, reason="422 too long")
    assert (got.state, got.text, got.stops_lane) == (PairState.FAILED, "422 too long", None)
    assert got.record == replace(IN_FLIGHT, state=State.FAILED, at=NOW, error="422 too long", attempts=1)


def test_an_uncertain_failure_keeps_its_attempt():
    got = end(Step.FAIL, Kind.AMBIGUOUS, reason="500")
    assert got.record is not None and got.record.attempts == IN_FLIGHT.attempts


def test_a_conflict_takes_a_fresh_key_next_time():
    got = end(Step.FAIL, Found.CONFLICT, reason="not ours")
    assert got.record is not None and (got.record.idempotency_key, got.record.created_at) == (None, None)


def test_a_failure_of_a_record_not_in_flight_writes_nothing():
    failed = replace(IN_FLIGHT, state=State.FAILED)
    assert end(Step.FAIL, Found.CONFLICT, current=failed, reason="x").record is None


def test_a_stopped_lane_says_which_channel_and_why():
    got = end(Step.STOP_LANE, Kind.AUTH, reason="401 bad token")
    assert (got.state, got.stops_lane) == (PairState.FAILED, "masto stopped for this run: 401 bad token")


def test_a_stop_whose_outcome_is_unknown_keeps_the_pair_in_flight():
    action = Action(Step.STOP_LANE, keep_in_flight=True, reason="read before sending again")
    got = end(Step.STOP_LANE, Kind.AMBIGUOUS, reason="timed out", action=action)
    assert (got.record, got.state) == (None, PairState.IN_FLIGHT)
    assert got.text == "timed out; read before sending again"
    assert got.stops_lane == "masto stopped for this run: timed out"


def test_a_rate_limit_says_until_when():
    got = end(Step.STOP_LANE, Kind.RATE_LIMITED, reason="429", action=Action(Step.STOP_LANE, at=AT))
    assert got.text == f"429; retry after {epoch_to_iso(AT)}"


def test_a_release_says_the_policys_reason_and_leaves_the_pair_pending():
    action = Action(Step.RELEASE, reason="verify: not there; the next run sends it")
    got = end(Step.RELEASE, Found.ABSENT, reason="404", action=action)
    assert (got.state, got.text) == (PairState.PENDING, action.reason)
    assert got.record is not None and got.record.error == action.reason


# ---------------------------------------------------------------- the words and records underneath


def test_error_text_prefers_the_servers_words():
    assert error_text(facts(Kind.REFUSED, reason="bad"), Action(Step.FAIL, reason="policy")) == "bad"
    assert error_text(facts(Kind.REFUSED), Action(Step.FAIL, reason="policy")) == "policy"


def test_clean_redacts_before_it_cuts():
    long = "x" * (ERROR_LENGTH - 5) + TOKEN
    cut = clean(long, [TOKEN])
    assert TOKEN[:3] not in cut[ERROR_LENGTH - 10 :]
    assert len(cut) <= ERROR_LENGTH
    assert clean(None, []) == "unknown error"


def test_a_removed_pages_ping_not_made_goes_back_to_done_with_a_note():
    pinged = replace(IN_FLIGHT, op="delete")
    expected = replace(IN_FLIGHT, state=State.DONE, at=NOW, note="delete not made: 503")  # the op is done with
    assert not_made(pinged, "503", NOW) == expected
