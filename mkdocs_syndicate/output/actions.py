"""Where a person looks in GitHub Actions: the job summary (`$GITHUB_STEP_SUMMARY`, Markdown shown
on the run's page) and workflow commands (`::error` / `::warning`, annotations on the run page and
in pull requests). Only when `GITHUB_ACTIONS=true`: outside Actions nothing here runs.

Only redacted text reaches here (the runner's and the credential check's), and every value a
config reads by `!ENV` is shown by its name as well, so no secret reaches the summary or a command.
A summary that cannot be written costs a warning in the log, never the run.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs_syndicate.engine.results import PairState
from mkdocs_syndicate.redaction import env_named, shown_url
from mkdocs_syndicate.safety import clauses, one_line

if TYPE_CHECKING:
    from mkdocs_syndicate.engine.doctor import ChannelCheck
    from mkdocs_syndicate.engine.results import PairResult, RunReport

Echo = Callable[[str], None]


def in_actions(environ: Mapping[str, str]) -> bool:
    return environ.get("GITHUB_ACTIONS") == "true"


# ---------------------------------------------------------------- workflow commands


def command(kind: str, title: str, message: str) -> str:
    """`::error title=…::message`, escaped as the runner unescapes it (actions/toolkit's
    command.ts): a message cannot end the line or start another command."""
    return f"::{kind} title={_property(title)}::{_data(_safe(message))}"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(_safe(text)).replace(":", "%3A").replace(",", "%2C")


def _safe(text: str) -> str:
    return one_line(env_named(text))


def annotate_checks(found: Iterable[ChannelCheck], echo: Echo) -> None:
    """An error for each channel whose credential fails (or could not be checked), a warning for
    one that expires before the next weekly check or works and should still be changed."""
    from mkdocs_syndicate.channels.base import Health

    for checked in found:
        health = checked.check.health
        if health.needs_a_person or checked.warns:
            kind = "error" if health.needs_a_person and health is not Health.EXPIRING else "warning"
            echo(command(kind, f"mkdocs-syndicate: {checked.channel} credentials", checked.line))


def annotate_run(report: RunReport, echo: Echo) -> None:
    """An error for each pair that needs a person (failed, or in_flight for review), a warning
    for each pair left for the next run."""
    for result in report.undone:
        kind = "error" if result.needs_review or result.state == PairState.FAILED else "warning"
        title = f"mkdocs-syndicate: {result.channel} {result.state}"
        echo(command(kind, title, f"({result.post_key}, {result.channel}) {result.state}: {result.detail}"))


# ---------------------------------------------------------------- the job summary


def _cell(text: str) -> str:
    """A table cell: one line, HTML escaped (a title is the author's text, not markup), pipes kept."""
    return html.escape(_safe(text), quote=False).replace("|", "\\|")


def _link(text: str, url: str | None) -> str:
    if not url or not url.startswith(("https://", "http://")):
        return _cell(text)
    return f'<a href="{html.escape(shown_url(_safe(url)))}">{_cell(text)}</a>'


def _table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def run_summary(report: RunReport, ledger_name: str, *, sandbox: bool = False) -> str:
    """The Markdown of a run: what went out where (linked), what waits and why, what needs review."""
    title = "### mkdocs-syndicate" + (" (sandbox rehearsal)" if sandbox else "")
    out = [title, ""]
    went = [r for r in report.results if r.ok]
    review = [r for r in report.undone if r.needs_review or r.state == PairState.FAILED]
    waits = [r for r in report.results if r not in went and r not in review]
    if not report.results:
        out.append("Nothing pending: every post is announced everywhere (0 requests).")
    if went:
        out += ["**Went out**", "", *_table(("Post", "Channel", "Copy"), [_went(r) for r in went]), ""]
    if waits:
        out += ["**Waits**", "", *_table(("Post", "Channel", "State", "Why"), [_why(r) for r in waits]), ""]
    if review:
        out += ["**Needs a person**", "", *_table(("Post", "Channel", "State", "Why"), [_why(r) for r in review]), ""]
        if any(r.state == PairState.FAILED for r in review):
            out.append("A failed pair is sent again by the next run once its cause is fixed.")
        if any(r.needs_review for r in review):
            out.append(f"Settle a pair for review with `mkdocs-syndicate resolve`, then commit {_cell(ledger_name)}.")
    deferred = [_cell(key) for key in report.deferred]
    if deferred:
        out += ["", f"Deferred by max_per_run (next run): {', '.join(deferred)}"]
    return "\n".join(out).rstrip() + "\n"


def _went(result: PairResult) -> tuple[str, ...]:
    return (_cell(result.post_key), _cell(result.channel), _link(result.copy or result.detail, result.remote_url))


def _why(result: PairResult) -> tuple[str, ...]:
    return (_cell(result.post_key), _cell(result.channel), _cell(result.state), _cell(result.detail))


_MARKS = {"ok": "✅ ", "expiring": "⚠️ ", "failing": "❌ ", "unknown": "❌ ", "not_checked": "➖ "}


def checks_summary(found: Iterable[ChannelCheck], *, sandbox: bool = False) -> str:
    """The Markdown of a credential check: a row per channel, what is wrong and what to do."""
    rows = [
        (
            _cell(c.channel),
            _cell(c.type_name),
            _MARKS.get(c.check.health.value, "") + _cell(c.check.health.value),
            _cell(c.check.account),
            _cell(clauses(c.check.problem, c.check.action) or ", ".join(c.check.details)),
        )
        for c in found
    ]
    title = "### mkdocs-syndicate: credentials" + (" (sandbox)" if sandbox else "")
    return "\n".join([title, "", *_table(("Channel", "Type", "Health", "Account", "Details"), rows)]) + "\n"


def append_summary(environ: Mapping[str, str], markdown: str, warn: Echo) -> None:
    """Add to the step's summary file (the runner shows every step's in order)."""
    target = environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    try:
        with Path(target).open("a", encoding="utf-8") as summary:
            summary.write(markdown + "\n")
    except OSError as exc:
        warn(f"GITHUB_STEP_SUMMARY {target}: could not write the job summary ({exc.strerror or exc})")


def summarise_checks(environ: Mapping[str, str], found: list[ChannelCheck], *, sandbox: bool, warn: Echo) -> None:
    append_summary(environ, checks_summary(found, sandbox=sandbox), warn)


def report_run(environ: Mapping[str, str], report: RunReport, ledger_name: str, *, sandbox: bool, warn: Echo) -> None:
    """A run's job summary and annotations (called by the plugin and `run` alike)."""
    append_summary(environ, run_summary(report, ledger_name, sandbox=sandbox), warn)
    annotate_run(report, _stdout)


def _stdout(line: str) -> None:
    print(line, flush=True)  # the runner reads workflow commands from the step's output
