"""Mastodon's media attachments, for the sandbox's Mastodon (sandbox/mastodon.py), written from
Mastodon 4.x's source (https://github.com/mastodon/mastodon; the paths below are in it) and its
API documentation (https://docs.joinmastodon.org/methods/media/):

- `POST /api/v2/media` (Api::V2::MediaController#create): multipart `file`, `description`,
  `focus`; 200 with the attachment when it was processed at once, 202 with `url: null` when its
  processing was delayed. MediaAttachment#delay_processing? delays only the larger formats
  (video, audio, and GIFs, which become `gifv` videos): a PNG, JPEG or WebP is processed during
  the request. `POST /api/v1/media` always processes at once (200).
- `DELETE /api/v1/media/:id` (4.4): the caller's unattached media deleted at once, 200 `{}`.
- `GET /api/v1/media/:id`: 206 while processing, 200 once done; `PUT /api/v1/media/:id`
  changes `description` and `focus`. Both find the attachment among the caller's own unattached
  ones (`current_account.media_attachments.where(status_id: nil).find`): another account's, an
  attached one or an unknown id is 404 "Record not found". The whole controller wants `write` or
  `write:media`.
- MediaAttachment's validations (app/models/media_attachment.rb): `description` at most
  MAX_DESCRIPTION_LENGTH = 1,500 characters; a file of a type outside `supported_mime_types`;
  an image of IMAGE_LIMIT = 16 MB (16,777,216 bytes: `less_than`, so that size itself is
  refused) or more, in the words of mastodon/mastodon#32983 ("Validation failed: File must be
  less than 16 MB, File file size must be less than 16 MB"); an image of more than
  Attachmentable::MAX_MATRIX_LIMIT = 33,177,600 pixels (7680×4320) is
  Mastodon::DimensionsValidationError "WxH images are not supported". All 422 `{"error": …}`.
- PostStatusService#validate_media! and UpdateStatusService#validate_media! (en.yml
  `media_attachments.validations`): more than 4 ids is "Cannot attach more than 4 files"; an id
  that is not the caller's unattached media (an edit may also name the status's own) is "Media
  <ids> not found or already attached to another post"; a video with anything else is "Cannot
  attach a video to a post that already contains images"; one still processing is "Cannot
  attach files that have not finished processing. Try again in a moment!". 422, checked before
  the status's text, which may then be empty.
- Scheduler::MediaCleanupScheduler destroys unattached media created more than a day ago
  (`MediaAttachment.unattached.where('created_at < ?', 1.day.ago)`, run daily): quirk
  `media_retention` (seconds) shortens it.
- Rack::Attack (config/initializers/rack_attack.rb) `throttle_api_media`: 30 POSTs to
  /api/v1/media or /api/v2/media per 30 minutes per account, then 429 (sandbox/mastodon_limits.py).
- Processing that failed (`processing: failed`, a GIF or video the background transcoder could
  not convert): `GET` and `PUT /api/v1/media/:id` answer 422 "Error processing thumbnail for
  uploaded media" (Api::V1::MediaController `before_action :check_processing`,
  `processing_failed?`), while a status may still attach it (`not_processed?` is false for a
  failed attachment, so validate_media! lets it through). Quirk `media_processing_fails`: every
  delayed upload ends that way.

Quirks: `media_processing_polls` (how many reads answer 206 before a delayed upload is done,
default 1) and `media_processing_seconds` (or after how long, default 5); `media_always_async`
(every upload delayed, as a server that processes images in the background does)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from mkdocs_syndicate.emulator_api import Emulator, Request, Response
from mkdocs_syndicate.sandbox import media_files

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/heic", "image/heif", "image/webp", "image/avif")
VIDEO_TYPES = ("video/webm", "video/mp4", "video/quicktime", "video/ogg")
AUDIO_TYPES: tuple[str, ...] = ("audio/wave", "audio/wav", "audio/x-wav", "audio/ogg", "audio/mpeg", "audio/mp3")
AUDIO_TYPES += ("audio/webm", "audio/flac", "audio/aac", "audio/m4a", "audio/x-m4a", "audio/mp4", "audio/3gpp")
IMAGE_LIMIT = 16 * 1024 * 1024
VIDEO_LIMIT = 99 * 1024 * 1024
MAX_MATRIX_LIMIT = 33_177_600
MAX_DESCRIPTION_LENGTH = 1_500
MAX_ATTACHMENTS = 4
RETENTION = 24 * 3600.0

PROCESSING_FAILED = "Error processing thumbnail for uploaded media"  # Api::V1::MediaController#processing_error
NOT_READY = "Cannot attach files that have not finished processing. Try again in a moment!"
TOO_MANY = f"Cannot attach more than {MAX_ATTACHMENTS} files"
IMAGES_AND_VIDEO = "Cannot attach a video to a post that already contains images"


def instance(max_characters: int) -> dict[str, Any]:
    """GET /api/v2/instance (REST::InstanceSerializer): the limits a client fits its statuses
    and their media to."""
    statuses = {"max_characters": max_characters, "characters_reserved_per_url": 23, "max_media_attachments": 4}
    return {
        "domain": "sandbox",
        "version": "4.3.0",
        "configuration": {"statuses": statuses, "media_attachments": _media_configuration()},
    }


def images_of(state: dict[str, Any], status: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
    """A status's images as the dashboard shows them: where the file is, and its alt text."""
    found = (state.get("media", {}).get(i) for i in status.get("media_ids", []))
    base = f"{public_base}/_sandbox/media/mastodon"
    return [{"src": f"{base}/{m['file']}", "alt": m.get("description")} for m in found if m]


def _media_configuration() -> dict[str, Any]:
    return {
        "supported_mime_types": [*IMAGE_TYPES, *VIDEO_TYPES, *AUDIO_TYPES],
        "description_limit": MAX_DESCRIPTION_LENGTH,
        "image_size_limit": IMAGE_LIMIT,
        "image_matrix_limit": MAX_MATRIX_LIMIT,
        "video_size_limit": VIDEO_LIMIT,
        "video_frame_rate_limit": 120,
        "video_matrix_limit": 8_294_400,
    }


class MastodonMedia:
    """The media half of the sandbox's Mastodon: its state is the emulator's `media`."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator

    @property
    def media(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = self.emulator.state.setdefault("media", {})
        return found

    def _quirk(self, name: str, default: float) -> float:
        return float(self.emulator.quirks.get(name, default) or 0)

    # ---------------------------------------------------------------- the attachment

    def entity(self, item: dict[str, Any]) -> dict[str, Any]:
        """REST::MediaAttachmentSerializer: `url` is null until the file is processed."""
        done = self._processed(item)
        file_url = f"{self.emulator.server.public_base}/_sandbox/media/mastodon/{item['file']}"
        meta: dict[str, Any] = {}
        if done and item.get("width"):
            size = {"width": item["width"], "height": item["height"]}
            size |= {"size": f"{item['width']}x{item['height']}", "aspect": item["width"] / item["height"]}
            meta = {"original": size, "small": size}
        if item.get("focus"):
            meta["focus"] = item["focus"]
        return {
            "id": item["id"],
            "type": item["type"],
            "url": file_url if done else None,
            "preview_url": file_url,
            "remote_url": None,
            "preview_remote_url": None,
            "text_url": None,
            "meta": meta,
            "description": item.get("description"),
            "blurhash": None,
        }

    def _processed(self, item: dict[str, Any]) -> bool:
        return bool(item.get("polls_left", 0) <= 0 or self.emulator.server.now() >= item.get("ready_at", 0))

    def of_status(self, status: dict[str, Any]) -> list[dict[str, Any]]:
        return [self.entity(self.media[i]) for i in status.get("media_ids", []) if i in self.media]

    # ---------------------------------------------------------------- routes

    def expire(self) -> None:
        """MediaCleanupScheduler: unattached media older than the retention are destroyed."""
        now, keep = self.emulator.server.now(), self._quirk("media_retention", RETENTION)
        for media_id, item in list(self.media.items()):
            if item.get("status_id") is None and now - item["created_epoch"] > keep:
                del self.media[media_id]
                media_files.drop(self.emulator.server.state_dir, "mastodon", item["file"])

    def upload(self, request: Request, *, v2: bool) -> Response:
        self.expire()
        now = self.emulator.server.now()
        fields = media_files.multipart(request.headers.get("content-type", ""), request.body) or {}
        part = fields.get("file")
        if part is None or not part.data:
            return _invalid("File can't be blank")
        description = fields["description"].data.decode("utf-8", "replace") if "description" in fields else None
        kind = _content_type(part.data, part.content_type)
        refused = _file_problem(kind, part.data) or _description_problem(description)
        if refused is not None:
            return refused
        item = self._store(part.data, kind, description, fields)
        delayed = v2 and (item["type"] != "image" or bool(self.emulator.quirks.get("media_always_async")))
        if delayed:
            item["polls_left"] = int(self._quirk("media_processing_polls", 1))
            item["ready_at"] = now + self._quirk("media_processing_seconds", 5)
            item["fails"] = bool(self.emulator.quirks.get("media_processing_fails"))
        return Response(202 if delayed else 200, self.entity(item))

    def _store(self, data: bytes, kind: str, description: str | None, fields: dict[str, Any]) -> dict[str, Any]:
        emulator = self.emulator
        emulator.state["seq"] += 1
        now = emulator.server.now()
        media_id = str((int(now * 1000) << 16) | (emulator.state["seq"] & 0xFFFF))
        extension = kind.rsplit("/", 1)[-1].replace("jpeg", "jpg")
        size = media_files.dimensions(data)
        item: dict[str, Any] = {
            "id": media_id,
            "account": "self",
            "status_id": None,
            "type": _type_of(kind),
            "mime": kind,
            "size": len(data),
            "width": size[0] if size else None,
            "height": size[1] if size else None,
            "description": description,
            "focus": _focus(fields["focus"].data.decode() if "focus" in fields else None),
            "file": f"{media_id}.{extension}",
            "created_epoch": now,
        }
        media_files.keep(emulator.server.state_dir, "mastodon", item["file"], data)
        self.media[media_id] = item
        return item

    def _own_unattached(self, media_id: str) -> dict[str, Any] | None:
        self.expire()
        item = self.media.get(media_id)
        return item if item is not None and item["account"] == "self" and item["status_id"] is None else None

    def _found(self, media_id: str) -> dict[str, Any] | Response:
        """set_media_attachment, then check_processing: the caller's unattached attachment, or
        the answer instead of it."""
        item = self._own_unattached(media_id)
        if item is None:
            return Response(404, {"error": "Record not found"})
        if item.get("fails") and self._processed(item):  # processing_failed?
            return Response(422, {"error": PROCESSING_FAILED})
        return item

    def show(self, media_id: str) -> Response:
        item = self._found(media_id)
        if isinstance(item, Response):
            return item
        done = self._processed(item)
        if not done:
            item["polls_left"] = item.get("polls_left", 0) - 1
        return Response(200 if done else 206, self.entity(item))

    def destroy(self, media_id: str) -> Response:
        """`DELETE /api/v1/media/:id` (Mastodon 4.4, API version 4): the caller's media that no
        status shows, deleted now ("Delete a media attachment that is not currently attached to
        a status"); any other id is not found, as for a read."""
        item = self._found(media_id)
        if isinstance(item, Response):
            return item
        del self.media[media_id]
        media_files.drop(self.emulator.server.state_dir, "mastodon", item["file"])
        return Response(200, {})

    def update(self, request: Request, media_id: str) -> Response:
        item = self._found(media_id)
        if isinstance(item, Response):
            return item
        fields = _params(request)
        description = fields.get("description", item.get("description"))
        refused = _description_problem(description)
        if refused is not None:
            return refused
        item["description"] = description
        if fields.get("focus"):
            item["focus"] = _focus(str(fields["focus"]))
        return Response(200 if self._processed(item) else 206, self.entity(item))

    # ---------------------------------------------------------------- statuses with media

    def check(self, ids: list[str], status_id: str | None) -> Response | None:
        """validate_media!: None when the ids may be attached to the status (a new one: None)."""
        if not ids:
            return None
        if len(ids) > MAX_ATTACHMENTS:
            return Response(422, {"error": TOO_MANY})
        self.expire()
        mine = {i: m for i, m in self.media.items() if m["account"] == "self" and m["status_id"] in (None, status_id)}
        found = [mine[i] for i in ids if i in mine]
        missing = [i for i in ids if i not in {m["id"] for m in found}]
        if missing:
            return Response(422, {"error": f"Media {', '.join(missing)} not found or already attached to another post"})
        if len(found) > 1 and any(m["type"] in ("video", "audio") for m in found):
            return Response(422, {"error": IMAGES_AND_VIDEO})
        if not all(self._processed(m) for m in found):
            return Response(422, {"error": NOT_READY})
        return None

    def attach(self, ids: list[str], status: dict[str, Any], attributes: list[dict[str, Any]] | None = None) -> None:
        """The media become the status's, in the order given; `media_attributes` (an edit's) set
        the descriptions of those among them."""
        for media_id in ids:
            self.media[media_id]["status_id"] = status["id"]
        for attribute in attributes or []:
            item = self.media.get(str(attribute.get("id")))
            if item is not None and item["id"] in ids and "description" in attribute:
                item["description"] = attribute["description"]
        status["media_ids"] = list(ids)

    def descriptions_changed(self, ids: list[str], attributes: list[dict[str, Any]]) -> bool:
        """Whether an edit's `media_attributes` change the description of one of `ids`
        (MediaAttachment#significantly_changed?, which makes the edit a change)."""
        for attribute in attributes:
            item = self.media.get(str(attribute.get("id")))
            if (
                item is not None
                and item["id"] in ids
                and attribute.get("description", item.get("description")) != (item.get("description"))
            ):
                return True
        return False

    def add_foreign(self, *, attached: bool = False) -> str:
        """Someone else's upload (a test's): its id is never ours to read or attach."""
        item = self._store(media_files.PNG_1x1, "image/png", None, {})
        item["account"] = "someone-else"
        if attached:
            item["status_id"] = "1"
        return str(item["id"])


def media_ids(request: Request) -> list[str] | None:
    """A status's `media_ids` (JSON array or repeated `media_ids[]` form fields); None when the
    request does not name them at all (to Mastodon, the same as none: its controllers pass
    `status_params[:media_ids]` whether or not it was sent)."""
    if request.headers.get("content-type", "").startswith("application/json"):
        body = request.json()
        value = body.get("media_ids") if isinstance(body, dict) else None
        return [str(i) for i in value] if isinstance(value, list) else None
    pairs = parse_qsl(request.body.decode("utf-8"), keep_blank_values=True)
    named = [value for key, value in pairs if key in ("media_ids[]", "media_ids")]
    return named if named or any(key.startswith("media_ids") for key, _ in pairs) else None


def media_attributes(request: Request) -> list[dict[str, Any]]:
    """An edit's `media_attributes[][id|description|focus]` (Rails starts a new hash each time a
    key repeats), or the JSON array."""
    if request.headers.get("content-type", "").startswith("application/json"):
        body = request.json()
        value = body.get("media_attributes") if isinstance(body, dict) else None
        return [a for a in value if isinstance(a, dict)] if isinstance(value, list) else []
    found: list[dict[str, Any]] = []
    for key, value in parse_qsl(request.body.decode("utf-8"), keep_blank_values=True):
        if key.startswith("media_attributes[]["):
            name = key.removeprefix("media_attributes[][").rstrip("]")
            if not found or name in found[-1]:
                found.append({})
            found[-1][name] = value
    return found


def _params(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").startswith("application/json"):
        body = request.json()
        return dict(body) if isinstance(body, dict) else {}
    parts = media_files.multipart(request.headers.get("content-type", ""), request.body)
    if parts is not None:
        return {name: part.data.decode("utf-8", "replace") for name, part in parts.items()}
    return {k: v[0] for k, v in request.form().items()}


def _invalid(why: str) -> Response:
    return Response(422, {"error": f"Validation failed: {why}"})


def _type_of(kind: str) -> str:
    if kind == "image/gif":
        return "gifv"  # transcoded to a looping video
    return "video" if kind in VIDEO_TYPES else "audio" if kind in AUDIO_TYPES else "image"


def _content_type(data: bytes, declared: str) -> str:
    """The type Paperclip finds: by the bytes (its content type detector asks `file`); a file
    sent as PNG, JPEG, GIF or WebP whose bytes are none of them is no image it supports (a PDF or
    a text named .png). Types the sandbox cannot recognise by their bytes keep the declared one."""
    sniffed = media_files.image_type(data)
    if sniffed is not None:
        return sniffed
    recognisable = ("image/png", "image/jpeg", "image/gif", "image/webp")
    return "application/octet-stream" if declared in recognisable else declared


def _file_problem(kind: str, data: bytes) -> Response | None:
    if kind not in (*IMAGE_TYPES, *VIDEO_TYPES, *AUDIO_TYPES):
        return _invalid("File is invalid, File content type is invalid")
    if _type_of(kind) == "image" and len(data) >= IMAGE_LIMIT:
        return _invalid("File must be less than 16 MB, File file size must be less than 16 MB")
    size = media_files.dimensions(data)
    if size is not None and size[0] * size[1] > MAX_MATRIX_LIMIT:
        return Response(422, {"error": f"{size[0]}x{size[1]} images are not supported"})
    return None


def _description_problem(description: Any) -> Response | None:
    if description is not None and len(str(description)) > MAX_DESCRIPTION_LENGTH:
        return _invalid(f"Description is too long (maximum is {MAX_DESCRIPTION_LENGTH} characters)")
    return None


def _focus(value: str | None) -> dict[str, float] | None:
    """MediaAttachment#focus=: "x,y", each from -1.0 to 1.0."""
    if not value:
        return None
    try:
        x, y = (float(p) for p in value.split(",")[:2])
    except ValueError:
        return None
    return {"x": x, "y": y}
