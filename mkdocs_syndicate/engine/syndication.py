"""One syndication run, without MkDocs: the ledger locked, the plan, the runner, the sandbox and
the git mirror when asked for.

The plugin and the `mkdocs-syndicate` command both come through here, so a run from either is the
same code path, and a resumed run is the same code path as a fresh one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from mkdocs_syndicate.channels.base import Channel
from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.backlog import adopt, refuse_renamed_channels
from mkdocs_syndicate.engine.lives import NEW_LIFE, new_life_lines, new_lives, with_new_lives
from mkdocs_syndicate.engine.memo import MessageMemo
from mkdocs_syndicate.engine.moves import Identified
from mkdocs_syndicate.engine.plan import PendingPair, Plan, Review, make_plan, not_updated_lines
from mkdocs_syndicate.engine.preview import first_run_adoption, identified, select_posts
from mkdocs_syndicate.engine.removals import Removals, Witnesses, deletions, find_removals, kept_lines, removal_notes
from mkdocs_syndicate.engine.results import PairResult, PairState, Reporter, RunReport
from mkdocs_syndicate.engine.runner import Runner
from mkdocs_syndicate.errors import RunInterrupted
from mkdocs_syndicate.ledger.gitmirror import GitMirror
from mkdocs_syndicate.ledger.merge import StaleLedger, changed_pairs, merge, without_unpushed_in_flight
from mkdocs_syndicate.ledger.schema import Posts, State, record_in
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.net.liveness import in_built_site, wait_until_live
from mkdocs_syndicate.sandbox.site import run_channels
from mkdocs_syndicate.timeutil import Clock, SystemClock, to_iso, utcnow

if TYPE_CHECKING:
    import httpx


def send(
    options: Options,
    posts: list[Post],
    reporter: Reporter,
    *,
    clock: Clock | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    verify_only: bool = False,
    on_start: Callable[[RunReport], None] | None = None,
) -> RunReport:
    """Send every pending pair (with verify_only: only read back in_flight records). The ledger is
    locked for the whole run and loaded before any call. Ctrl-C raises RunInterrupted, with the
    ledger consistent: every record on disk is one the protocol wrote. `on_start` is handed the
    report once what happens before any request is in it (notes, moves, the adopted backlog), so
    a log can say those first.

    With git persistence, the pushed ledger is the starting point, and a push lost to another
    runner (StaleLedger) means: take their ledger, leave the pairs they changed to them, re-plan
    the rest. Never a send on a stale ledger."""
    clock = clock or SystemClock()
    with Ledger.open_for_writing(options.ledger_path, options.lock_timeout) as ledger:
        ledger.sandbox = options.sandbox  # a real run does not see a rehearsal's records
        mirror = _start_mirror(options, ledger)
        with run_channels(options) as (channels, sandbox_note):
            refuse_renamed_channels(ledger, channels, {c.id for c in options.channels})
            # Every post of the source is matched, not only those announceable now: a post the
            # source still lists under a new name is neither removed nor announced again.
            found = identified(options, ledger, posts)
            _record_identities(ledger, found)
            present = found.keyed(posts)
            chosen = select_posts(options, present, clock, found) if not verify_only else present
            session = Session(options, ledger, mirror, chosen, channels, reporter, clock, transport, verify_only)
            session.present = present
            session.report.moves = found.moves
            session.report.results += _held(found, present, options)
            session.in_doubt = {old for doubt in found.doubts for old in doubt.olds}
            session.on_start = on_start
            report = session.run()
            # Where the links went is news only to a run that made some.
            report.warnings[:0] = [sandbox_note] if sandbox_note and report.results else []
            return report


def _record_identities(ledger: Ledger, found: Identified) -> None:
    """Moves and identity facts, durable (pushed, in git mode) before the run's first request:
    after the next rename the ledger alone must know the post (engine/moves.py)."""
    if not found.changed:
        return
    changes = [(move.new, "*", f"moved from {move.old} ({move.why})") for move in found.moves]
    changes += [(key, "*", "identified (source file, pin or URL)") for key in found.learned]
    ledger.rewrite(found.posts, changes)


def _held(found: Identified, present: list[Post], options: Options) -> list[PairResult]:
    """A line per channel of each post held because it may be an old one: not done, for a person."""
    posts = {post.key: post for post in present}
    return [
        PairResult(doubt.post_key, channel.id, PairState.PENDING, doubt.line(), needs_review=True)
        for doubt in found.doubts
        for channel in options.channels
        if channel.enabled and doubt.post_key in posts and posts[doubt.post_key].wants(channel.id)
    ]


class Session:
    """One run over a locked ledger: adoption on first contact, the live-page wait, then plans
    and runners in rounds. A round ends the run unless a push was lost to another writer
    (StaleLedger): their ledger is taken, the pairs they changed are left to them, and the rest
    is planned again."""

    def __init__(
        self,
        options: Options,
        ledger: Ledger,
        mirror: GitMirror | None,
        chosen: list[Post],
        channels: list[Channel],
        reporter: Reporter,
        clock: Clock,
        transport: httpx.AsyncBaseTransport | None,
        verify_only: bool,
    ) -> None:
        self.options, self.ledger, self.mirror = options, ledger, mirror
        self.chosen, self.channels, self.reporter = chosen, channels, reporter
        self.clock, self.transport, self.verify_only = clock, transport, verify_only
        self.report = RunReport()
        self.left_to_others: set[tuple[str, str]] = set()  # pairs another run (or a late page) has
        self.memo = MessageMemo.beside(options.ledger_path)  # what unchanged posts' messages hash to
        self.present = chosen  # every post the source lists (removals are judged against it)
        self.removals = Removals()
        self.on_start: Callable[[RunReport], None] | None = None  # told before the first request
        self.in_doubt: set[str] = set()  # entries a post held for review may be (engine/clues.py)

    def run(self) -> RunReport:
        if self.ledger.rewrite_canonical():  # read slowly once, not on every run (issue 36)
            name = self.options.ledger_path.name
            self.report.notes.append(f"{name} was not in the canonical layout: rewritten (no record changed)")
        rehearsed = 0 if self.options.sandbox else self.ledger.sandbox_records()
        if rehearsed:
            self.report.notes.append(
                f"{rehearsed} sandbox record(s) ignored (a rehearsal's): these pairs will be announced for real"
            )
        self._start_new_lives()
        self._adopt_on_first_contact()
        self._find_removals()
        if self.on_start is not None:
            self.on_start(self.report)
        if self.options.wait_until_live and not self.verify_only:
            late = _not_live(
                self.options,
                self.ledger,
                self.chosen,
                self.channels,
                self.reporter,
                self.clock,
                self.transport,
                self.report,
            )
            self.left_to_others.update((pair.post.key, pair.channel.id) for pair in late)
        for _ in range(REPLAN_ROUNDS):
            if self._round():
                break
        self.memo.save()
        if self.mirror is not None:
            self.ledger.push_if_ahead()
            self.mirror.finish()
        self.report.results = as_recorded(self.report.results, self.ledger.posts)
        return self.report

    def _adopt_on_first_contact(self) -> None:
        if self.verify_only:
            return
        adopting = first_run_adoption(self.options, self.ledger, self.chosen, self.clock)
        if adopting is not None:
            adopt(self.ledger, adopting, [c.id for c in self.channels], utcnow(self.clock))
            self.report.adoption = adopting

    def _start_new_lives(self) -> None:
        """New posts at removed posts' URLs: their records start a new life, durably, before any
        request (engine/lives.py)."""
        if self.verify_only:
            return
        lives = new_lives(self.ledger.posts, self.chosen, self.channels, self.ledger.may_work_on)
        if lives:
            changes = [(life.key, life.channel_id, NEW_LIFE) for life in lives]
            self.ledger.rewrite(with_new_lives(self.ledger.posts, lives, to_iso(utcnow(self.clock))), changes)
            self.report.notes += new_life_lines(lives)

    def _find_removals(self) -> None:
        """Posts their author removed, proved removed (engine/removals.py) before any round, each
        printed with its evidence; and those only no longer announced, said."""
        site, clock, reporter = self.options.site, self.clock, self.reporter

        async def sleep(seconds: float, reason: str) -> None:
            await reporter.wait("removals", seconds, reason, clock)

        witnesses = Witnesses(
            site.url, site.site_dir, self.options.sandbox, self.options.removal_recheck, sleep, self.transport
        )
        # An old post a held one may be is not removed meanwhile: the author decides which it is.
        posts = {key: entry for key, entry in self.ledger.posts.items() if key not in self.in_doubt}
        self.removals = find_removals(
            posts,
            self.present,
            self.channels,
            probe=not self.verify_only,
            witnesses=witnesses,
            pages=self.options.pages,
        )
        if self.removals.note:
            self.report.notes.append(self.removals.note)
        self.report.notes += removal_notes(self.removals, self.channels)

    def _plan(self) -> Plan:
        """This round's plan: what is pending, less what others have and (verify only) what
        needs no read."""
        made = make_plan(
            self.ledger,
            self.chosen,
            self.channels,
            None if self.verify_only else self.options.max_per_run,
            memo=self.memo,
            deletions=deletions(self.ledger, self.removals, self.channels),
        )
        lanes = {channel: [p for p in pairs if self._ours_now(p)] for channel, pairs in made.lanes.items()}
        the_plan = Plan(lanes=lanes, deferred=made.deferred, reviews=made.reviews)
        self._report_reviews(made.reviews)
        removed = self.removals.removed
        self.report.deferred = [p.key for p in the_plan.deferred if p.key not in removed]
        self.report.warnings = sorted({w for pair in the_plan.pairs for w in pair.prepared.warnings})
        self.report.warnings += not_updated_lines(made.not_updated)
        self.report.warnings += kept_lines(self.ledger, self.removals, self.channels)
        self.report.warnings += [
            f"deferred by max_per_run: the copies of removed post {p.key} are deleted next run"
            for p in the_plan.deferred
            if p.key in removed
        ]
        if self.mirror is not None:  # their change to a pair of this plan makes the plan stale
            self.mirror.claimed = {(p.post.key, p.channel.id) for p in the_plan.pairs}
        return the_plan

    def _report_reviews(self, reviews: list[Review]) -> None:
        """Each pair held for a person, once in the run's report: it is not done, and says why."""
        said = {(result.post_key, result.channel) for result in self.report.results}
        for review in reviews:
            if (review.post_key, review.channel_id) not in said:
                state = PairState.of(review.record.state)
                self.report.results.append(
                    PairResult(review.post_key, review.channel_id, state, review.line(), needs_review=True)
                )

    def _ours_now(self, pair: PendingPair) -> bool:
        """Not left to another writer, and (verify only) a pair a read can settle."""
        if (pair.post.key, pair.channel.id) in self.left_to_others:
            return False
        return pair.needs_verify or not self.verify_only

    def _round(self) -> bool:
        """Plan and run once; True when the run is over, False when a lost push means planning
        again on the other writer's ledger."""
        the_plan = self._plan()
        if not the_plan.pairs:
            if self.mirror is None:
                return True
            # Nothing to send; records merged onto another run's ledger may still need their
            # push, which can lose a race like any other (regression: it escaped).
            try:
                self.ledger.push_if_ahead()
            except StaleLedger as lost:
                self._take_theirs(lost, the_plan, RunReport())
                return False
            return True
        runner = Runner(
            self.ledger,
            the_plan,
            clock=self.clock,
            reporter=self.reporter,
            transport=self.transport,
            max_wait=self.options.max_wait,
            verify_only=self.verify_only,
        )
        try:
            result = asyncio.run(runner.run())
        except KeyboardInterrupt:
            raise _interrupted(runner.report, the_plan, self.ledger) from None
        except asyncio.CancelledError:
            if not runner.terminated:
                raise
            raise _interrupted(runner.report, the_plan, self.ledger, by="SIGTERM") from None
        except StaleLedger as lost:
            self._take_theirs(lost, the_plan, runner.report)
            return False
        self.report.results += result.results
        self.report.requests += result.requests
        self.report.warnings += result.warnings  # said by the run itself (an orphan upload)
        return True

    def _take_theirs(self, lost: StaleLedger, the_plan: Plan, run_report: RunReport) -> None:
        """A push lost to another writer: what they changed since our base is theirs; what only
        we changed (records of requests that went out) goes on top of their ledger, pushed by the
        next round."""
        assert self.mirror is not None
        report = self.report
        changed = changed_pairs(lost.base, lost.remote_posts)
        planned = {(p.post.key, p.channel.id) for p in the_plan.pairs}
        # Nothing left for a pair that was not attempted, or stopped before its first record (pending).
        nothing_sent = (PairState.NOT_ATTEMPTED, PairState.PENDING)
        went_out = {(r.post_key, r.channel) for r in run_report.results if r.state not in nothing_sent}
        report.results += [r for r in run_report.results if (r.post_key, r.channel) not in changed]
        report.requests += run_report.requests
        for key, channel in sorted((changed & planned) - self.left_to_others):
            contested = _contested(key, channel, lost.remote_posts, went_out)
            if contested is not None:
                report.results.append(contested)
        self.left_to_others.update(changed)
        ours = without_unpushed_in_flight(self.ledger.abandoned or self.ledger.posts, lost.base)
        self.ledger.reset_to(merge(lost.base, ours, lost.remote_posts))
        self.mirror.adopt_remote(lost.tip, lost.remote_posts)


def _interrupted(report: RunReport, the_plan: Plan, ledger: Ledger, by: str = "Ctrl-C") -> RunInterrupted:
    """What finished, and each pair of the plan left for the next run with its state now."""
    finished = {(r.post_key, r.channel) for r in report.results}
    left = []
    for pair in the_plan.pairs:
        if (pair.post.key, pair.channel.id) in finished:
            continue
        record = ledger.record(pair.post.key, pair.channel.id)
        state = PairState.of(record.state if record else None)
        note = " (a request may be out: the next run verifies it)" if state == PairState.IN_FLIGHT else ""
        left.append(f"({pair.post.key}, {pair.channel.id}) {state}{note}")
    return RunInterrupted(len(finished), left, by)


def _contested(key: str, channel: str, theirs: Posts, went_out: set[tuple[str, str]]) -> PairResult | None:
    """What to report of a pair of ours that the other writer changed: None when theirs finished it."""
    if (key, channel) in went_out:  # ours went out, but the pushed record is theirs
        return PairResult(key, channel, PairState.IN_FLIGHT, SENT_BUT_CONTESTED)
    record = record_in(theirs, key, channel)
    if record is None or record.state not in (State.DONE, State.SKIPPED):  # theirs is not finished
        return PairResult(key, channel, PairState.NOT_ATTEMPTED, OTHER_RUNNER)
    return None


REPLAN_ROUNDS = 5


def as_recorded(results: list[PairResult], posts: Posts) -> list[PairResult]:
    """The report as the ledger stands at the end (pushed, in git mode): one line per pair, the
    last round's; a pair that an earlier round left "not attempted" and a later round (or another
    run) finished is not reported as undone. It said both, and exited 1 with everything done."""
    last: dict[tuple[str, str], PairResult] = {}
    for result in results:
        last.pop((result.post_key, result.channel), None)
        last[(result.post_key, result.channel)] = result
    kept = []
    for (key, channel), result in last.items():
        record = record_in(posts, key, channel)
        if (
            result.state == PairState.NOT_ATTEMPTED
            and record is not None
            and record.state in (State.DONE, State.SKIPPED)
        ):
            continue
        kept.append(result)
    return kept


SENT_BUT_CONTESTED = (
    "this run finished it, but another run changed the pushed record meanwhile; the next run verifies it"
)
OTHER_RUNNER = (
    "another run changed this pair in the pushed ledger while this run was going; "
    "left to it (the next run picks up whatever is still pending)"
)


def _not_live(
    options: Options,
    ledger: Ledger,
    chosen: list[Post],
    channels: list[Channel],
    reporter: Reporter,
    clock: Clock,
    transport: httpx.AsyncBaseTransport | None,
    report: RunReport,
) -> list[PendingPair]:
    """Pairs of posts announced for the first time whose page does not answer 200 in time."""
    pending = make_plan(ledger, chosen, channels, options.max_per_run).pairs
    fresh = sorted({p.post.url for p in pending if p.post.key not in ledger.posts})
    if not fresh:
        return []

    async def sleep(url: str, seconds: float, reason: str) -> None:
        await reporter.wait("live", seconds, reason, clock)

    assert options.wait_until_live is not None
    if options.sandbox:  # a rehearsal's "live site" is the build it just made, never the web
        verdicts = in_built_site(fresh, options.site.url, options.site.site_dir)
    else:
        verdicts = asyncio.run(
            wait_until_live(
                fresh,
                timeout=options.wait_until_live,
                interval=options.live_interval,
                clock=clock,
                sleep=sleep,
                transport=transport,
            )
        )
    late = [p for p in pending if verdicts.get(p.post.url)]
    for pair in late:
        result = PairResult(pair.post.key, pair.channel.id, PairState.NOT_ATTEMPTED, str(verdicts[pair.post.url]))
        report.results.append(result)
        reporter.pair_finished(result)
    return late


def _start_mirror(options: Options, ledger: Ledger) -> GitMirror | None:
    if not options.git.enabled:
        return None
    mirror = GitMirror(options.ledger_path, options.git, exclusive={c.id for c in options.channels if c.at_most_once})
    remote_posts = mirror.start(ledger.posts)
    if remote_posts is not None:
        # The pushed ledger is the truth: what the local file has beyond it was never sent
        # (in_flight is pushed before every at-most-once send) or is recovered by verify.
        ledger.reset_to(remote_posts)
        ledger.canonical = mirror.remote_canonical  # the local copy is; the pushed one may not be
    ledger.mirror = mirror
    return mirror
