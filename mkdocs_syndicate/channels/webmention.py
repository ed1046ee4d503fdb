"""Webmention (W3C Recommendation): tell each page a post links to that the post mentions it.

For each external link in the post's body (its built page's content, up to `max_targets`), the
target's endpoint is discovered (channels/webmention_discovery.py) and sent `source` (the post's
URL) and `target`, form-encoded. Each (post, target) is a sub-record of the pair's record
(`mentions`): the endpoint, its answer's status, the status URL its 201/202 `Location` names
(`remote_id`), or why there is none.

At-least-once, like IndexNow: a Webmention sent again is harmless (the receiver verifies the
source again and updates what it shows), so an in_flight record is simply sent again, and the
spec asks for it: on an edit of the post every target is told again, including a target the post
no longer links to (so the receiver drops the mention), and on its removal (its page answering
404 or 410: engine/removals.py) every target it was sent to is told once more. A target whose
link was taken out is recorded `unlinked` after it was told, and forgotten at the next change.

One post per request unit (`batches`), so that each pair has its own in_flight record and its own
mentions; its targets are told one after another, paced by `min_interval` like any write."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import ClassVar
from urllib.parse import urljoin, urlsplit, urlunsplit

from mkdocs_syndicate.channel_api import (
    Channel,
    CredentialCheck,
    Health,
    Http,
    Kind,
    Mention,
    Option,
    Outcome,
    Post,
    Prepared,
    Record,
    message_sha256,
    status_outcome,
)
from mkdocs_syndicate.channels import webmention_discovery as discovery
from mkdocs_syndicate.content.crosslinks import without_block
from mkdocs_syndicate.safety import one_line

DEFAULT_MAX_TARGETS = 20
ERROR_CHARS = 200  # of a receiver's refusal, kept in the ledger


class _Links(HTMLParser):
    """Every `<a href>` of a page's content, in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href.strip())


def external_links(post: Post, site_url: str) -> list[str]:
    """The post's links to pages of other hosts, each once, fragments dropped (the page is the
    target), in the order they appear; never the "Also on" block (its links are our copies)."""
    parser = _Links()
    parser.feed(without_block(post.body_html))
    parser.close()
    own = {urlsplit(u).netloc.lower() for u in (site_url, post.url)}  # host and port: another port is another site
    found: list[str] = []
    for href in parser.hrefs:
        parts = urlsplit(urljoin(post.url, href))
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.netloc.lower() in own:
            continue
        found.append(urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, "")))  # as linked
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class _Told:
    """One target's way in this attempt: its sub-record, or why it must be told again later."""

    mention: Mention | None
    retry: str = ""  # not told, for a reason that may pass (no answer, a 5xx, a 429)
    reached: bool = False  # a POST may have arrived
    wait: float | None = None  # a 429's: seconds the endpoint asked for (None: it did not say)


class WebmentionChannel(Channel):
    type_name = "webmention"
    default_delivery = "at_least_once"
    batched = True  # one post per unit (`batches`): each pair its own in_flight record and mentions
    edits_in_place = True  # a changed post is sent again: receivers read it again (spec §3.2.3)
    deletes = True  # a removed post is sent again: its page answers 410, receivers drop the mention
    default_removals = "delete"  # telling a removed page's targets is the protocol's own step
    web_copies = False  # a mention is shown on the target's page, not at a URL of ours
    options: ClassVar[Mapping[str, Option]] = {
        "max_targets": Option(
            "int", default=DEFAULT_MAX_TARGETS, help="the most links of one post told (in the order they appear)"
        ),
        "allow_loopback": Option(
            "bool",
            default=False,
            help="tests only: let targets and endpoints on 127.0.0.1 be asked (private addresses never are)",
        ),
        "sandbox_targets": Option(
            "url", help="the sandbox's: every target is read at <sandbox_targets>/<host>/<path>, not on the web"
        ),
    }

    @property
    def _allow_loopback(self) -> bool:
        return bool(self.settings.options.get("allow_loopback"))

    def _targets(self, post: Post) -> tuple[list[str], int]:
        links = external_links(post, self.site.url)
        most = int(self.settings.options.get("max_targets") or DEFAULT_MAX_TARGETS)
        return links[:most], max(0, len(links) - most)

    # ---------------------------------------------------------------- without network

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        targets, over = self._targets(post)
        # What the page says and whom it links to, hashed: a changed post is sent again (spec §3.2.3).
        body = without_block(post.body_html)
        page = "\x00".join((post.url, post.title, post.description, body, *targets))
        more = f" ({over} more not told: max_targets)" if over else ""
        listed = "".join(f"\n  {target}" for target in targets)
        return Prepared(
            None,
            description=f"mention {len(targets)} link(s) of {post.url}{more}{listed}",
            payload_sha256=message_sha256(page),
            life=life,
        )

    def batches(self, posts: list[Post]) -> list[list[Post]]:
        return [[post] for post in posts]

    # ---------------------------------------------------------------- over the network

    async def send_batch(self, http: Http, posts: list[Post]) -> Outcome:
        return await self.send_batch_after(http, posts, [None] * len(posts))

    async def send_batch_after(self, http: Http, posts: list[Post], before: list[Record | None]) -> Outcome:
        (post,), (record,) = posts, before
        current, _ = self._targets(post)
        # Told before and no longer linked: told once more, so that the receiver drops the mention.
        earlier = record.mentions if record is not None else ()
        dropped = [m.target for m in earlier if m.endpoint and not m.unlinked and m.target not in current]
        told = [await self._tell(http, post.url, target, unlinked=False) for target in current]
        told += [await self._tell(http, post.url, target, unlinked=True) for target in dropped]
        return _outcome(told)

    def _where(self, target: str) -> str:
        """Where the target is read: itself, or in the sandbox its stand-in."""
        sandbox = self.settings.options.get("sandbox_targets")
        if not sandbox:
            return target
        parts = urlsplit(target)
        return urlunsplit(("", "", f"{sandbox.rstrip('/')}/{parts.netloc}{parts.path}", parts.query, ""))

    async def _tell(self, http: Http, source: str, target: str, *, unlinked: bool) -> _Told:
        import httpx

        loopback = self._allow_loopback or bool(self.settings.options.get("sandbox_targets"))
        try:
            found = await discovery.discover(http, self._where(target), allow_loopback=loopback)
        except discovery.Refused as exc:
            return _Told(Mention(target, error=f"refused: {exc}", unlinked=unlinked))
        except discovery.Unreachable as exc:
            return _Told(None, retry=f"{target}: {exc}")
        if found.endpoint is None:
            return _Told(Mention(target, error=found.why_none, unlinked=unlinked))
        try:
            response = await http.request("POST", found.endpoint, data={"source": source, "target": target})
        except httpx.ConnectError as exc:
            return _Told(None, retry=f"{target}: the endpoint {found.endpoint} cannot be reached ({exc})")
        except httpx.HTTPError as exc:
            return _Told(None, retry=f"{target}: no answer from {found.endpoint} ({type(exc).__name__})", reached=True)
        status = response.status_code
        if 200 <= status < 300:  # spec §3.1.3: any 2xx is a success; 201/202 may name a status page
            location = response.headers.get("location")
            remote_id = urljoin(found.endpoint, location) if location else None
            return _Told(Mention(target, found.endpoint, status, remote_id, unlinked=unlinked))
        if status == 429:  # nothing was taken: told again after the wait (the lane's pacing)
            hint = status_outcome(response, http.now()).retry_after
            return _Told(None, retry=f"{target}: {found.endpoint} answered 429 rate limited", wait=hint or 0.0)
        if status >= 500:
            return _Told(None, retry=f"{target}: {found.endpoint} answered {status}", reached=True)
        said = one_line(response.text)[:ERROR_CHARS] if response.text else ""
        error = f"{status} refused" + (f": {said}" if said else "")
        return _Told(Mention(target, found.endpoint, status, error=error, unlinked=unlinked))

    async def check_credentials(self, http: Http) -> CredentialCheck:
        return CredentialCheck(Health.NOT_CHECKED, problem="Webmention needs no credential")


def _outcome(told: list[_Told]) -> Outcome:
    """Every target told (or definitely not to be): done, with the sub-records. Else the pair is
    sent again (at-least-once: a repeat is harmless): not sent when no POST may have arrived."""
    waiting = [t.retry for t in told if t.mention is None]
    if not waiting:
        mentions = tuple(t.mention for t in told if t.mention is not None)
        return Outcome(Kind.DONE, mentions=mentions)
    more = f" (and {len(waiting) - 3} more)" if len(waiting) > 3 else ""
    error = "; ".join(waiting[:3]) + more
    error = f"not every target was told: {error}"
    waits = [t.wait for t in told if t.mention is None and t.wait is not None]
    if len(waits) == len(waiting):  # only rate limits stand in the way: the run waits, then tells them all
        return Outcome(Kind.RATE_LIMITED, error=f"rate limited: {error}", retry_after=max(waits) or None)
    kind = Kind.AMBIGUOUS if any(t.reached for t in told) or any(t.mention for t in told) else Kind.NOT_SENT
    return Outcome(kind, error=error)
