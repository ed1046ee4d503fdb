"""Mastodon: POST /api/v1/statuses with an Idempotency-Key stored in the record and reused.

An unknown outcome is resolved by reading the account's own statuses back to the pair's first
attempt (`created_at`) and matching the canonical URL in the content or the link card, never by
trusting the key: Mastodon stores the key only after creating the status, with no lock, and other
servers speaking this API ignore it. Pagination is followed on the instance's own origin only.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

from mkdocs_syndicate.channels.base import (
    EXPIRY_WARNING,
    Channel,
    Copy,
    CredentialCheck,
    Found,
    Health,
    Http,
    Kind,
    Outcome,
    Prepared,
    Presence,
    Verdict,
    check_unreachable,
    delete_outcome,
    edit_outcome,
    error_detail,
    rate_limit_left,
    scan_bound,
    status_outcome,
    transport_outcome,
)
from mkdocs_syndicate.channels.reading import (
    BadAnswer,
    identifier,
    json_list,
    json_object,
    optional_text,
    optional_url,
    same_host,
    same_origin,
    timestamp,
)
from mkdocs_syndicate.config.channels import ChannelSettings, Option, Site
from mkdocs_syndicate.content.identity import client_id, post_key_of
from mkdocs_syndicate.content.links import hrefs
from mkdocs_syndicate.content.messages import LengthRule, grapheme_length, render_message
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.lazyre import lazy_compile
from mkdocs_syndicate.ledger.schema import Record

if TYPE_CHECKING:  # HTTP is loaded only when something is sent
    import httpx
    import regex

DEFAULT_TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}\n\n{{ hashtags }}"
MAX_PAGES = 25  # 25 × 40 statuses


# Mastodon's own counting (its length and link rules live with its client).
_MENTION = lazy_compile(r"@(\w+)@[\w.-]+\w")

# Which text is a URL: what Mastodon's StatusLengthValidator#countable_text finds with
# `Extractor.extract_urls_with_indices(text, extract_url_without_protocol: false)`, that is
# twitter-text 3.1's extractor and `valid_url` regex
# (https://github.com/twitter/twitter-text/blob/master/rb/lib/twitter-text/regex.rb) with the
# overrides of https://github.com/mastodon/mastodon/blob/main/config/initializers/twitter_regex.rb.
# Each such URL counts as `characters_reserved_per_url`; any other text, a URL twitter-text does
# not find included, counts in full. Hence:
# - a URL needs a scheme (http, https, dat, dweb, ipfs, ipns, ssb, gopher or gemini) and must not
#   follow a letter, a digit, @, $ or # ("seehttps://…" is plain text);
# - its host must end in a top-level domain of twitter-text's list or in punycode (xn--…): an IP
#   address, `localhost` or `a.b` is not a URL. The list itself is not copied here: a label of
#   two or more letters stands for it, less the names reserved for local use, which no list has
#   (RFC 2606 and 6761: test, example, invalid, localhost; local, internal and the like);
# - a path takes any character but white space, < > ( ) ?, and balanced parentheses, and may not
#   end on ( ) ? ! * " ' 「 」 < > ; : = , . $ % [ ] ~ & | @ (so "(https://example.com/p/)."
#   counts "https://example.com/p/" as the URL); a query is ? and the characters Mastodon allows.
_DIRECTIONAL = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_NOT_TEXT = "\ufffe\ufeff\uffff"
_SPACES = "\t-\r \u0085\u00a0\u1680\u180e\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_DOMAIN_CHAR = rf"[^{_DIRECTIONAL}!\"#$%&'()*+,\-./:;<=>?@\[\]^_`{{|}}~\x00-\x20\x7f{_NOT_TEXT}{_SPACES}]"
_TLD_END = r"(?=[^0-9a-z@+\-]|$)"
_LOCAL_NAMES = "example|invalid|localhost|test|local|localdomain|internal|intranet|lan|home|corp|private"
_TLD = rf"(?:(?!(?:{_LOCAL_NAMES}){_TLD_END})\p{{L}}{{2,}}{_TLD_END}|xn--[0-9a-z]+)"
_DOMAIN = (
    rf"(?:(?:{_DOMAIN_CHAR}(?:[_\-]|{_DOMAIN_CHAR})*)?{_DOMAIN_CHAR}\.)*"
    rf"(?:(?:{_DOMAIN_CHAR}(?:-|{_DOMAIN_CHAR})*)?{_DOMAIN_CHAR}\.){_TLD}"
)
_PATH_CHAR = r"[^\p{White_Space}<>()?]"
_PARENS = rf"\((?:{_PATH_CHAR}+|{_PATH_CHAR}*\({_PATH_CHAR}+\){_PATH_CHAR}*)\)"
# twitter_regex.rb builds the path's last character before it redefines the balanced parentheses,
# so a path ending in parentheses uses twitter-text's own, narrower, path characters there.
_LATIN = (  # twitter-text's LATIN_ACCENTS
    "\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff\u0100-\u024f\u0253\u0254\u0256\u0257\u0259\u025b\u0263"
    "\u0268\u026f\u0272\u0289\u028b\u02bb\u0300-\u036f\u1e00-\u1eff"
)
_OLD_PATH_CHAR = rf"[a-z\p{{Cyrillic}}0-9!*';:=+,.$/%#\[\]\p{{Pd}}_~&|@{_LATIN}]"
_OLD_PARENS = rf"\((?:{_OLD_PATH_CHAR}+|{_OLD_PATH_CHAR}*\({_OLD_PATH_CHAR}+\){_OLD_PATH_CHAR}*)\)"
_PATH_END = rf"(?:[^\p{{White_Space}}()?!*\"'「」<>;:=,.$%\[\]~&|@]|{_OLD_PARENS})"
_PATH = rf"(?:{_PATH_CHAR}*(?:{_PARENS}{_PATH_CHAR}*)*{_PATH_END}|{_PATH_CHAR}+/)"
_WIDE = (
    "\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef\U00010000-\U0001fffd\U00020000-\U0002fffd\U00030000-\U0003fffd"
    "\U00040000-\U0004fffd\U00050000-\U0005fffd\U00060000-\U0006fffd\U00070000-\U0007fffd\U00080000-\U0008fffd"
    "\U00090000-\U0009fffd\U000a0000-\U000afffd\U000b0000-\U000bfffd\U000c0000-\U000cfffd\U000d0000-\U000dfffd"
    "\U000e1000-\U000efffd\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
)
_QUERY = rf"\?[a-z0-9!?*'();:&=+$/%#\[\]\-_.,~|@^{_WIDE}]*[a-z0-9_&=#/\-{_WIDE}]"
_URL = (
    rf"(?:[^a-z0-9@＠$#＃{_NOT_TEXT}]|[{_DIRECTIONAL}]|^)"
    rf"(?P<url>(?P<scheme>(?:https?|dat|dweb|ipfs|ipns|ssb|gopher|gemini)://)?"
    rf"(?P<domain>{_DOMAIN})(?::[0-9]+)?(?:/{_PATH}*)?(?:{_QUERY})?)"
)


@functools.cache
def _url_rule() -> regex.Pattern[str]:
    import regex

    return regex.compile(_URL, regex.IGNORECASE | regex.VERSION0)


def mastodon_url_spans(text: str) -> list[tuple[int, int]]:
    """Where Mastodon finds URLs in a status's text (above)."""
    if ":" not in text:
        return []
    spans = []
    for match in _url_rule().finditer(text):
        if match["scheme"] and _valid_domain(match["domain"], len(match["url"])):
            spans.append(match.span("url"))
    return spans


def _valid_domain(domain: str, url_length: int) -> bool:
    """twitter-text's is_valid_domain: the host converts to ASCII (IDNA) and the URL, with its
    host so converted, is at most 4,096 characters."""
    try:
        ascii_length = len(domain.encode("idna"))
    except UnicodeError:
        return False
    return url_length + max(0, ascii_length - len(domain)) <= 4096


MASTODON_URL_WEIGHT = 23  # Mastodon's default characters_reserved_per_url


def mastodon_length(text: str, url_weight: int = MASTODON_URL_WEIGHT) -> int:
    """Mastodon's count (StatusLengthValidator): grapheme clusters of the text with every URL
    replaced by `url_weight` characters, and @user@host as @user."""
    text = _MENTION.sub(r"@\1", text)
    pieces, last = [], 0
    for start, end in mastodon_url_spans(text):
        pieces += [text[last:start], "x" * url_weight]
        last = end
    return grapheme_length("".join([*pieces, text[last:]]))


# The languages a status may have: Mastodon's app/helpers/languages_helper.rb SUPPORTED_LOCALES
# (https://github.com/mastodon/mastodon/blob/main/app/helpers/languages_helper.rb)
# (ISO 639-1, four regional Chinese codes, some ISO 639-3 codes). PostStatusService passes the
# `language` parameter through `valid_locale_cascade`: a supported code is kept, else the part
# before the first "_" or "-" if that is one (`en_US` and `ja-JP` post as `en` and `ja`), else
# the status silently gets the account's default language. Codes are case-sensitive there.
_LANGUAGE_CODES = (
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu "
    "cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gu gv ha he hi ho "
    "hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku "
    "kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn "
    "no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sn "
    "so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo "
    "wa wo xh yi yo za zh zu "  # ISO 639-1
    "zh-CN zh-HK zh-TW zh-YUE "  # ISO_639_1_REGIONAL
    "ast chr ckb cnr jbo kab ldn lfn sco sma smj szl tok xal zba zgh"  # ISO_639_3
)
MASTODON_LANGUAGES = frozenset(_LANGUAGE_CODES.split())


def mastodon_language(value: str, where: str) -> str:
    """The `language` setting as Mastodon will store it (`en_US` → `en`), or a ConfigError naming
    the setting for a value Mastodon would replace with the account's default language."""
    if not value or value in MASTODON_LANGUAGES:
        return value
    code = re.split(r"[_-]", value, maxsplit=1)[0]
    if code in MASTODON_LANGUAGES:
        return code
    near = [known for known in sorted(MASTODON_LANGUAGES) if known.lower() in (value.lower(), code.lower())]
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise ConfigError(
        f"{value!r} is not a language Mastodon takes for a status (it would post in the account's "
        "default language instead): use an ISO 639-1 code such as en, de or ja, in lower case "
        f"(Mastodon also knows zh-CN, zh-HK, zh-TW, zh-YUE and some ISO 639-3 codes such as ast){hint}",
        where,
    )


def idempotency_key(post_url: str, channel_id: str) -> str:
    """Unique per (site, post, channel): from the full canonical URL, never the post key alone
    (two sites on one account share keys; the server would answer site B with site A's status)."""
    return client_id(post_url, channel_id, "mastodon-idempotency")


NEAR_LIMIT = 50
SCOPE_HINT = (
    "the token may not read the account back: verify_credentials answered 403 (outside the "
    "authorized scopes). Make a token with the scopes write:statuses read:statuses profile "
    "(read:accounts before Mastodon 4.3); until then a post whose outcome is unknown cannot be "
    "checked"
)


def _record_not_found(response: httpx.Response) -> bool:
    """Mastodon's API answer for a record that does not exist: JSON {"error": "Record not found"}."""
    if not response.headers.get("content-type", "").startswith("application/json"):
        return False
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("error") == "Record not found"


def _is_status(status_id: str, response: httpx.Response) -> bool:
    """The documented answer to DELETE /api/v1/statuses/:id: the deleted Status, with its id."""
    try:
        return identifier(json_object(response).get("id")) == status_id
    except BadAnswer:
        return False


class MastodonChannel(Channel):
    type_name = "mastodon"
    edits_in_place = True  # PUT /api/v1/statuses/:id (Mastodon 3.5+)
    deletes = True  # DELETE /api/v1/statuses/:id
    options: ClassVar[Mapping[str, Option]] = {
        "instance": Option("url", required=True, help="e.g. https://mastodon.social"),
        "token": Option(
            "secret",
            required=True,
            help="an access token with the scopes write:statuses read:statuses profile "
            "(read:accounts before Mastodon 4.3), e.g. !ENV MASTODON_TOKEN",
        ),
        "visibility": Option("choice", default="public", choices=("public", "unlisted", "private", "direct")),
        "language": Option(
            "text", help="the statuses' language, an ISO 639-1 code such as en or ja", check=mastodon_language
        ),
        "max_characters": Option("int", default=500, help="the status length limit when the instance does not say"),
    }

    def __init__(self, settings: ChannelSettings, site: Site) -> None:
        super().__init__(settings, site)
        # The instance's own limits (/api/v2/instance), once read in this run; until then the setting.
        self._max_characters: int = settings.options["max_characters"]
        self._url_weight = MASTODON_URL_WEIGHT
        self._limits_read = False

    @property
    def _base(self) -> str:
        return str(self.settings.options["instance"])

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.settings.options['token'].reveal()}"}

    def prepare(self, post: Post, created_at: str | None = None) -> Prepared:
        weight = self._url_weight
        rule = LengthRule(self._max_characters, lambda text: mastodon_length(text, weight))
        message = render_message(
            post,
            self.id,
            self.settings.template or DEFAULT_TEMPLATE,
            rule,
            self.site.name,
            where=self.settings.where("template"),
        )
        return Prepared(message, idempotency_key=idempotency_key(post.url, self.id), description=message.text)

    async def send(self, http: Http, post: Post, prepared: Prepared) -> Outcome:
        import httpx

        assert prepared.message is not None
        form = {"status": prepared.message.text, "visibility": self.settings.options["visibility"]}
        if self.settings.options.get("language"):
            form["language"] = self.settings.options["language"]
        headers = {**self._auth(), "Idempotency-Key": prepared.idempotency_key or ""}
        try:
            response = await http.request("POST", f"{self._base}/api/v1/statuses", data=form, headers=headers)
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if response.status_code == 200:
            return self._created(response, post, prepared.message.text)
        if response.status_code == 404 and prepared.replay and _record_not_found(response):
            # Mastodon answers a replayed Idempotency-Key whose status was deleted with its API's
            # own 404 (PostStatusService finds the key's status id; Status.find raises, and
            # Api::BaseController answers {"error": "Record not found"}): it existed, and its
            # author removed it. Any other 404 (a maintenance page, a proxy) proves nothing.
            return Outcome(
                Kind.GONE,
                error="404 Record not found for a replayed Idempotency-Key: the "
                "status was made and then deleted on the instance; not sent again",
            )
        if response.status_code == 404 and _record_not_found(response):
            # A first send whose key the instance still holds (up to an hour) for a status that
            # was deleted: a post announced again, after its copy was deleted, within that hour.
            return Outcome(
                Kind.REFUSED,
                error="404 Record not found: the instance still remembers this post's Idempotency-Key "
                "from its deleted status (for up to an hour after it was made); a run after that announces it",
            )
        if response.status_code in (404, 410) and prepared.replay:
            return Outcome(
                Kind.AMBIGUOUS,
                error=f"{response.status_code} for a replayed Idempotency-Key, not the API's own "
                "'Record not found': proves nothing; the post may exist",
            )
        return status_outcome(response, http.now())

    def _created(self, response: httpx.Response, post: Post, text: str) -> Outcome:
        try:
            status = json_object(response)
            if post.url in text and not self._links_to(status, post.url):
                # A replayed key can answer with another post's status (a key collision):
                # recording it as ours would lose this post.
                return Outcome(
                    Kind.AMBIGUOUS,
                    error="200 with a status that does not link to this post "
                    "(another post's Idempotency-Key?); the post may exist",
                )
            return Outcome(
                Kind.DONE,
                remote_id=identifier(status.get("id")),
                remote_url=optional_url(status.get("url")) or optional_url(status.get("uri")),
            )
        except BadAnswer as exc:
            return Outcome(Kind.AMBIGUOUS, error=f"200 with an unreadable status ({exc}); the post may exist")

    async def update(self, http: Http, post: Post, prepared: Prepared, record: Record) -> Outcome:
        """PUT /api/v1/statuses/:id with the new text: the status keeps its id, its replies and
        boosts, and shows "edited". Mastodon answers a status that is gone (or not ours) with its
        API's 404 "Record not found"."""
        import httpx

        assert prepared.message is not None and record.remote_id
        form = {"status": prepared.message.text}
        if self.settings.options.get("language"):
            form["language"] = self.settings.options["language"]
        url = f"{self._base}/api/v1/statuses/{quote(record.remote_id, safe='')}"
        try:
            response = await http.request("PUT", url, data=form, headers=self._auth())
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        return edit_outcome(response, http.now(), record.remote_id, "status")

    async def read_copy(self, http: Http, post: Post, record: Record, prepared: Prepared) -> Copy:
        """GET /api/v1/statuses/:id/source: the status's plain text as its author wrote it (the
        `content` of a status is HTML, re-linked by the instance: no basis for a comparison)."""
        assert record.remote_id
        status_url = f"{self._base}/api/v1/statuses/{quote(record.remote_id, safe='')}"
        response = await http.request("GET", f"{status_url}/source", headers=self._auth())
        if response.status_code == 404:  # gone, or an instance before 3.5: the status itself says which
            shown = await http.request("GET", status_url, headers=self._auth())
            return Copy.GONE if shown.status_code == 404 and _record_not_found(shown) else Copy.UNKNOWN
        if response.status_code != 200:
            return Copy.UNKNOWN
        text = optional_text(json_object(response).get("text"), "the status source's text")
        if not text or prepared.message is None:
            return Copy.UNKNOWN
        return Copy.MATCHES if text == prepared.message.text else Copy.DIFFERS

    async def delete(self, http: Http, record: Record) -> Outcome:
        """DELETE /api/v1/statuses/:id: 200 with the deleted status. A status already gone is
        the API's 404 "Record not found" (any other 404, a proxy's, proves nothing)."""
        import httpx

        assert record.remote_id
        url = f"{self._base}/api/v1/statuses/{quote(record.remote_id, safe='')}"
        try:
            response = await http.request("DELETE", url, headers=self._auth())
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        gone = response.status_code == 404 and _record_not_found(response)
        confirms = functools.partial(_is_status, record.remote_id)
        return delete_outcome(response, http.now(), gone=gone, what="status", confirms=confirms)

    async def read_presence(self, http: Http, record: Record) -> Presence:
        """GET /api/v1/statuses/:id: a status deleted by its author (or by us) is the API's 404
        "Record not found" at once (Mastodon discards it before the removal job runs)."""
        assert record.remote_id
        url = f"{self._base}/api/v1/statuses/{quote(record.remote_id, safe='')}"
        response = await http.request("GET", url, headers=self._auth())
        if response.status_code == 200:
            return Presence.PRESENT
        if response.status_code == 404 and _record_not_found(response):
            return Presence.GONE
        return Presence.UNKNOWN

    @classmethod
    def replies_url(cls, options: Mapping[str, Any], record: Record) -> str | None:
        # Public for a public status: StatusesController#context only authorizes a token if given.
        instance = options.get("instance")
        if not isinstance(instance, str) or not record.remote_id:
            return None
        return f"{instance.rstrip('/')}/api/v1/statuses/{quote(record.remote_id, safe='')}/context"

    def recognises(self, remote_url: str) -> bool:
        return same_host(remote_url, self._base)

    def _links_to(self, status: dict[str, Any], url: str) -> bool:
        """Whether a status links to `url`: its card, or an <a href> of its content, read the way
        the instance writes them (HTML-escaped by Rails: ' is &#39;), compared after unescaping
        and as a page of this site (a query string or trailing slash does not make it another)."""
        card = status.get("card")
        card_url = card.get("url") if isinstance(card, dict) else None
        links: list[str] = [card_url] if isinstance(card_url, str) else []
        links += hrefs(optional_text(status.get("content"), "content"))
        page = post_key_of(url, self.site.url)
        return any(link == url or (page is not None and post_key_of(link, self.site.url) == page) for link in links)

    async def learn_limits(self, http: Http, fresh: list[Prepared]) -> bool:
        """The instance's own length rule, read once per run and only when it can matter: a new
        message within NEAR_LIMIT of the limit used to make it (it may have been shortened for
        nothing, or count URLs differently from the instance). True when the rule changed."""
        if self._limits_read or not any(_near_limit(p) for p in fresh):
            return False
        self._limits_read = True
        statuses = await self._instance_statuses(http)
        if statuses is None:
            return False  # the setting stands; the server's own check has the last word
        limit = _whole(statuses.get("max_characters"), 1, 100_000, self._max_characters)
        weight = _whole(statuses.get("characters_reserved_per_url"), 0, 1000, self._url_weight)
        changed = (limit, weight) != (self._max_characters, self._url_weight)
        self._max_characters, self._url_weight = limit, weight
        return changed

    async def _instance_statuses(self, http: Http) -> dict[str, Any] | None:
        """/api/v2/instance's configuration.statuses, or None when it cannot be read."""
        import httpx

        try:
            answer = await http.request("GET", f"{self._base}/api/v2/instance")
            configuration = json_object(answer).get("configuration") if answer.status_code == 200 else None
        except (httpx.HTTPError, BadAnswer):  # unreachable, undecodable, not JSON
            return None
        statuses = configuration.get("statuses") if isinstance(configuration, dict) else None
        return statuses if isinstance(statuses, dict) else None

    async def check_credentials(self, http: Http) -> CredentialCheck:
        return await _MastodonCheck(self).run(http)

    async def verify(self, http: Http, post: Post, record: Record, after: Outcome | None) -> Verdict:
        import httpx

        try:
            return await self._scan(http, post, scan_bound(record))
        except httpx.TransportError as exc:
            return Verdict(Found.UNKNOWN, reason=f"could not read own statuses ({type(exc).__name__})")
        except BadAnswer as exc:
            return Verdict(Found.UNKNOWN, reason=f"could not read own statuses: {exc}")

    def _in_page(self, statuses: list[Any], post: Post, oldest: float) -> Verdict | None:
        """This page's verdict: found, or absent once the page reaches back past the first attempt;
        None to read the next page."""
        reached_oldest = False
        for status in statuses:
            if self._links_to(status, post.url):
                return Verdict(
                    Found.FOUND,
                    identifier(status.get("id")),
                    optional_url(status.get("url")) or optional_url(status.get("uri")),
                )
            reached_oldest |= timestamp(status.get("created_at"), "created_at") < oldest
        if not statuses or reached_oldest:
            return Verdict(Found.ABSENT, reason="not among own statuses since the first attempt")
        return None

    async def _scan(self, http: Http, post: Post, oldest: float) -> Verdict:
        me = await http.request("GET", f"{self._base}/api/v1/accounts/verify_credentials", headers=self._auth())
        if me.status_code == 403:
            return Verdict(Found.UNKNOWN, reason=SCOPE_HINT)
        if me.status_code != 200:
            return Verdict(Found.UNKNOWN, reason=f"verify_credentials answered {me.status_code}")
        account_id = identifier(json_object(me).get("id"), "account id")
        url: str | None = f"{self._base}/api/v1/accounts/{account_id}/statuses"
        params: dict[str, Any] | None = {"limit": 40, "exclude_reblogs": "true", "exclude_replies": "true"}
        for _ in range(MAX_PAGES):
            assert url is not None
            page = await http.request("GET", url, params=params, headers=self._auth())
            if page.status_code != 200:
                return Verdict(Found.UNKNOWN, reason=f"listing own statuses answered {page.status_code}")
            verdict = self._in_page(json_list(page), post, oldest)
            if verdict is not None:
                return verdict
            next_link = page.links.get("next", {}).get("url")
            if not next_link:
                return Verdict(Found.ABSENT, reason="not among own statuses (all read)")
            if not same_origin(next_link, self._base):
                return Verdict(
                    Found.UNKNOWN,
                    reason="the next page of own statuses is on another origin; "
                    "not followed (the token is only sent to the instance)",
                )
            url, params = next_link, None
        return Verdict(Found.UNKNOWN, reason=f"more than {MAX_PAGES * 40} statuses since the first attempt")


# What sending needs of a token, each met by its granular scope or the broad one above it: to post
# and edit, to read own statuses back (verify), and verify_credentials (the account's id).
NEEDED_SCOPES = (
    ("write:statuses", "write"),
    ("read:statuses", "read"),
    ("profile", "read:accounts", "read"),
)
TOKEN_ADVICE = (
    "make a new access token (Preferences → Development → your application) with the scopes "
    "write:statuses read:statuses profile, and put it where the config's token setting reads it"
)


class _MastodonCheck:
    """The credential check (`MastodonChannel.check_credentials`): verify_credentials proves the
    token and names the account; Doorkeeper's GET /oauth/token/info (which Mastodon's routes keep:
    `use_doorkeeper` without skipping token_info) gives its scopes and expiry."""

    def __init__(self, channel: MastodonChannel) -> None:
        self.channel = channel

    async def run(self, http: Http) -> CredentialCheck:
        import httpx

        try:
            me = await http.request(
                "GET", f"{self.channel._base}/api/v1/accounts/verify_credentials", headers=self.channel._auth()
            )
            if me.status_code != 200:
                return _refused_check(me)
            account = "@" + optional_text(json_object(me).get("acct"), "acct")
            info = await http.request("GET", f"{self.channel._base}/oauth/token/info", headers=self.channel._auth())
        except (httpx.HTTPError, BadAnswer) as exc:
            return check_unreachable(exc)
        limits = rate_limit_left(me.headers)
        return self._scopes_and_expiry(account, info, (limits,) if limits else ())

    def _scopes_and_expiry(self, account: str, info: httpx.Response, details: tuple[str, ...]) -> CredentialCheck:
        try:
            body = json_object(info) if info.status_code == 200 else None
        except BadAnswer:
            body = None
        scopes = body.get("scope") if body else None
        if isinstance(scopes, str):  # other servers of this API may send OAuth's space-separated string
            scopes = scopes.split()
        if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
            said = f"/oauth/token/info answered {info.status_code}"
            return CredentialCheck(
                Health.OK, account, details=(*details, f"scopes not reported by this server ({said})")
            )
        details = (*details, "scopes: " + " ".join(scopes))
        missing = [group[0] for group in NEEDED_SCOPES if not set(group) & set(scopes)]
        if missing:
            return CredentialCheck(
                Health.FAILING,
                account,
                problem=f"the token lacks the scope{'s' if len(missing) > 1 else ''} {' '.join(missing)}",
                action=TOKEN_ADVICE,
                details=details,
            )
        expires_in = body.get("expires_in") if body else None
        if isinstance(expires_in, int) and not isinstance(expires_in, bool):
            days = expires_in / 86400
            details = (*details, f"expires in {days:.1f} days")
            if expires_in < EXPIRY_WARNING:
                return CredentialCheck(
                    Health.EXPIRING,
                    account,
                    problem=f"the token expires in {days:.1f} days",
                    action=TOKEN_ADVICE,
                    details=details,
                    expires_in=float(expires_in),
                )
            return CredentialCheck(Health.OK, account, details=details, expires_in=float(expires_in))
        return CredentialCheck(Health.OK, account, details=(*details, "does not expire"))


def _refused_check(response: httpx.Response) -> CredentialCheck:
    """verify_credentials refused: 401 is the token itself (invalid, revoked, expired: Doorkeeper's
    words), 403 its scopes; anything else proves nothing about the token."""
    detail = error_detail(response).removeprefix(": ")
    if response.status_code == 401:
        return CredentialCheck(Health.FAILING, problem=f"401 {detail or 'token refused'}", action=TOKEN_ADVICE)
    if response.status_code == 403:
        return CredentialCheck(
            Health.FAILING,
            problem=f"403 {detail or 'forbidden'}: the token may not call verify_credentials",
            action=TOKEN_ADVICE,
        )
    return CredentialCheck(
        Health.UNKNOWN,
        problem=f"verify_credentials answered {response.status_code}{error_detail(response)}",
        action="check the instance setting and whether the instance is up, then run the check again",
    )


def _near_limit(prepared: Prepared) -> bool:
    """A message within NEAR_LIMIT of the limit it was made for: the instance's own rule may differ."""
    message = prepared.message
    return message is not None and message.limit is not None and message.length >= message.limit - NEAR_LIMIT


def _whole(value: object, low: int, high: int, otherwise: int) -> int:
    """`value` when it is a whole number from `low` to `high` (an instance's answer), else `otherwise`."""
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    return otherwise
