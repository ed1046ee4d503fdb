"""Matrix's image message (`embed: image`): the post's image in the content repository, and the
message as one `m.image` event whose caption is the message.

From the Client-Server API (spec.matrix.org, v1.11):
- `POST /_matrix/media/v3/upload?filename=…` with the bytes and their Content-Type answers
  `{"content_uri": "mxc://<server>/<media id>"}`; `GET /_matrix/client/v1/media/config` says the
  largest upload (`m.upload.size`, optional);
- `GET /_matrix/client/v1/media/download/{serverName}/{mediaId}` (authenticated media, v1.11)
  answers the bytes, or 404 `M_NOT_FOUND` for media the server does not hold (removed by its
  retention rules: proof it is gone);
- `m.image` (v1.10, "Media captions"): `url`, `info` {mimetype, size, w, h}, `filename`, and
  `body`, which is a caption when it differs from `filename`. One event, not text then an image:
  one transaction id, one event to read back, edit (an `m.replace` keeps the image) and redact,
  as a text message has. Matrix's `m.image` has no alt-text field: clients give the caption to
  screen readers, so the alt text goes after the message in the caption.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Http,
    Kind,
    Media,
    MediaState,
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
    import httpx

NO_LIMIT = 50_000_000  # Synapse's default max_upload_size: used when the server does not say


def caption(text: str, image: PostImage) -> str:
    """An m.image's body: the message, and the alt text after it (Matrix has no alt-text field)."""
    return f"{text}\n\n{image.alt}" if image.alt else text


def shows(content: Mapping[str, Any], text: str, image: PostImage | None, media: tuple[Media, ...]) -> bool:
    """Whether an event's content says the message: an m.image (with `image`, where the record
    names its upload in `media`) of its caption and that upload (an edit that swaps the picture
    under the same caption is made only when the event names the new one; the picture is not
    fitted to the upload's size: the event's `url` is the proof), else an m.text of it."""
    if image is None or not media:
        return (content.get("msgtype"), content.get("body")) == ("m.text", text)
    return (content.get("msgtype"), content.get("body"), content.get("url")) == (
        "m.image",
        caption(text, image),
        media[0].id,
    )


def image_content(text: str, image: PostImage, media: Media, marker: tuple[str, str]) -> dict[str, Any]:
    """The m.image event's content: the message as its caption (and the alt text after it)."""
    fitted = fit(image, media.size or NO_LIMIT)  # the sizes of the bytes uploaded
    info = {"mimetype": media.mime, "size": media.size, "w": fitted.width, "h": fitted.height}
    return {
        "msgtype": "m.image",
        "body": caption(text, image),
        "filename": image.filename,
        "url": media.id,
        "info": info,
        marker[0]: marker[1],
    }


async def upload(http: Http, homeserver: str, auth: dict[str, str], image: PostImage, where: str) -> Outcome:
    import httpx

    try:
        limit = await _upload_limit(http, homeserver, auth)
        fitted = fit(image, limit)
    except TooLarge as exc:
        return Outcome(Kind.REFUSED, error=f"{where}: " + exc.against("the homeserver's m.upload.size"))
    url = f"{homeserver}/_matrix/media/v3/upload?filename={quote(image.filename, safe='')}"
    try:
        answer = await http.request("POST", url, content=fitted.data, headers={**auth, "Content-Type": fitted.mime})
    except httpx.TransportError as exc:
        return transport_outcome(exc)
    if answer.status_code != 200:
        return status_outcome(answer, http.now())
    try:
        uri = optional_text(json_object(answer).get("content_uri"), "content_uri")
    except BadAnswer as exc:
        return Outcome(Kind.AMBIGUOUS, error=f"the upload's answer is unreadable ({exc})")
    if uri is None or not uri.startswith("mxc://"):
        return Outcome(Kind.AMBIGUOUS, error="the upload answered without an mxc:// content_uri")
    return Outcome(Kind.DONE, remote_id=uri, media=Media(uri, image.sha256, fitted.mime, len(fitted.data)))


async def _upload_limit(http: Http, homeserver: str, auth: dict[str, str]) -> int:
    import httpx

    try:
        answer = await http.request("GET", f"{homeserver}/_matrix/client/v1/media/config", headers=auth)
        size = json_object(answer).get("m.upload.size") if answer.status_code == 200 else None
    except (httpx.HTTPError, BadAnswer):
        return NO_LIMIT
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else NO_LIMIT


async def read(http: Http, homeserver: str, auth: dict[str, str], media: Media) -> MediaState:
    server_and_id = media.id.removeprefix("mxc://")
    answer = await http.request("GET", f"{homeserver}/_matrix/client/v1/media/download/{server_and_id}", headers=auth)
    if answer.status_code == 200:
        return MediaState.READY
    if answer.status_code == 404 and _errcode(answer) == "M_NOT_FOUND":
        return MediaState.GONE
    return MediaState.UNKNOWN


def _errcode(answer: httpx.Response) -> str | None:
    try:
        code = json_object(answer).get("errcode")
    except BadAnswer:
        return None
    return code if isinstance(code, str) else None
