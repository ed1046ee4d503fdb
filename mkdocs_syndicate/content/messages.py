"""Announcement text: sandboxed Jinja2 templates and per-channel length rules.

When a message is too long, the description is shortened first, then the title, each with an
ellipsis; the URL is never touched. Titles and descriptions have @ and # neutralised (a zero-width
space after them) so a title like "Why #1 matters to @bob" creates no hashtag and pings nobody;
`hashtags` (built from the post's tags) is the way to ask for real ones.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.errors import ConfigError, PostError
from mkdocs_syndicate.lazyre import lazy_compile

_URL_CANDIDATE = lazy_compile(r"https?://[^\s<>]+")
_MENTION = lazy_compile(r"@(\w+)@[\w.-]+\w")
_ZWSP = "\u200b"
ELLIPSIS = "…"


if TYPE_CHECKING:
    import jinja2


@functools.lru_cache(maxsize=1)
def _environment() -> Any:
    # Templates are loaded only when a message is made: a build that sends nothing imports none of it.
    import jinja2.sandbox

    return jinja2.sandbox.SandboxedEnvironment(autoescape=False, keep_trailing_newline=False,
                                               undefined=jinja2.StrictUndefined)


def compile_template(source: str, where: str) -> jinja2.Template:
    import jinja2

    try:
        template: jinja2.Template = _environment().from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"{where}: template error on line {exc.lineno}: {exc.message}") from None
    return template


def graphemes(text: str) -> list[str]:
    import regex  # Unicode grapheme clusters, loaded when a message is measured

    found: list[str] = regex.findall(r"\X", text)
    return found


def grapheme_length(text: str) -> int:
    return len(graphemes(text))


# Where a URL ends, per service. Mastodon extracts URLs with twitter-text as its
# config/initializers/twitter_regex.rb overrides it: a path may not end on any of these (so
# "(https://example.com/p/)." links only "https://example.com/p/"), except on a ")" that closes
# a "(" inside the URL (Wikipedia's /Foo_(bar)).
_MASTODON_NOT_LAST = frozenset("()?!*\"'「」<>;:=,.$%[]~&|@")


def mastodon_url_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for match in _URL_CANDIDATE.finditer(text):
        start, end = match.span()
        while end > start and text[end - 1] in _MASTODON_NOT_LAST:
            url = text[start:end]
            if url[-1] == ")" and url.count("(") >= url.count(")"):
                break
            end -= 1
        spans.append((start, end))
    return spans


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


def mastodon_length(text: str, url_weight: int = 23) -> int:
    """Mastodon's count (StatusLengthValidator): grapheme clusters, every URL as `url_weight`,
    @user@host as @user."""
    text = _MENTION.sub(r"@\1", text)
    spans = mastodon_url_spans(text)
    starts, ends = [0, *(e for _, e in spans)], [*(s for s, _ in spans), len(text)]
    rest = "".join(text[a:b] for a, b in zip(starts, ends, strict=True))
    return grapheme_length(rest) + url_weight * len(spans)


def bluesky_length(text: str) -> int:
    """Bluesky's limits: 300 graphemes and 3000 UTF-8 bytes; report whichever is tighter, in
    graphemes (a text over 3000 bytes is reported as over the limit)."""
    size = grapheme_length(text)
    return size if len(text.encode("utf-8")) <= 3000 else max(size, 301)


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


def neutralise(text: str) -> str:
    return text.replace("@", "@" + _ZWSP).replace("#", "#" + _ZWSP)


def neutralise_weibo(text: str) -> str:
    """Weibo reads #...# as a topic whatever sits inside, so # becomes the fullwidth ＃."""
    return text.replace("@", "@" + _ZWSP).replace("#", "＃")


def hashtag(tag: str) -> str:
    """'Open Source' → '#OpenSource'; '' when nothing usable is left."""
    import regex

    words = regex.findall(r"[\p{L}\p{N}_]+", tag)
    joined = "".join(w[:1].upper() + w[1:] if len(words) > 1 else w for w in words)
    return f"#{joined}" if joined else ""


def shorten(text: str, keep: int) -> str:
    """The first `keep` graphemes plus an ellipsis (the ellipsis counts as one)."""
    parts = graphemes(text)
    if len(parts) <= keep:
        return text
    if keep <= 0:
        return ""
    return "".join(parts[: keep - 1]).rstrip() + ELLIPSIS


@dataclass(frozen=True)
class LengthRule:
    limit: int
    measure: Callable[[str], int]
    unit: str = "characters"


@dataclass(frozen=True)
class Message:
    text: str
    length: int
    limit: int | None
    notes: tuple[str, ...] = ()   # what was changed to fit the channel's rules, for a warning
    unit: str = "characters"      # what `length` counts, as people read it

    @property
    def sha256(self) -> str:
        return message_sha256(self.text)


def message_sha256(payload: str) -> str:
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


_ENDS_A_LINK = ".,;:!?)"   # trailing punctuation every service's linker leaves out of a link


def set_url_apart(text: str, url: str) -> str:
    """A space after the post URL wherever what follows it could be read as part of it: linkers
    differ on "。", "、", "）" or letters (Mastodon's takes any non-space character into a path),
    and a link that swallowed them is not the post's URL, so a read could never find the post."""
    pieces = text.split(url)
    for index in range(1, len(pieces)):
        after = pieces[index]
        if not after or after[0].isspace():
            continue
        if after[0] in _ENDS_A_LINK and (len(after) == 1 or after[1].isspace()):
            continue
        pieces[index] = " " + after
    return url.join(pieces)


def render_message(post: Post, channel_id: str, template_source: str, rule: LengthRule | None,
                   site_name: str, *, where: str, neutraliser: Callable[[str], str] = neutralise,
                   with_hashtags: bool = True, max_hashtag: int | None = None) -> Message:
    """The exact text for (post, channel); a PostError if it cannot be made to fit."""
    override = post.overrides.get(channel_id)
    if override is not None and override.text is not None:
        text = _tidy(override.text)
        length = rule.measure(text) if rule else len(text)
        if rule and length > rule.limit:
            raise PostError(f"{post.source}: front matter 'syndicate.{channel_id}.text' is {length} "
                            f"{rule.unit}, over {channel_id}'s limit of {rule.limit}")
        return Message(text, length, rule.limit if rule else None)

    from jinja2 import TemplateError

    template = compile_template(template_source, where)
    title, description = neutraliser(post.title), neutraliser(post.summary)
    tags = [h for h in map(hashtag, post.tags) if h] if with_hashtags else []
    notes: tuple[str, ...] = ()
    if max_hashtag is not None:
        too_long = [h for h in tags if grapheme_length(h) - 1 > max_hashtag]
        tags = [h for h in tags if h not in too_long]
        notes = tuple(f"{post.source}: hashtag {h[:20]}… is longer than {channel_id}'s {max_hashtag} characters; "
                      "left out" for h in too_long)
    hashtags = " ".join(tags)

    def render(t: str, d: str) -> str:
        try:
            return set_url_apart(_tidy(template.render(
                title=t, description=d, url=post.url, tags=list(post.tags),
                hashtags=hashtags,
                date=post.date.date().isoformat(), site_name=site_name)), post.url)
        except TemplateError as exc:
            raise PostError(f"{where}: cannot render for {post.source}: {exc}") from None
        except Exception as exc:
            raise PostError(f"{where}: cannot render for {post.source}: {type(exc).__name__}: {exc}") from None

    text = render(title, description)
    if rule is None:
        return Message(text, len(text), None, notes)
    length = rule.measure(text)
    # Shorten the description, then the title, by exactly the overflow; repeat because a template
    # may use a variable twice.
    for field in ("description", "title"):
        while length > rule.limit:
            current = description if field == "description" else title
            size = grapheme_length(current)
            if size == 0:
                break
            keep = max(0, size - (length - rule.limit) - 1)
            shorter = shorten(current, keep) if keep > 1 else ""
            if field == "description":
                description = shorter
            else:
                title = shorter
            text = render(title, description)
            length = rule.measure(text)
    if length > rule.limit:
        raise PostError(f"{post.source}: the {channel_id} message is {length} {rule.unit} even with "
                        f"title and description removed (limit {rule.limit}); shorten the template")
    return Message(text, length, rule.limit, notes)


def _tidy(text: str) -> str:
    """Trim each line, collapse runs of blank lines (left by empty variables), strip the ends."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
