"""Weibo API emulator (reference: docs/design/services.md, "Weibo"): statuses/share.json with the access token,
the 140-character rule, no #topic#, a link on the app's safe domain, links rewritten to t.cn,
identical text within a window rejected with 20019, the posting limit (20016), and
statuses/user_timeline.json. Errors in Weibo's JSON shape.

The daily budget: "一个应用内单授权用户每天累计只能请求微博开放接口 100 次" (one authorised user of
one app may call the open API 100 times a day in all, https://open.weibo.com/wiki/Rate-limiting,
whose figures are examples that depend on the app). Every `/2/` call with a valid token counts,
the timeline reads as much as the shares; past it, 403 with error 10023 "User requests out of
rate limit!" (the error-code table's words; 403 is what clients report). Which day is
UNCONFIRMED: here a calendar day in Beijing time, as Weibo's own times are; refused calls do not
count."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

from mkdocs_syndicate.emulator_api import Emulator, Request, Response, first_url
from mkdocs_syndicate.sandbox.rack_attack import Window

TOKEN = "sandbox-weibo-access-token"
# Tokens a person lets lapse (issue 38): Weibo's access tokens expire (their lifetime depends on
# the app's level), and oauth2/get_token_info says how long is left (`expire_in`, seconds).
EXPIRING_TOKEN = "sandbox-weibo-access-token-expiring"
EXPIRED_TOKEN = "sandbox-weibo-access-token-expired"
LIFETIMES = {EXPIRING_TOKEN: 3 * 86400}
LONG_LIFETIME = 5 * 365 * 86400  # an audited app's token: five years
APPKEY = "1352222456"
UID = 5000000001
POSTS_PER_HOUR = 30
REQUESTS_PER_DAY = Window("requests per day", 100, 86400)
BEIJING = 8 * 3600  # seconds east of UTC: Weibo's day
REPEAT_WINDOW = 3600.0
_URL = re.compile(r"https?://[!#-;=?-~]+")  # printable ASCII but space, " < >
_TOPIC = re.compile(r"#[^#\s]+#")
_BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def short_code(url: str) -> str:
    number = int(hashlib.sha256(url.encode()).hexdigest()[:12], 16)
    code = ""
    while number:
        number, digit = divmod(number, 62)
        code = _BASE62[digit] + code
    return code[:7]


def counted_length(shown: str) -> int:
    """Weibo counts the text as shown (links already t.cn): a character beyond U+00FF is one,
    two others are one (the composer's `replace(/[^\x00-\xff]/g, "xx").length / 2`)."""
    return -(-sum(2 if ord(ch) > 0xFF else 1 for ch in shown) // 2)


def weibo_time(epoch: float) -> str:
    """Wed Oct 24 23:49:17 +0800 2012 (Weibo answers in Beijing time)."""
    moment = dt.datetime.fromtimestamp(epoch, dt.timezone(dt.timedelta(hours=8)))
    return moment.strftime("%a %b %d %H:%M:%S %z %Y")


class WeiboEmulator(Emulator):
    name = "weibo"
    token = TOKEN  # what it accepts; tests may set their own (a sentinel)
    public_pages = ("/status/",)
    creating = ("POST /2/statuses/share.json",)
    read_marker = "user_timeline"
    # Its 429 carries its own error code; the share API requires the user's public IP (rip).
    rate_limit_fault: ClassVar[Mapping[str, Any]] = {"action": "status", "status": 429, "code": 10023}
    user_settings: ClassVar[Mapping[str, object]] = {"rip": "203.0.113.7"}
    safe_domain: str | None = None  # None: any link will do

    def initial_state(self) -> dict[str, Any]:
        return {"statuses": [], "next_id": 4900000000000000}

    @classmethod
    def client_options(cls, url: str, public_base: str) -> dict[str, str]:
        return {"api": f"{url}/weibo/2", "access_token": TOKEN, "web_url": f"{public_base}/weibo/status"}

    def configure_for_site(self, site_url: str) -> None:
        self.safe_domain = urlsplit(site_url).hostname  # a registered app's safe domain is the site's host

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        return [
            {
                "id": s["idstr"],
                "text": s["original"],
                "announces": first_url(s["original"]),
                "at": s.get("epoch"),
                "link": f"{public_base}/weibo/status/{s['idstr']}",
            }
            for s in state.get("statuses", [])
        ]

    def _error(self, status: int, code: int, message: str, path: str) -> Response:
        shown = path if path.startswith("/oauth2/") else f"/2{path.removeprefix('/2')}"
        return Response(status, {"request": shown, "error_code": code, "error": message})

    def rate_limited(self, fault: dict[str, Any]) -> Response:
        return self._error(
            403, int(fault.get("code", 10023)), "User requests out of rate limit!", "/statuses/share.json"
        )

    def _token(self, request: Request, fields: dict[str, list[str]]) -> str | None:
        header = request.headers.get("authorization", "")
        if header.startswith("OAuth2 "):
            return header[len("OAuth2 ") :]
        values = fields.get("access_token") or request.query.get("access_token")
        return values[0] if values else None

    def handle(self, request: Request) -> Response:
        fields = request.form() if request.method == "POST" else {}
        token = self._token(request, fields)
        if token is None:
            return self._error(400, 10006, "source paramter(appkey) is missing", request.path)
        if token == EXPIRED_TOKEN:
            return self._error(401, 21327, "expired_token", request.path)
        if token not in (self.token, EXPIRING_TOKEN):
            return self._error(401, 21332, "invalid_access_token", request.path)
        if request.path == "/oauth2/get_token_info" and request.method == "POST":
            return self._token_info(token)
        beijing_now = self.server.now() + BEIJING
        if REQUESTS_PER_DAY.used(self.state, beijing_now) >= REQUESTS_PER_DAY.limit:
            return self._error(403, 10023, "User requests out of rate limit!", request.path)
        REQUESTS_PER_DAY.count(self.state, beijing_now)
        if request.path == "/2/statuses/share.json" and request.method == "POST":
            return self._share(request, fields)
        if request.path == "/2/statuses/user_timeline.json" and request.method == "GET":
            return self._timeline(request)
        return self._error(404, 10020, "Request api not found!", request.path)

    def _token_info(self, token: str) -> Response:
        """POST oauth2/get_token_info: whose token it is, for which app, and the seconds left."""
        now = int(self.server.now())
        return Response(
            200,
            {
                "uid": UID,
                "appkey": APPKEY,
                "scope": None,
                "create_at": now - 86400,
                "expire_in": LIFETIMES.get(token, LONG_LIFETIME),
            },
        )

    def _share(self, request: Request, fields: dict[str, list[str]]) -> Response:
        text = (fields.get("status") or [""])[0]
        refused = self._refusal(fields, text) or self._over_limits(text)
        if refused is not None:
            return self._error(*refused, request.path)
        now = self.commit_time()
        status = self._store(text, now, "mkdocs-syndicate")
        return Response(200, self._public(status), hold_until=now if now > self.server.now() else None)

    def add_from_app(self, text: str) -> None:
        """A status the user posted in Weibo's own app (a test's): no API call, so it spends
        none of the app's daily budget and meets none of its checks."""
        with self.server.lock:
            self._store(text, self.server.now(), "微博 weibo.com")
            self.server.save()

    def _store(self, text: str, now: float, source: str) -> dict[str, Any]:
        self.state["next_id"] += 1
        status_id = self.state["next_id"]
        status = {
            "created_at": weibo_time(self.server_clock(now)),
            "id": status_id,
            "idstr": str(status_id),
            "mid": str(status_id),
            "text": _shown(text),
            "source": source,
            "user": {"id": UID, "idstr": str(UID), "screen_name": "sandbox"},
            "reposts_count": 0,
            "comments_count": 0,
            "original": text,
            "epoch": now,
            "visible_at": now,
        }
        self.state["statuses"].append(status)
        return status

    def _refusal(self, fields: dict[str, list[str]], text: str) -> tuple[int, int, str] | None:
        """What is wrong with the request itself, as (HTTP status, Weibo's code, its message)."""
        # The current statuses/share page lists rip ("the real IP of the end user") as required;
        # 10016 is Weibo's code for a missing required parameter.
        if not (fields.get("rip") or [""])[0].strip():
            return 400, 10016, "miss required parameter (rip) , see doc for more info"
        if not text.strip():
            return 400, 20008, "content is null!"
        if counted_length(_shown(text)) > 140:
            return 400, 20012, "Text too long, please input text less than 140 characters!"
        if _TOPIC.search(text):
            return 400, 10017, "parameter (status)'s value invalid: #topic# is not allowed"
        links = _URL.findall(text)
        if not links or (self.safe_domain and not any(urlsplit(u).hostname == self.safe_domain for u in links)):
            return 400, 10017, "parameter (status)'s value invalid: it must contain a link on the app's safe domain"
        return None

    def _over_limits(self, text: str) -> tuple[int, int, str] | None:
        """The account's limits: posts per hour, and the same text again too soon."""
        now = self.server.now()
        committed = self.visible(self.state["statuses"])
        if len([s for s in committed if now - s["epoch"] < 3600]) >= POSTS_PER_HOUR:
            return 403, 20016, "out of limit!"
        if any(s["original"] == text and now - s["epoch"] < REPEAT_WINDOW for s in committed):
            return 400, 20019, "Repeat conetnt!"
        return None

    @staticmethod
    def _public(status: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in status.items() if k not in ("original", "epoch", "visible_at")}

    def _timeline(self, request: Request) -> Response:
        try:
            count, page = min(100, max(1, _int_arg(request, "count", 20))), max(1, _int_arg(request, "page", 1))
            since, until = _int_arg(request, "since_id", 0), _int_arg(request, "max_id", 0)
        except ValueError:
            return self._error(400, 10017, "parameter value invalid", request.path)
        statuses = [
            s
            for s in sorted(self.visible(self.state["statuses"]), key=lambda s: s["id"], reverse=True)
            if s["id"] > since and (not until or s["id"] <= until)
        ]
        chosen = [self._public(s) for s in statuses[(page - 1) * count : page * count]]
        return Response(200, {"statuses": chosen, "total_number": len(statuses)})


def _shown(text: str) -> str:
    """The text as Weibo shows and counts it: every link shortened to t.cn."""
    return _URL.sub(lambda m: f"http://t.cn/{short_code(m.group(0))}", text)


def _int_arg(request: Request, name: str, default: int) -> int:
    """A number in the query; raises ValueError for one that is not."""
    return int(request.arg(name) or default)
