"""`sandbox reply` and `sandbox react`: what readers do with a post's sandbox copy (replies,
nested, with content warnings or labels; likes and reposts), for `comments: true` to show. They
go to the running `mkdocs-syndicate sandbox`, else change its state folder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from mkdocs_syndicate.cli.context import Invocation, config_file_option, guard, pass_invocation
from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.sandbox.site import sandbox_state_dir, site_sandbox

_REPLY_ID = {"mastodon": "id", "bluesky": "uri", "forem": "id_code"}


def _sandbox_copy(given: Invocation, post: str, channel: str) -> tuple[Options, str, str]:
    """(options, emulator, remote id) of `post`'s copy on `channel`, made by a sandbox run."""
    options = given.options(sending=False)
    configured = {c.id: c.type for c in options.channels}
    if channel not in configured:
        raise click.ClickException(f"no channel {channel!r} in the site's settings (known: {', '.join(configured)})")
    if configured[channel] not in _REPLY_ID:
        raise click.ClickException(f"{channel} ({configured[channel]}) has no public replies to show")
    book = given.ledger(options)
    key = post if post in book.posts else post.rstrip("/") + "/"
    record = book.record(key, channel)
    if record is None or record.state != State.DONE or not record.remote_id:
        made = sorted(k for k in book.posts if (r := book.record(k, channel)) is not None and r.state == State.DONE)
        raise click.ClickException(
            f"{post!r} has no copy on {channel} in {options.ledger_path} (posts with one: {', '.join(made) or 'none'})"
        )
    if not record.sandbox:
        raise click.ClickException(f"{key} on {channel} is a real copy, not the sandbox's: nothing was changed")
    return options, configured[channel], record.remote_id


def _to_sandbox(options: Options, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """`body` to the sandbox's control API: the running `mkdocs-syndicate sandbox`'s, else the
    state folder's, changed in place (the next sandbox serves it)."""
    import httpx

    from mkdocs_syndicate.sandbox.discovery import running_sandbox

    running = running_sandbox(sandbox_state_dir(options))
    if running is None:
        server = site_sandbox(options)
        return _said_plainly(lambda: server.control_call(path, body))
    try:
        answer = httpx.post(f"{running}/_sandbox/{path}", json=body, timeout=10)
    except httpx.HTTPError as exc:
        raise click.ClickException(f"the sandbox at {running} did not answer: {exc}") from None
    if answer.status_code != 200:
        raise click.ClickException(str(answer.json().get("error", answer.text)))
    found: dict[str, Any] = answer.json()
    return found


def _said_plainly(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return guard(call)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


@click.command("reply")
@config_file_option
@click.argument("post")
@click.argument("channel")
@click.option("--text", required=True, help="What the reply says (Mastodon and DEV serve it as HTML: <p>…</p>).")
@click.option("--author", default="reader", show_default=True, help="Who replies (a user name).")
@click.option("--to", "to", metavar="REPLY", help="Answer an earlier reply (the id this command printed).")
@click.option("--warning", default="", help="A content warning (Mastodon's spoiler_text).")
@click.option("--label", "labels", multiple=True, help="A moderation label on it (Bluesky), e.g. !hide, porn.")
@click.option("--hidden", is_flag=True, help="The post's author hid it (Bluesky's threadgate, DEV).")
@click.option("--at", default=None, help="Its time as its app wrote it, e.g. 2026-12-01T09:00:00+09:00.")
@pass_invocation
def reply(
    given: Invocation,
    post: str,
    channel: str,
    text: str,
    author: str,
    to: str | None,
    warning: str,
    labels: tuple[str, ...],
    hidden: bool,
    at: str | None,
) -> None:
    """A reader's public reply to POST's copy on CHANNEL in the sandbox, e.g.

    mkdocs-syndicate sandbox reply blog/2026/12/01/hello/ mastodon --author ana --text "<p>Nice!</p>"

    POST is the post's key in the ledger. The reply's id is printed: `--to` it to answer it."""
    options, emulator, remote_id = _sandbox_copy(given, post, channel)
    details: dict[str, Any] = {"warning": warning, "labels": list(labels), "hidden": hidden, "at": at}
    body = {"channel": emulator, "parent": to or remote_id, "author": author, "text": text}
    made = _to_sandbox(options, "replies", body | {k: v for k, v in details.items() if v})
    ident = made.get(_REPLY_ID[emulator], "")
    click.echo(f"reply {ident} added under {'reply ' + to if to else post} on {channel}; answer it with --to {ident}")


@click.command("react")
@config_file_option
@click.argument("post")
@click.argument("channel")
@click.option("--likes", default=0, type=click.IntRange(0), help="Favourites (Mastodon), likes (Bluesky).")
@click.option("--reposts", default=0, type=click.IntRange(0), help="Boosts (Mastodon), reposts (Bluesky).")
@pass_invocation
def react(given: Invocation, post: str, channel: str, likes: int, reposts: int) -> None:
    """Readers' likes and reposts of POST's copy on CHANNEL in the sandbox (the counts beside its link)."""
    options, emulator, remote_id = _sandbox_copy(given, post, channel)
    _to_sandbox(options, "reactions", {"channel": emulator, "post": remote_id, "likes": likes, "reposts": reposts})
    click.echo(f"{post} on {channel}: {likes} likes, {reposts} reposts")
