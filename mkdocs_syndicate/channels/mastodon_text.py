"""A status's length and language as Mastodon counts and keeps them: the URLs it finds
(twitter-text with Mastodon's overrides), each counted as `characters_reserved_per_url`, and the
language codes it takes."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from mkdocs_syndicate.channel_api import ConfigError, Prepared, WriteLimit, grapheme_length
from mkdocs_syndicate.lazyre import lazy_compile

if TYPE_CHECKING:
    import regex

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
# The writes Mastodon limits apart, per account (all its tokens share them), kept by the run
# (engine/budgets.py): Rack::Attack's throttle_api_delete and throttle_api_media
# (config/initializers/rack_attack.rb), and RateLimiter's statuses family (new and edited statuses).
WRITE_LIMITS = (
    WriteLimit(30, 30 * 60, "Mastodon"),  # deletes
    WriteLimit(30, 30 * 60, "Mastodon"),  # media uploads
    WriteLimit(300, 3 * 3600, "Mastodon"),  # statuses made or edited
)


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


# A new message this close to the limit it was made for is checked against the instance's own rule.
NEAR_LIMIT = 50


def near_limit(prepared: Prepared) -> bool:
    """A message within NEAR_LIMIT of the limit it was made for: the instance's own rule may differ."""
    message = prepared.message
    return message is not None and message.limit is not None and message.length >= message.limit - NEAR_LIMIT


def instance_number(value: object, low: int, high: int, otherwise: int) -> int:
    """`value` when it is a whole number from `low` to `high` (an instance's answer), else `otherwise`."""
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    return otherwise
