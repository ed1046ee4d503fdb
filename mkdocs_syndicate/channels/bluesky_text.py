"""Bluesky's rich text as the app makes it: link, tag and cashtag facets with UTF-8 byte offsets,
the post's length (300 graphemes, 3000 bytes) and the record's language tags."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.channel_api import ConfigError, grapheme_length

if TYPE_CHECKING:
    import regex

MAX_TAG = 64  # app.bsky.richtext.facet#tag: maxGraphemes 64 (maxLength 640 bytes)
# Tags and cashtags as the Bluesky app finds them: @atproto/api 0.20.44,
# https://github.com/bluesky-social/atproto/blob/main/packages/api/src/rich-text/util.ts
# TAG_REGEX and CASHTAG_REGEX, used by detection.ts `detectFacets`. A tag follows the start or
# white space, begins with "#" or the full-width "＃", runs to the next white space or zero-width
# character, and holds at least one character that is neither a digit nor punctuation; trailing
# punctuation is then cut off (`#foo.bar` is "foo.bar", `#C++` is "C"). A cashtag is "$" and 1-5
# letters or digits, the first a letter, after the start, white space or "(", and before the end,
# white space or one of .,;:!?)"'’; its tag is "$" and the ticker in upper case.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"  # JavaScript's \s
_ZERO_WIDTH = "\u00ad\u2060\u200a\u200b\u200c\u200d\u20e2"
_TAG = (
    rf"(?:^|(?<=[{_JS_SPACE}]))[#＃]((?!\ufe0f)[^{_JS_SPACE}{_ZERO_WIDTH}]*"
    rf"[^0-9{_JS_SPACE}\p{{P}}{_ZERO_WIDTH}]+[^{_JS_SPACE}{_ZERO_WIDTH}]*)?"
)
_CASHTAG = rf"(?:^|(?<=[{_JS_SPACE}(]))\$([A-Za-z][A-Za-z0-9]{{0,4}})(?=[{_JS_SPACE}]|\Z|[.,;:!?)\"'\u2019])"


@functools.cache
def _tag_rules() -> tuple[regex.Pattern[str], regex.Pattern[str], regex.Pattern[str]]:
    """The tag, cashtag and trailing-punctuation expressions (\\p{P} needs `regex`), compiled
    when a message is first given facets."""
    import regex

    return regex.compile(_TAG), regex.compile(_CASHTAG), regex.compile(r"\p{P}+\Z")


def bluesky_url_spans(text: str) -> list[tuple[int, int]]:
    """The Bluesky app's link detection (@atproto/api RichText.detectFacets): a URL runs to the
    next white space, then one trailing . , ; : ! or ? is dropped, then a ")" without a "("."""
    spans = []
    for match in re.finditer(r"(?:^|(?<=[\s(]))(https?://\S+)", text):
        start, end = match.span(1)
        if text[end - 1] in ".,;:!?":
            end -= 1
        if text[end - 1] == ")" and "(" not in text[start:end]:
            end -= 1
        spans.append((start, end))
    return spans


def bluesky_length(text: str) -> int:
    """Bluesky's limits: 300 graphemes and 3000 UTF-8 bytes; report whichever is tighter, in
    graphemes (a text over 3000 bytes is reported as over the limit)."""
    size = grapheme_length(text)
    return size if len(text.encode("utf-8")) <= 3000 else max(size, 301)


def _utf8(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def facets(text: str) -> list[dict[str, Any]]:
    """Link facets for every URL (where the Bluesky app's own detection ends it, not swallowing a
    trailing "." or ")") and tag facets for every #tag of at most 64 graphemes, with UTF-8 byte
    offsets."""
    found = [
        {
            "index": {"byteStart": _utf8(text, start), "byteEnd": _utf8(text, end)},
            "features": [{"$type": "app.bsky.richtext.facet#link", "uri": text[start:end]}],
        }
        for start, end in bluesky_url_spans(text)
    ]
    for start, end, tag in _tags(text):
        found.append(
            {
                "index": {"byteStart": _utf8(text, start), "byteEnd": _utf8(text, end)},
                "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": tag}],
            }
        )
    return sorted(found, key=lambda f: f["index"]["byteStart"])


def _tags(text: str) -> list[tuple[int, int, str]]:
    """(start, end, tag) of each tag and cashtag, as the app's detectFacets finds them (above)."""
    tags, cashtags, trailing_punctuation = _tag_rules()
    found = []
    for match in tags.finditer(text):
        tag = trailing_punctuation.sub("", match.group(1) or "")
        # The lexicon's limit (64 graphemes, 640 bytes): a longer tag stays plain text. The app
        # checks the graphemes only, and the PDS refuses a record with a longer tag.
        if not tag or grapheme_length(tag) > MAX_TAG or len(tag.encode("utf-8")) > 640:
            continue
        found.append((match.start(), match.start() + 1 + len(tag), tag))
    for match in cashtags.finditer(text):
        found.append((match.start(), match.end(), "$" + match.group(1).upper()))
    return found


def language_tag(value: str, where: str) -> str:
    """A language tag as the record's `langs` needs it: one the IANA registry knows (checked by
    langcodes: `english` and `deutsch` are well-formed but no language), written in the registry's
    case (`EN` → `en`, `pt-br` → `pt-BR`), which both the PDS and the official SDK's strict check take."""
    import langcodes

    if "_" in value:
        raise ConfigError(
            f"{value!r} is not a BCP 47 language tag: subtags are joined by a hyphen ({value.replace('_', '-')!r})",
            where,
        )
    if not langcodes.tag_is_valid(value):
        raise ConfigError(
            f"{value!r} is not a BCP 47 language tag the IANA registry knows (like en, en-US, pt-BR or zh-Hant)",
            where,
        )
    return _registry_case(value)


def _registry_case(tag: str) -> str:
    """RFC 5646 section 2.1.1: language lower case, script title case, region upper case; after a
    singleton (an extension or private use) everything lower case."""
    parts = tag.split("-")
    out = [parts[0].lower()]
    tail = len(parts[0]) == 1  # x-… or i-…: private use or grandfathered
    for part in parts[1:]:
        if tail or len(part) == 1:
            tail = True
            out.append(part.lower())
        elif len(part) == 4 and part.isalpha():
            out.append(part.title())
        elif len(part) == 2 and part.isalpha():
            out.append(part.upper())
        else:
            out.append(part.lower())
    return "-".join(out)
