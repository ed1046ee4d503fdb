"""`wait_until_live`: before a post's first announcement, poll its canonical URL until it answers
200, so link cards are not built from a 404 while GitHub Pages (or a CDN) is still publishing.

Bounded: a post not live within the timeout is not announced in this run; its pairs stay pending
and are reported, so the run exits non-zero and the next one tries again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs_syndicate.timeutil import Clock

if TYPE_CHECKING:
    import httpx

DEFAULT_TIMEOUT = 600.0
DEFAULT_INTERVAL = 10.0

Sleep = Callable[[str, float, str], Awaitable[None]]  # (url, seconds, reason)


async def wait_until_live(
    urls: list[str],
    *,
    timeout: float,
    interval: float,
    clock: Clock,
    sleep: Sleep,
    transport: httpx.AsyncBaseTransport | None = None,
) -> dict[str, str | None]:
    """For each URL: None once it answered 200, else why it is not live after `timeout` seconds."""
    import asyncio

    import httpx

    headers = {"User-Agent": "mkdocs-syndicate (waiting for the page to go live)"}
    async with httpx.AsyncClient(
        transport=transport, follow_redirects=True, max_redirects=5, headers=headers
    ) as client:
        results = await asyncio.gather(*(_poll(client, url, timeout, interval, clock, sleep) for url in urls))
    return dict(zip(urls, results, strict=True))


async def _poll(
    client: httpx.AsyncClient, url: str, timeout: float, interval: float, clock: Clock, sleep: Sleep
) -> str | None:
    import httpx

    from mkdocs_syndicate.net.bounded import bounded_request

    deadline = clock.time() + timeout
    last = "no answer"
    per_poll = min(30.0, interval * 3)  # in total: a page that trickles in is not live
    while True:
        # The setting is the deadline: no poll runs past it by more than a second (a 5 s wait
        # once took 31 s); the last poll still gets that second, or it could never succeed.
        this_poll = max(1.0, min(per_poll, deadline - clock.time()))
        try:
            response = await bounded_request(client, "GET", url, total=this_poll, timeout=this_poll)
            if response.status_code == 200:
                return None
            last = f"answered {response.status_code}"
        except httpx.HTTPError as exc:
            last = f"no answer ({type(exc).__name__})"
        left = deadline - clock.time()
        if left <= 0:
            return f"not live after {timeout:.0f} s: {url} {last}; stays pending for the next run"
        await sleep(url, min(interval, left), f"waiting for {url} to go live ({last})")


def in_built_site(urls: list[str], site_url: str, site_dir: str) -> dict[str, str | None]:
    """The sandbox's `wait_until_live`: a page is "live" when the build wrote it (`<key>index.html`
    under site_dir); nothing is fetched. Without a site_dir (a feed-driven run) every page is."""
    from mkdocs_syndicate.content.identity import post_key_of

    verdicts: dict[str, str | None] = {}
    for url in urls:
        key = post_key_of(url, site_url)
        if not site_dir or key is None:
            verdicts[url] = None
            continue
        page = _built_file(site_dir, key)
        verdicts[url] = (
            None
            if page is not None and page.is_file()
            else (
                f"not in the built site ({page or key}): the sandbox's wait_until_live checks site_dir; stays pending"
            )
        )
    return verdicts


def _built_file(site_dir: str, key: str) -> Path | None:
    """The file MkDocs wrote for a post key, or None when the key leads outside site_dir. The key
    is percent-encoded like page.url (`posts/caf%C3%A9/`); the file on disk is named as the source
    (`posts/café/index.html`)."""
    from urllib.parse import unquote

    name = unquote(key)
    root = Path(site_dir).resolve()
    page = (root / name / "index.html") if name.endswith("/") or not name else root / name
    return page if page.resolve().is_relative_to(root) else None
