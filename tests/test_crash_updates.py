"""Kill anywhere during a run that edits copies in place or deletes a removed post's copies,
rerun: every copy ends up saying the corrected text, or deleted, each edit or delete carried out
at most once more than needed, and no copy was ever made again (issue 34, "Crash safety of the
new actions"). The scenario of test_crash_matrix.py (3 posts on every channel type, child
processes against a private emulator): a clean first run announces, then the posts'
descriptions are corrected (or one post is removed from the source and its page answers 404)
and that run is SIGKILLed at each of its checkpoints in turn (and around each edit or delete by
the emulator itself). Each kill is asked for by name (`name:K`) and checked against the killed
run's own checkpoint log: it lands where it claims, however a loaded machine interleaves lanes
(crashlab.kill_specs: every protocol checkpoint of every pair; the atomic write's own steps of
the first and last write; in the dev profile a fixed spread of them: tests/profiles.py).
"""

from __future__ import annotations

import json
import signal

import crashlab
import pytest
from conftest import make_post
from crashlab import (
    DELETE_REQUESTS,
    STATS,
    RemovalScenario,
    Scenario,
    checkpoint_names,
    chosen_specs,
    kill_specs,
    landed,
)
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
    # One update per post on each channel that edits in place, and on a batched one one request per
    # batch of the three changed pages (IndexNow pings them in one; Webmention tells each post's).
    editing = [
        spec for spec in crashlab.channels("http://x").values() if TYPES[spec["type"]].client_class().edits_in_place
    ]
    expected = sum(requests_for(TYPES[spec["type"]].client_class()) for spec in editing)
    assert names.count("before_in_flight_write") == expected, names
    return names


def killed_at(scenario: Scenario, spec: str, what: str) -> None:
    """Run with SYNDICATE_CRASH_AT=spec (`name:K`); the run must die there, by its own log."""
    log = scenario.folder / "killed-checkpoints.log"
    code, output = scenario.run(SYNDICATE_CRASH_AT=spec, SYNDICATE_CHECKPOINT_LOG=str(log))
    assert code == -signal.SIGKILL, f"not killed at {spec} of the {what} run: {output}"
    where, open_pairs = landed(log)
    assert where == spec.rpartition(":")[0], f"asked to die at {spec}, died at {where}"
    STATS[f"{what}-run kills landing at {where}"] += 1
    if open_pairs:
        STATS[f"{what}-run kills landing with the {what} in flight"] += 1
    Ledger.read(scenario.folder / "ledger.yml")  # whole, parseable


def test_kill_at_every_checkpoint_of_an_update_run_then_rerun(update_run, tmp_path):
    def scenario_at(spec: str) -> None:
        scenario = Scenario(tmp_path / spec.replace(":", "-"))
        try:
            announced(scenario)
            correct(scenario)
            killed_at(scenario, spec, "update")
            recovered(scenario)
        finally:
            scenario.close()

    specs = chosen_specs(kill_specs(update_run))  # all of them in the ci profile
    failures = parallel(specs, scenario_at)
    STATS["update-run checkpoint kill scenarios"] += len(specs)
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


# ---------------------------------------------------------------- deletes (a removed post)

REMOVED = "blog/two/"


def deleting_types() -> list[str]:
    return sorted(
        {spec["type"] for spec in crashlab.channels("http://x", removals=True).values() if spec.get("removals")}
    )


def requests_for(cls) -> int:
    """The requests a channel type makes for the scenario's posts: one each, or one per batch (a
    batched type groups posts by the posts alone: no setting of the channel is read)."""
    if not cls.batched:
        return len(crashlab.KEYS)
    posts = [make_post(n, key=key, url=f"https://example.com/{key}") for n, key in enumerate(crashlab.KEYS, 1)]
    return len(cls.batches(object.__new__(cls), posts))


@pytest.fixture(scope="module")
def delete_run(tmp_path_factory) -> list[str]:
    """The checkpoints a delete run passes, in order: one delete per channel that deletes."""
    folder = tmp_path_factory.mktemp("delete-clean")
    scenario = RemovalScenario(folder)
    try:
        scenario.announced()
        scenario.remove(REMOVED)
        code, output = scenario.run(SYNDICATE_CHECKPOINT_LOG=str(folder / "checkpoints.log"))
        assert code == 0, output
        scenario.check()
    finally:
        scenario.close()
    names = checkpoint_names(folder / "checkpoints.log")
    assert {"mastodon", "bluesky", "forem", "indexnow"} <= set(deleting_types())
    assert names.count("before_in_flight_write") == len(deleting_types()), names
    # Each delete's answer is recorded between the done checkpoints, IndexNow's batched ping too.
    assert names.count("before_done_write") == len(deleting_types()), names
    return names


def test_kill_at_every_checkpoint_of_a_delete_run_then_rerun(delete_run, tmp_path):
    """Mastodon, Bluesky, DEV and IndexNow each delete (or ping) the removed post's copy; the run
    dies at every checkpoint of it, and reruns end with every copy deleted once, never made again."""

    def scenario_at(spec: str) -> None:
        scenario = RemovalScenario(tmp_path / spec.replace(":", "-"))
        try:
            scenario.announced()
            scenario.remove(REMOVED)
            killed_at(scenario, spec, "delete")
            scenario.recovers()
        finally:
            scenario.close()

    specs = chosen_specs(kill_specs(delete_run))  # all of them in the ci profile
    failures = parallel(specs, scenario_at)
    STATS["delete-run checkpoint kill scenarios"] += len(specs)
    assert not failures, failures[:5]


DELETE_KILLS = [(emulator, action) for emulator in DELETE_REQUESTS for action in ("kill_before", "kill_after")]


def test_the_emulator_kills_the_client_around_a_delete(tmp_path):
    """kill_before: the service never carried the delete out; kill_after: it did, and the client
    died before the answer — only a read of the copy's own id settles that without a create."""

    def scenario_for(case: tuple[str, str]) -> None:
        emulator, action = case
        scenario = RemovalScenario(tmp_path / f"{emulator}-{action}")
        try:
            scenario.announced()
            scenario.remove(REMOVED)
            before = len(scenario.server.requests(emulator))
            process = scenario.start()
            line = DELETE_REQUESTS[emulator]
            scenario.server.add_fault({"channel": emulator, "action": action, "match": line, "pid": process.pid})
            output = "".join(process.communicate(timeout=120))
            assert process.returncode == -signal.SIGKILL, output
            asked = [r for r in scenario.server.requests(emulator)[before:] if line in f"{r['method']} {r['path']}"]
            assert asked, "the kill did not come from the delete"
            assert all(f["channel"] != emulator for f in scenario.server.faults), "the fault was never taken"
            copy_gone = carried_out(scenario, emulator)
            assert copy_gone == (action == "kill_after"), (emulator, action)
            record = Ledger.read(scenario.folder / "ledger.yml").record(REMOVED, channel_of(emulator))
            assert record is not None and record.state == "in_flight" and record.op == "delete", record
            STATS[f"delete emulator {action} scenarios"] += 1
            scenario.recovers()
        finally:
            scenario.close()

    failures = parallel(DELETE_KILLS, scenario_for)
    assert not failures, failures[:5]


def channel_of(emulator: str) -> str:
    return next(c for c, e in crashlab.TYPE_OF.items() if e == emulator)


def carried_out(scenario: RemovalScenario, emulator: str) -> bool:
    """Whether the service has carried out the removed post's delete (IndexNow: pinged it again)."""
    state, url = scenario.server.snapshot(), scenario.url(REMOVED)
    if emulator == "indexnow":
        return sum(url in ping["urls"] for ping in state["indexnow"]["pings"]) >= 2
    return url not in [u for _, u in crashlab.public_copies(state, emulator)]
