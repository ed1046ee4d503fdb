"""What a send would do now, seen without sending: the posts it takes, the backlog it would adopt
on first contact, and its plan (plan mode, `mkdocs-syndicate plan`). A send takes its posts and
its adoption from here too, so the preview and the send cannot disagree. Light on purpose: a
build that sends nothing needs only this."""

from __future__ import annotations

from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.content.posts import Post, announceable
from mkdocs_syndicate.engine.backlog import Adoption, adoption, refuse_renamed_channels
from mkdocs_syndicate.engine.history import History
from mkdocs_syndicate.engine.lives import new_life_lines, new_lives, with_new_lives
from mkdocs_syndicate.engine.memo import MessageMemo
from mkdocs_syndicate.engine.moves import Identified, identify
from mkdocs_syndicate.engine.plan import Plan, make_plan
from mkdocs_syndicate.engine.removals import came_back_lines, plan_lines
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sandbox.site import make_channels
from mkdocs_syndicate.timeutil import Clock, SystemClock, to_iso, utcnow


def select_posts(options: Options, posts: list[Post], clock: Clock, found: Identified | None = None) -> list[Post]:
    """The posts to announce now; never one whose identity is in doubt (held for a person)."""
    held = {doubt.post_key for doubt in found.doubts} if found is not None else set()
    return [post for post in announceable(posts, utcnow(clock), options.since) if post.key not in held]


def identified(options: Options, ledger: Ledger, posts: list[Post]) -> Identified:
    """Each post's ledger entry (engine/moves.py), with the site's git history when a build read
    its source folder."""
    history = History(options.docs_dir) if options.docs_dir is not None else None
    return identify(ledger.posts, posts, options.site.url, options.redirects, history)


def plan(options: Options, posts: list[Post], clock: Clock | None = None) -> Plan:
    """What a send would do now: reads the ledger, touches nothing, no network."""
    clock = clock or SystemClock()
    ledger = Ledger.read(options.ledger_path)
    ledger.sandbox = options.sandbox  # as a send would see it
    channels = make_channels(options)
    refuse_renamed_channels(ledger, channels, {c.id for c in options.channels})
    found = identified(options, ledger, posts)  # all of them, as a send does
    ledger.preview(found.posts)  # what a send would write first, seen without writing
    present = found.keyed(posts)
    chosen = select_posts(options, present, clock, found)
    lives = new_lives(ledger.posts, chosen, channels, ledger.may_work_on)  # as a send starts them
    if lives:
        ledger.preview(with_new_lives(ledger.posts, lives, to_iso(utcnow(clock))))
    adopting = first_run_adoption(options, ledger, chosen, clock)
    adopted = adopting.pairs([c.id for c in channels]) if adopting is not None else set()
    memo = MessageMemo.beside(options.ledger_path)
    the_plan = make_plan(ledger, chosen, channels, options.max_per_run, skip=adopted, memo=memo)
    memo.save()
    the_plan.adoption = adopting
    the_plan.moves = found.moves
    the_plan.doubts = found.doubts
    the_plan.removal_lines = new_life_lines(lives)
    held = {old for doubt in found.doubts for old in doubt.olds}  # not removed while a person decides
    the_plan.removal_lines += plan_lines(ledger, present, options.pages, channels, options.removal_recheck, held)
    the_plan.removal_lines += came_back_lines(ledger, present, channels)
    return the_plan


def first_run_adoption(options: Options, ledger: Ledger, chosen: list[Post], clock: Clock) -> Adoption | None:
    return adoption(
        ledger,
        chosen,
        backlog=options.backlog,
        days=options.backlog_days,
        now=utcnow(clock),
        channels=[c.id for c in options.channels if c.enabled],
    )
