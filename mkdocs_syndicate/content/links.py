"""Links in a post: which targets are relative to the page, and the links of an HTML fragment."""

from __future__ import annotations

from urllib.parse import urlsplit


def is_relative(target: str) -> bool:
    return not (target.startswith(("#", "//")) or urlsplit(target).scheme)


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
