"""WebSub: after a deploy, each hub is told that the site's feeds changed, so that it fetches them
and pushes the new entries to their subscribers (W3C WebSub, §7 "Publishing").

The spec leaves the publisher's ping to the hub; the convention the hubs accept (PubSubHubbub 0.4,
Google's hub, Superfeedr, Switchboard) is a form POST of `hub.mode=publish` with the feed as
`hub.url`; Flask-WebSub's hub reads the same as `hub.topic` (flask_websub/hub/blueprint.py), so
both are sent. One request per (hub, feed); any 2xx is received (Google answers 204, Flask-WebSub
and the spec's other answers 202). Batched and at least once, as IndexNow: one unit a run carries
every pending post (they all changed the same feeds), its records in_flight before the first
ping, and a unit whose outcome is unknown is pinged again (a repeat only makes the hub fetch the
feed once more); there is nothing to read back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from mkdocs_syndicate.channel_api import (
    Channel,
    CredentialCheck,
    Health,
    Http,
    Kind,
    Message,
    Option,
    Outcome,
    Post,
    Prepared,
    check_unreachable,
    message_sha256,
    status_outcome,
    transport_outcome,
)
from mkdocs_syndicate.channels.websub_feeds import (
    MAX_FEED_BYTES,
    built_feed_notes,
    built_file,
    declared_hubs,
    feed_setting,
    feed_urls,
    hub_setting,
    link_header_hubs,
    missing_hubs,
)
from mkdocs_syndicate.content.crosslinks import without_block

NO_FEED = (
    "names no feed and the built site has none of the usual ones ({known}): set feeds, e.g. [feed_rss_created.xml]"
)

# When several requests of one unit end differently, the unit ends as the worst of them: a key
# refused stops the lane, a refusal fails it, a rate limit waits, an unknown answer pings again.
_WORST_FIRST = (Kind.AUTH, Kind.REFUSED, Kind.RATE_LIMITED, Kind.AMBIGUOUS, Kind.NOT_SENT, Kind.DONE)


class WebSubChannel(Channel):
    type_name = "websub"
    default_delivery = "at_least_once"
    batched = True
    edits_in_place = True  # a changed post changes the feed: the hubs are pinged again
    deletes = True  # so does a removed one
    options: ClassVar[Mapping[str, Option]] = {
        "hub": Option(
            "list",
            required=True,
            help="the hub(s) the feeds name, e.g. https://pubsubhubbub.appspot.com/",
            check=hub_setting,
        ),
        "feeds": Option(
            "list",
            help="the feed URL(s), or paths under site_url; default: the built site's feed files",
            check=feed_setting,
        ),
    }

    @property
    def hubs(self) -> tuple[str, ...]:
        return tuple(self.settings.options.get("hub") or ())

    @property
    def feeds(self) -> list[str]:
        return feed_urls(self.site, self.settings.options.get("feeds"))

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        # What the page says, hashed (as IndexNow's): a post changed after its ping pings again.
        body = without_block(post.body_html)
        page = "\x00".join((post.url, post.title, post.description, post.excerpt_source, body, *post.tags))
        feeds = self.feeds
        said = f"ping {', '.join(self.hubs)} for {', '.join(feeds) or '(no feed found yet)'}"
        notes = tuple(built_feed_notes(self.site, feeds, self.hubs))
        return Prepared(Message(said, len(said), None, notes), description=said, payload_sha256=message_sha256(page))

    def batches(self, posts: list[Post]) -> list[list[Post]]:
        return [posts]  # every post changed the same feeds: one round of pings tells the hubs

    async def send_batch(self, http: Http, posts: list[Post]) -> Outcome:
        feeds = self.feeds
        if not feeds:
            from mkdocs_syndicate.channels.websub_feeds import KNOWN_FEEDS

            error = NO_FEED.format(known=", ".join(KNOWN_FEEDS))
            return Outcome(Kind.REFUSED, error=f"{self.settings.where('feeds')}: {error}")
        outcomes = [await self._ping(http, hub, feed) for hub in self.hubs for feed in feeds]
        worst = min(outcomes, key=lambda o: _WORST_FIRST.index(o.kind))
        if worst.kind is Kind.DONE:
            return worst
        errors = "; ".join(dict.fromkeys(o.error for o in outcomes if o.kind is not Kind.DONE and o.error))
        waits = [o.retry_after for o in outcomes if o.retry_after is not None]
        return Outcome(worst.kind, error=errors, retry_after=max(waits) if waits else None)

    async def _ping(self, http: Http, hub: str, feed: str) -> Outcome:
        import httpx

        form = {"hub.mode": "publish", "hub.url": feed, "hub.topic": feed}
        try:
            response = await http.request("POST", hub, data=form)
        except httpx.TransportError as exc:
            outcome = transport_outcome(exc)
            return Outcome(
                outcome.kind, error=f"{hub}: {outcome.error}".replace("the post may exist", "it may be received")
            )
        if 200 <= response.status_code < 300:
            return Outcome(Kind.DONE)
        outcome = status_outcome(response, http.now())
        error = (outcome.error or "").replace("the post may exist", "the hub may have it")
        if outcome.kind is Kind.REFUSED:
            error += f" (the hub refused the topic {feed})"
        return Outcome(outcome.kind, error=f"{hub}: {error}", retry_after=outcome.retry_after)

    async def check_credentials(self, http: Http) -> CredentialCheck:
        """A hub has no credential to check: what can be wrong is the feed, which must name the
        hub for a subscriber to find it. Each feed is read where the hub reads it (the live site;
        the built file when it is this site's and built), and its hubs compared."""
        feeds = self.feeds
        if not feeds:
            return CredentialCheck(
                Health.FAILING, problem="no feed to ping", action=f"set {self.settings.where('feeds')}"
            )
        problems: list[str] = []
        read: list[str] = []
        for feed in feeds:
            named = await self._named_hubs(http, feed)
            if isinstance(named, CredentialCheck):
                return named
            note = missing_hubs(feed, named, self.hubs)
            (problems if note else read).append(note or f"{feed} names the hub")
        if problems:
            return CredentialCheck(
                Health.FAILING,
                problem="; ".join(problems),
                action="add the hub to the feed (docs/services/websub.md says how), then deploy",
            )
        return CredentialCheck(Health.OK, details=tuple(read))

    async def _named_hubs(self, http: Http, feed: str) -> set[str] | CredentialCheck | None:
        local = built_file(self.site, feed)
        if local is not None:
            from mkdocs_syndicate.localfiles import read_bounded

            try:
                return declared_hubs(read_bounded(local, MAX_FEED_BYTES))
            except (OSError, ValueError) as exc:
                return CredentialCheck(Health.FAILING, problem=f"{local}: {exc}", action="build the site")
        import httpx

        try:
            response = await http.request("GET", feed)
        except httpx.HTTPError as exc:
            return check_unreachable(exc)
        if response.status_code != 200:
            return CredentialCheck(
                Health.FAILING, problem=f"{feed} answered {response.status_code}", action="deploy the site"
            )
        named = declared_hubs(response.content[:MAX_FEED_BYTES])
        headers = link_header_hubs(response.headers.get("link", ""))
        if named is None:  # not a feed this reads: a Link header may still name the hub
            return headers or None
        return named | headers
