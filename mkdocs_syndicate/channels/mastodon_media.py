"""Mastodon media: the post's image uploaded with its alt text, read back before a reuse.

From Mastodon's API documentation (docs.joinmastodon.org/methods/media) and its source
(app/controllers/api/v2/media_controller.rb, api/v1/media_controller.rb):
- `POST /api/v2/media`, multipart, `file` and `description` (the alt text, which screen readers
  read): 200 with the MediaAttachment when it was processed at once, 202 with `url: null` while it
  is processed; 422 for a file the instance does not take (type, size).
- `DELETE /api/v1/media/:id` (4.4, API version 4): the account's unattached media deleted now.
- `GET /api/v1/media/:id`: 200 once processed, 206 while processing; 404 for an id that is not
  the account's unattached media (never made, removed by the media vacuum a day after an upload
  no status used, or attached to a status already: `where(status_id: nil)`).
- A status names its media with `media_ids[]`; one naming media still processing is refused (422).
- The limits: `/api/v2/instance` `configuration.media_attachments.image_size_limit` (bytes) and
  `image_matrix_limit` (width × height); until read, those of Mastodon before 4.x (10 MB, 16
  megapixels), which every later instance allows too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mkdocs_syndicate.channel_api import (
    BadAnswer,
    Copy,
    Http,
    Kind,
    Media,
    MediaState,
    Outcome,
    Post,
    PostImage,
    Record,
    TooLarge,
    fit,
    identifier,
    json_object,
    status_outcome,
    transport_outcome,
)
from mkdocs_syndicate.content.images import image_removed

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

DEFAULT_SIZE_LIMIT = 10_485_760
DEFAULT_MATRIX_LIMIT = 16_777_216
MAX_DESCRIPTION = 1500  # Mastodon's MediaAttachment::MAX_DESCRIPTION_LENGTH


class MastodonMedia:
    """Uploads and reads for one channel: its instance, its token, the instance's limits."""

    def __init__(self, base: str, auth: Callable[[], dict[str, str]]) -> None:
        self.base, self.auth = base, auth
        self.size_limit, self.matrix_limit = DEFAULT_SIZE_LIMIT, DEFAULT_MATRIX_LIMIT
        self._limits_read = False

    def learn(self, configuration: dict[str, Any] | None) -> None:
        """The instance's stated limits, from /api/v2/instance's `configuration`."""
        self._limits_read = True  # read once a run, whatever it said
        media = configuration.get("media_attachments") if isinstance(configuration, dict) else None
        if not isinstance(media, dict):
            return
        size, matrix = media.get("image_size_limit"), media.get("image_matrix_limit")
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            self.size_limit = size
        if isinstance(matrix, int) and not isinstance(matrix, bool) and matrix > 0:
            self.matrix_limit = matrix

    @property
    def limits_read(self) -> bool:
        return self._limits_read

    async def upload(self, http: Http, image: PostImage, where: str) -> Outcome:
        import httpx

        try:
            fitted = fit(image, self.size_limit, self.matrix_limit)
        except TooLarge as exc:
            return Outcome(Kind.REFUSED, error=f"{where}: " + exc.against("the instance's limits"))
        form = {"description": image.alt[:MAX_DESCRIPTION]} if image.alt else {}
        files = {"file": (image.filename, fitted.data, fitted.mime)}
        try:
            response = await http.request(
                "POST", f"{self.base}/api/v2/media", data=form, files=files, headers=self.auth()
            )
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if response.status_code not in (200, 202):
            return status_outcome(response, http.now())
        try:
            media_id = identifier(json_object(response).get("id"))
        except BadAnswer as exc:
            return Outcome(Kind.AMBIGUOUS, error=f"{response.status_code} with an unreadable answer ({exc})")
        media = Media(media_id, image.sha256, fitted.mime, len(fitted.data))
        return Outcome(Kind.DONE if response.status_code == 200 else Kind.ACCEPTED, remote_id=media_id, media=media)

    async def read(self, http: Http, media: Media) -> MediaState:
        response = await http.request("GET", f"{self.base}/api/v1/media/{media.id}", headers=self.auth())
        return _state(response)

    async def remove(self, http: Http, media: Media) -> MediaState:
        """`DELETE /api/v1/media/:id` (Mastodon 4.4+): an upload no status shows, deleted now
        rather than by the media vacuum a day later. 200, or the API's 404 (removed already, or
        an instance before 4.4, whose vacuum removes it): GONE; anything else proves nothing."""
        response = await http.request("DELETE", f"{self.base}/api/v1/media/{media.id}", headers=self.auth())
        if response.status_code == 200 or _state(response) is MediaState.GONE:
            return MediaState.GONE
        return MediaState.UNKNOWN

    async def describe(self, http: Http, media: Media, image: PostImage) -> MediaState:
        """`PUT /api/v1/media/:id` with `description`, the alt text as the author has it now, on a
        stored upload a send reuses (Api::V1::MediaController#update: the account's unattached
        media only, 404 for any other; 206 while processing, as a read)."""
        form = {"description": image.alt[:MAX_DESCRIPTION]}
        response = await http.request("PUT", f"{self.base}/api/v1/media/{media.id}", data=form, headers=self.auth())
        return _state(response)


def _state(response: httpx.Response) -> MediaState:
    if response.status_code == 200:
        return MediaState.READY
    if response.status_code == 206:
        return MediaState.PROCESSING
    if response.status_code == 404 and _record_not_found(response):
        return MediaState.GONE  # the API's own answer, not a proxy's page
    if response.status_code == 422 and _error_is(response, PROCESSING_FAILED):
        return MediaState.FAILED  # check_processing: a status would show a broken attachment
    return MediaState.UNKNOWN


# Api::V1::MediaController#processing_error, for a media whose processing failed (GET and PUT).
PROCESSING_FAILED = "Error processing thumbnail for uploaded media"


def _record_not_found(response: httpx.Response) -> bool:
    return _error_is(response, "Record not found")


def _error_is(response: httpx.Response, error: str) -> bool:
    try:
        return json_object(response).get("error") == error
    except BadAnswer:
        return False


def alt_attributes(media: tuple[Media, ...], image: PostImage | None) -> dict[str, str]:
    """An edit's `media_attributes[][id]` and `[][description]` (Mastodon 4.1+, mastodon#20878:
    UpdateStatusService sets them on the media the edit names; `PUT /api/v1/media/:id` answers
    404 for media already attached): the alt text of the post's image as the author has it now,
    for the upload made from that image. One upload at most, so the id and its description stay
    in one of Rails' hashes (a repeated key starts the next). Before 4.1 the field is ignored."""
    shown = next((item for item in media if image is not None and item.sha256 == image.sha256), None)
    if shown is None or image is None:
        return {}
    return {"media_attributes[][id]": shown.id, "media_attributes[][description]": image.alt[:MAX_DESCRIPTION]}


def edit_request(
    text: str, language: str | None, post: Post, record: Record, image: PostImage | None
) -> dict[str, Any]:
    """The body of an edit (PUT /api/v1/statuses/:id), as `data` or `json`: the text, and the
    status's media. The record's uploads are named again (3.5's UpdateStatusService detached
    media an edit did not name) with the alt text as the author has it now; when the author
    removed the image, `media_ids` is an empty JSON array (UpdateStatusService#validate_media!
    finds no media, and the status shows none): a form cannot say it, its `media_ids[]=` is
    Rails' `[""]`, refused as media "0" not found."""
    form: dict[str, Any] = {"status": text, **({"language": language} if language else {})}
    if image_removed(post, record):
        return {"json": {**form, "media_ids": []}}
    if record.media:
        form["media_ids[]"] = [media.id for media in record.media]
        form.update(alt_attributes(record.media, image))
    return {"data": form}


async def read_removal(http: Http, status_url: str, auth: dict[str, str], post: Post, record: Record) -> Copy:
    """The read that settles an edit whose text the status already says: MATCHES, unless the
    edit removed the image, which leaves the text as it was; then the status's own
    `media_attachments` (GET /api/v1/statuses/:id) say whether it was made."""
    if not image_removed(post, record):
        return Copy.MATCHES
    response = await http.request("GET", status_url, headers=auth)
    attachments = json_object(response).get("media_attachments") if response.status_code == 200 else None
    if not isinstance(attachments, list):
        return Copy.UNKNOWN
    return Copy.DIFFERS if attachments else Copy.MATCHES
