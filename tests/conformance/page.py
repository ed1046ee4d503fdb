"""docs/lifecycle.md: written from a run's rows, and read back into cells (the drift check)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from conformance.life import EVENTS, OK, OUTCOMES, Row

HEADER = f"| channel | event | {' | '.join(OUTCOMES)} |"
BEGIN, END = "<!-- lifecycle: {} -->", "<!-- /lifecycle: {} -->"


@dataclass(frozen=True)
class Section:
    name: str  # "emulators", "pds", "synapse": the key the drift check compares by
    title: str
    ran_against: str  # the stamp: what it ran against, or why it was skipped
    rows: Sequence[Row]


def summary(row: Row) -> str:
    """One mark for an event: ✗ if any outcome failed, n/a if none applies, else ✓."""
    cells = list(row.cells.values())
    if any(c.startswith("✗") for c in cells):
        return "✗"
    return "n/a" if all(c.startswith("n/a") for c in cells) else OK


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def render(intro: str, sections: Sequence[Section]) -> str:
    out = [intro.rstrip(), ""]
    for section in sections:
        out += [f"## {section.title}", "", f"Ran against: {section.ran_against}.", "", BEGIN.format(section.name)]
        if section.rows:
            channels = list(dict.fromkeys(r.channel for r in section.rows))
            by = {(r.channel, r.event): r for r in section.rows}
            events = [e for e in EVENTS if any((c, e) in by for c in channels)]
            out += ["", f"| event | {' | '.join(channels)} |", f"|---|{'---|' * len(channels)}"]
            for event in events:
                marks = [summary(by[(c, event)]) if (c, event) in by else "" for c in channels]
                out.append(f"| {event} | {' | '.join(marks)} |")
            out += ["", HEADER, f"|---|---|{'---|' * len(OUTCOMES)}"]
            for row in section.rows:
                out.append(f"| {row.channel} | {row.event} | {' | '.join(_escape(row.cells[o]) for o in OUTCOMES)} |")
        out += ["", END.format(section.name), ""]
    return "\n".join(out)


def cells(text: str, name: str) -> dict[tuple[str, str, str], str]:
    """(channel, event, outcome) → cell of the section `name` of a rendered page."""
    match = re.search(re.escape(BEGIN.format(name)) + "(.*?)" + re.escape(END.format(name)), text, re.S)
    if match is None:
        return {}
    found = {}
    for line in match.group(1).splitlines():
        columns = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(columns) == 2 + len(OUTCOMES) and columns[0] not in ("channel", "---"):
            for outcome, cell in zip(OUTCOMES, columns[2:], strict=True):
                found[(columns[0], columns[1], outcome)] = cell
    return found


def crosses(rows: Sequence[Row]) -> dict[tuple[str, str, str], str]:
    return {(r.channel, r.event, o): c for r in rows for o, c in r.cells.items() if c.startswith("✗")}
