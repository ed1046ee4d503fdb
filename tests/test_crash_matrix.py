"""Kill anywhere, rerun, nothing lost and nothing doubled (docs/design/testing.md).

Each scenario is 3 posts × 5 channels against its own emulator, run in child processes:
- every checkpoint N of a clean run: SIGKILL at N, then plain reruns after the settle time (in the
  dev profile a fixed spread of them, every kind of checkpoint included: tests/profiles.py);
- the emulator SIGKILLs the client just before and just after committing, for every post and channel;
- double crashes: the recovery run is killed too (sampled);
- a random soak: jittered latency and 1-3 kills per seed, timed from the child's first checkpoint
  (12 seeds in the dev profile, 200 in ci; SYNDICATE_SOAK_SEEDS overrides both).
Every kind of scenario also runs against hostile servers (crashlab.HOSTILE): a Mastodon that
ignores Idempotency-Key or answers a replayed key with 500, and slow commits, some of them slower
than the client's timeout.
"""

from __future__ import annotations

import os
import random
import signal
from concurrent.futures import ThreadPoolExecutor

import crashlab
import pytest
from crashlab import STATS, Scenario, checkpoint_names, kill_specs
from profiles import PROFILE, crash_points, sized

from mkdocs_syndicate.checkpoints import DECLARED
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.crash

WORKERS = 4
SOAK_SEEDS = int(os.environ.get("SYNDICATE_SOAK_SEEDS", sized(dev=12, ci=200)))
SOAK_FIRST_SEED = int(os.environ.get("SYNDICATE_SOAK_SEED", "0"))


def parallel(items, job):
    """Run job(item) for each item; collect (item, error text) for the failures."""

    def guarded(item):
        try:
            job(item)
            return None
        except Exception as exc:
            return item, f"{type(exc).__name__}: {exc}"

    with ThreadPoolExecutor(WORKERS) as pool:
        return [r for r in pool.map(guarded, items) if r is not None]


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    """The checkpoints a clean run passes, in order."""
    folder = tmp_path_factory.mktemp("clean")
    scenario = Scenario(folder, threads=True)
    try:
        code, output = scenario.run(SYNDICATE_CHECKPOINT_LOG=str(folder / "checkpoints.log"))
        assert code == 0, output
        scenario.check()
    finally:
        scenario.close()
    return checkpoint_names(folder / "checkpoints.log")


def test_every_declared_checkpoint_is_reached(clean_run):
    assert set(clean_run) == set(DECLARED), set(DECLARED) - set(clean_run)
    STATS["checkpoints K (clean run)"] = len(clean_run)


def test_kill_at_every_checkpoint_then_rerun(clean_run, tmp_path):
    def scenario_at(n):
        hostile = crashlab.SAME_PATH[n % len(crashlab.SAME_PATH)]
        scenario = Scenario(tmp_path / f"n{n}-{hostile}", hostile, threads=True)
        try:
            code, output = scenario.run(SYNDICATE_CRASH_AT=str(n))
            assert code == -signal.SIGKILL, f"not killed at checkpoint {n}: {output}"
            Ledger.read(scenario.folder / "ledger.yml")  # whole, parseable
            scenario.recovers()
        finally:
            scenario.close()

    points = crash_points(clean_run)  # all of them in the ci profile
    failures = parallel(points, scenario_at)
    STATS["checkpoint kill scenarios"] += len(points)
    assert not failures, failures[:5]


def test_kill_at_every_checkpoint_of_a_threads_parts_then_rerun(clean_run, tmp_path):
    """Issue 35: the long post's later parts (a thread on Mastodon and Bluesky), killed at every
    hit of every part checkpoint in every profile (before its in_flight write, after it, after
    the answer, before and after the write that records the part): the rerun completes the
    thread from the first part a read cannot find, no part twice. Prints where each kill landed."""
    names = [name for name in kill_specs(clean_run) if "_part_" in name]
    landings: dict[str, str] = {}

    def scenario_at(spec):
        hostile = ("plain", "masto-ignores-key", "slow-commits")[len(landings) % 3]
        scenario = Scenario(tmp_path / spec.replace(":", "-"), hostile, threads=True)
        log = scenario.folder / "checkpoints.log"
        try:
            code, output = scenario.run(SYNDICATE_CRASH_AT=spec, SYNDICATE_CHECKPOINT_LOG=str(log))
            assert code == -signal.SIGKILL, f"not killed at {spec}: {output}"
            last, in_flight = crashlab.landed(log)
            landings[spec] = f"{last}; in flight: {', '.join(sorted(in_flight)) or 'none'}"
            scenario.recovers()
        finally:
            scenario.close()

    assert len(names) >= 15, names  # 5 checkpoints for each of the 3 later parts (and Mastodon's)
    failures = parallel(names, scenario_at)
    print("\nthread part kills:\n" + "\n".join(f"  {spec:34} landed at {landings.get(spec, '?')}" for spec in names))
    STATS["thread part kill scenarios"] += len(names)
    assert not failures, failures[:5]


# A thread's later parts (the third post: its 2nd part on Mastodon, its 2nd and 3rd on Bluesky)
# killed by the service just before and just after it commits the part.
PART_KILLS = [
    (emulator, skip, action)
    for emulator, skips in (("mastodon", (3,)), ("bluesky", (3, 4)))
    for skip in skips
    for action in ("kill_before", "kill_after")
]


def test_emulator_kills_the_client_around_a_threads_parts(tmp_path):
    def scenario_for(case):
        emulator, skip, action = case
        scenario = Scenario(tmp_path / f"{emulator}-{skip}-{action}", threads=True)
        try:
            process = scenario.start()
            creating = "POST /api/v1/statuses" if emulator == "mastodon" else "com.atproto.repo.putRecord"
            scenario.server.add_fault(
                {"channel": emulator, "action": action, "pid": process.pid, "match": creating, "skip": skip}
            )
            output = "".join(process.communicate(timeout=120))
            assert process.returncode == -signal.SIGKILL, output
            scenario.recovers()
        finally:
            scenario.close()

    failures = parallel(PART_KILLS, scenario_for)
    STATS["thread part emulator kill scenarios"] += len(PART_KILLS)
    assert not failures, failures[:5]


# Every registered type's emulator kills the client around its commit: around each post's on an
# at-most-once type, around the first request of the others (a batched one carries several posts).
def _server_kill_variants(nth: int, action: str) -> tuple[str, ...]:
    """The servers a kill runs against: a plain one and a hostile one in the ci profile; in dev one
    of the two, alternating, so that each emulator meets both across its kills."""
    both = ("plain", "masto-ignores-key" if nth % 2 else "slow-commits")
    return both if PROFILE == "ci" else (both[(nth + (action == "kill_after")) % 2],)


SERVER_KILLS = [
    (emulator, nth, action, hostile)
    for emulator in crashlab.TYPE_OF.values()
    # The first commit, and one after earlier ones (the ci profile adds a third).
    for nth in (range(sized(dev=2, ci=3)) if emulator in crashlab.AT_MOST_ONCE.values() else range(1))
    for action in ("kill_before", "kill_after")
    for hostile in _server_kill_variants(nth, action)
]


def test_emulator_kills_the_client_around_every_commit(tmp_path):
    def scenario_for(case):
        emulator, nth, action, hostile = case
        scenario = Scenario(tmp_path / f"{emulator}-{nth}-{action}-{hostile}", hostile, threads=True)
        try:
            if nth:
                scenario.server.add_fault({"channel": emulator, "action": "delay_after", "seconds": 0, "times": nth})
            process = scenario.start()
            scenario.server.add_fault({"channel": emulator, "action": action, "pid": process.pid})
            output = "".join(process.communicate(timeout=120))
            assert process.returncode == -signal.SIGKILL, output
            scenario.recovers()
        finally:
            scenario.close()

    failures = parallel(SERVER_KILLS, scenario_for)
    STATS["emulator kill scenarios"] += len(SERVER_KILLS)
    assert not failures, failures[:5]


def test_double_crash_the_recovery_run_is_killed_too(clean_run, tmp_path):
    rng = random.Random(7)
    pairs = [(i, rng.randint(1, len(clean_run)), rng.randint(1, 40)) for i in range(sized(dev=8, ci=16))]

    def scenario_for(pair):
        index, first, second = pair
        hostile = crashlab.SAME_PATH[index % len(crashlab.SAME_PATH)]
        scenario = Scenario(tmp_path / f"d{index}-{first}-{second}-{hostile}", hostile, threads=True)
        try:
            assert scenario.run(SYNDICATE_CRASH_AT=str(first))[0] == -signal.SIGKILL
            scenario.settle()
            code, output = scenario.run(SYNDICATE_CRASH_AT=str(second))  # may finish before `second`
            assert code in (0, -signal.SIGKILL), output
            scenario.recovers()
        finally:
            scenario.close()

    failures = parallel(pairs, scenario_for)
    STATS["double crash scenarios"] += len(pairs)
    assert not failures, failures[:5]


def test_random_kill_soak(tmp_path):
    seeds = range(SOAK_FIRST_SEED, SOAK_FIRST_SEED + SOAK_SEEDS)
    variants = list(crashlab.HOSTILE)
    landings: list[str | None] = []

    def scenario_for(seed):
        rng = random.Random(seed)
        hostile = variants[seed % len(variants)]
        scenario = Scenario(tmp_path / f"s{seed}-{hostile}", hostile, threads=True)
        jitter = random.Random(seed + 1_000_000)
        scenario.server.latency = lambda: jitter.uniform(0, 0.015)
        try:
            # 1-3 runs killed in a row (each later one is a recovery of the one before; sometimes
            # after the settle time, sometimes before it), then plain runs finish the work.
            for _ in range(rng.randint(1, 3)):
                # Timed from the child's first checkpoint, so the kill lands in the run, not in
                # the interpreter's start-up; the window covers a clean run's length.
                landings.append(scenario.kill_after_first_checkpoint(rng.uniform(0.0, SOAK_WINDOW[hostile])))
                Ledger.read(scenario.folder / "ledger.yml")
                scenario.at_most_once_holds()
                if rng.random() < 0.5:
                    scenario.settle()
            scenario.recovers()
        except AssertionError as exc:
            raise AssertionError(
                f"seed {seed} ({hostile}; replay: SYNDICATE_SOAK_SEED={seed} SYNDICATE_SOAK_SEEDS=1): {exc}"
            ) from None
        finally:
            scenario.close()

    failures = parallel(seeds, scenario_for)
    STATS["soak seeds"] += len(seeds)
    assert not failures, failures[:5]
    kills = [landed for landed in landings if landed is not None]
    inside = kills.count("in flight")
    print(
        f"\nsoak: {len(landings)} kill attempts, {len(kills)} landed, {inside} between an in_flight write "
        f"and its resolution, {kills.count('between pairs')} between pairs, "
        f"{len(landings) - len(kills)} after the run had ended"
    )
    assert inside * 2 > len(kills), "most kills must land inside an in_flight window"


LIFE_SOAK_SEEDS = int(os.environ.get("SYNDICATE_SOAK_SEEDS", sized(dev=10, ci=40)))
LIFE_WINDOW = 0.4  # seconds: about a run that edits one post's copies and deletes another's


def test_random_kill_soak_of_a_posts_life(tmp_path):
    """The soak over what happens to posts after their announcement (issue 34): one post's
    description corrected, another removed from the source and the web, each change made
    before the first killed run or between two of them (the seed decides); 1-3 runs killed at a
    random moment, then plain runs. Invariants (crashlab.RemovalScenario.check): no post made
    twice and no create at all since the announcement, every copy corrected or deleted (nothing
    lost), each edit and each delete carried out at most once more than needed, the ledger
    `done` or `deleted` with no operation left in flight."""
    seeds = range(SOAK_FIRST_SEED, SOAK_FIRST_SEED + LIFE_SOAK_SEEDS)
    variants = list(crashlab.SAME_PATH)
    landings: list[str | None] = []

    def scenario_for(seed):
        rng = random.Random(seed)
        hostile = variants[seed % len(variants)]
        scenario = crashlab.RemovalScenario(tmp_path / f"life{seed}-{hostile}", hostile)
        jitter = random.Random(seed + 1_000_000)
        try:
            scenario.announced()
            scenario.server.latency = lambda: jitter.uniform(0, 0.015)
            kills = rng.randint(1, 3)
            changes = [(rng.randint(0, kills - 1), "edit"), (rng.randint(0, kills - 1), "remove")]
            for run in range(kills):
                for when, change in changes:
                    if when == run and change == "edit":
                        scenario.edit("blog/one/")
                    elif when == run:
                        scenario.remove("blog/two/")
                landings.append(scenario.kill_after_first_checkpoint(rng.uniform(0.0, LIFE_WINDOW)))
                Ledger.read(scenario.folder / "ledger.yml")
                scenario.at_most_once_holds()
                if rng.random() < 0.5:
                    scenario.settle()
            scenario.recovers()
        except AssertionError as exc:
            raise AssertionError(
                f"seed {seed} ({hostile}; replay: SYNDICATE_SOAK_SEED={seed} SYNDICATE_SOAK_SEEDS=1 "
                f"-k posts_life): {exc}"
            ) from None
        finally:
            scenario.close()

    failures = parallel(seeds, scenario_for)
    STATS["post-life soak seeds"] += len(seeds)
    assert not failures, failures[:5]
    kills = [landed for landed in landings if landed is not None]
    inside = kills.count("in flight")
    STATS["post-life soak kills landing between an in_flight write and its resolution"] += inside
    STATS["post-life soak kills landing between pairs"] += kills.count("between pairs")
    print(
        f"\npost-life soak: {len(landings)} kill attempts, {len(kills)} landed, {inside} between an in_flight "
        f"write and its resolution, {kills.count('between pairs')} between pairs, "
        f"{len(landings) - len(kills)} after the run had ended"
    )
    assert inside * 3 > len(kills), "a third of the kills at least must land inside an in_flight window"


# Seconds after the first checkpoint within which a kill is drawn: about a clean run's length.
# Measured with children forked from the pre-imported fork server (tests/forkserver.py).
SOAK_WINDOW = {
    "plain": 0.3,
    "masto-ignores-key": 0.3,
    "masto-replay-500": 0.3,
    "slow-commits": 0.9,
    "commits-after-timeout": 2.6,
}


def _wait_for_lock_holder(scenario: Scenario, process) -> None:
    """Until the first run has written its first in_flight record: it holds the lock then."""
    import time

    ledger = scenario.folder / "ledger.yml"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        if ledger.exists() and "in_flight" in ledger.read_text():
            return
        time.sleep(0.01)
    raise AssertionError("the first run never wrote in_flight")


def test_second_concurrent_run_is_refused_without_touching_the_ledger(tmp_path):
    scenario = Scenario(tmp_path / "refused", threads=True)
    # The first run holds the lock for a while: its first Mastodon answer takes 4 s.
    scenario.server.add_fault({"channel": "mastodon", "action": "delay_after", "seconds": 4})
    try:
        first = scenario.start()
        _wait_for_lock_holder(scenario, first)
        code, output = scenario.run(CRASH_LOCK_TIMEOUT="0.2")
        assert code == 2 and "another mkdocs-syndicate run holds .syndicate-cache/ledger.yml.lock" in output, output
        assert "Nothing was sent" in output
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, out + err
        scenario.check()  # each post exactly once: the refused run sent nothing
        requests = len(scenario.server.requests())
        code, output = scenario.run()
        assert code == 0 and len(scenario.server.requests()) == requests, output
    finally:
        scenario.close()


def test_second_concurrent_run_waits_for_the_lock_then_finds_nothing_to_do(tmp_path):
    scenario = Scenario(tmp_path / "waits", threads=True)
    scenario.server.add_fault({"channel": "mastodon", "action": "delay_after", "seconds": 2})
    try:
        first = scenario.start()
        _wait_for_lock_holder(scenario, first)
        second = scenario.start(CRASH_LOCK_TIMEOUT="60")
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, out + err
        requests = len(scenario.server.requests())
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0, out + err
        assert len(scenario.server.requests()) == requests  # it found the work done: no reads either
        scenario.check()  # each post exactly once: the waiting run re-read the ledger after the lock
    finally:
        scenario.close()
