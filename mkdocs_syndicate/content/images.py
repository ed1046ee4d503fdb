"""A post's image: which one (front matter `image` + `image_alt`, else the first image of the
post with its alt text), and its file read from the built site for upload, safely.

The image URL comes from front matter or a feed, so it is untrusted: `https://example.com/../../
proc/self/environ` or `../.git/config` (where actions/checkout keeps the token) must never be
read and uploaded. A file is used only if, after normalising and resolving symlinks, it lies
inside the built site; it is at most `max_bytes`; and its first bytes say it is an image (its
type is taken from them, never from the file name, as the service sniffs it too). Anything else:
no thumbnail, and a note saying why.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urljoin, urlsplit

if TYPE_CHECKING:
    from mkdocs_syndicate.content.posts import Post
    from mkdocs_syndicate.ledger.schema import Record


def image_removed(post: Post, record: Record) -> bool:
    """Whether the author removed the image the copy shows: its record names an upload and the
    post has no image now (neither front matter nor body). An edit then leaves the copy without
    it (engine/plan.py plans it, engine/updates.py names no upload once it is done, Mastodon's
    edit sends no media), except a thread's, whose parts are edited without media. An image the
    build lacks is no removal: the post still has it."""
    return bool(record.media) and post.image is None and not record.parts


# Magic bytes → media type, for the formats image hosts accept.
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


@dataclass(frozen=True)
class LocalImage:
    mime: str
    data: bytes


def sniff(head: bytes) -> str | None:
    """The image type its first bytes declare, or None."""
    for signature, mime in _SIGNATURES:
        if head.startswith(signature):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def site_image(image_url: str | None, site_url: str, site_dir: str, max_bytes: int) -> tuple[LocalImage | None, str]:
    """(the image, "") when it is a safe image file of the built site, else (None, why not); the
    reason is empty when there is simply no image to look for."""
    if not image_url or not site_dir:
        return None, ""
    link, site = urlsplit(image_url), urlsplit(site_url)
    if (link.hostname or "").lower() != (site.hostname or "").lower():
        return None, ""  # an image elsewhere: the card goes without a thumbnail, as before
    path, base = unquote(link.path), unquote(site.path)
    if not path.startswith(base):
        return None, f"image {image_url}: outside the built site; not read"
    relative = path[len(base) :]
    root = Path(site_dir).resolve()
    try:
        candidate = (root / relative.lstrip("/")).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return None, f"image {image_url}: cannot be resolved in the built site"
    if not candidate.is_relative_to(root):
        return None, f"image {image_url}: outside the built site; not read"
    try:
        if not candidate.is_file():
            return None, f"image {image_url}: not a file of the built site"
        if candidate.stat().st_size > max_bytes:
            return None, f"image {image_url}: larger than {max_bytes} bytes; posted without a thumbnail"
        with open(candidate, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        return None, f"image {image_url}: cannot be read ({exc.strerror or exc})"
    if len(data) > max_bytes:
        return None, f"image {image_url}: larger than {max_bytes} bytes; posted without a thumbnail"
    mime = sniff(data[:16])
    if mime is None:
        return None, f"image {image_url}: not a PNG, JPEG, GIF or WebP image; posted without a thumbnail"
    return LocalImage(mime, data), ""


# ---------------------------------------------------------------- which image, which alt text


class _FirstImage(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: tuple[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.found is None and tag == "img":
            named = dict(attrs)
            src = (named.get("src") or "").strip()
            if src and not src.startswith("data:"):
                # `alt` absent: none given (a warning); `alt=""` (or bare `alt`): decorative, on purpose.
                alt = (named["alt"] or "") if "alt" in named else None
                self.found = (src, alt)


def first_image(html: str, base_url: str) -> tuple[str, str | None] | None:
    """The first image of a post's HTML: (its absolute URL, its alt text, or None when the `img`
    has no alt attribute). None when the post shows no image."""
    if "<img" not in html:
        return None
    parser = _FirstImage()
    parser.feed(html)
    parser.close()
    if parser.found is None:
        return None
    src, alt = parser.found
    return urljoin(base_url, src), alt


def no_alt_note(where: str, image_url: str) -> str:
    """The build warning for an image sent without alt text, naming the post."""
    return (
        f"{where}: image {image_url} has no alt text, which is all screen-reader users get of it: "
        'add `image_alt:` to the front matter (or alt text to the image), or `image_alt: ""` '
        "for a decorative image"
    )


MAX_READ = 50_000_000
"""The largest image file read for an upload: larger than any service takes, so that a larger
file is made smaller (content/fitting.py) rather than left out."""


@dataclass(frozen=True)
class PostImage:
    """The post's image as a channel uploads it: the file's bytes and type, the SHA-256 of the
    file (what the ledger's `media` names), its alt text ("" when decorative or not given) and
    its file name (Matrix's `filename`)."""

    data: bytes
    mime: str
    sha256: str
    alt: str
    filename: str
    url: str


def post_image(post: Post, site_url: str, site_dir: str) -> tuple[PostImage | None, tuple[str, ...]]:
    """The post's image file from the built site (site_image's rules) for upload, and the build
    warnings it gives, naming the post: why it is not sent, or that it has no alt text."""
    where = post.source or post.key
    found, why_not = site_image(post.image, site_url, site_dir, MAX_READ)
    if found is None or post.image is None:
        return None, (f"{where}: {why_not}",) if why_not else ()
    name = unquote(urlsplit(post.image).path.rstrip("/").rsplit("/", 1)[-1]) or "image"
    digest = hashlib.sha256(found.data).hexdigest()
    notes = (no_alt_note(where, post.image),) if post.image_alt is None else ()
    return PostImage(found.data, found.mime, digest, post.image_alt or "", name, post.image), notes
