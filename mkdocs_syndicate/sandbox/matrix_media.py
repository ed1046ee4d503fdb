"""The media repository of the sandbox's homeserver (sandbox/matrix.py), from the Client-Server
API (https://spec.matrix.org/latest/client-server-api/#content-repository) and Synapse's source
(https://github.com/element-hq/synapse; paths below are in it):

- `POST /_matrix/media/v3/upload` (also r0 and v1: synapse/rest/media/upload_resource.py
  `UploadServlet`): a body larger than `max_upload_size` (synapse/config/repository.py: "50M",
  52,428,800 bytes; quirk `max_upload_size`) is 413 M_TOO_LARGE "Upload request body is too
  large", judged by the Content-Length; the type is the Content-Type sent
  (application/octet-stream without one), the name the `filename` query parameter; the answer is
  `{"content_uri": "mxc://<server>/<media id>"}`.
- `GET /_matrix/client/v1/media/config` (synapse/rest/client/media.py `MediaConfigResource`,
  and the legacy `/_matrix/media/v3/config`): `{"m.upload.size": max_upload_size}`.
- `GET /_matrix/client/v1/media/download/{serverName}/{mediaId}[/{fileName}]`: the bytes, with a
  token (authenticated media, spec v1.11; Synapse's default `enable_authenticated_media`); an
  unknown id is 404 M_NOT_FOUND.
- Events: synapse/events/validator.py `validate_builder` checks of an `m.room.message` only
  that `body` and `msgtype` are strings (400 "'body' not in content", "'msgtype' not a string
  type"). It does not look at an `m.image`'s `url` or `info`: an `m.image` whose `url` is not an
  mxc URI is stored as sent, so the emulator takes it too (clients then fail to show it).
"""

from __future__ import annotations

import secrets
import string
from typing import Any

from mkdocs_syndicate.emulator_api import Emulator, Request, Response
from mkdocs_syndicate.sandbox import media_files

MAX_UPLOAD_SIZE = 50 * 1024 * 1024
UPLOAD_PATHS = ("/_matrix/media/v3/upload", "/_matrix/media/r0/upload", "/_matrix/media/v1/upload")
CONFIG_PATHS = ("/_matrix/client/v1/media/config", "/_matrix/media/v3/config", "/_matrix/media/r0/config")
DOWNLOAD = "/_matrix/client/v1/media/download/"


def handles(path: str) -> bool:
    return path.startswith("/_matrix/media/") or path.startswith("/_matrix/client/v1/media/")


def handle(emulator: Emulator, request: Request, server_name: str) -> Response:
    """A media request with a valid token."""
    limit = int(emulator.quirks.get("max_upload_size", MAX_UPLOAD_SIZE))
    if request.path in UPLOAD_PATHS and request.method == "POST":
        return _upload(emulator, request, server_name, limit)
    if request.path in CONFIG_PATHS and request.method == "GET":
        return Response(200, {"m.upload.size": limit})
    if request.path.startswith(DOWNLOAD) and request.method == "GET":
        server, _, rest = request.path.removeprefix(DOWNLOAD).partition("/")
        media_id = rest.split("/", 1)[0]
        stored = emulator.state.get("media", {}).get(media_id)
        data = media_files.load(emulator.server.state_dir, "matrix", media_id) if stored else None
        if server != server_name or stored is None or data is None:
            return _error(404, "M_NOT_FOUND", "Not found")
        return Response(200, data, {"Content-Type": stored["content_type"]})
    return _error(404, "M_UNRECOGNIZED", "Unrecognized request")


def _upload(emulator: Emulator, request: Request, server_name: str, limit: int) -> Response:
    length = request.headers.get("content-length")
    if length is None:
        return _error(400, "M_UNKNOWN", "Request must specify a Content-Length")
    if not length.isdigit():
        return _error(400, "M_UNKNOWN", "Content-Length value is invalid")
    if int(length) > limit:
        return _error(413, "M_TOO_LARGE", "Upload request body is too large")
    media_id = "".join(secrets.choice(string.ascii_letters) for _ in range(24))  # Synapse's random_string(24)
    emulator.state.setdefault("media", {})[media_id] = {
        "content_type": request.headers.get("content-type") or "application/octet-stream",
        "filename": request.arg("filename"),
        "size": len(request.body),
        "at": emulator.server.now(),
    }
    media_files.keep(emulator.server.state_dir, "matrix", media_id, request.body)
    return Response(200, {"content_uri": f"mxc://{server_name}/{media_id}"}, {"Access-Control-Allow-Origin": "*"})


def message_problem(event_type: str, content: dict[str, Any]) -> Response | None:
    """EventValidator.validate_builder for an m.room.message: `body` and `msgtype` strings."""
    if event_type != "m.room.message":
        return None
    for key in ("body", "msgtype"):
        if key not in content:
            return _error(400, "M_UNKNOWN", f"'{key}' not in content")
        if not isinstance(content[key], str):
            return _error(400, "M_UNKNOWN", f"'{key}' not a string type")
    return None


def parent_of(content: dict[str, Any]) -> str | None:
    """The event a message answers: its thread's root (`rel_type: m.thread`) or the one it replies to."""
    relates = content.get("m.relates_to")
    if not isinstance(relates, dict):
        return None
    if relates.get("rel_type") == "m.thread":
        return str(relates.get("event_id") or "") or None
    reply = relates.get("m.in_reply_to")
    return str(reply.get("event_id") or "") or None if isinstance(reply, dict) else None


def image_of(content: dict[str, Any], server_name: str, public_base: str) -> dict[str, Any] | None:
    """An m.image as the dashboard shows it: its file (when the mxc URI is this server's) and its
    `body`, which Element reads out as the image's description."""
    if content.get("msgtype") != "m.image":
        return None
    url = str(content.get("url") or "")
    prefix = f"mxc://{server_name}/"
    src = f"{public_base}/_sandbox/media/matrix/{url.removeprefix(prefix)}" if url.startswith(prefix) else ""
    return {"src": src, "alt": content.get("body")}


def _error(status: int, errcode: str, message: str) -> Response:
    return Response(status, {"errcode": errcode, "error": message})
