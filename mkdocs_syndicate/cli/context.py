"""What every command shares: the context object a command is handed (`Invocation`: its config
file, the command line's git settings, the site, options, ledger and posts it loads), the options
several commands take, and the one way our errors end a command (a clear line, exit 1)."""

from __future__ import annotations

import datetime as dt
import getpass
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.config.site import LoadedSite, load_site
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.errors import RunInterrupted, SyndicateError
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.redaction import shown_url
from mkdocs_syndicate.safety import printable
from mkdocs_syndicate.sources.manifest import manifest_path, read_manifest, read_site_pages
from mkdocs_syndicate.timeutil import SystemClock, to_iso, utcnow

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM

T = TypeVar("T")


def guard(action: Callable[[], T]) -> T:
    """Our errors become one clear line and exit 1, never a traceback."""
    try:
        return action()
    except RunInterrupted as exc:
        click.echo(str(exc), err=True)
        sys.exit(EXIT_TERMINATED if exc.by == "SIGTERM" else EXIT_INTERRUPTED)
    except SyndicateError as exc:
        raise click.ClickException(str(exc)) from None


class Invocation:
    """One command's context object (click's `ctx.obj`): what it was given (`-f`, the git
    options) and what it loads from that, each loaded once, each failure one clear line."""

    def __init__(self) -> None:
        self.config_file: Path | None = None
        self.git: dict[str, Any] = {}  # --git-push, --git-remote, --git-branch as given (None: not given)
        self.refused: list[str] = []  # feed entries left out: the command exits 1 once done
        self._site: LoadedSite | None = None

    @property
    def site(self) -> LoadedSite:
        """The config (mkdocs.yml, properdocs.yml or syndicate.yml), with the command line's git settings."""
        if self._site is None:
            self._site = _with_git(guard(lambda: load_site(self.config_file)), **self.git)
        return self._site

    def options(self, *, sending: bool, reading_only: bool = False) -> Options:
        """`sending`: the settings a send needs are required; `reading_only`: only those a read needs."""
        return guard(lambda: self.site.options(sending=sending, reading_only=reading_only))

    def ledger(self, options: Options) -> Ledger:
        return guard(lambda: Ledger.read(options.ledger_path))

    def posts(self, options: Options, feed: str | None = None) -> tuple[list[Post], dt.datetime]:
        """The posts of the last MkDocs build, or of the feed when one is given (read now)."""
        if feed is not None:
            from mkdocs_syndicate.sources.feed import read_feed_posts

            read = guard(lambda: read_feed_posts(feed, options.site.url))
            for message in read.refused:  # each entry left out alone, by name; the rest goes on
                click.echo(f"error: {printable(message)}", err=True)
            self.refused.extend(read.refused)
            return read.posts, now()
        found = guard(lambda: read_manifest(manifest_path(options.ledger_path), options.site.url))
        options.pages = read_site_pages(manifest_path(options.ledger_path))  # what a removal is judged by
        return found

    def posts_if_any(self, options: Options, feed: str | None = None) -> list[Post] | None:
        """The last build's posts (the feed's, when given: then it must be readable), or None when
        there is no usable saved build (it is optional here)."""
        if feed is not None:
            return self.posts(options, feed)[0]
        try:
            return read_manifest(manifest_path(options.ledger_path), options.site.url)[0]
        except SyndicateError:
            return None


pass_invocation = click.make_pass_decorator(Invocation, ensure=True)


def _keep_config_file(ctx: click.Context, _: click.Parameter, value: Path | None) -> None:
    if value is not None:  # a subcommand's -f not given leaves its group's (`sandbox -f x reply …`)
        ctx.ensure_object(Invocation).config_file = value


def _keep_git(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    """A git option's value kept on the Invocation, for its `site`: not handed to the command."""

    def keep(ctx: click.Context, _: click.Parameter, value: Any) -> None:
        ctx.ensure_object(Invocation).git[name] = value

    return keep


config_file_option = click.option(
    "-f",
    "--config-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    expose_value=False,
    callback=_keep_config_file,
    help="Provide a specific MkDocs config, or a syndicate.yml (default: ./mkdocs.yml, else "
    "./properdocs.yml, else ./syndicate.yml).",
)
feed_option = click.option(
    "--feed",
    "feed",
    default=None,
    metavar="PATH_OR_URL",
    help="Take the posts from this RSS, Atom or JSON feed instead of the last MkDocs build.",
)


def git_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--git-push/--no-git-push`, `--git-remote`, `--git-branch`: the config's `git:` settings
    for this run only (the GitHub Action's inputs), so a site's config need not say them."""
    for option in reversed(
        (
            click.option(
                "--git-push/--no-git-push",
                "push",
                default=None,
                expose_value=False,
                callback=_keep_git("push"),
                help="Commit and push the ledger as the run goes (git.push: true), or neither.",
            ),
            click.option(
                "--git-remote",
                "remote",
                default=None,
                metavar="NAME",
                expose_value=False,
                callback=_keep_git("remote"),
                help="git.remote for this run.",
            ),
            click.option(
                "--git-branch",
                "branch",
                default=None,
                metavar="NAME",
                expose_value=False,
                callback=_keep_git("branch"),
                help="git.branch for this run.",
            ),
        )
    ):
        command = option(command)
    return command


def _with_git(
    site: LoadedSite, push: bool | None = None, remote: str | None = None, branch: str | None = None
) -> LoadedSite:
    """The site with its `git:` settings changed as the command line says."""
    from mkdocs_syndicate.ledger.gitsettings import git_name_problem

    for flag, name in (("--git-remote", remote), ("--git-branch", branch)):
        problem = None if name is None else git_name_problem(name)
        if problem is not None:
            raise click.BadParameter(problem, param_hint=f"'{flag}'")
    git = site.settings.git
    if push is not None:
        git["push"] = git["commit"] = push
    if remote is not None:
        git["remote"] = remote
    if branch is not None:
        git["branch"] = branch
    return site


def source(feed: str | None, built_at: dt.datetime) -> str:
    """Where the posts came from, for messages: the last build, or the feed as read now."""
    return f"the feed {shown_url(feed)} (read {to_iso(built_at)})" if feed else f"the build of {to_iso(built_at)}"


def now() -> dt.datetime:
    return utcnow(SystemClock())


def out() -> Console:
    console = Console()
    if console.is_terminal:
        return console
    # Piped or in CI: no wrapping of keys and URLs, unless the caller says how wide (COLUMNS).
    return Console(width=int(os.environ.get("COLUMNS") or 200))


def who() -> str:
    for name in ("GIT_AUTHOR_NAME", "GITHUB_ACTOR", "USER"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "someone"


def channel_ids(options: Options) -> list[str]:
    return [c.id for c in options.channels if c.enabled]


def log(text: str) -> None:
    click.echo(printable(text), err=True)


def warn_of_a_placeholder(options: Options) -> None:
    from mkdocs_syndicate.output.siteurl import placeholder

    found = placeholder(options)
    if found is not None:
        log(("warning: " if found[0] else "note: ") + found[1])
