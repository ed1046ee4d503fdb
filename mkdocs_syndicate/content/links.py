"""Make a post's relative links and image paths absolute, for channels that republish the body
(DEV/Forem): `[x](../other.md)`, `![](img/a.png)`, reference definitions and HTML src/href.
Fenced code blocks are left alone."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urljoin, urlsplit

from mkdocs_syndicate.lazyre import lazy_compile

Resolver = Callable[[str], str]

_INLINE = lazy_compile(r"(!?\[(?:[^\]\\]|\\.)*\]\(\s*<?)([^)\s>]+)(>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\))")
_REFERENCE = lazy_compile(r"^( {0,3}\[[^\]]+\]:\s*<?)(\S+?)(>?(?:\s+.*)?)$", re.MULTILINE)
_HTML_ATTR = lazy_compile(r"(\b(?:src|href)\s*=\s*[\"'])([^\"']+)([\"'])", re.IGNORECASE)
_FENCE = lazy_compile(r"^( {0,3})(`{3,}|~{3,}).*?^\1\2[`~]*[ \t]*$", re.MULTILINE | re.DOTALL)


def is_relative(target: str) -> bool:
    return not (target.startswith(("#", "//")) or urlsplit(target).scheme)


def absolutize(markdown: str, resolve: Resolver) -> str:
    def fix(match: re.Match[str]) -> str:
        target = match.group(2)
        return match.group(1) + (resolve(target) if is_relative(target) else target) + match.group(3)

    pieces, last = [], 0
    for fence in _FENCE.finditer(markdown):
        pieces.append(_fix_text(markdown[last:fence.start()], fix))
        pieces.append(fence.group(0))
        last = fence.end()
    pieces.append(_fix_text(markdown[last:], fix))
    return "".join(pieces)


def _fix_text(text: str, fix: Callable[[re.Match[str]], str]) -> str:
    for pattern in (_INLINE, _REFERENCE, _HTML_ATTR):
        text = pattern.sub(fix, text)
    return text


def relative_to(base_url: str) -> Resolver:
    """The plain rule: resolve against the post's own URL (what a browser would do)."""
    return lambda target: urljoin(base_url, target)


def hrefs(html_text: str) -> list[str]:
    """The targets of the <a href> links of an HTML fragment, with entities decoded (`&#39;`,
    `&#x27;` and `&apos;` all read as `'`), as a browser follows them."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "a":
                found.extend(value for name, value in attrs if name == "href" and value)

    parser = Links(convert_charrefs=True)
    parser.feed(html_text)
    parser.close()
    return found
