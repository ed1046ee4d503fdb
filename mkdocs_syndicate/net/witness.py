"""The web's word on removed posts' pages: gone only on a 404 or 410 read twice, `recheck` seconds
apart, while the site's home page answers 2xx on the same run. One 404 is a deploy in progress, a
maintenance page or a CDN hiccup; a 404 everywhere is a site that is down. Neither deletes an
archive (docs/removals.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

GONE_STATUSES = (404, 410)
PROBE_TIMEOUT = 15.0  # seconds per page, in total
PROBES_AT_ONCE = 8  # pages asked at the same time: a site's host is not to be hammered

Sleep = Callable[[float, str], Awaitable[None]]  # (seconds, reason)


@dataclass(frozen=True)
class Word:
    """What the web said of one page: `gone` with the evidence, or not, with why."""

    gone: bool
    said: str


async def read_statuses(urls: list[str], *, transport: httpx.AsyncBaseTransport | None = None) -> dict[str, int | str]:
    """Each URL's status after redirects (a redirect to a page is a move, and ends in a 200), or
    why there was no answer."""
    import asyncio

    import httpx

    from mkdocs_syndicate.net.bounded import bounded_request

    gate = asyncio.Semaphore(PROBES_AT_ONCE)
    headers = {"User-Agent": "mkdocs-syndicate (checking that a removed post is gone)"}

    async def read(client: httpx.AsyncClient, url: str) -> int | str:
        async with gate:
            try:
                response = await bounded_request(client, "GET", url, total=PROBE_TIMEOUT, timeout=PROBE_TIMEOUT)
            except httpx.HTTPError as exc:
                return f"no answer ({type(exc).__name__})"
        return response.status_code

    async with httpx.AsyncClient(
        transport=transport, follow_redirects=True, max_redirects=5, headers=headers
    ) as client:
        answers = await asyncio.gather(*(read(client, url) for url in dict.fromkeys(urls)))
    return dict(zip(dict.fromkeys(urls), answers, strict=True))


def _answered(status: int | str) -> str:
    return f"answered {status}" if isinstance(status, int) else status


async def witness(
    urls: list[str],
    home: str,
    *,
    recheck: float,
    sleep: Sleep,
    transport: httpx.AsyncBaseTransport | None = None,
) -> dict[str, Word]:
    """The web's word on each page: a first read of all of them; for those answering 404 or 410,
    a wait of `recheck` seconds, a second read and a read of the home page."""
    first = await read_statuses(urls, transport=transport)
    words = {url: Word(False, f"{url} {_answered(first[url])}") for url in urls}
    again = [url for url in urls if first[url] in GONE_STATUSES]
    if not again:
        return words
    await sleep(recheck, f"reading {len(again)} removed page(s) again before their copies are deleted")
    second = await read_statuses([*again, home], transport=transport)
    home_status = second[home]
    up = isinstance(home_status, int) and 200 <= home_status < 300
    for url in again:
        then = _answered(second[url]).removeprefix("answered ")
        said = f"{url} answered {first[url]}, then {then} {recheck:g} s later"
        if second[url] not in GONE_STATUSES:
            words[url] = Word(False, f"{said}: a passing 404 proves nothing")
        elif not up:
            words[url] = Word(
                False, f"{said}, but the site's home page {home} {_answered(second[home])}: the site may be down"
            )
        else:
            words[url] = Word(True, f"{said}; the home page {home} answered {second[home]}")
    return words
