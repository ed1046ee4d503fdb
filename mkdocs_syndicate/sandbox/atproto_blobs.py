"""Blobs on the sandbox's PDS (sandbox/bluesky.py), written from bluesky-social/atproto
(https://github.com/bluesky-social/atproto; paths below are in it) and its lexicons:

- `com.atproto.repo.uploadBlob` (packages/pds/src/api/com/atproto/repo/uploadBlob.ts): the body
  is limited to the PDS's `blobUploadLimit` (packages/pds/src/config/config.ts: 5 MB,
  5 × 1024 × 1024 bytes, unless PDS_BLOB_UPLOAD_LIMIT says otherwise; quirk
  `blob_upload_limit`); over it the XRPC server answers 413 `PayloadTooLarge` "request entity
  too large" (packages/xrpc-server/src/util.ts). Size and type rules are not checked at upload:
  "Blob restrictions (mimetype, size, etc) are enforced when the reference is created"
  (lexicons/com/atproto/repo/uploadBlob.json). The type stored is what the bytes are
  (`file-type`), else the Content-Type sent (actor-store/blob/transactor.ts).
- A record's blob references (actor-store/blob/transactor.ts `verifyBlobAndMakePermanent`):
  a CID this repo never uploaded is 400 `BlobNotFound` "Could not find blob: <cid>"; while the
  blob is temporary (its `tempKey` set), a reference whose mimeType or size differ from the
  stored blob's is `InvalidMimeType` "Referenced Mimetype does not match stored blob. Expected:
  …, Got: …" or `InvalidSize`; a blob already permanent is not checked again, whatever its
  reference says. The record is validated against its lexicon first, and the write's swap and
  no-op decided before its blobs (repo/transactor.ts `processWrites`).
- A record deleted or replaced (`deleteDereferencedBlobs`, the first step of
  `processWriteBlobs`): each blob it named that no record of the repo names now, the new
  version included, is deleted at once, so a later record naming it is `BlobNotFound`.
- app.bsky.embed.images (lexicons/app/bsky/embed/images.json): at most 4 images; each an
  `image` blob, `accept: ["image/*"]`, `maxSize` 2,000,000 bytes ("May be up to 2 MB, formerly
  limited to 1 MB": atproto#4823, April 2026, in the PDS since 0.5.x; quirk
  `image_blob_max_size` for an older one), a required string `alt`, and an optional
  `aspectRatio` (app.bsky.embed.defs#aspectRatio: `width` and `height`, both required
  integers ≥ 1). The validator's words are @atproto/lex-schema's
  (packages/lex/lex-schema/src/core/validation-issue.ts): `Missing required key "alt"`,
  `array too big (maximum 4, got 5)`, `blob too big (maximum …, got …)`, `integer too small
  (minimum 1, got 0)`, each followed by ` at $.record.embed…`.
- An uploaded blob no record references is "deleted if it is not referenced within a time
  window (eg, minutes)" (uploadBlob.json). The reference PDS itself has no sweeper for them
  (its temporary blobs stay until a record uses them or an operator clears the temp store), so
  the emulator keeps them unless quirk `blob_ttl` (seconds) says how long the window is.
- The AppView's view of an image post (app.bsky.embed.images#view): `thumb`, `fullsize`, `alt`
  and `aspectRatio`, the URLs its CDN serves; here the sandbox's media address.
"""

from __future__ import annotations

import json
from typing import Any

from mkdocs_syndicate.emulator_api import Emulator, Request, Response
from mkdocs_syndicate.sandbox import media_files
from mkdocs_syndicate.sandbox.atproto_data import make_cid, sniffed

BLOB_UPLOAD_LIMIT = 5 * 1024 * 1024
IMAGE_MAX_SIZE = 2_000_000
THUMB_MAX_SIZE = 1_000_000  # app.bsky.embed.external's thumb
MAX_IMAGES = 4
IMAGES = "app.bsky.embed.images"


def upload(emulator: Emulator, request: Request) -> Response:
    """com.atproto.repo.uploadBlob: the bytes kept, untethered until a record references them."""
    claimed = request.headers.get("content-type")
    if not claimed:
        return _error(400, "InvalidRequest", "Request encoding (Content-Type) required but not provided")
    if len(request.body) > int(emulator.quirks.get("blob_upload_limit", BLOB_UPLOAD_LIMIT)):
        return _error(413, "PayloadTooLarge", "request entity too large")
    expire(emulator)
    cid = make_cid(request.body, 0x55)
    # The PDS sniffs the bytes (file-type) and keeps the claimed type only when they say nothing
    # (checked against the reference PDS): a PDF sent as image/png is stored as application/pdf,
    # but plain text sent as image/png stays image/png.
    mime = sniffed(request.body) or claimed
    known = emulator.state["blobs"].get(cid, {})
    emulator.state["blobs"][cid] = {
        "size": len(request.body),
        "mimeType": mime,
        "at": emulator.server.now(),
        "permanent": bool(known.get("permanent")),
    }
    media_files.keep(emulator.server.state_dir, emulator.name, cid, request.body)
    return Response(
        200, {"blob": {"$type": "blob", "ref": {"$link": cid}, "mimeType": mime, "size": len(request.body)}}
    )


def expire(emulator: Emulator) -> None:
    """Untethered blobs older than the window (quirk `blob_ttl`; none by default) are gone."""
    ttl = emulator.quirks.get("blob_ttl")
    if ttl is None:
        return
    now = emulator.server.now()
    for cid, blob in list(emulator.state["blobs"].items()):
        if not blob.get("permanent") and now - float(blob.get("at", now)) > float(ttl):
            del emulator.state["blobs"][cid]
            media_files.drop(emulator.server.state_dir, emulator.name, cid)


def blob_refs(value: Any) -> list[dict[str, Any]]:
    """Every blob a record references (`{"$type": "blob", …}` anywhere in it)."""
    if isinstance(value, dict):
        if value.get("$type") == "blob":
            return [value]
        return [ref for item in value.values() for ref in blob_refs(item)]
    if isinstance(value, list):
        return [ref for item in value for ref in blob_refs(item)]
    return []


def refs_problem(emulator: Emulator, record: Any) -> Response | None:
    """verifyBlobAndMakePermanent, for each blob the record references: None when all are this
    repo's and described as stored."""
    expire(emulator)
    for ref in blob_refs(record):
        cid = _cid(ref)
        stored = emulator.state["blobs"].get(cid)
        if stored is None:
            return _error(400, "BlobNotFound", f"Could not find blob: {cid}")
        if stored.get("permanent"):  # verifyBlob runs only while the blob is temporary (tempKey)
            continue
        if ref.get("mimeType") != stored["mimeType"]:
            why = f"Expected: {stored['mimeType']}, Got: {ref.get('mimeType')}"
            return _error(400, "InvalidMimeType", f"Referenced Mimetype does not match stored blob. {why}")
        if ref.get("size") != stored["size"]:
            why = f"Expected: {stored['size']}, Got: {ref.get('size')}"
            return _error(400, "InvalidSize", f"Referenced Size does not match stored blob. {why}")
    return None


def drop_dereferenced(emulator: Emulator, old_record: Any) -> None:
    """deleteDereferencedBlobs, after a record was deleted or replaced: each blob it named that
    no record names now (the new version of it included) is deleted at once, its bytes too."""
    named = {_cid(ref) for value in _stored_records(emulator) for ref in blob_refs(value)}
    for cid in {_cid(ref) for ref in blob_refs(old_record)} - named:
        if cid is not None and emulator.state["blobs"].pop(cid, None) is not None:
            media_files.drop(emulator.server.state_dir, emulator.name, cid)


def _stored_records(emulator: Emulator) -> list[Any]:
    """Every record the repository holds, in every collection."""
    tables = [emulator.state.get("records", {}), *emulator.state.get("collections", {}).values()]
    return [stored["value"] for table in tables for stored in table.values()]


def _cid(ref: dict[str, Any]) -> str | None:
    link = ref.get("ref")
    return link.get("$link") if isinstance(link, dict) else None


def make_permanent(emulator: Emulator, record: Any) -> None:
    for ref in blob_refs(record):
        stored = emulator.state["blobs"].get((ref.get("ref") or {}).get("$link"))
        if stored is not None:
            stored["permanent"] = True


def embed_problem(embed: Any, image_max: int) -> str | None:
    """A post's `embed` of images, or an external card's thumb, as the lexicons check them (the
    first problem in lex-schema's words, or None)."""
    if not isinstance(embed, dict):
        return None
    if embed.get("$type") == IMAGES:
        return _images_problem(embed, image_max)
    thumb = (embed.get("external") or {}).get("thumb") if isinstance(embed.get("external"), dict) else None
    if thumb is not None:
        return _blob_problem(thumb, THUMB_MAX_SIZE, "$.record.embed.external.thumb")
    return None


def _images_problem(embed: dict[str, Any], image_max: int) -> str | None:
    images = embed.get("images")
    where = "$.record.embed"
    if images is None:
        return f'Missing required key "images" at {where}'
    if not isinstance(images, list):
        return f"Expected array value type (got {_shown(images)}) at {where}.images"
    if len(images) > MAX_IMAGES:
        return f"array too big (maximum {MAX_IMAGES}, got {len(images)}) at {where}.images"
    for i, image in enumerate(images):
        at = f"{where}.images[{i}]"
        if not isinstance(image, dict):
            return f"Expected object value type (got {_shown(image)}) at {at}"
        # Property by property, in the lexicon's order: image, alt, aspectRatio.
        if "image" not in image:
            return f'Missing required key "image" at {at}'
        problem = _blob_problem(image["image"], image_max, f"{at}.image")
        if problem:
            return problem
        if "alt" not in image:
            return f'Missing required key "alt" at {at}'
        if not isinstance(image["alt"], str):
            return f"Expected string value type (got {_shown(image['alt'])}) at {at}.alt"
        if "aspectRatio" in image:
            problem = _aspect_problem(image["aspectRatio"], f"{at}.aspectRatio")
            if problem:
                return problem
    return None


def _blob_problem(blob: Any, max_size: int, where: str) -> str | None:
    if not isinstance(blob, dict) or blob.get("$type") != "blob" or not isinstance(blob.get("ref"), dict):
        return f"Expected blob value type (got {_shown(blob)}) at {where}"
    mime = str(blob.get("mimeType", ""))
    if not mime.startswith("image/"):
        return f'Expected "image/*" (got {json.dumps(mime)}) at {where}.mimeType'
    size = blob.get("size")
    if isinstance(size, int) and size > max_size:
        return f"blob too big (maximum {max_size}, got {size}) at {where}"
    return None


def _aspect_problem(ratio: Any, where: str) -> str | None:
    if not isinstance(ratio, dict):
        return f"Expected object value type (got {_shown(ratio)}) at {where}"
    for key in ("width", "height"):
        if key not in ratio:
            return f'Missing required key "{key}" at {where}'
        value = ratio[key]
        if not isinstance(value, int) or isinstance(value, bool):
            return f"Expected integer value type (got {_shown(value)}) at {where}.{key}"
        if value < 1:
            return f"integer too small (minimum 1, got {value}) at {where}.{key}"
    return None


def _shown(value: Any) -> str:
    """A value as lex-schema's stringifyValue shows it in an issue."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return json.dumps(value)


def images_view(record: dict[str, Any], public_base: str) -> dict[str, Any] | None:
    """app.bsky.embed.images#view of a post's images, as the AppView hydrates it (None: none)."""
    embed = record.get("embed") or {}
    if not isinstance(embed, dict) or embed.get("$type") != IMAGES:
        return None
    shown = []
    for image in embed.get("images") or []:
        cid = ((image.get("image") or {}).get("ref") or {}).get("$link", "")
        url = f"{public_base}/_sandbox/media/bluesky/{cid}"
        view: dict[str, Any] = {"thumb": url, "fullsize": url, "alt": image.get("alt", "")}
        if image.get("aspectRatio"):
            view["aspectRatio"] = image["aspectRatio"]
        shown.append(view)
    return {"$type": f"{IMAGES}#view", "images": shown}


def _error(status: int, name: str, message: str) -> Response:
    return Response(status, {"error": name, "message": message})
