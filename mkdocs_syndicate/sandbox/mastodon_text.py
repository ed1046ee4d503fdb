"""A status's text as Mastodon reads it: where it finds URLs (twitter-text with Mastodon's
overrides), the length it counts (a URL as 23), the HTML it writes, and the posting language it
keeps."""

from __future__ import annotations

import re
from typing import Any

import regex

# URL extraction as Mastodon does it (https://github.com/mastodon/mastodon, main:
# app/validators/status_length_validator.rb `countable_text` and the formatter's
# linkify both call `Extractor.extract_urls_with_indices(text, extract_url_without_protocol:
# false)`): twitter-text 3.1's valid_url (rb/lib/twitter-text/regex.rb) with the overrides of
# Mastodon's config/initializers/twitter_regex.rb, and only the matches with a scheme.
# - Before the URL: not a letter, a digit, @, ＠, $, #, ＃ (valid_url_preceding_chars).
# - Scheme: http, https, dat, dweb, ipfs, ipns, ssb, gopher, gemini (Mastodon's override).
# - Host: labels of any characters but punctuation, spaces and controls, ending in a TLD of
#   twitter-text's tld_lib.yml (followed by none of [0-9a-z@+-]) or in punycode. The sandbox does
#   not carry that list: any all-letter label of 2 or more stands for it, except the names kept
#   for local use that no registry delegates (RFC 2606, RFC 6761, and the usual private ones), so
#   an IP address, `localhost`, `a.b` or `blog.example` is no URL, as on Mastodon.
# - Path (the override): anything but white space and <>()?, balanced parentheses, not ending on
#   ()?!*"'「」<>;:=,.$%[]~&|@; the ending's parentheses are twitter-text's original ones, built
#   before the override redefined them.
# - is_valid_domain: the host must convert to ASCII (IDNA) and the URL stay within 4,096.
_GENERAL = r"[^\p{White_Space}<>()?]"
_BALANCED = rf"\((?:{_GENERAL}+|(?:{_GENERAL}*\({_GENERAL}+\){_GENERAL}*))\)"
_TT_GENERAL = (
    r"[a-z\p{Cyrillic}0-9!*';:=+,.$/%#\[\]\p{Pd}_~&|@"
    "\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff\u0100-\u024f\u0253\u0254\u0256\u0257\u0259\u025b\u0263\u0268\u026f"
    "\u0272\u0289\u028b\u02bb\u0300-\u036f\u1e00-\u1eff]"
)
_TT_BALANCED = rf"\((?:{_TT_GENERAL}+|(?:{_TT_GENERAL}*\({_TT_GENERAL}+\){_TT_GENERAL}*))\)"
_ENDING = rf"(?:[^\p{{White_Space}}()?!*\"'「」<>;:=,.$%\[\]~&|@]|{_TT_BALANCED})"
_PATH = rf"(?:(?:{_GENERAL}*(?:{_BALANCED}{_GENERAL}*)*{_ENDING})|(?:{_GENERAL}+/))"
_UCHARS = (
    "\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef\U00010000-\U0001fffd\U00020000-\U0002fffd\U00030000-\U0003fffd"
    "\U00040000-\U0004fffd\U00050000-\U0005fffd\U00060000-\U0006fffd\U00070000-\U0007fffd\U00080000-\U0008fffd"
    "\U00090000-\U0009fffd\U000a0000-\U000afffd\U000b0000-\U000bfffd\U000c0000-\U000cfffd\U000d0000-\U000dfffd"
    "\U000e1000-\U000efffd\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
)
_QUERY = rf"(?:\?[a-z0-9!?*'();:&=+$/%#\[\]\-_.,~|@^{_UCHARS}]*[a-z0-9_&=#/\-{_UCHARS}])"
_DIRECTIONAL = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_LABEL_CHAR = (
    rf"[^{_DIRECTIONAL}!\"#$%&'()*+,\-./:;<=>?@\[\]^_`{{|}}~\x00-\x1f\x7f \t\n\x0b\f\r\ufffe\ufeff\uffff"
    r"\x85\xa0\u1680\u180e\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
_NOT_DELEGATED = r"(?:example|invalid|localhost|test|local|localdomain|internal|intranet|lan|home|corp|private)"
_TLD = rf"(?:(?!{_NOT_DELEGATED}(?=[^0-9a-z@+\-]|$))\p{{L}}{{2,}}(?=[^0-9a-z@+\-]|$)|xn--[0-9a-z]+)"
_HOST = (
    rf"(?:(?:{_LABEL_CHAR}(?:[_\-]|{_LABEL_CHAR})*)?{_LABEL_CHAR}\.)*"
    rf"(?:(?:{_LABEL_CHAR}(?:-|{_LABEL_CHAR})*)?{_LABEL_CHAR}\.){_TLD}"
)
_URL = regex.compile(
    rf"(?:[^a-z0-9@＠$#＃\ufffe\ufeff\uffff]|[{_DIRECTIONAL}]|^)"
    rf"(?P<url>(?P<scheme>(?:https?|dat|dweb|ipfs|ipns|ssb|gopher|gemini)://)?(?P<host>{_HOST})"
    rf"(?::[0-9]+)?(?:/{_PATH}*)?{_QUERY}?)",
    regex.IGNORECASE | regex.V1,
)
_MENTION = regex.compile(r"(?<=^|[^\w/])@([a-z0-9_]+(?:[a-z0-9_.\-]+[a-z0-9_]+)?)@[\w.\-]+[\w]", regex.IGNORECASE)
URL_PLACEHOLDER = "x" * 23


def status_urls(text: str) -> list[tuple[int, int]]:
    """Where Mastodon finds URLs (above): the spans of the matches with a scheme and a host that
    converts to ASCII."""
    found = []
    for match in _URL.finditer(text):
        if not match["scheme"]:
            continue
        try:
            host = match["host"].encode("idna")
        except UnicodeError:
            continue
        if len(match["url"]) + max(0, len(host) - len(match["host"])) <= 4096:
            found.append(match.span("url"))
    return found


def countable_length(text: str) -> int:
    """StatusLengthValidator: every URL counts as 23 characters, a remote mention @user@host as
    @user, and the rest in grapheme clusters."""
    pieces, last = [], 0
    for start, end in status_urls(text):
        pieces += [text[last:start], URL_PLACEHOLDER]
        last = end
    text = _MENTION.sub(r"@\1", "".join([*pieces, text[last:]]))
    return len(regex.findall(r"\X", text))


_RAILS_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})


def rails_escape(text: str) -> str:
    """ERB::Util.html_escape, as Mastodon's formatter writes text and attributes: ' is &#39;
    (Python's html.escape writes &#x27;, which a client matching raw HTML would not find)."""
    return text.translate(_RAILS_ESCAPES)


def linkify(text: str) -> str:
    """Mastodon's HTML: paragraphs, and links as <a href> with the scheme in an invisible span."""

    def link(url: str) -> str:
        scheme, _, rest = url.partition("://")
        return (
            f'<a href="{rails_escape(url)}" rel="nofollow noopener" target="_blank">'
            f'<span class="invisible">{scheme}://</span><span class="">{rails_escape(rest)}</span></a>'
        )

    paragraphs = []
    for block in text.split("\n\n"):
        pieces, last = [], 0
        for start, end in status_urls(block):
            pieces.append(rails_escape(block[last:start]))
            pieces.append(link(block[start:end]))
            last = end
        pieces.append(rails_escape(block[last:]))
        paragraphs.append("<p>" + "".join(pieces).replace("\n", "<br />") + "</p>")
    return "".join(paragraphs)


# https://github.com/mastodon/mastodon/blob/main/app/helpers/languages_helper.rb
# SUPPORTED_LOCALES: ISO_639_1, ISO_639_1_REGIONAL, ISO_639_3.
_LOCALE_CODES = (
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu "
    "cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gu gv ha he hi ho "
    "hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku "
    "kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn "
    "no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sn "
    "so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo "
    "wa wo xh yi yo za zh zu "
    "zh-CN zh-HK zh-TW zh-YUE "
    "ast chr ckb cnr jbo kab ldn lfn sco sma smj szl tok xal zba zgh"
)
_SUPPORTED_LOCALES = frozenset(_LOCALE_CODES.split())
ACCOUNT_LANGUAGE = "en"  # the sandbox account's preferred posting language


def posting_language(given: Any, otherwise: str = ACCOUNT_LANGUAGE) -> str:
    """PostStatusService: `valid_locale_cascade(@options[:language], preferred_posting_language,
    default)`. LanguagesHelper#valid_locale_or_nil keeps a supported code (case-sensitive), else
    the part before the first "_" or "-" if that is supported, else falls through to the
    account's language (on an edit, to the status's own)."""
    text = str(given or "")
    if text in _SUPPORTED_LOCALES:
        return text
    code = re.split(r"[_-]", text, maxsplit=1)[0]
    return code if code in _SUPPORTED_LOCALES else otherwise
