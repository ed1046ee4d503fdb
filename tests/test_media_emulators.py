"""The emulators take images as the services do (issue 35), over real HTTP against the sandbox
server; each rule's source is in the emulator module's docstring and in docs/sandbox.md:

- Mastodon (sandbox/mastodon_media.py): v2 uploads, 206 while processing, the 422s of
  MediaAttachment and validate_media!, statuses and edits with media, unattached media cleaned up.
- Bluesky (sandbox/atproto_blobs.py): uploadBlob's limit, app.bsky.embed.images as the PDS
  validates it, blobs only of this repo, untethered blobs dropped, the AppView's image view.
- Matrix (sandbox/matrix_media.py): upload, media config, 413 M_TOO_LARGE, m.image events.
- DEV: `main_image` a URL (validate_url), shown as `cover_image`.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlsplit

import httpx
import pytest
from test_thread_emulators import _bsky_session

from mkdocs_syndicate.sandbox import media_files
from mkdocs_syndicate.sandbox.atproto_account import DID
from mkdocs_syndicate.sandbox.bluesky import COLLECTION
from mkdocs_syndicate.sandbox.forem import ACCEPT as FOREM_ACCEPT
from mkdocs_syndicate.sandbox.forem import API_KEY as FOREM_KEY
from mkdocs_syndicate.sandbox.mastodon_media import IMAGE_LIMIT, NOT_READY
from mkdocs_syndicate.sandbox.mastodon_tokens import READ_ONLY_TOKEN, STATUSES_ONLY_TOKEN, TOKEN
from mkdocs_syndicate.sandbox.matrix import ROOM, SERVER_NAME
from mkdocs_syndicate.sandbox.matrix import TOKEN as MATRIX_TOKEN

pytestmark = pytest.mark.http

MASTO = {"Authorization": f"Bearer {TOKEN}"}


class Clock:
    """The server's clock, moved by the test (the emulators' times follow it, not the machine's)."""

    def __init__(self, at: float = 1_800_000_000.0) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


@pytest.fixture
def clock(sandbox) -> Clock:
    sandbox.now = clock = Clock()
    return clock


def _upload(sandbox, data: bytes, *, v: int = 2, description: str | None = None, mime: str = "image/png"):
    fields = {"description": description} if description is not None else {}
    return httpx.post(
        f"{sandbox.url}/mastodon/api/v{v}/media", headers=MASTO, files={"file": ("a.png", data, mime)}, data=fields
    )


def _status(sandbox, **fields) -> httpx.Response:
    return httpx.post(f"{sandbox.url}/mastodon/api/v1/statuses", headers=MASTO, json=fields)


# ---------------------------------------------------------------- Mastodon


def test_mastodon_an_image_is_processed_at_once_and_attached_with_its_description(sandbox):
    uploaded = _upload(sandbox, media_files.png(40, 20), description="A grey box")
    assert uploaded.status_code == 200
    media = uploaded.json()
    assert media["type"] == "image" and media["url"] and media["description"] == "A grey box"
    assert media["meta"]["original"] == {"width": 40, "height": 20, "size": "40x20", "aspect": 2.0}
    # The file is served back where the links point (the sandbox's public address, this server here).
    assert httpx.get(sandbox.url + urlsplit(media["url"]).path).content == media_files.png(40, 20)
    status = _status(sandbox, media_ids=[media["id"]])  # no text: valid with media
    assert status.status_code == 200, status.text
    attached = status.json()["media_attachments"]
    assert [(m["id"], m["description"], m["type"]) for m in attached] == [(media["id"], "A grey box", "image")]
    assert {"id", "type", "url", "preview_url", "description", "meta"} <= set(attached[0])
    # Attached, it is no longer the caller's to read, change or attach again.
    assert httpx.get(f"{sandbox.url}/mastodon/api/v1/media/{media['id']}", headers=MASTO).status_code == 404
    again = _status(sandbox, status="again", media_ids=[media["id"]])
    assert again.status_code == 422
    assert again.json() == {"error": f"Media {media['id']} not found or already attached to another post"}


def test_mastodon_a_delayed_upload_is_202_then_206_until_processed(sandbox, clock):
    sandbox.set_quirks("mastodon", media_always_async=True, media_processing_polls=2, media_processing_seconds=60)
    uploaded = _upload(sandbox, media_files.png(4, 4))
    assert uploaded.status_code == 202 and uploaded.json()["url"] is None
    media_id = uploaded.json()["id"]
    early = _status(sandbox, status="too soon", media_ids=[media_id])
    assert early.status_code == 422 and early.json() == {"error": NOT_READY}
    polls = [httpx.get(f"{sandbox.url}/mastodon/api/v1/media/{media_id}", headers=MASTO) for _ in range(3)]
    assert [p.status_code for p in polls] == [206, 206, 200]
    assert polls[-1].json()["url"]
    assert _status(sandbox, status="now", media_ids=[media_id]).status_code == 200


def test_mastodon_a_gif_is_a_video_and_delayed_a_png_is_not(sandbox, clock):
    gif = b"GIF89a" + b"\x02\x00\x02\x00" + b"\x00" * 20
    answer = _upload(sandbox, gif, mime="image/gif")
    assert answer.status_code == 202 and answer.json()["type"] == "gifv"
    clock.at += 10  # processed once its time has passed
    assert httpx.get(f"{sandbox.url}/mastodon/api/v1/media/{answer.json()['id']}", headers=MASTO).status_code == 200
    assert _upload(sandbox, media_files.png(), v=1).status_code == 200


def test_mastodon_refuses_what_media_attachment_refuses(sandbox):
    long = _upload(sandbox, media_files.png(), description="x" * 1501)
    assert long.status_code == 422
    assert long.json() == {"error": "Validation failed: Description is too long (maximum is 1500 characters)"}
    assert _upload(sandbox, media_files.png(), description="x" * 1500).status_code == 200
    big = _upload(sandbox, media_files.png(padding=IMAGE_LIMIT))
    assert big.status_code == 422 and "must be less than 16 MB" in big.json()["error"]
    svg = _upload(sandbox, b"<svg xmlns='http://www.w3.org/2000/svg'/>", mime="image/svg+xml")
    assert svg.status_code == 422 and "content type is invalid" in svg.json()["error"]
    disguised = _upload(sandbox, b"%PDF-1.7 not a picture", mime="image/png")  # the bytes decide, not the name
    assert disguised.status_code == 422 and "content type is invalid" in disguised.json()["error"]
    wide = _upload(sandbox, media_files.png(8000, 4200))
    assert wide.status_code == 422 and wide.json() == {"error": "8000x4200 images are not supported"}
    missing = httpx.post(f"{sandbox.url}/mastodon/api/v2/media", headers=MASTO, data={"description": "x"})
    assert missing.status_code == 422


def test_mastodon_instance_states_the_media_limits(sandbox):
    limits = httpx.get(f"{sandbox.url}/mastodon/api/v2/instance").json()["configuration"]
    assert limits["statuses"]["max_media_attachments"] == 4
    media = limits["media_attachments"]
    assert media["image_size_limit"] == IMAGE_LIMIT and media["image_matrix_limit"] == 33_177_600
    assert {"image/png", "image/jpeg", "image/webp", "image/gif"} <= set(media["supported_mime_types"])


def test_mastodon_media_ids_must_be_four_at_most_and_the_callers_own(sandbox):
    ids = [_upload(sandbox, media_files.png()).json()["id"] for _ in range(5)]
    five = _status(sandbox, status="five", media_ids=ids)
    assert five.status_code == 422 and five.json() == {"error": "Cannot attach more than 4 files"}
    foreign = sandbox.emulators["mastodon"].media.add_foreign()
    theirs = _status(sandbox, status="theirs", media_ids=[ids[0], foreign])
    assert theirs.json() == {"error": f"Media {foreign} not found or already attached to another post"}
    assert httpx.get(f"{sandbox.url}/mastodon/api/v1/media/{foreign}", headers=MASTO).status_code == 404
    assert httpx.get(f"{sandbox.url}/mastodon/api/v1/media/12345", headers=MASTO).status_code == 404
    assert _status(sandbox, status="four", media_ids=ids[:4]).status_code == 200
    # A form, as most clients send it: repeated media_ids[].
    form = httpx.post(
        f"{sandbox.url}/mastodon/api/v1/statuses", headers=MASTO, data={"status": "form", "media_ids[]": [ids[4]]}
    )
    assert form.status_code == 200 and [m["id"] for m in form.json()["media_attachments"]] == [ids[4]]


def test_mastodon_description_changes_before_attaching_and_in_an_edit(sandbox):
    media_id = _upload(sandbox, media_files.png(), description="first").json()["id"]
    changed = httpx.put(
        f"{sandbox.url}/mastodon/api/v1/media/{media_id}", headers=MASTO, data={"description": "second"}
    )
    assert changed.status_code == 200 and changed.json()["description"] == "second"
    status = _status(sandbox, status="with a picture", media_ids=[media_id]).json()
    other = _upload(sandbox, media_files.png(2, 2)).json()["id"]
    edited = httpx.put(
        f"{sandbox.url}/mastodon/api/v1/statuses/{status['id']}",
        headers=MASTO,
        data={
            "status": "with two pictures",
            "media_ids[]": [media_id, other],
            "media_attributes[][id]": [media_id],
            "media_attributes[][description]": ["third"],
        },
    )
    assert edited.status_code == 200, edited.text
    assert [(m["id"], m["description"]) for m in edited.json()["media_attachments"]] == [
        (media_id, "third"),
        (other, None),
    ]
    # An edit that does not name media_ids leaves none (the controller always passes the key,
    # and UpdateStatusService's validate_media! gives [] for a blank one).
    bare = httpx.put(f"{sandbox.url}/mastodon/api/v1/statuses/{status['id']}", headers=MASTO, data={"status": "text"})
    assert bare.status_code == 200 and bare.json()["media_attachments"] == []


def test_mastodon_unattached_media_are_removed_after_the_retention(sandbox, clock):
    media_id = _upload(sandbox, media_files.png()).json()["id"]
    clock.at += 23 * 3600
    assert httpx.get(f"{sandbox.url}/mastodon/api/v1/media/{media_id}", headers=MASTO).status_code == 200
    clock.at += 2 * 3600  # a day and an hour: MediaCleanupScheduler has destroyed it
    assert httpx.get(f"{sandbox.url}/mastodon/api/v1/media/{media_id}", headers=MASTO).status_code == 404
    assert _status(sandbox, status="late", media_ids=[media_id]).status_code == 422
    sandbox.set_quirks("mastodon", media_retention=60)
    short = _upload(sandbox, media_files.png()).json()["id"]
    clock.at += 61
    assert httpx.get(f"{sandbox.url}/mastodon/api/v1/media/{short}", headers=MASTO).status_code == 404


def test_mastodon_uploads_are_limited_to_30_in_30_minutes(sandbox, clock):
    assert all(_upload(sandbox, media_files.png()).status_code == 200 for _ in range(30))
    assert _upload(sandbox, media_files.png()).status_code == 429
    clock.at += 1801
    assert _upload(sandbox, media_files.png()).status_code == 200


def test_mastodon_media_need_the_write_media_scope(sandbox):
    """A token made with the statuses scopes alone posts text but may not upload an image."""
    for token in (STATUSES_ONLY_TOKEN, READ_ONLY_TOKEN):
        refused = httpx.post(
            f"{sandbox.url}/mastodon/api/v2/media",
            headers={"Authorization": f"Bearer {token}"},
            files={"file": ("a.png", media_files.png(), "image/png")},
        )
        assert refused.status_code == 403
        assert refused.json() == {"error": "This action is outside the authorized scopes"}


# ---------------------------------------------------------------- Bluesky


def _blob(sandbox, headers, data: bytes, mime: str = "image/png") -> httpx.Response:
    return httpx.post(
        f"{sandbox.url}/bluesky-pds/xrpc/com.atproto.repo.uploadBlob",
        headers={**headers, "Content-Type": mime},
        content=data,
    )


def _post(sandbox, headers, images: list[dict], text: str = "pictures") -> httpx.Response:
    record = {
        "$type": COLLECTION,
        "text": text,
        "createdAt": "2026-12-01T00:00:00.000Z",
        "embed": {"$type": "app.bsky.embed.images", "images": images},
    }
    return httpx.post(
        f"{sandbox.url}/bluesky-pds/xrpc/com.atproto.repo.createRecord",
        headers=headers,
        json={"repo": DID, "collection": COLLECTION, "record": record},
    )


def test_bluesky_an_image_post_is_stored_and_the_appview_shows_its_images(sandbox):
    headers = _bsky_session(sandbox)
    blob = _blob(sandbox, headers, media_files.png(30, 10)).json()["blob"]
    image = {"image": blob, "alt": "A grey strip", "aspectRatio": {"width": 3, "height": 1}}
    made = _post(sandbox, headers, [image, {"image": blob, "alt": ""}])
    assert made.status_code == 200, made.text
    thread = httpx.get(
        f"{sandbox.url}/bluesky-appview/xrpc/app.bsky.feed.getPostThread", params={"uri": made.json()["uri"]}
    ).json()
    embed = thread["thread"]["post"]["embed"]
    assert embed["$type"] == "app.bsky.embed.images#view"
    assert [(i["alt"], i.get("aspectRatio")) for i in embed["images"]] == [
        ("A grey strip", {"width": 3, "height": 1}),
        ("", None),
    ]
    assert httpx.get(sandbox.url + urlsplit(embed["images"][0]["fullsize"]).path).content == media_files.png(30, 10)
    posts = httpx.get(
        f"{sandbox.url}/bluesky-appview/xrpc/app.bsky.feed.getPosts", params={"uris": [made.json()["uri"]]}
    ).json()["posts"]
    assert posts[0]["embed"] == embed


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda i: [i] * 5, "array too big (maximum 4, got 5) at $.record.embed.images"),
        (lambda i: [{"image": i["image"]}], 'Missing required key "alt" at $.record.embed.images[0]'),
        (lambda i: [{**i, "alt": 5}], "Expected string value type (got 5) at $.record.embed.images[0].alt"),
        (
            lambda i: [{**i, "aspectRatio": {"width": 0, "height": 1}}],
            "integer too small (minimum 1, got 0) at $.record.embed.images[0].aspectRatio.width",
        ),
        (
            lambda i: [{**i, "aspectRatio": {"width": 3}}],
            'Missing required key "height" at $.record.embed.images[0].aspectRatio',
        ),
    ],
)
def test_bluesky_images_are_checked_as_the_lexicon_says(sandbox, change, error):
    headers = _bsky_session(sandbox)
    blob = _blob(sandbox, headers, media_files.png()).json()["blob"]
    refused = _post(sandbox, headers, change({"image": blob, "alt": "a"}))
    # Prefixed as the reference PDS prefixes a post's validation (test_realserver_bluesky's thumbs).
    message = f"Invalid app.bsky.feed.post record: {error}"
    assert refused.status_code == 400 and refused.json() == {"error": "InvalidRequest", "message": message}


def test_bluesky_an_image_over_the_lexicons_max_size_is_refused_when_referenced(sandbox):
    headers = _bsky_session(sandbox)
    big = _blob(sandbox, headers, media_files.png(padding=2_000_001 - len(media_files.png())))
    assert big.status_code == 200  # uploadBlob takes it: the rule is checked on reference
    assert big.json()["blob"]["size"] == 2_000_001
    refused = _post(sandbox, headers, [{"image": big.json()["blob"], "alt": "big"}])
    too_big = "blob too big (maximum 2000000, got 2000001) at $.record.embed.images[0].image"
    assert refused.json()["message"] == f"Invalid app.bsky.feed.post record: {too_big}"
    at_limit = _blob(sandbox, headers, media_files.png(padding=2_000_000 - len(media_files.png()))).json()["blob"]
    assert _post(sandbox, headers, [{"image": at_limit, "alt": "just"}]).status_code == 200
    sandbox.set_quirks("bluesky", image_blob_max_size=1_000_000)  # a PDS from before atproto#4823
    assert _post(sandbox, headers, [{"image": at_limit, "alt": "old"}]).status_code == 400


def test_bluesky_upload_blob_is_limited_to_the_pds_body_limit(sandbox):
    headers = _bsky_session(sandbox)
    over = _blob(sandbox, headers, media_files.png(padding=5 * 1024 * 1024 + 1))
    assert over.status_code == 413
    assert over.json() == {"error": "PayloadTooLarge", "message": "request entity too large"}


def test_bluesky_a_record_may_reference_only_blobs_this_repo_holds(sandbox):
    headers = _bsky_session(sandbox)
    blob = _blob(sandbox, headers, media_files.png()).json()["blob"]
    stranger = {**blob, "ref": {"$link": "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"}}
    missing = _post(sandbox, headers, [{"image": stranger, "alt": "x"}])
    assert missing.status_code == 400
    assert missing.json() == {
        "error": "BlobNotFound",
        "message": "Could not find blob: bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy",
    }
    wrong_size = _post(sandbox, headers, [{"image": {**blob, "size": blob["size"] + 1}, "alt": "x"}])
    assert wrong_size.json()["error"] == "InvalidSize"
    wrong_type = _post(sandbox, headers, [{"image": {**blob, "mimeType": "image/jpeg"}, "alt": "x"}])
    assert wrong_type.json()["error"] == "InvalidMimeType"


def test_bluesky_unreferenced_blobs_are_dropped_after_the_window(sandbox, clock):
    headers = _bsky_session(sandbox)
    sandbox.set_quirks("bluesky", blob_ttl=300)
    used = _blob(sandbox, headers, media_files.png(1, 2)).json()["blob"]
    assert _post(sandbox, headers, [{"image": used, "alt": "kept"}]).status_code == 200
    unused = _blob(sandbox, headers, media_files.png(2, 1)).json()["blob"]
    clock.at += 301
    late = _post(sandbox, headers, [{"image": unused, "alt": "late"}], text="late")
    assert late.json()["error"] == "BlobNotFound"
    # A referenced blob is permanent: another post may use it later.
    assert _post(sandbox, headers, [{"image": used, "alt": "again"}], text="again").status_code == 200


# ---------------------------------------------------------------- Matrix


def _matrix_upload(sandbox, data: bytes, mime: str = "image/png") -> httpx.Response:
    return httpx.post(
        f"{sandbox.url}/matrix/_matrix/media/v3/upload",
        params={"filename": "a.png"},
        headers={"Authorization": f"Bearer {MATRIX_TOKEN}", "Content-Type": mime},
        content=data,
    )


def _matrix_send(sandbox, content: dict, txn: str) -> httpx.Response:
    return httpx.put(
        f"{sandbox.url}/matrix/_matrix/client/v3/rooms/{ROOM}/send/m.room.message/{txn}",
        headers={"Authorization": f"Bearer {MATRIX_TOKEN}"},
        json=content,
    )


def test_matrix_an_image_is_uploaded_sent_as_m_image_and_read_back(sandbox):
    auth = {"Authorization": f"Bearer {MATRIX_TOKEN}"}
    config = httpx.get(f"{sandbox.url}/matrix/_matrix/client/v1/media/config", headers=auth)
    assert config.status_code == 200 and config.json() == {"m.upload.size": 50 * 1024 * 1024}
    uploaded = _matrix_upload(sandbox, media_files.png(6, 3))
    assert uploaded.status_code == 200
    uri = uploaded.json()["content_uri"]
    assert uri.startswith(f"mxc://{SERVER_NAME}/")
    content = {
        "msgtype": "m.image",
        "body": "A grey strip",
        "url": uri,
        "info": {"mimetype": "image/png", "size": len(media_files.png(6, 3)), "w": 6, "h": 3},
    }
    sent = _matrix_send(sandbox, content, "img1")
    assert sent.status_code == 200
    event = httpx.get(
        f"{sandbox.url}/matrix/_matrix/client/v3/rooms/{ROOM}/event/{sent.json()['event_id']}", headers=auth
    ).json()
    assert event["content"] == content
    media_id = uri.removeprefix(f"mxc://{SERVER_NAME}/")
    download = httpx.get(
        f"{sandbox.url}/matrix/_matrix/client/v1/media/download/{SERVER_NAME}/{media_id}", headers=auth
    )
    assert download.content == media_files.png(6, 3) and download.headers["content-type"] == "image/png"
    unknown = httpx.get(f"{sandbox.url}/matrix/_matrix/client/v1/media/download/{SERVER_NAME}/nothing", headers=auth)
    assert unknown.status_code == 404 and unknown.json()["errcode"] == "M_NOT_FOUND"
    assert httpx.post(f"{sandbox.url}/matrix/_matrix/media/v3/upload", content=b"x").status_code == 401


def test_matrix_an_upload_over_the_limit_is_413_m_too_large(sandbox):
    sandbox.set_quirks("matrix", max_upload_size=1000)
    config = httpx.get(
        f"{sandbox.url}/matrix/_matrix/client/v1/media/config", headers={"Authorization": f"Bearer {MATRIX_TOKEN}"}
    )
    assert config.json() == {"m.upload.size": 1000}
    over = _matrix_upload(sandbox, media_files.png(padding=1001 - len(media_files.png())))
    assert over.status_code == 413
    assert over.json() == {"errcode": "M_TOO_LARGE", "error": "Upload request body is too large"}
    assert _matrix_upload(sandbox, media_files.png(padding=1000 - len(media_files.png()))).status_code == 200


def test_matrix_checks_body_and_msgtype_and_not_an_images_url(sandbox):
    """As Synapse's EventValidator: `body` and `msgtype` must be strings; an m.image's `url` is not
    looked at (a non-mxc URL is stored as sent)."""
    missing = _matrix_send(sandbox, {"msgtype": "m.image", "url": "mxc://x/y"}, "t1")
    assert missing.status_code == 400 and missing.json() == {"errcode": "M_UNKNOWN", "error": "'body' not in content"}
    wrong = _matrix_send(sandbox, {"msgtype": 5, "body": "b"}, "t2")
    assert wrong.status_code == 400 and wrong.json()["error"] == "'msgtype' not a string type"
    https = _matrix_send(sandbox, {"msgtype": "m.image", "body": "alt", "url": "https://example.com/a.png"}, "t3")
    assert https.status_code == 200


# ---------------------------------------------------------------- DEV / Forem


def _article(sandbox, **fields) -> httpx.Response:
    return httpx.post(
        f"{sandbox.url}/forem/api/articles",
        headers={"api-key": FOREM_KEY, "Accept": FOREM_ACCEPT},
        json={"article": {"title": "Covered", "body_markdown": "text", "published": True, **fields}},
    )


def test_forem_main_image_must_be_an_http_url_and_is_shown_as_cover_image(sandbox):
    refused = _article(sandbox, main_image="ftp://example.com/a.png")
    assert refused.status_code == 422 and refused.json()["error"] == "Main image is not a valid URL."
    assert _article(sandbox, main_image="not a url").status_code == 422
    # Nothing fetches it while saving: a URL that answers nothing, or no image, is taken.
    made = _article(sandbox, main_image="http://127.0.0.1:9/nothing-here.txt", canonical_url="https://example.com/a")
    assert made.status_code == 201
    mine = httpx.get(
        f"{sandbox.url}/forem/api/articles/me/all", headers={"api-key": FOREM_KEY, "Accept": FOREM_ACCEPT}
    ).json()
    cover = mine[0]["cover_image"]
    assert "/dynamic/image/" in cover and cover.endswith("http%3A%2F%2F127.0.0.1%3A9%2Fnothing-here.txt")
    plain = _article(sandbox, title="Bare", canonical_url="https://example.com/b")
    assert plain.json()["cover_image"] is None


# ---------------------------------------------------------------- the dashboard

HOSTILE = '"><script>alert(1)</script><img src=x onerror=alert(2)>'


class Cards(HTMLParser):
    """The dashboard as a browser's parser builds it: each card's id, the card it is nested in,
    its images (src, alt) and its text; and every element seen (no script may come from the data)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []  # the data-id of each open article (None: another tag)
        self.cards: dict[str, dict] = {}
        self.tags: list[str] = []

    def _open(self) -> list[str]:
        return [i for i in self.stack if i is not None]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = dict(attrs)
        if tag == "article":
            card_id = str(found.get("data-id"))
            parent = self._open()[-1] if self._open() else None
            self.cards[card_id] = {"parent": parent, "images": [], "text": ""}
            self.stack.append(card_id)
        elif tag not in ("img", "meta", "br"):
            self.stack.append(None)
        if tag == "img" and self._open():
            self.cards[self._open()[-1]]["images"].append((found.get("src"), found.get("alt")))

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("img", "meta", "br") and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self._open():
            self.cards[self._open()[-1]]["text"] += data


def _dashboard_fixture(sandbox) -> dict[str, str]:
    """A thread with images on Mastodon, Bluesky and Matrix; returns the ids by name."""
    first = _upload(sandbox, media_files.png(3, 3), description=HOSTILE).json()["id"]
    second = _upload(sandbox, media_files.png(2, 2)).json()["id"]
    root = _status(sandbox, status="root post", media_ids=[first, second]).json()["id"]
    reply = _status(sandbox, status="second part", in_reply_to_id=root).json()["id"]
    headers = _bsky_session(sandbox)
    blob = _blob(sandbox, headers, media_files.png(4, 2)).json()["blob"]
    top = _post(sandbox, headers, [{"image": blob, "alt": "a bluesky image"}], text="bsky root").json()
    ref = {"uri": top["uri"], "cid": top["cid"]}
    part = {
        "$type": COLLECTION,
        "text": "bsky part two",
        "createdAt": "2026-12-01T00:00:01.000Z",
        "reply": {"root": ref, "parent": ref},
    }
    below = httpx.post(
        f"{sandbox.url}/bluesky-pds/xrpc/com.atproto.repo.createRecord",
        headers=headers,
        json={"repo": DID, "collection": COLLECTION, "record": part},
    ).json()
    uri = _matrix_upload(sandbox, media_files.png(5, 5)).json()["content_uri"]
    image = _matrix_send(sandbox, {"msgtype": "m.image", "body": "", "url": uri}, "d1").json()["event_id"]
    thread = {"msgtype": "m.text", "body": "in the thread", "m.relates_to": {"rel_type": "m.thread", "event_id": image}}
    answer = _matrix_send(sandbox, thread, "d2").json()["event_id"]
    return {
        "root": root,
        "reply": reply,
        "bsky_root": top["uri"].rsplit("/", 1)[-1],
        "bsky_part": below["uri"].rsplit("/", 1)[-1],
        "image_event": image,
        "thread_event": answer,
    }


def test_dashboard_shows_images_with_alt_text_and_threads_nested(sandbox):
    ids = _dashboard_fixture(sandbox)
    page = httpx.get(f"{sandbox.url}/")
    parsed = Cards()
    parsed.feed(page.text)
    cards = parsed.cards
    assert "script" not in parsed.tags  # the hostile alt text stayed text
    assert HOSTILE not in page.text  # only its escaped form is on the page
    # Mastodon: both images, the hostile alt as an attribute and as visible text, the other flagged.
    images = cards[ids["root"]]["images"]
    assert [alt for _, alt in images] == [HOSTILE, ""]
    assert all(src.startswith("http://") and "/_sandbox/media/mastodon/" in src for src, _ in images)
    assert HOSTILE in cards[ids["root"]]["text"] and "no alt text" in cards[ids["root"]]["text"]
    # Each thread's reply is nested in the post it answers.
    assert cards[ids["reply"]]["parent"] == ids["root"]
    assert cards[ids["bsky_part"]]["parent"] == ids["bsky_root"]
    assert cards[ids["bsky_root"]]["images"][0][1] == "a bluesky image"
    assert cards[ids["thread_event"]]["parent"] == ids["image_event"]
    assert "no alt text" in cards[ids["image_event"]]["text"]  # an m.image with an empty body
    assert cards[ids["root"]]["parent"] is None and cards[ids["image_event"]]["parent"] is None
