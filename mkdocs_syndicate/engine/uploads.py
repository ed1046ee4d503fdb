"""A post's image uploaded before the status that shows it: two-phase, and never twice (issue 35).

On a channel that `uploads` (Mastodon, Bluesky, Matrix), a send whose message carries the post's
image (`Prepared.image`) goes, after the pair's `in_flight` record is durable and before the
status request (engine/runner.py's `_send`):

1. The record's `media` holds an upload of this image (the same file's SHA-256): it is read by
   its own id first (`Channel.read_media`), because services remove media no status uses
   (Mastodon's media vacuum, a day after the upload; a PDS's unreferenced blobs). There: reused,
   once the service has finished processing it, and its alt text set again where the service
   keeps it on the media (Mastodon's `PUT /api/v1/media/:id`: the author may have changed
   `image_alt` since the upload). Proved gone: uploaded again. The read proved
   nothing: reused, never uploaded twice without proof (the status request says if it is not).
   The service's answer that it could not process it (Mastodon's 422 "Error processing
   thumbnail"): uploaded again, as a status naming it would show a broken attachment.
2. Otherwise it is uploaded (checkpoints `before_upload`, `after_upload`), and what the upload
   made is written into the `in_flight` record (`before_media_write`, `after_media_write`)
   before the status goes: a run killed after that write reuses it.

The `in_flight` record written before the upload is the intent: a rerun that finds an earlier
attempt's record without a media id of this image knows an upload may have been made and not
recorded (a kill between the upload's answer and the write), and says so. That upload cannot be
looked for: Mastodon has no list of an account's unattached media and takes no client key on an
upload (Api::V2::MediaController#create), so an id never written is known to nobody; nothing
shows it, and the service's media vacuum deletes it a day after the upload. An orphan whose id
*is* recorded (an upload of the image the author replaced before the status went) is deleted
before the new upload (`Channel.remove_media`).

An edit (engine/updates.py) goes the same way, after its `in_flight` `op: update` record: the
upload the done copy shows is named again without a read (it is attached: Mastodon's read of
attached media answers 404, which would prove nothing but cost an upload), and an image the copy
does not show yet is uploaded and recorded before the edit.

An upload that fails leaves the status unsent: its outcome is the send's, as a status that was
never requested (a refused upload is a definite no; an unanswered one made no status either).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import httpx

from mkdocs_syndicate import checkpoints
from mkdocs_syndicate.channels.base import Channel, Kind, MediaState, Outcome, Prepared
from mkdocs_syndicate.content.images import PostImage
from mkdocs_syndicate.ledger.schema import Media, Record, State

if TYPE_CHECKING:
    from mkdocs_syndicate.engine.pacing import PacedHttp
    from mkdocs_syndicate.engine.plan import PendingPair
    from mkdocs_syndicate.engine.twophase import UpdateHost

PROCESSING_WAITS = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)  # seconds between reads of an image being processed


def orphan_note(pair: PendingPair, how: str) -> str:
    return (
        f"{pair.post.source or pair.post.key}: {pair.channel.id}: {how}, and its id was not recorded: "
        "that upload, if made, is an orphan, unused and harmless (the service removes unused media); "
        "the image is uploaded again"
    )


async def with_media(
    host: UpdateHost, http: PacedHttp, pair: PendingPair, prepared: Prepared, previous: Record | None, notes: list[str]
) -> tuple[Prepared, Outcome | None]:
    """`prepared` with the image's `media` for the status, or the outcome that ends the send
    without a status (the upload failed). `previous`: the pair's record before this attempt's
    in_flight write; `notes`: where an orphan upload is reported."""
    image, channel = prepared.image, pair.channel
    if image is None or not channel.uploads:
        return prepared, None
    current = host.record_of(pair)
    assert current is not None and current.state == State.IN_FLIGHT
    stored = next((media for media in current.media if media.sha256 == image.sha256), None)
    if stored is not None and previous is not None and previous.state == State.DONE and stored in previous.media:
        return replace(prepared, media=(stored,)), None  # an edit's: the copy shows it (no read: attached)
    if stored is not None:
        state = await _read(channel, http, stored)
        if state is MediaState.PROCESSING:
            state = await _processed(channel, http, stored)
            if state is MediaState.PROCESSING:
                return prepared, _still_processing()
        if state not in _UPLOAD_AGAIN:  # the alt text may have changed since the upload
            state = await _describe(channel, http, stored, image, notes, pair)
        if state not in _UPLOAD_AGAIN:
            return replace(prepared, media=(stored,)), None
    elif previous is not None and previous.state == State.IN_FLIGHT:
        # The attempt before wrote its intent and no media id: it may have uploaded, and been stopped.
        notes.append(orphan_note(pair, "an earlier attempt was stopped after it may have uploaded the image"))
    await _remove_unshown(channel, http, pair, current, image, notes)
    checkpoints.hit("before_upload")
    try:
        outcome = await channel.upload(http, pair.post, image)
    except httpx.TransportError as exc:  # a channel that let one through: nothing is proved
        outcome = Outcome(Kind.AMBIGUOUS, error=f"no answer ({type(exc).__name__})")
    checkpoints.hit("after_upload")
    if outcome.kind not in (Kind.DONE, Kind.ACCEPTED) or outcome.media is None:
        if outcome.kind is Kind.AMBIGUOUS:
            notes.append(orphan_note(pair, "the upload got no usable answer"))
        return prepared, _status_not_sent(outcome)
    media = outcome.media  # an earlier image's upload is dropped: the record names what the status shows
    checkpoints.hit("before_media_write")
    await host.write_records([(pair, replace(current, media=(media,)))])
    checkpoints.hit("after_media_write")
    processed = await _processed(channel, http, media) if outcome.kind is Kind.ACCEPTED else MediaState.READY
    if processed is MediaState.PROCESSING:
        return prepared, _still_processing()
    if processed is MediaState.FAILED:
        return prepared, _processing_failed()
    return replace(prepared, media=(media,)), None


_UPLOAD_AGAIN = (MediaState.GONE, MediaState.FAILED)  # a stored upload no status may name


def _unshown(pair: PendingPair, current: Record) -> bool:
    """Whether the record's uploads are shown by no status: a first send whose status was never
    made (a made one would have been found by the read before this send)."""
    return pair.op is None and not current.remote_id and not current.parts


async def _remove_unshown(
    channel: Channel, http: PacedHttp, pair: PendingPair, current: Record, image: PostImage, notes: list[str]
) -> None:
    """An earlier attempt's upload of another image (the author changed it before the status
    went): no status will show it, and its id is known, so it is deleted before the new upload
    (Mastodon 4.4's `DELETE /api/v1/media/:id`), not left for the service's vacuum. The record
    keeps naming it until the new upload's id replaces it, so a run stopped here deletes it again."""
    if not _unshown(pair, current):
        return
    for media in (media for media in current.media if media.sha256 != image.sha256):
        try:
            state = await channel.remove_media(http, media)
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError):
            state = MediaState.UNKNOWN
        if state is not MediaState.GONE:
            where = f"{pair.post.source or pair.post.key}: {channel.id}"
            notes.append(f"{where}: the upload of the image used before ({media.id}) could not be deleted; unused")


async def _read(channel: Channel, http: PacedHttp, media: Media) -> MediaState:
    try:
        return await channel.read_media(http, media)
    except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError):
        return MediaState.UNKNOWN  # nothing proved: the stored id is used


async def _describe(
    channel: Channel, http: PacedHttp, media: Media, image: PostImage, notes: list[str], pair: PendingPair
) -> MediaState:
    try:
        state = await channel.describe_media(http, media, image)
    except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError):
        state = MediaState.UNKNOWN
    if state is MediaState.UNKNOWN:
        where = f"{pair.post.source or pair.post.key}: {channel.id}"
        notes.append(
            f"{where}: the reused upload's alt text could not be set; it may show the one it was uploaded with"
        )
    return state


async def _processed(channel: Channel, http: PacedHttp, media: Media) -> MediaState:
    """Read the image again after growing waits until the service has processed it (Mastodon
    answers 206 until then, and refuses a status naming it). PROCESSING when it never finished."""
    state = MediaState.PROCESSING
    for seconds in PROCESSING_WAITS:
        await http.backoff(seconds, "the image is being processed by the service")
        state = await _read(channel, http, media)
        if state is not MediaState.PROCESSING:
            return state
    return state


def _still_processing() -> Outcome:
    return Outcome(
        Kind.NOT_SENT,
        error="the image is still being processed by the service; nothing was posted (the next run reuses the upload)",
    )


def _processing_failed() -> Outcome:
    """The service's definite answer that the new upload cannot be shown: no status is sent."""
    return Outcome(
        Kind.REFUSED,
        error="the service could not process the image (422 Error processing thumbnail for uploaded media); "
        "the status was not sent (convert the image to PNG or JPEG; the next run uploads it again)",
    )


def _status_not_sent(upload: Outcome) -> Outcome:
    """The send's outcome when the image was not uploaded: no status was requested."""
    why = f"the image upload: {upload.error or upload.kind.value}; the status was not sent"
    if upload.kind in (Kind.REFUSED, Kind.AUTH, Kind.RATE_LIMITED):
        return replace(upload, error=why, media=None)
    return Outcome(Kind.NOT_SENT, error=why)


async def record_new_upload(host: UpdateHost, pair: PendingPair, outcome: Outcome) -> None:
    """A send that had to upload the image again (Bluesky: putRecord proved the stored blob gone)
    says what it made: the record names it from now on, not the upload that is gone."""
    current = host.record_of(pair)
    if outcome.media is None or current is None or current.media == (outcome.media,):
        return
    await host.write_records([(pair, replace(current, media=(outcome.media,)))])
