"""Bluesky's image post (`embed: image`): the post's image as an `app.bsky.embed.images` embed,
with its alt text and aspect ratio, instead of the link card.

From the lexicons (lexicons/app/bsky/embed/images.json) and the reference PDS:
- an image is a blob of type image/*, of at most 2,000,000 bytes since atproto#4823 (April 2026;
  the reference PDS 0.5.35 enforces that) and 1,000,000 before: 1,000,000 is what every PDS takes,
  an older self-hosted one too, so an image is made to fit that; each has `alt` (required, ""
  allowed) and an optional `aspectRatio` {width, height} (app.bsky.embed.defs#aspectRatio);
- `com.atproto.repo.uploadBlob` stores the bytes and answers the blob ref (`ref.$link` is the CID
  of the bytes: the same bytes always give the same ref, so an upload repeated makes nothing new);
- a record naming a blob the PDS no longer holds is refused, `400 BlobNotFound` "Could not find
  blob: <cid>": the proof it is gone. A read cannot tell: `com.atproto.sync.getBlob` answers
  "Blob not found" alike for a blob uploaded and not yet used by a record and for none at all
  (measured on the reference PDS: tests/test_realserver_bluesky.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Kind,
    Media,
    Outcome,
    PostImage,
    TooLarge,
    fit,
    json_object,
    optional_text,
    status_outcome,
    transport_outcome,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import httpx

MAX_BLOB = 1_000_000  # app.bsky.embed.images' maxSize before atproto#4823: every PDS takes it
IMAGES = "app.bsky.embed.images"


def blob_ref(media: Media) -> dict[str, Any]:
    """The blob as a record names it: its CID, type and size as uploaded."""
    return {"$type": "blob", "ref": {"$link": media.id}, "mimeType": media.mime, "size": media.size}


def images_embed(image: PostImage, media: Media) -> dict[str, Any]:
    """The record's embed: one image, its alt text, its aspect ratio (of the bytes uploaded)."""
    fitted = fit(image, MAX_BLOB)  # the same bytes as uploaded: the sizes of what was sent
    entry: dict[str, Any] = {"image": blob_ref(media), "alt": image.alt}
    entry["aspectRatio"] = {"width": fitted.width, "height": fitted.height}
    return {"$type": IMAGES, "images": [entry]}


def missing_blob(response: httpx.Response, media: tuple[Media, ...]) -> bool:
    """putRecord's 400 BlobNotFound for one of the blobs the record names: proof it is gone."""
    return (
        response.status_code == 400
        and "BlobNotFound" in response.text
        and any(item.id in response.text for item in media)
    )


async def upload_blob(
    authed: Callable[..., Awaitable[httpx.Response]], http: Any, image: PostImage, where: str
) -> Outcome:
    """uploadBlob of the image made to fit MAX_BLOB: DONE with the blob as `media`; REFUSED,
    with the numbers, when it cannot be made to fit."""
    import httpx

    try:
        fitted = fit(image, MAX_BLOB)
    except TooLarge as exc:
        return Outcome(Kind.REFUSED, error=f"{where}: " + exc.against("Bluesky's image blob limit"))
    try:
        response = await authed(
            http, "POST", "com.atproto.repo.uploadBlob", content=fitted.data, headers={"Content-Type": fitted.mime}
        )
    except httpx.TransportError as exc:
        return transport_outcome(exc)
    if response.status_code != 200:
        return status_outcome(response, http.now())
    try:
        blob = json_object(response).get("blob")
        ref = blob.get("ref") if isinstance(blob, dict) else None
        cid = optional_text(ref.get("$link") if isinstance(ref, dict) else None, "blob.ref")
        mime = optional_text(blob.get("mimeType") if isinstance(blob, dict) else None, "blob.mimeType")
        size = blob.get("size") if isinstance(blob, dict) else None
    except BadAnswer as exc:
        return Outcome(Kind.AMBIGUOUS, error=f"uploadBlob: {exc}")
    if cid is None or mime is None or not isinstance(size, int) or isinstance(size, bool):
        return Outcome(Kind.AMBIGUOUS, error="uploadBlob answered without the blob's ref, type or size")
    return Outcome(Kind.DONE, remote_id=cid, media=Media(cid, image.sha256, mime, size))
