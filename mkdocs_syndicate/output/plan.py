"""The plan, rendered: for a build's log (a line per pending pair, long runs of one kind collapsed,
what a first run will adopt, the alarm for posts deployed but never announced) and in full for
`mkdocs-syndicate plan` (each pair's exact message). No terminal UI here: a plan build loads none."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

from mkdocs_syndicate.engine.plan import PendingPair, Plan, not_updated_lines
from mkdocs_syndicate.safety import one_line, printable
from mkdocs_syndicate.timeutil import to_display


def plan_lines(plan: Plan, collapse_after: int | None = None) -> list[str]:
    """One line per pending pair and per deferred post. With `collapse_after`, a kind of line
    (sends, resends, verifies, deferred posts) with more lines than that
    shows its first three and one line counting the rest: a big site's plan stays readable, and
    `mkdocs-syndicate plan` lists everything."""
    groups: dict[str, list[str]] = {}
    for channel_id, pairs in plan.lanes.items():
        for pair in pairs:
            verb = _verb(pair)
            groups.setdefault(f"would {verb}", []).append(_pair_line(channel_id, verb, pair))
    for post in plan.deferred:
        groups.setdefault("deferred to a later run (max_per_run)", []).append(
            f"deferred to a later run (max_per_run): {one_line(post.key)}"
        )
    lines = [line for kind, members in groups.items() for line in _collapsed(kind, members, collapse_after)]
    for warning in sorted({w for pair in plan.pairs for w in pair.prepared.warnings}):
        lines.append(f"note: {one_line(warning)}")
    return lines


def _pair_line(channel_id: str, verb: str, pair: PendingPair) -> str:
    text = one_line(printable(pair.prepared.description).replace("\n", " ⏎ "))
    message = pair.prepared.message
    length = f" [{message.length}/{message.limit}]" if message is not None and message.limit else ""
    thread = f" ({change})" if (change := thread_change(pair)) else ""
    return f"{channel_id}: would {verb} {one_line(pair.post.key)}{thread}{length}: {text}"


def thread_change(pair: PendingPair) -> str:
    """How an update changes a thread's parts: how many are edited in place, and whether the
    thread gets another number of parts (only when its text needs it: content/resplit.py)."""
    from mkdocs_syndicate.content.messages import message_sha256
    from mkdocs_syndicate.engine.thread_changes import parts_of

    message, record = pair.prepared.message, pair.record
    if pair.op != "update" or message is None or record is None:
        return ""
    before, texts = [part.message_sha256 for part in parts_of(record)], message.texts
    if len(before) < 2 and len(texts) < 2:
        return ""
    edited = sum(1 for sha, text in zip(before, texts, strict=False) if sha != message_sha256(text))
    said = f"{edited} of its parts edited in place"
    if len(texts) == len(before):
        return f"a thread of {len(texts)} parts, {said}"
    more = len(texts) > len(before)
    change = f"{len(texts) - len(before)} added" if more else f"{len(before) - len(texts)} deleted"
    needs = "more parts" if more else "fewer parts"
    return f"a thread of {len(before)} parts becomes {len(texts)}: the text needs {needs} ({said}, {change})"


def _collapsed(kind: str, members: list[str], after: int | None) -> list[str]:
    """A kind's lines; past `after` of them, the first three and a count of the rest."""
    if after is None or len(members) <= after:
        return members
    return [*members[:3], f"{kind}: … and {len(members) - 3} more (`mkdocs-syndicate plan` lists them all)"]


def said_lines(plan: Plan) -> list[str]:
    """What the plan says besides its pairs: copies not updated, removals, pairs held for review."""
    return [
        *not_updated_lines(plan.not_updated),
        *plan.removal_lines,
        *(review.line() for review in plan.reviews),
        *(doubt.line() for doubt in plan.doubts),
    ]


def carried(site_url: str) -> str:
    """Which site the announced links lead to: one line of the plan."""
    return f"the posts' links are under site_url {one_line(site_url)}"


def full_plan_lines(
    plan: Plan, source: str, max_per_run: int | None, hashtags_from: str = "", site_url: str = ""
) -> list[str]:
    """`mkdocs-syndicate plan`: every pending pair with why it is pending and, indented, exactly
    what the channel would receive. `source`: where the posts came from ("the build of …")."""
    verifies = [p for p in plan.pairs if p.needs_verify]
    lines = [
        f"plan from {source}: {len(plan.pairs)} pair(s) would be sent"
        + (f", {len(verifies)} after a verify read" if verifies else "")
        + "; nothing sent"
    ]
    if plan.adoption is not None:
        lines.append(ADOPTS + plan.adoption.line())
    if site_url and plan.pairs:
        lines.append(carried(site_url))
    lines += [one_line(move.line()) for move in plan.moves]
    lines += [one_line(line) for line in said_lines(plan)]
    if hashtags_from and plan.pairs:
        lines.append(f"hashtags and DEV tags come from {hashtags_from}")
    for channel_id, pairs in plan.lanes.items():
        for pair in pairs:
            lines += ["", *_pair_in_full(channel_id, pair)]
    for post in plan.deferred:
        lines += ["", f"deferred to a later run (max_per_run {max_per_run}): {one_line(post.key)}"]
    return lines


def _pair_in_full(channel_id: str, pair: PendingPair) -> list[str]:
    """A pair's heading (why it is pending, its length), and what the channel would receive."""
    message = pair.prepared.message
    length = f" — {message.length}/{message.limit} {message.unit}" if message is not None and message.limit else ""
    if pair.op == "delete":  # no message: the copy named by the record goes
        record = pair.record
        copy = (record.remote_url or record.remote_id) if record is not None else None
        preview = printable(f"the copy: {copy or pair.post.url}")
    else:
        preview = printable(pair.channel.preview(pair.post, pair.prepared))
    heading = one_line(f"{channel_id} · {pair.post.key} · {_verb(pair, why=True)}{length}")
    return [heading, *("    " + line for line in preview.splitlines())]


def _verb(pair: PendingPair, why: bool = False) -> str:
    """What the run would do with this pair; with `why`, the record that makes it so."""
    record = pair.record
    if pair.op == "delete" and pair.channel.batched:
        return "ping as removed (the post was removed from the site)" if why else "ping as removed"
    if pair.op == "delete":
        if pair.needs_verify:
            return "read the copy, then delete it if it is still there" if why else "verify the delete"
        return "delete the copy (the post was removed from the site)" if why else "delete"
    if pair.op == "update" and pair.channel.batched:
        return "ping again (the page changed since its ping)" if why else "ping again"
    if pair.op == "update":
        if pair.needs_verify:
            return "read the copy, then update it if it is not updated yet" if why else "verify the update"
        thread = f": {change}" if why and (change := thread_change(pair)) else ""
        return f"update the copy in place (the post changed since it was sent){thread}" if why else "update"
    if pair.needs_verify:
        assert record is not None
        return (
            (
                f"verify first (in_flight since {record.at}: reads {pair.channel.id} to see whether it went "
                "out), then send only if it is proved absent"
            )
            if why
            else "verify then maybe resend"
        )
    if record is not None:
        return f"send again (was {record.state}: {record.error or ''})" if why else "resend"
    return "send"


ADOPTS = "the send will adopt, not announce: "


def hashtag_source(hashtags_from: Sequence[str], *, feed: bool = False) -> str:
    """Where hashtags and DEV tags come from, for the plan's line ("" when from nowhere)."""
    if feed:
        return "each feed entry's categories"
    return f"front matter {' and '.join(hashtags_from)} (hashtags_from)" if hashtags_from else ""


def log_plan(
    the_plan: Plan, reason: str, log: Callable[[str], None], hashtags_from: str = "", site_url: str = ""
) -> None:
    if the_plan.adoption is not None:
        log(f"plan ({reason}): {ADOPTS}" + the_plan.adoption.line())
    for move in the_plan.moves:
        log(one_line(f"plan ({reason}): {move.line()}"))
    for line in said_lines(the_plan):
        log(one_line(f"plan ({reason}): {line}"))
    if not the_plan.pairs and not the_plan.deferred:
        log(f"plan ({reason}): nothing pending")
        return
    log(f"plan ({reason}): {len(the_plan.pairs)} pair(s) would be sent; nothing sent")
    if site_url:
        log(carried(site_url))
    if hashtags_from:
        log(f"hashtags and DEV tags come from {hashtags_from}")
    for line in plan_lines(the_plan, collapse_after=COLLAPSE_AFTER):
        log(line)


COLLAPSE_AFTER = 10  # more lines of one kind than this become one line with a count


def stale_pending(the_plan: Plan, now: dt.datetime, hours: float, *, ledger_exists: bool) -> list[str]:
    """The "deployed but never announced" alarm: pairs of posts older than `hours` that nothing
    has attempted. Not before a ledger exists (a site whose sending step has never run is being
    set up, not failing), and not for a pair with a record (an IndexNow ping answered 202 minutes
    ago is waiting for the engine, not for the sending step)."""
    if not hours or hours <= 0 or not ledger_exists:
        return []
    by_post: dict[str, list[str]] = {}
    dates: dict[str, dt.datetime] = {}
    for pair in the_plan.pairs:
        if pair.record is None and now - pair.post.date > dt.timedelta(hours=hours):
            by_post.setdefault(pair.post.key, []).append(pair.channel.id)
            dates[pair.post.key] = pair.post.date
    return [
        f"{key} is dated {to_display(dates[key])}, more than {hours:g} h ago, and still not "
        f"announced on {', '.join(channels)}: is the sending step running? (`mkdocs-syndicate status`)"
        for key, channels in sorted(by_post.items())
    ]
