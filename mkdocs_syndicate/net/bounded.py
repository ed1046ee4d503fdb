"""Requests bounded in total time and in response size, whatever the server does.

httpx's timeout applies to each read, so a server that trickles one byte a second never times
out; and it decompresses whatever arrives, so a small gzip bomb becomes gigabytes. Here the whole
exchange (connect, send, headers, body) has one deadline, and the body is decompressed by us in
bounded steps and refused past `max_bytes`. Both failures are transport errors, so a channel reads
them as "no answer after sending": ambiguous for a write, unknown for a read.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

import httpx

MAX_BODY = 8_000_000  # bytes after decompression; a listing page of 100 Forem articles fits


class ResponseTooLarge(httpx.ReadError):
    """The answer was bigger than any answer this client needs."""


class UnreadableEncoding(httpx.DecodingError):
    """Content-Encoding we do not decode (we only ask for gzip and deflate)."""


async def bounded_request(
    client: httpx.AsyncClient, method: str, url: str, *, total: float, max_bytes: int = MAX_BODY, **kwargs: Any
) -> httpx.Response:
    headers = {"Accept-Encoding": "gzip, deflate", **(kwargs.pop("headers", None) or {})}
    request = client.build_request(method, url, headers=headers, **kwargs)
    try:
        async with asyncio.timeout(total):
            response = await client.send(request, stream=True)
            try:
                body = await _read_body(response, max_bytes)
            finally:
                await response.aclose()
    except TimeoutError:
        raise httpx.ReadTimeout(f"no complete answer within {total:g} s", request=request) from None
    kept = [
        (name, value)
        for name, value in response.headers.raw  # bytes: any odd header survives
        if name.lower() not in (b"content-encoding", b"content-length", b"transfer-encoding")
    ]
    return httpx.Response(
        response.status_code, headers=kept, content=body, request=request, extensions=response.extensions
    )


def _check_size(size: int, max_bytes: int, response: httpx.Response) -> None:
    if size > max_bytes:
        raise ResponseTooLarge(f"answer larger than {max_bytes} bytes", request=response.request)


async def _read_body(response: httpx.Response, max_bytes: int) -> bytes:
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    decoder = _decoder(encoding, response.request)
    parts: list[bytes] = []
    size = 0
    async for raw in response.aiter_raw():
        pending = raw
        while pending:
            if decoder is None:
                chunk, pending = pending, b""
            else:
                try:
                    chunk = decoder.decompress(pending, max_bytes - size + 1)
                except zlib.error as exc:
                    raise httpx.DecodingError(f"bad {encoding} data: {exc}", request=response.request) from None
                pending = decoder.unconsumed_tail
            size += len(chunk)
            _check_size(size, max_bytes, response)
            parts.append(chunk)
            if decoder is not None and not chunk and pending:
                break  # cannot make progress (should not happen with zlib); avoid spinning
    if decoder is not None:
        tail = decoder.flush()
        _check_size(size + len(tail), max_bytes, response)
        parts.append(tail)
    return b"".join(parts)


def _decoder(encoding: str, request: httpx.Request) -> Any:
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise UnreadableEncoding(f"Content-Encoding {encoding!r} is not one we asked for", request=request)
