"""Weibo: statuses/share.json with the post URL (on the app's safe domain) in the text.

Weibo has no idempotency key and rewrites links to t.cn, so each message carries a short marker
derived from the post's URL and channel id (e.g. 〔mkd·3f9a1c〕, kept in the record) that the user
timeline can be searched for. Its duplicate-text errors (20019, 20017, 20111) and "sent, server
slow" (20032) are ambiguous: they go to verify, and when the timeline cannot show the post the
pair is left for a human. The token goes in the form body or the Authorization header, never in
a URL.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping
from typing import Any, ClassVar

from mkdocs_syndicate.channel_api import (
    EXPIRY_WARNING,
    BadAnswer,
    Channel,
    CredentialCheck,
    Found,
    Health,
    Http,
    Kind,
    LengthRule,
    Option,
    Outcome,
    Post,
    Prepared,
    Record,
    Verdict,
    check_unreachable,
    client_id,
    identifier,
    json_object,
    objects,
    optional_text,
    render_message,
    scan_bound,
    transport_outcome,
)
from mkdocs_syndicate.errors import PostError
from mkdocs_syndicate.lazyre import lazy_compile

DEFAULT_TEMPLATE = "{{ title }} {{ url }}"
RATE_CODES = {10022, 10023, 10024, 20016}
AUTH_CODES = {21301, 21314, 21315, 21316, 21317, 21319, 21327, 21332, 10006}
AMBIGUOUS_CODES = {20017, 20019, 20111, 20032, 10001, 10002, 10009}
DUPLICATE_CODES = {20017, 20019, 20111}
RATE_LIMIT_WAIT = 300.0  # Weibo gives no reset time; its posting limit is per hour
MAX_PAGES = 10
_TOPIC = lazy_compile(r"#[^#\s]+#")


def marker(post_url: str, channel_id: str, life: int = 0) -> str:
    """Unique per (site, post, channel, life): from the post's full canonical URL."""
    return "〔mkd·" + client_id(post_url, channel_id, "weibo-marker", life)[:6] + "〕"


def legacy_marker(post_key: str, channel_id: str) -> str:
    """The marker of records written before markers were per site (from the post key alone)."""
    return "〔mkd·" + hashlib.sha256(f"{post_key}:{channel_id}".encode()).hexdigest()[:6] + "〕"


def weibo_id(status: dict[str, Any]) -> str:
    """A status's id as Weibo gives it: `idstr`, the digits of the 64-bit `id`."""
    status_id = identifier(status.get("idstr"), "idstr")
    if not status_id.isdigit() or not status_id.isascii():
        raise BadAnswer("idstr is not a Weibo status id")
    return status_id


def error_code(body: Any) -> int | None:
    try:
        return int(body.get("error_code"))
    except (AttributeError, TypeError, ValueError):
        return None


def weibo_length(text: str, url_weight: int = 10) -> int:
    """Weibo's count (its composer's rule): a character beyond U+00FF is 1, two of the first 256
    (ASCII, Latin-1) are 1, every link counts as its t.cn short form (about 20 ASCII, so 10)."""
    import math

    urls = _WEIBO_URL.findall(text)
    rest = _WEIBO_URL.sub("", text)
    halves = sum(2 if ord(ch) > 0xFF else 1 for ch in rest)
    return math.ceil(halves / 2) + url_weight * len(urls)


# Weibo shortens what is a URL by RFC 3986's characters (anything else, like "，" or "。", ends it).
_WEIBO_URL = lazy_compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")


def neutralise_weibo(text: str) -> str:
    """Weibo reads #...# as a topic whatever sits inside, so # becomes the fullwidth ＃."""
    return text.replace("@", "@\u200b").replace("#", "＃")


class WeiboChannel(Channel):
    type_name = "weibo"
    options: ClassVar[Mapping[str, Option]] = {
        "api": Option("url", default="https://api.weibo.com/2"),
        "access_token": Option(
            "secret", required=True, help="an OAuth2 user token of your Weibo app, e.g. !ENV WEIBO_ACCESS_TOKEN"
        ),
        "rip": Option(
            "ip",
            required=True,
            only_to_send=True,
            help="the public IP address of the account's owner, which statuses/share requires "
            "(Weibo's 'rip'), e.g. !ENV WEIBO_RIP",
        ),
        "marker": Option("bool", default=True, help="append a short marker so verify can find the post"),
        "max_length": Option("int", default=140),
        "web_url": Option("url", default="https://m.weibo.cn/status"),
    }

    def recognises(self, remote_url: str) -> bool:
        return remote_url.startswith(f"{self.settings.options['web_url']}/")

    def _token(self) -> str:
        return str(self.settings.options["access_token"].reveal())

    def _marker(self, post: Post, life: int = 0) -> str:
        return marker(post.url, self.id, life) if self.settings.options["marker"] else ""

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        tag = self._marker(post, life)
        limit = self.settings.options["max_length"] - (weibo_length(" " + tag) if tag else 0)
        message = render_message(
            post,
            self.id,
            self.settings.template or DEFAULT_TEMPLATE,
            LengthRule(limit, weibo_length, "Weibo characters"),
            self.site.name,
            where=self.settings.where("template"),
            neutraliser=neutralise_weibo,
            with_hashtags=False,
        )
        if post.url not in message.text:
            raise PostError(
                f"{post.source}: the {self.id} message must contain the post URL "
                "({{ url }}): Weibo only accepts a link on the app's safe domain"
            )
        if _TOPIC.search(message.text):
            raise PostError(
                f"{post.source}: the {self.id} message contains a #topic#, which "
                "statuses/share refuses; remove it from the template or text"
            )
        if tag:
            message = type(message)(
                f"{message.text} {tag}", message.length + weibo_length(" " + tag), self.settings.options["max_length"]
            )
        # The marker is kept in the record: what verify looks for, whatever derives it later.
        return Prepared(message, idempotency_key=tag or None, description=message.text, life=life)

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        import httpx

        assert prepared.message is not None
        form = {"access_token": self._token(), "status": prepared.message.text, "rip": self.settings.options["rip"]}
        try:
            response = await http.request("POST", f"{self.settings.options['api']}/statuses/share.json", data=form)
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        try:
            body: Any = json_object(response)
        except BadAnswer:
            body = None
        if response.status_code == 200 and isinstance(body, dict) and "error_code" not in body:
            return self._shared(body)
        return _failure(response.status_code, body)

    def _shared(self, body: dict[str, Any]) -> Outcome:
        try:
            status_id = weibo_id(body)
        except BadAnswer as exc:
            return Outcome(Kind.AMBIGUOUS, error=f"200 with an unreadable status ({exc}); the post may exist")
        return Outcome(Kind.DONE, remote_id=status_id, remote_url=f"{self.settings.options['web_url']}/{status_id}")

    async def check_credentials(self, http: Http) -> CredentialCheck:
        return await _weibo_check(self, http)

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        code = after.code if after else None
        tag = self._marker(post)
        # A record written before markers were per site has none stored: its message carried the
        # key-derived marker (or the current one, if it was re-sent since).
        needles = (
            [record.idempotency_key]
            if record.idempotency_key
            else [legacy_marker(post.key, self.id), tag]
            if tag
            else [post.title]
        )
        seen = await self._scan_timeline(http, needles, scan_bound(record))
        if seen is not None:
            return seen
        if code in DUPLICATE_CODES or code == 20032:
            return Verdict(
                Found.UNKNOWN,
                reason=f"Weibo answered {code} (duplicate or delayed) but the "
                "timeline does not show the post; check weibo.com and resolve by hand",
            )
        if not (tag or record.idempotency_key):
            return Verdict(
                Found.UNKNOWN,
                reason="not found by title in the timeline, and without a marker that proves nothing; check weibo.com",
            )
        return Verdict(Found.ABSENT, reason="marker not in the user timeline since the in_flight time")

    def _holding(self, statuses: list[dict[str, Any]], needles: list[str]) -> Verdict | None:
        """FOUND with the first status whose text holds a needle, or None."""
        for status in statuses:
            text = optional_text(status.get("text"), "text")
            if any(needle and needle in text for needle in needles):
                status_id = weibo_id(status)
                return Verdict(Found.FOUND, status_id, f"{self.settings.options['web_url']}/{status_id}")
        return None

    async def _scan_timeline(self, http: Http, needles: list[str], oldest: float) -> Verdict | None:
        """The account's timeline back to `oldest`: FOUND with the status that holds a needle,
        UNKNOWN when it cannot be read to there, None when it was read and holds none."""
        import httpx

        try:
            for page in range(1, MAX_PAGES + 1):
                response = await http.request(
                    "GET",
                    f"{self.settings.options['api']}/statuses/user_timeline.json",
                    params={"count": 100, "page": page, "trim_user": 1},
                    headers={"Authorization": f"OAuth2 {self._token()}"},
                )
                if response.status_code != 200:
                    return Verdict(Found.UNKNOWN, reason=f"user_timeline answered {response.status_code}")
                statuses = objects(json_object(response).get("statuses"), "statuses")
                found = self._holding(statuses, needles)
                if found is not None:
                    return found
                if not statuses or any(_weibo_epoch(s.get("created_at")) < oldest for s in statuses):
                    return None
        except httpx.TransportError as exc:
            return Verdict(Found.UNKNOWN, reason=f"could not read the user timeline ({type(exc).__name__})")
        except BadAnswer as exc:
            return Verdict(Found.UNKNOWN, reason=f"could not read the user timeline: {exc}")
        return Verdict(Found.UNKNOWN, reason="too many posts since the in_flight time")


TOKEN_ADVICE = (
    "authorise the app again (oauth2/authorize, then oauth2/access_token) and put the new access "
    "token where the config's access_token setting reads it"
)


async def _weibo_check(channel: WeiboChannel, http: Http) -> CredentialCheck:
    """POST oauth2/get_token_info with the token in the form (never in a URL): whose it is and
    the seconds it has left (`expire_in`); a token error code (21327 expired, 21332 invalid, ...)
    is a credential a person must renew."""
    import httpx

    api = str(channel.settings.options["api"])
    url = f"{api.removesuffix('/2')}/oauth2/get_token_info"
    try:
        response = await http.request("POST", url, data={"access_token": channel._token()})
        body: Any = json_object(response)
    except (httpx.HTTPError, BadAnswer) as exc:
        return check_unreachable(exc)
    code = error_code(body)
    if code is not None or response.status_code != 200:
        failure = _failure(response.status_code, body)
        health = Health.FAILING if failure.kind is Kind.AUTH else Health.UNKNOWN
        return CredentialCheck(health, problem=failure.error or "", action=TOKEN_ADVICE)
    left = body.get("expire_in")
    account = f"uid {body.get('uid')}" if isinstance(body.get("uid"), int) else ""
    if not isinstance(left, int) or isinstance(left, bool):
        return CredentialCheck(Health.UNKNOWN, account, problem="get_token_info gave no expire_in", action=TOKEN_ADVICE)
    days = left / 86400
    if left < EXPIRY_WARNING:
        return CredentialCheck(
            Health.EXPIRING,
            account,
            problem=f"the access token expires in {days:.1f} days",
            action=TOKEN_ADVICE,
            details=(f"expires in {days:.1f} days",),
            expires_in=float(left),
        )
    return CredentialCheck(Health.OK, account, details=(f"expires in {days:.0f} days",), expires_in=float(left))


def _failure(status: int, body: Any) -> Outcome:
    """Anything but a status made: Weibo's error code decides, else the HTTP status."""
    code = error_code(body)
    if code is None and status < 400:  # not documented: the post may exist
        return Outcome(Kind.AMBIGUOUS, error=f"{status} with an unreadable answer; the post may exist")
    message = _failure_message(status, code, body)
    kind = _kind_of(code, status)
    wait = RATE_LIMIT_WAIT if kind is Kind.RATE_LIMITED else None
    return Outcome(kind, error=message, retry_after=wait, code=code)


def _failure_message(status: int, code: int | None, body: Any) -> str:
    """`400 error 20019: repeated weibo text`; without Weibo's code or text, `500 from the server`
    (a 500 with `{}` said "500 error None: None")."""
    text = body.get("error") if isinstance(body, dict) else None
    text = text.strip() if isinstance(text, str) and text.strip() else None
    if code is None:
        return f"{status} from the server" + (f": {text}" if text else "")
    return f"{status} error {code}" + (f": {text}" if text else "")


def _kind_of(code: int | None, status: int) -> Kind:
    if code is None:  # no code of Weibo's: the HTTP status says
        return Kind.AUTH if status == 401 else Kind.AMBIGUOUS if status >= 500 else Kind.REFUSED
    if code in RATE_CODES:
        return Kind.RATE_LIMITED
    if code in AUTH_CODES:
        return Kind.AUTH
    return Kind.AMBIGUOUS if code in AMBIGUOUS_CODES else Kind.REFUSED


def _weibo_epoch(text: str | None) -> float:
    try:
        return dt.datetime.strptime(text or "", "%a %b %d %H:%M:%S %z %Y").timestamp()
    except ValueError:
        return float("inf")  # unreadable date: keep scanning rather than stop early
