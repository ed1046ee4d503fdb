"""The suite's two sizes, chosen by the environment variable SYNDICATE_TEST_PROFILE.

`dev` (the default, README command 2): every test runs, and the ones whose breadth is a number
(hypothesis examples, soak seeds, kills at every checkpoint) run a smaller, fixed, well-spread
part of it. `ci` (`.ci/run`): all of it. A test that scales says so with `sized(dev, ci)` or
`crash_points(names)`; hypothesis tests take their example count from the profile of the same
name (registered in conftest.py), so they carry no `max_examples` of their own."""

from __future__ import annotations

import os

PROFILES = ("dev", "ci")
PROFILE = os.environ.get("SYNDICATE_TEST_PROFILE", "dev")
if PROFILE not in PROFILES:
    raise SystemExit(f"SYNDICATE_TEST_PROFILE={PROFILE!r}: use one of {', '.join(PROFILES)}")

# Hypothesis examples per property test, per profile.
EXAMPLES = {"dev": 40, "ci": 300}

# In the dev profile, a kill at every 7th checkpoint (7 is prime to the 11 checkpoints one pair
# passes, so the sample walks through every kind of checkpoint along the run) besides the first and
# the last hit of each kind.
STRIDE = 7


def sized(dev: int, ci: int) -> int:
    """A count for this profile."""
    return ci if PROFILE == "ci" else dev


def crash_points(names: list[str]) -> list[int]:
    """Which of a clean run's checkpoints (1-based, in the order `names` were reached) to kill at:
    all of them in the ci profile; in dev the first and last of each kind and every STRIDE-th."""
    every = range(1, len(names) + 1)
    if PROFILE == "ci":
        return list(every)
    chosen = {n for n in every if n % STRIDE == 0}
    for name in set(names):
        hits = [n for n in every if names[n - 1] == name]
        chosen.update((hits[0], hits[-1]))
    return sorted(chosen)
