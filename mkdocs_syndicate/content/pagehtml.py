"""Where a built page takes what the plugin adds to it, found by an HTML parser and written by
splicing: the page's bytes outside the places changed stay as they were, so a second pass over
its own output changes nothing (idempotent) and a page given nothing is not touched.

The parser is the standard library's `html.parser` (the tokenizer BeautifulSoup's `html.parser`
builder runs on): it reports where each tag starts in the text, which a tree parser that
serializes its own tree (lxml, html5lib, selectolax) does not, and a page re-serialized would
differ from its generator's in bytes nobody asked to change. A CSS selector (`links_selector`)
is matched by soupsieve on BeautifulSoup's tree of the same tokens, each tag found again by the
line and column both report.

What goes where (`Additions`):
- `head`: tags before `</head>` (standard.site's document link, `fediverse:creator`), each
  unless the page already has one of its kind (`name`/`rel` with the same value) — a theme's
  own per-post value wins, and a second pass finds the first pass's;
- `block`: the "Also on" block, in place of the one a previous pass (or the plugin) wrote, else
  right after the author's `<!-- syndicate -->`, else at the end of the element `selector`
  names, else of the first `<article>`, else of `<main>`; the element it goes into is given
  `class="h-entry"` when nothing on the page is an h-entry (microformats2: a `u-syndication`
  link counts inside one).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from html.parser import HTMLParser

from mkdocs_syndicate.content.crosslinks import BLOCK_CLASS
from mkdocs_syndicate.lazyre import lazy_compile

MARKER = "syndicate"  # <!-- syndicate -->: where the author wants the block
# Elements with no end tag.
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
DEFAULT_CONTAINERS = ("article", "main")
_NEWLINE = lazy_compile("\n")

# @user@instance: Mastodon's user names (letters, digits, `_`; `.` and `-` inside, as other
# servers allow), then a host name of two labels or more.
_HANDLE = lazy_compile(
    r"@[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9_])?@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z0-9-]{2,63}"
)


def handle_problem(value: object) -> str | None:
    """Why `value` is not a fediverse account as `fediverse:creator` names one, or None."""
    if not isinstance(value, str) or not _HANDLE.fullmatch(value):
        return f"must be an account as @user@instance.example, not {value!r}"
    return None


def creator_tag(handle: str) -> str:
    return f'<meta name="fediverse:creator" content="{html.escape(handle, quote=True)}">'


@dataclass(frozen=True)
class HeadTag:
    """A tag for `<head>`: `markup`, unless the page has a `kind` (`meta`/`link`) whose `key`
    attribute (`name`/`rel`) is `value`."""

    markup: str
    kind: str
    key: str
    value: str


def creator_head_tag(handle: str) -> HeadTag:
    return HeadTag(creator_tag(handle), "meta", "name", "fediverse:creator")


@dataclass(frozen=True)
class Additions:
    head: tuple[HeadTag, ...] = ()
    # None: the page's block is left as it is (the plugin's head pass, after on_page_content put
    # it in); "": none, and a block a previous pass wrote is taken out.
    block: str | None = None
    selector: str | None = None


@dataclass
class Result:
    html: str
    changed: list[str] = field(default_factory=list)  # what was done, in a few words each
    problem: str | None = None  # why the block has no place on the page (the rest was done)


@dataclass(slots=True)  # one per element of every page: the slots make them cheaper to make
class _Element:
    tag: str
    attrs: list[tuple[str, str | None]]
    start: int  # where its start tag begins
    open_end: int  # where its start tag ends
    close: int = -1  # where its end tag begins (-1: none seen)
    close_end: int = -1
    line: int = 0
    column: int = 0


class _Locator(HTMLParser):
    """Where each element starts and ends in the text. Called for every tag of every page `inject`
    rewrites, so each handler does the least it can: a class list is read only where the start
    tag's text names one we look for."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text = text
        self._lines = [0, *(match.end() for match in _NEWLINE.finditer(text))]
        self.stack: list[_Element] = []
        self.elements: list[_Element] = []
        self.head_end = -1
        self.head_tags: set[tuple[str, str, str]] = set()
        self.markers: list[tuple[int, int, _Element | None]] = []
        self.h_entry = False

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._lines[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line, column = self.getpos()
        start = self._lines[line - 1] + column
        source = self.get_starttag_text() or ""
        element = _Element(tag, attrs, start, start + len(source), line=line, column=column)
        self.elements.append(element)
        if not self.h_entry and "h-entry" in source and "h-entry" in _classes(attrs):
            self.h_entry = True
        if tag == "meta" or tag == "link":
            for key, value in attrs:
                if key in ("name", "rel", "property") and value:
                    self.head_tags.add((tag, key, value.strip().lower()))
        if tag not in VOID and not source.endswith("/>"):
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        at = self._offset()
        if tag == "head" and self.head_end < 0:
            self.head_end = at
        stack = self.stack
        for depth in range(len(stack) - 1, -1, -1):
            if stack[depth].tag == tag:
                element = stack[depth]
                element.close = at
                end = self.text.find(">", at)
                element.close_end = end + 1 if end >= 0 else len(self.text)
                del stack[depth:]
                return

    def handle_comment(self, data: str) -> None:
        if data.strip() == MARKER:
            at = self._offset()
            self.markers.append((at, at + len(data) + 7, self.stack[-1] if self.stack else None))


def _classes(attrs: list[tuple[str, str | None]]) -> list[str]:
    return " ".join(value or "" for key, value in attrs if key == "class").split()


def _located(text: str) -> _Locator:
    locator = _Locator(text)
    locator.feed(text)
    locator.close()
    return locator


def added(text: str, additions: Additions) -> Result:
    """`text` with `additions` in their places (see the module's docstring); unchanged, and
    `changed` empty, when they are there already."""
    found = _located(text)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), not overlapping
    result = Result(text)
    _add_head(found, additions.head, edits, result)
    _add_block(found, additions, edits, result)
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    result.html = text
    return result


def _add_head(found: _Locator, tags: tuple[HeadTag, ...], edits: list[tuple[int, int, str]], result: Result) -> None:
    missing = [tag for tag in tags if (tag.kind, tag.key, tag.value.lower()) not in found.head_tags]
    if not missing or found.head_end < 0:
        return
    edits.append((found.head_end, found.head_end, "".join(tag.markup + "\n" for tag in missing)))
    result.changed.extend(f"added {tag.value}" for tag in missing)


def _add_block(found: _Locator, additions: Additions, edits: list[tuple[int, int, str]], result: Result) -> None:
    block = additions.block
    if block is None:
        return
    previous = [e for e in found.elements if e.tag == "aside" and BLOCK_CLASS in _classes(e.attrs) and e.close >= 0]
    if previous:
        old = previous[0]
        if found.text[old.start : old.close_end] != block:
            edits.append((old.start, old.close_end, block))
            result.changed.append("replaced the links" if block else "took out the links")
        return
    if not block:
        return
    place = _place(found, additions.selector)
    if isinstance(place, str):
        result.problem = place
        return
    at, container = place
    edits.append((at, at, block))
    result.changed.append("added the links")
    if not found.h_entry and container is not None and container.tag not in ("html", "body"):
        edits.append((container.start, container.open_end, _start_tag(container, "h-entry")))
        result.changed.append(f"made <{container.tag}> an h-entry")


def _place(found: _Locator, selector: str | None) -> tuple[int, _Element | None] | str:
    """Where the block goes, and the element it goes into; or why it has no place."""
    if found.markers:
        _, end, inside = found.markers[0]
        return end, inside
    if selector:
        element = _selected(found, selector)
        if element is None:
            return f"nothing on the page matches links_selector {selector!r}"
        return element.close, element
    for tag in DEFAULT_CONTAINERS:
        element = next((e for e in found.elements if e.tag == tag and e.close >= 0), None)
        if element is not None:
            return element.close, element
    return (
        "the page has no <article> or <main> to put the links in: "
        "place <!-- syndicate --> where they go, or set links_selector"
    )


def _selected(found: _Locator, selector: str) -> _Element | None:
    """The first element `selector` matches that has an end tag (the block goes before it)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(found.text, "html.parser")
    by_place = {(e.line, e.column): e for e in found.elements if e.close >= 0}
    for tag in soup.select(selector):
        element = by_place.get((tag.sourceline or 0, tag.sourcepos or 0))
        if element is not None:
            return element
    return None


def _start_tag(element: _Element, extra_class: str) -> str:
    """The element's start tag again, its class list with `extra_class` added (its attributes in
    their order, each value escaped)."""
    attrs = list(element.attrs)
    classes = _classes(attrs)
    rendered = []
    placed = False
    for key, value in attrs:
        shown = value
        if key == "class":
            if placed:
                continue  # a second class attribute: its names are in the first one's now
            shown, placed = " ".join([*classes, extra_class]), True
        rendered.append(key if shown is None else f'{key}="{html.escape(shown, quote=True)}"')
    if not placed:
        rendered.append(f'class="{extra_class}"')
    return f"<{element.tag} {' '.join(rendered)}>"
