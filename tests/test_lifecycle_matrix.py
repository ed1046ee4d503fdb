"""docs/lifecycle.md is a run's output (tests/conformance/): generated again here, its cells must
be the committed page's (so a change of behaviour, or a page edited by hand, fails CI), and no cell
may be ✗ but the known findings below, each a fault of the engine that is not fixed yet (strict:
a finding fixed fails the test until it is taken off the list). The emulators' half runs in a few
seconds on the sandbox's clock; the real servers' half under the realserver marker."""

from __future__ import annotations

from pathlib import Path

import pytest
from conformance.generate import INTRO
from conformance.life import OUTCOMES, Row, emulator_target, lives
from conformance.page import Section, cells, crosses, render

PAGE = Path(__file__).resolve().parent.parent / "docs" / "lifecycle.md"

# What the matrix finds of the engine that is not fixed yet, per target: (channel, event, outcome)
# cells expected ✗. None today; a cell found fixed must leave this list (the check is strict).
KNOWN: dict[str, set[tuple[str, str, str]]] = {"emulators": set(), "pds": set(), "synapse": set()}


def check(section: Section) -> None:
    fresh = cells(render("", [section]), section.name)
    assert len(fresh) == len(section.rows) * len(OUTCOMES)
    found = set(crosses(section.rows))
    assert found == KNOWN[section.name], {
        "new ✗": {cell: fresh[cell] for cell in found - KNOWN[section.name]},
        "fixed (take it off KNOWN)": KNOWN[section.name] - found,
    }
    committed = cells(PAGE.read_text(encoding="utf-8"), section.name)
    drift = {key: (committed.get(key), cell) for key, cell in fresh.items() if committed.get(key) != cell}
    assert not drift and set(committed) == set(fresh), (
        f"docs/lifecycle.md differs from a fresh run ({section.name}): run `python tests/conformance/generate.py`",
        drift,
    )


@pytest.mark.http
def test_the_emulators_half_of_the_page_is_a_fresh_runs(tmp_path, sandbox, clock):
    rows = lives(emulator_target(sandbox, clock), tmp_path)
    check(Section("emulators", "", "", rows))


@pytest.mark.realserver
@pytest.mark.xdist_group("realserver-pds")
def test_the_reference_pds_half_of_the_page_is_a_fresh_runs(tmp_path):
    from conformance.realservers import pds_section

    section = pds_section(tmp_path)
    if not section.rows:
        pytest.skip(section.ran_against)
    check(section)


@pytest.mark.realserver
@pytest.mark.xdist_group("realserver-synapse")
def test_the_synapse_half_of_the_page_is_a_fresh_runs(tmp_path):
    from conformance.realservers import synapse_section

    section = synapse_section(tmp_path)
    if not section.rows:
        pytest.skip(section.ran_against)
    check(section)


@pytest.mark.unit
def test_the_page_reads_back_the_cells_it_was_written_with():
    """A cell with a | or a line break in its reason survives the round trip."""
    row = Row("mastodon", "create", {o: f"✗ a | b\nc {n}" for n, o in enumerate(OUTCOMES)})
    text = render(INTRO, [Section("emulators", "T", "here", [row])])
    assert cells(text, "emulators") == {("mastodon", "create", o): f"✗ a | b c {n}" for n, o in enumerate(OUTCOMES)}
