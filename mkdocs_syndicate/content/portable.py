"""A post's content for places that are not MkDocs, and its excerpt as plain text.

DEV/Forem renders Markdown (CommonMark with tables, strikethrough and footnotes); Material's and
pymdownx's blocks are not there. So the body DEV gets is made from the post's HTML as MkDocs
rendered it (the site's own extensions, snippets and macros included, so DEV shows what the site
shows) or as a feed carries it (the same HTML), and written as Markdown by markdownify:

- an admonition or a collapsible block becomes a blockquote whose first line is its title in bold;
- content tabs become a bold line per tab, each followed by its content;
- a code block keeps its language and its text, without highlighting or line numbers; its title
  (`title="a.py"`) becomes a bold line above it; a code annotation marker keeps its number as
  ordinary text (`# (1)!` becomes `# (1)`), and the annotations' list stays;
- icons are dropped, emoji become their character, footnotes stay footnotes (`[^1]`);
- permalinks, the excerpt separator and a leading title heading (DEV shows the title) go, the
  heading found inside wrappers and in a whole document a plugin made of the content (glightbox);
- links and images are made absolute against the post's URL.
"""

from __future__ import annotations

import functools
import html
import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from mkdocs_syndicate.content.crosslinks import BLOCK_CLASS
from mkdocs_syndicate.content.links import is_relative
from mkdocs_syndicate.lazyre import lazy_compile

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

MORE = lazy_compile(r"^[ \t]*<!--\s*more\s*-->[ \t]*\n?", re.MULTILINE | re.IGNORECASE)
# A code annotation marker with Material's "strip the comment" `!`: `# (1)!`, `// (2)!`, `/* (3)! */`.
_ANNOTATION = lazy_compile(r"(?P<comment>#|//|/\*|<!--|--|;|%)(?P<space>[ \t]*)\((?P<number>\d+)\)!")
_FOOTNOTE_ID = lazy_compile(r"fn:(.+)")
_LINE_NUMBERS = ("linenos", "linenodiv", "lineno")
_BLOCKS = ("p", "blockquote", "pre", "div", "table")


_FENCE = lazy_compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*\{?[ \t]*\.?([\w+#.-]*)")


def code_languages(markdown: str) -> dict[str, str]:
    """Each fenced code block's language, by its first line of code: the HTML of a site that
    highlights with Pygments says no language (unless `pygments_lang_class`), its source does."""
    languages: dict[str, str] = {}
    lines = markdown.split("\n")
    for number, line in enumerate(lines):
        fence = _FENCE.match(line)
        if fence and fence.group(2):
            first = next((text.strip() for text in lines[number + 1 :] if text.strip()), "")
            if first and not first.startswith(fence.group(1)):
                languages.setdefault(first, fence.group(2))
    return languages


def portable_markdown(
    content_html: str, page_url: str, title: str = "", languages: dict[str, str] | None = None
) -> str:
    """The post's HTML (`content_html`, its links relative to `page_url`) as Markdown that any
    renderer shows as the site does. A first heading that only repeats `title` is left out;
    code blocks whose HTML names no language take theirs from `languages` (code_languages)."""
    if not content_html.strip():
        return ""  # and BeautifulSoup is not even imported (70 ms a process)
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(content_html, "html.parser")
    _unwrap_document(soup)
    _drop_title(soup, title)
    _plain(soup, page_url, languages or {})
    converter = _converter_class()(
        heading_style="ATX", bullets="-", strip=["script", "style"], code_language_callback=_language
    )
    markdown = str(converter.convert_soup(soup))
    return re.sub(r"\n{3,}", "\n\n", markdown).strip()


def _unwrap_document(soup: BeautifulSoup) -> None:
    """The content alone, when a plugin handed it on as a whole document (mkdocs-glightbox
    re-serialises page.content as `<html><head></head><body>…</body></html>`)."""
    from bs4 import Doctype

    for declaration in soup.find_all(string=lambda text: isinstance(text, Doctype)):
        declaration.extract()
    for head in soup.find_all("head"):
        head.decompose()
    for name in ("html", "body"):
        for tag in soup.find_all(name):
            tag.unwrap()


_WRAPPERS = ("div", "section", "article", "main", "header")


def _drop_title(soup: BeautifulSoup, title: str) -> None:
    """The first heading, if it only repeats the title, inside any wrappers that come before
    anything else (a theme's or a plugin's `<div>` around the content)."""
    first = _first_tag(soup)
    while first is not None and first.name in _WRAPPERS:
        first = _first_tag(first)
    if first is not None and first.name == "h1" and _text(first) == " ".join(title.split()):
        first.decompose()


def _first_tag(parent: Tag | BeautifulSoup) -> Tag | None:
    """The first element of `parent`, or None when text comes before it."""
    from bs4.element import Comment, NavigableString, Tag

    for child in parent.children:
        if isinstance(child, Tag):
            return child
        if isinstance(child, NavigableString) and not isinstance(child, Comment) and child.strip():
            return None
    return None


def _text(tag: Tag) -> str:
    return " ".join(tag.get_text(" ").replace("\u00b6", " ").split())


def _plain(soup: BeautifulSoup, page_url: str, languages: dict[str, str]) -> None:
    """Material's HTML made plain HTML, whose meaning every Markdown renderer keeps."""
    for tag in soup.select(
        f"a.headerlink, a.footnote-backref, span.twemoji, input, script, style, aside.{BLOCK_CLASS}"
    ):  # the page's own "Also on" links
        tag.decompose()
    for emoji in soup.select("img.twemoji, img.emojione, img.gemoji"):
        emoji.replace_with(str(emoji.get("alt") or ""))
    _absolute_links(soup, page_url)
    for block in soup.select("div.highlight, div.highlighttable, table.highlighttable"):
        if block.parent is not None:
            _plain_code(soup, block, languages)
    for block in soup.select("div.admonition, details"):
        _quoted(soup, block)
    for tabs in soup.select("div.tabbed-set"):
        _unfolded_tabs(soup, tabs)
    for reference in soup.select("sup[id^='fnref']"):
        _footnote_mark(reference)
    for notes in soup.select("div.footnote"):
        _footnotes(soup, notes)


def _absolute_links(soup: BeautifulSoup, page_url: str) -> None:
    """Links and images relative to the page, made absolute: the copy lives elsewhere."""
    for tag in soup.find_all(["a", "img"]):
        name = "href" if tag.name == "a" else "src"
        target = tag.get(name)
        if isinstance(target, str) and target and is_relative(target):
            tag[name] = urljoin(page_url, target)


def _footnote_mark(reference: Tag) -> None:
    """A footnote's mark in the text, as a placeholder the Markdown step writes as [^label]."""
    link = reference.find("a")
    label = str(link.get("href", ""))[len("#fn:") :] if link is not None else ""
    reference.replace_with(f"\x00FOOTNOTE:{label}\x00" if label else reference.get_text())


def _bold_line(soup: BeautifulSoup, text: str) -> Tag:
    paragraph, strong = soup.new_tag("p"), soup.new_tag("strong")
    strong.string = text
    paragraph.append(strong)
    return paragraph


def _plain_code(soup: BeautifulSoup, block: Tag, languages: dict[str, str]) -> None:
    """pymdownx.highlight's block (Pygments spans, line numbers, anchors, a title) as one
    `<pre><code class="language-x">`."""
    wrapper = block.find_parent("div", class_="highlight") if block.name != "div" else None
    wrapper = wrapper or block
    language = _declared_language(wrapper)
    for numbers in wrapper.find_all(class_=_LINE_NUMBERS):
        numbers.decompose()
    title_text = _taken_title(wrapper)
    code_tag = wrapper.find("code") or wrapper.find("pre")
    text = code_tag.get_text() if code_tag else ""
    language = language or languages.get(_first_line(text), "")
    code = _ANNOTATION.sub(r"\g<comment>\g<space>(\g<number>)", text)
    pre, code_element = soup.new_tag("pre"), soup.new_tag("code")
    if language:
        code_element["class"] = f"language-{language}"
    code_element.string = code
    pre.append(code_element)
    wrapper.replace_with(pre)
    if title_text:
        pre.insert_before(_bold_line(soup, title_text))


def _taken_title(wrapper: Tag) -> str:
    """The block's title (`title="…"`), taken out of it: it becomes a bold line above."""
    title = wrapper.find(class_="filename")
    if title is None:
        return ""
    text = title.get_text()
    title.decompose()
    return str(text)


def _declared_language(wrapper: Tag) -> str:
    """The language a `language-x` class names on the block or its pre/code, or ''."""
    for tag in (wrapper, *wrapper.find_all(["pre", "code"])):
        for name in _classes(tag):
            if name.startswith("language-"):
                return name[len("language-") :]
    return ""


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.split("\n") if line.strip()), "")


def _quoted(soup: BeautifulSoup, block: Tag) -> None:
    """An admonition or `<details>` as a blockquote headed by its title in bold."""
    title = block.find(["p", "summary"], class_="admonition-title") if block.name == "div" else block.find("summary")
    quote = soup.new_tag("blockquote")
    if title is not None:
        heading = _text(title)
        title.decompose()
        if heading:
            quote.append(_bold_line(soup, heading))
    for child in list(block.contents):
        quote.append(child.extract())
    block.replace_with(quote)


def _unfolded_tabs(soup: BeautifulSoup, tabs: Tag) -> None:
    """Content tabs, in either of pymdownx.tabbed's styles, as a bold line per tab and its content."""
    labels = [label for label in tabs.find_all("label") if label.find_parent("div", class_="tabbed-set") is tabs]
    blocks = [
        block
        for block in tabs.find_all("div", class_=["tabbed-block", "tabbed-content"])
        if block.find_parent("div", class_="tabbed-set") is tabs
        and not (block.get("class") == ["tabbed-content"] and block.find("div", class_="tabbed-block"))
    ]
    pieces: list[Any] = []
    for label, block in zip(labels, blocks, strict=False):
        pieces.append(_bold_line(soup, _text(label)))
        pieces.extend(child.extract() for child in list(block.contents))
    tabs.clear()
    for piece in pieces:
        tabs.append(piece)
    tabs.unwrap()


def _footnotes(soup: BeautifulSoup, notes: Tag) -> None:
    """Python-Markdown's footnote list as Markdown footnote definitions (`[^1]: …`)."""
    definitions: list[Any] = []
    for item in notes.select("li[id^='fn']"):
        label = _FOOTNOTE_ID.fullmatch(str(item.get("id")))
        paragraph = soup.new_tag("p")
        paragraph.string = f"\x00FOOTNOTE-DEFINITION:{label.group(1) if label else ''}\x00"
        definitions.append(paragraph)
        definitions.extend(child.extract() for child in list(item.contents))
    notes.clear()
    for piece in definitions:
        notes.append(piece)
    notes.unwrap()


def _classes(tag: Tag | None) -> list[str]:
    value = tag.get("class") if tag is not None else None
    return value.split() if isinstance(value, str) else list(value or [])


def _language(tag: Tag) -> str | None:
    """markdownify's question: the language of a `<pre>`, from its own or its `<code>`'s class."""
    return next(
        (
            name[len("language-") :]
            for element in (tag, tag.find("code"))
            for name in _classes(element)
            if name.startswith("language-")
        ),
        None,
    )


@functools.cache
def _converter_class() -> type:
    """markdownify's converter with our three changes; made on first use (bs4 and markdownify
    load only then), once per process."""
    from markdownify import MarkdownConverter

    class Converter(MarkdownConverter):
        def convert_li(self, el: Tag, text: str, parent_tags: set[str]) -> str:
            # A loose list (items of paragraphs, quotes, code) keeps a blank line between items:
            # without it a quote's last line would take the next item in as its own text.
            item = str(super().convert_li(el, text, parent_tags))  # type: ignore[misc]  # not in its stub
            loose = any(child.name in _BLOCKS for child in el.find_all(recursive=False))
            return item + "\n" if loose and item.strip() else item

        def convert_pre(self, el: Tag, text: str, parent_tags: set[str]) -> str:
            # A fence longer than any run of backticks inside (a Markdown example with its own
            # fences), which markdownify does not do.
            block = str(super().convert_pre(el, text, parent_tags))  # type: ignore[misc]  # not in its stub
            longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
            if longest >= 3:
                fence = "`" * (longest + 1)
                block = re.sub(r"^(\s*)```", lambda m: m.group(1) + fence, block, count=1)
                block = re.sub(r"```(\s*)$", lambda m: fence + m.group(1), block, count=1)
            return block

        def convert_soup(self, soup: BeautifulSoup) -> str:
            text = str(super().convert_soup(soup))
            # Footnote markers were kept out of markdownify's escaping as placeholders.
            text = re.sub(r"\x00FOOTNOTE-DEFINITION:([^\x00]*)\x00\s*", lambda m: f"[^{m.group(1)}]: ", text)
            return re.sub(r"\x00FOOTNOTE:([^\x00]*)\x00", lambda m: f"[^{m.group(1)}]", text)

    return Converter


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
    part = markdown[: split.start()] if split else _first_paragraph(markdown)
    return "\n".join(line for line in part.splitlines() if not _HEADING.match(line)).strip()


def excerpt_text(part: str, title: str, limit: int = 400) -> str:
    text = markdown_to_text(part) if part else ""
    if not text or text.casefold().strip(" .:") == title.casefold().strip(" .:"):
        return ""
    return shorten(text, limit)


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word, with an ellipsis when cut."""
    if len(text) > limit:
        text = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
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

    # The extensions Python-Markdown ships that excerpts use; the rest leaves its words as text.
    return html_to_text(md.markdown(markdown, extensions=["admonition", "attr_list", "tables"]))


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_ENDS_A_SENTENCE = (".", "!", "?", ":", ";", "…", "。", "！", "？", "：")


_TEXT_BLOCKS = ("p", "br", "li", "div", *_HEADINGS, "blockquote", "tr")
_BREAK = "\ue000"  # a block's end, in `plain_text` (a private-use character: no text has it)


class _Text(HTMLParser):
    """The text of some HTML: on one line (`html_to_text`), or with its blocks kept (`plain_text`)."""

    def __init__(self, blocks: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        self.blocks = blocks
        self.permalink = False  # inside a heading's `¶` link (a.headerlink): not text

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        elif self.blocks and tag == "a" and "headerlink" in (dict(attrs).get("class") or "").split():
            self.permalink = True
        elif tag in _TEXT_BLOCKS:
            self.parts.append(_BREAK if self.blocks else " ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self.skip:
            self.skip -= 1
        elif tag == "a":
            self.permalink = False
        elif self.blocks and tag in _TEXT_BLOCKS:
            self.parts.append(_BREAK)  # a heading keeps its own words: no full stop is made up
        elif tag in _HEADINGS and not self.skip:
            # A heading ends its sentence: "…each new post. Why the feed. Because…", not "Why the
            # feed Because…" run into the text that follows it.
            said = "".join(self.parts).rstrip()
            if said and not said.endswith(_ENDS_A_SENTENCE):
                self.parts.append(".")
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self.skip and not self.permalink:
            self.parts.append(data.replace(_BREAK, "") if self.blocks else data)


def html_to_text(fragment: str) -> str:
    parser = _Text()
    parser.feed(fragment)
    parser.close()
    return " ".join(html.unescape("".join(parser.parts)).split())


def plain_text(fragment: str, title: str = "") -> str:
    """A post's HTML as plain text: each block (paragraph, heading, item) its own paragraph, its
    words as written, and a first heading that only repeats `title` left out (the title is said
    beside it)."""
    parser = _Text(blocks=True)
    parser.feed(fragment)
    parser.close()
    blocks = [" ".join(block.split()) for block in html.unescape("".join(parser.parts)).split(_BREAK)]
    blocks = [block for block in blocks if block]
    if blocks and title and blocks[0] == " ".join(title.split()) and _opens_with_heading(fragment):
        blocks = blocks[1:]
    return "\n\n".join(blocks)


def _opens_with_heading(fragment: str) -> bool:
    return re.match(r"\s*<h1\b", fragment, re.IGNORECASE) is not None
