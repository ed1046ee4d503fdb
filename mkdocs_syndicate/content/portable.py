"""A post's Markdown for places that are not MkDocs, and its excerpt as plain text.

DEV/Forem renders CommonMark plus its own liquid tags; Material's and pymdownx's extensions are
not there, so republished bodies convert them to portable Markdown:

- `<!-- more -->` (the excerpt separator) is removed;
- an admonition (`!!! note "Title"`) or a collapsible block (`??? tip`, `???+ tip`) becomes a
  blockquote whose first line is its title in bold (the type when it has no title);
- content tabs (`=== "Python"`) become a bold heading line per tab, their content unindented;
- attribute lists (`{ .annotate }`, `{ width="300" }`, `{ #id .class }`) are removed;
- annotation markers keep their number, `(1)`, and their list stays, as ordinary text.

Fenced code blocks are copied untouched.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from mkdocs_syndicate.lazyre import lazy_compile

MORE = lazy_compile(r"^[ \t]*<!--\s*more\s*-->[ \t]*\n?", re.MULTILINE | re.IGNORECASE)
_FENCE_START = lazy_compile(r"^( {0,3})(`{3,}|~{3,})")
_BLOCK = lazy_compile(r'^(?P<indent>[ \t]*)(?P<mark>!!!|\?\?\?\+?)[ \t]+(?P<type>[\w-]+)(?P<classes>(?:[ \t]+[\w-]+)*)'
                    r'(?:[ \t]+"(?P<title>[^"]*)")?[ \t]*$')
_TAB = lazy_compile(r'^(?P<indent>[ \t]*)===\+?[ \t]+"(?P<title>[^"]*)"[ \t]*$')
_ATTR_LIST = lazy_compile(r"[ \t]*\{:?[ \t]*(?:[.#][\w-]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}]+))"
                        r"(?:[ \t]+(?:[.#][\w-]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}]+)))*[ \t]*\}")


def portable_markdown(body: str) -> str:
    lines = body.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE_START.match(line)
        if fence:  # copy a fenced code block as it is
            end = i + 1
            while end < len(lines) and not lines[end].lstrip().startswith(fence.group(2)):
                end += 1
            out.extend(lines[i:end + 1])
            i = end + 1
            continue
        block, tab = _BLOCK.match(line), _TAB.match(line)
        if block or tab:
            match = block or tab
            assert match is not None
            indent = match.group("indent")
            inner, i = _indented(lines, i + 1, len(indent.expandtabs(4)) + 4)
            converted = portable_markdown("\n".join(inner)).strip("\n").split("\n")
            if block:
                title = match.group("title")
                title = title if title is not None else match.group("type").replace("-", " ").capitalize()
                quoted = ([f"{indent}> **{title}**"] if title else []) + (
                    [f"{indent}>"] if title and any(converted) else [])
                quoted += [f"{indent}> {text}".rstrip() if text else f"{indent}>" for text in converted]
                out.extend(quoted)
            else:
                out.extend([f"{indent}**{match.group('title')}**", ""] + [f"{indent}{text}" for text in converted])
            out.append("")
            continue
        if not MORE.fullmatch(line):
            out.append(_ATTR_LIST.sub("", line))
        i += 1
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


def _indented(lines: list[str], start: int, width: int) -> tuple[list[str], int]:
    """The block's content: following lines indented by `width` (blank lines inside it too)."""
    inner: list[str] = []
    i = start
    while i < len(lines):
        line = lines[i]
        if line.strip() and len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip()) < width:
            break
        inner.append(line.expandtabs(4)[width:] if line.strip() else "")
        i += 1
    while inner and not inner[-1]:
        inner.pop()
    return inner, i


# ---------------------------------------------------------------- excerpt

_HEADING = lazy_compile(r"^ {0,3}#{1,6}[ \t]+.*$")


def excerpt(markdown: str, title: str, limit: int = 400) -> str:
    """The post's summary as plain text: the part before `<!-- more -->` (Material's excerpt),
    else the first paragraph; its Markdown and HTML reduced to text, whitespace collapsed, and
    nothing when it only repeats the title."""
    return excerpt_text(excerpt_markdown(markdown), title, limit)


def excerpt_markdown(markdown: str) -> str:
    """The Markdown of the excerpt (cheap: no rendering)."""
    split = MORE.search(markdown)
    part = markdown[:split.start()] if split else _first_paragraph(markdown)
    return "\n".join(line for line in part.splitlines() if not _HEADING.match(line)).strip()


def excerpt_text(part: str, title: str, limit: int = 400) -> str:
    text = markdown_to_text(part) if part else ""
    if not text or text.casefold().strip(" .:") == title.casefold().strip(" .:"):
        return ""
    return shorten(text, limit)


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word, with an ellipsis when cut."""
    if len(text) > limit:
        text = text[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text


def _first_paragraph(markdown: str) -> str:
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", markdown) if p.strip()]
    for paragraph in paragraphs:
        lines = [line for line in paragraph.splitlines() if not _HEADING.match(line)]
        candidate = "\n".join(lines).strip()
        if candidate and not candidate.startswith(("```", "~~~", "!!!", "???", "===", "<!--", "|", "![")):
            return candidate
    return ""


def markdown_to_text(markdown: str) -> str:
    """Markdown (and inline HTML) as one line of plain text."""
    import markdown as md  # MkDocs' own Markdown library

    return html_to_text(md.markdown(portable_markdown(markdown)))


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in ("p", "br", "li", "div", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "tr"):
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def html_to_text(fragment: str) -> str:
    parser = _Text()
    parser.feed(fragment)
    parser.close()
    return " ".join(html.unescape("".join(parser.parts)).split())
