"""What the emulators keep of uploaded images: the bytes on disk beside state.json (not in it: the
state is rewritten after every request), their type and pixel size read from the bytes as the
services read them, and a multipart/form-data body taken apart (Mastodon's uploads).

Files are served back at `/_sandbox/media/<channel>/<name>` (sandbox/server.py): where the
emulators' image URLs (Mastodon's `url`, the AppView's `fullsize`, Matrix's mxc) point, and
where the dashboard shows them from."""

from __future__ import annotations

import re
import struct
import zlib
from email.message import Message
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path
from typing import NamedTuple

from mkdocs_syndicate.emulator_api import Response
from mkdocs_syndicate.localdirs import private_dir

_NAME = re.compile(r"[A-Za-z0-9._-]{1,120}")


def media_dir(state_dir: Path, channel: str) -> Path:
    return state_dir / "media" / channel


def keep(state_dir: Path, channel: str, name: str, data: bytes) -> None:
    """Store an upload's bytes under a name the emulator chose (never the client's file name)."""
    if not _NAME.fullmatch(name) or not _NAME.fullmatch(channel):
        raise ValueError(f"not a media file name: {name!r}")
    folder = media_dir(state_dir, channel)
    private_dir(folder)
    (folder / name).write_bytes(data)


def drop(state_dir: Path, channel: str, name: str) -> None:
    """An upload the service deleted (unattached media, an unreferenced blob)."""
    if _NAME.fullmatch(name) and _NAME.fullmatch(channel):
        (media_dir(state_dir, channel) / name).unlink(missing_ok=True)


def load(state_dir: Path, channel: str, name: str) -> bytes | None:
    """A stored upload's bytes, or None (unknown, deleted, or a name that is not one of ours)."""
    if not _NAME.fullmatch(name) or not _NAME.fullmatch(channel):
        return None
    path = media_dir(state_dir, channel) / name
    return path.read_bytes() if path.is_file() else None


def image_type(data: bytes) -> str | None:
    """An image's type by its magic bytes (PNG, JPEG, GIF, WebP), as ImageMagick, file-type and
    libmagic each recognise them; None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(data: bytes) -> tuple[int, int] | None:
    """An image's width and height from its header (what FastImage reads), or None."""
    try:
        kind = image_type(data)
        if kind == "image/png":
            width, height = struct.unpack(">II", data[16:24])
            return int(width), int(height)
        if kind == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
            return int(width), int(height)
        if kind == "image/webp":
            return _webp_size(data)
        if kind == "image/jpeg":
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """The first start-of-frame marker's size (SOF0..SOF15 but DHT, JPG and DAC)."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(width), int(height)
        i += 2 + length
    return None


def png(width: int = 1, height: int = 1, *, padding: int = 0) -> bytes:
    """A valid grey PNG of that size (the sandbox's own placeholder; tests' images), `padding`
    bytes longer in an ancillary chunk that viewers skip."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    extra = chunk(b"zzZz", b"\x00" * max(0, padding - 12)) if padding else b""
    body = chunk(b"IHDR", header) + extra + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


PNG_1x1 = png()


class Part(NamedTuple):
    data: bytes
    filename: str | None
    content_type: str


def multipart(content_type: str, body: bytes) -> dict[str, Part] | None:
    """A multipart/form-data body's fields by name (the last of a repeated one), or None when the
    body is not one (Rails then sees no `file`)."""
    if not content_type.lower().startswith("multipart/form-data") or "boundary=" not in content_type:
        return None
    message: Message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\nMIME-Version: 1.0\r\n\r\n" + body
    )
    if not message.is_multipart():
        return None
    fields: dict[str, Part] = {}
    for part in message.get_payload():
        if not isinstance(part, Message):
            continue
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        fields[name] = Part(data, filename, part.get_content_type() if part.get("content-type") else "")
    return fields


def served(state_dir: Path, path: str) -> Response:
    """An image an emulator received (`GET /_sandbox/media/<channel>/<name>`): where its image
    URLs point, as a service's media host would serve it."""
    channel, _, name = path.partition("/")
    data = load(state_dir, channel, name)
    if data is None:
        return Response(404, {"error": "Record not found"})
    kind = image_type(data) or "application/octet-stream"
    return Response(200, data, {"Content-Type": kind, "X-Content-Type-Options": "nosniff"})
