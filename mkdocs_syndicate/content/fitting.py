"""A post's image brought under a service's limits: bytes per file and pixels per image.

Mastodon states its limits in /api/v2/instance (`configuration.media_attachments`:
`image_size_limit` in bytes, `image_matrix_limit` in pixels); Bluesky's lexicon
`app.bsky.embed.images` allows 1,000,000 bytes per image blob, and the reference PDS refuses a
record whose blob is larger. An image within the limits goes as it is, byte for byte. A larger
one is made smaller with Pillow: scaled under the pixel limit, then re-encoded (a photo as JPEG,
an image with transparency as PNG) and scaled down step by step until it fits. An animated GIF is
not re-encoded (it would lose its animation): over a limit, it is refused. What cannot be brought
under the limit is refused with the numbers.

Pillow is imported only when an image is measured or made smaller (a plan imports none of it).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

from mkdocs_syndicate.content.images import PostImage

MIN_SIDE = 64  # below this, an image says nothing: refused rather than sent as a smudge
_STEP = 0.75  # each try's scale of the one before
_TRIES = 12


class TooLarge(ValueError):
    """The image cannot be brought under the service's limit: the message has the numbers."""

    def against(self, limits: str) -> str:
        """The refusal as a channel says it, naming the service's `limits` it is measured by."""
        return f"{self} ({limits})"


class Unreadable(TooLarge):
    """The image file is broken (truncated, damaged, not what its first bytes say): no limit is to
    blame, so none is named. A TooLarge, so that a channel catching that one refuses this too."""

    def against(self, limits: str) -> str:
        return str(self)


@dataclass(frozen=True)
class Fitted:
    """The bytes to upload, their type and their size in pixels (Bluesky's aspectRatio, Matrix's info.w/h)."""

    data: bytes
    mime: str
    width: int
    height: int
    resized: bool = False


def fit(image: PostImage, max_bytes: int, max_pixels: int | None = None) -> Fitted:
    """`image` as it is when within the limits, else made smaller; TooLarge when it cannot be."""
    from PIL import Image, UnidentifiedImageError

    try:
        opened = Image.open(io.BytesIO(image.data))
        width, height = opened.size
        opened.load()  # decoded whole: a truncated file fails here, not halfway through a resize
    except Exception as exc:  # whatever a decoder of an untrusted file raises (PNG's: SyntaxError)
        raise Unreadable(f"image {image.url}: {_what_is_wrong(exc, image, UnidentifiedImageError)}") from None
    pixels_ok = max_pixels is None or width * height <= max_pixels
    if len(image.data) <= max_bytes and pixels_ok:
        return Fitted(image.data, image.mime, width, height)
    said = f"image {image.url}: {len(image.data)} bytes, {width}×{height} pixels"
    limits = f"the limit is {max_bytes} bytes" + (f" and {max_pixels} pixels" if max_pixels else "")
    if getattr(opened, "is_animated", False):
        raise TooLarge(f"{said}; {limits}, and an animated image is not made smaller (it would lose its animation)")
    scale = 1.0 if pixels_ok or max_pixels is None else math.sqrt(max_pixels / (width * height))
    transparent = opened.mode in ("RGBA", "LA", "PA") or (opened.mode == "P" and "transparency" in opened.info)
    for _ in range(_TRIES):
        size = (math.floor(width * scale), math.floor(height * scale))
        if min(size) < MIN_SIDE:
            break
        data, mime = _encoded(opened, size, transparent)
        if len(data) <= max_bytes:
            return Fitted(data, mime, size[0], size[1], resized=True)
        scale *= _STEP
    raise TooLarge(f"{said}; {limits}: it cannot be made small enough ({MIN_SIDE} pixels a side at least)")


def _what_is_wrong(exc: Exception, image: PostImage, unidentified: type[Exception]) -> str:
    """What is wrong with a file that Pillow cannot decode, in words (never the exception's repr
    of a Python object), with what to do."""
    from mkdocs_syndicate.safety import without_reprs

    kind = image.mime.removeprefix("image/").upper()
    said = " ".join(without_reprs(str(exc)).split())
    if isinstance(exc, EOFError) or "truncated" in said.lower():
        problem = f"the file is truncated: it ends before its {kind} data does ({len(image.data)} bytes)"
    elif isinstance(exc, unidentified):
        problem = f"the file starts like a {kind} image but is not one that can be read"
    elif type(exc).__name__ == "DecompressionBombError":
        problem = f"the file declares more pixels than are decoded safely ({said})"
    else:
        problem = f"the file is a damaged {kind} image ({type(exc).__name__}: {said[:200]})"
    return f"{problem}; export or copy {image.filename} again"


def _encoded(opened: object, size: tuple[int, int], transparent: bool) -> tuple[bytes, str]:
    from PIL import Image

    assert isinstance(opened, Image.Image)
    smaller = opened.convert("RGBA" if transparent else "RGB").resize(size, Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if transparent:
        smaller.save(out, "PNG", optimize=True)
        return out.getvalue(), "image/png"
    smaller.save(out, "JPEG", quality=85, optimize=True)
    return out.getvalue(), "image/jpeg"
