"""Kill anywhere during a run that edits copies in place, rerun: every copy ends up saying the
corrected text, was edited at most once more than needed, and no copy was ever made again
(issue 34, "Crash safety of the new actions"). The scenario of test_crash_matrix.py (3 posts on
every channel type, child processes against a private emulator): a clean first run announces,
then the posts' descriptions are corrected and the update run is SIGKILLed at each of its
checkpoints in turn (in the dev profile a fixed spread of them: tests/profiles.py), and around an
edit by the emulator itself.
"""

from __future__ import annotations

import json
import signal

import crashlab
import pytest
from crashlab import STATS, Scenario, checkpoint_names
from profiles import crash_points
from test_crash_matrix import parallel

from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import TYPES

pytestmark = pytest.mark.crash


def announced(scenario: Scenario) -> None:
    code, output = scenario.run()
    assert code == 0, output
    scenario.check()


def correct(scenario: Scenario) -> None:
    spec_path = scenario.folder / "spec.json"
    spec = json.loads(spec_path.read_text())
    for post in spec["posts"]:
        post["description"] = "Corrected: " + post["description"]
    spec_path.write_text(json.dumps(spec))


def edited_once_or_twice(scenario: Scenario) -> None:
    """Each copy says the corrected text (a status edited once, or once more after an unknown
    outcome; DEV's article and Bluesky's card at the same id), and none was made twice."""
    statuses = scenario.server.snapshot()["mastodon"]["statuses"]
    assert len(statuses) == len(crashlab.KEYS), statuses
    for status in statuses:
        assert "Corrected: " in status["text"], status["text"]
        assert 1 <= len(status.get("edits", [])) <= 2, status.get("edits")
    state = scenario.server.snapshot()
    articles = state["forem"]["articles"]
    assert len(articles) == len(crashlab.KEYS) and all("Corrected: " in a["description"] for a in articles)
    cards = [r["value"]["embed"]["external"]["description"] for r in state["bluesky"]["records"].values()]
    assert len(cards) == len(crashlab.KEYS) and all("Corrected: " in card for card in cards), cards


def recovered(scenario: Scenario) -> None:
    scenario.recovers()  # no duplicate at any point, then plain runs finish everything
    edited_once_or_twice(scenario)
    book = Ledger.read(scenario.folder / "ledger.yml")
    assert all(record.op is None for entry in book.posts.values() for record in entry.channels.values())


@pytest.fixture(scope="module")
def update_run(tmp_path_factory) -> list[str]:
    """The checkpoints an update run passes, in order."""
    folder = tmp_path_factory.mktemp("update-clean")
    scenario = Scenario(folder)
    try:
        announced(scenario)
        correct(scenario)
        code, output = scenario.run(SYNDICATE_CHECKPOINT_LOG=str(folder / "checkpoints.log"))
        assert code == 0, output
        edited_once_or_twice(scenario)
    finally:
        scenario.close()
    names = checkpoint_names(folder / "checkpoints.log")
    # One update per post on each channel that edits in place, and one ping of the three changed
    # pages (IndexNow pings a changed page again).
    editing = [
        spec for spec in crashlab.channels("http://x").values() if TYPES[spec["type"]].client_class().edits_in_place
    ]
    batched = [spec for spec in editing if TYPES[spec["type"]].client_class().batched]
    expected = len(crashlab.KEYS) * (len(editing) - len(batched)) + len(batched)
    assert names.count("before_in_flight_write") == expected, names
    return names


def test_kill_at_every_checkpoint_of_an_update_run_then_rerun(update_run, tmp_path):
    def scenario_at(n: int) -> None:
        scenario = Scenario(tmp_path / f"u{n}")
        try:
            announced(scenario)
            correct(scenario)
            code, output = scenario.run(SYNDICATE_CRASH_AT=str(n))
            assert code == -signal.SIGKILL, f"not killed at checkpoint {n} of the update run: {output}"
            landed = update_run[n - 1]
            STATS[f"update-run kills landing at {landed}"] += 1
            Ledger.read(scenario.folder / "ledger.yml")
            recovered(scenario)
        finally:
            scenario.close()

    points = crash_points(update_run)  # all of them in the ci profile
    failures = parallel(points, scenario_at)
    STATS["update-run checkpoint kill scenarios"] += len(points)
    assert not failures, failures[:5]


@pytest.mark.parametrize("action", ["kill_before", "kill_after", "drop_after"])
def test_the_emulator_kills_the_client_around_an_edit(tmp_path, action):
    """kill_after: Mastodon made the edit and the client died before reading the answer — the
    case only a read of the copy settles without a second edit."""
    scenario = Scenario(tmp_path / action)
    try:
        announced(scenario)
        correct(scenario)
        process = scenario.start()
        fault = {"channel": "mastodon", "action": action, "match": "PUT /api/v1/statuses/"}
        scenario.server.add_fault({**fault, "pid": process.pid} if action.startswith("kill") else fault)
        output = "".join(process.communicate(timeout=120))
        if action.startswith("kill"):
            assert process.returncode == -signal.SIGKILL, output
        STATS[f"update emulator {action} scenarios"] += 1
        recovered(scenario)
    finally:
        scenario.close()
