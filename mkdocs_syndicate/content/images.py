"""A post's image, read from the built site for upload (Bluesky's link-card thumbnail), safely.

The image URL comes from front matter or a feed, so it is untrusted: `https://example.com/../../
proc/self/environ` or `../.git/config` (where actions/checkout keeps the token) must never be
read and uploaded. A file is used only if, after normalising and resolving symlinks, it lies
inside the built site; it is at most `max_bytes`; and its first bytes say it is an image (its
type is taken from them, never from the file name, as the service sniffs it too). Anything else:
no thumbnail, and a note saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

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
