"""The HTTP client of a run: no redirects followed, our User-Agent, transports made on first use.

Made on first use because loading the CA bundle costs more CPU than a whole paced run against
loopback emulators, and plain http (loopback only) never needs it."""

from __future__ import annotations

import httpx


class LazyTransport(httpx.AsyncBaseTransport):
    def __init__(self, verify: bool) -> None:
        self.verify = verify
        self._inner: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._inner is None:
            self._inner = httpx.AsyncHTTPTransport(verify=self.verify)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()


def run_client(transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """A client over `transport` (a test's), else plain http unverified and https verified."""
    mounts = None if transport else {"https://": LazyTransport(verify=True)}
    return httpx.AsyncClient(
        transport=transport or LazyTransport(verify=False),
        mounts=mounts,
        follow_redirects=False,
        headers={"User-Agent": "mkdocs-syndicate"},
    )
