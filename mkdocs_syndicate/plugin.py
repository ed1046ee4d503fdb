"""The MkDocs glue: when to run, what to hand over, how to fail the build. Nothing else lives here.

- on_startup: remember the command; hook the end of gh-deploy (on_shutdown runs *before* its push).
- on_config: reset per-build state (plugin instances are reused), validate every setting.
- on_files (late): publish the IndexNow key file into the site.
- on_post_build (late): collect posts with their final URLs.
- on_shutdown / after the gh-deploy push: send (or plan), print the summary, fail on undone work.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

import click
from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority, get_plugin_logger
from mkdocs.structure.files import File, Files
from rich.console import Console

from .channels.base import Site
from .channels.indexnow import IndexNowChannel
from .errors import SyndicateError
from .gather import gather_posts
from .modes import MODES, Decision, decide
from .posts import Post, as_datetime
from .report import PlainReporter, RichReporter, plan_lines, summary_table, undone_lines
from .runner import DEFAULT_MAX_WAIT
from .syndication import Options, make_channels, parse_options, plan, require_site_url, send

log = get_plugin_logger("syndicate")


class SyndicateConfig(base.Config):
    ledger = c.Type(str, default="ledger.yml")
    mode = c.Choice(MODES, default="auto")
    posts = c.Optional(c.ListOfItems(c.Type(str)))
    since = c.Optional(c.Type((dt.date, str)))
    max_per_run = c.Optional(c.Type(int))
    sandbox = c.Type(bool, default=False)
    channels = c.Type(dict, default={})
    max_wait = c.Type((int, float), default=DEFAULT_MAX_WAIT)


class SyndicatePlugin(BasePlugin[SyndicateConfig]):
    def __init__(self) -> None:
        self.command = "build"
        self.dirty = False
        self.serving = False
        self._reset()

    def _reset(self) -> None:
        self.decision = Decision("off", "not configured")
        self.options: Options | None = None
        self.files: Files | None = None
        self.posts: list[Post] | None = None
        self.failed = False

    # ------------------------------------------------------------------ events

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.command, self.dirty = command, dirty
        ctx = click.get_current_context(silent=True)
        # `serve --clean` reports command "build"; the click context tells the truth.
        self.serving = command == "serve" or (ctx is not None and ctx.info_name == "serve")
        if command == "gh-deploy" and ctx is not None:
            ctx.call_on_close(self._after_gh_deploy)

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self._reset()
        self.decision = decide(self.config.mode, self.command, self.serving, os.environ)
        if self.config.mode == "off":
            return config
        where = f"{config.config_file_path}: plugins.syndicate"
        try:
            site = Site(require_site_url(config.site_url), config.site_name or "", config.site_dir)
            since = self.config.since
            max_per_run = self.config.max_per_run if self.config.max_per_run is not None else 10
            if max_per_run < 1:
                raise SyndicateError("max_per_run: must be 1 or more")
            self.options = parse_options(
                self.config.channels, ledger_path=self._ledger_path(config), site=site,
                sandbox=self.config.sandbox, sending=self.decision.sends,
                since=as_datetime(since, "since") if since is not None else None,
                max_per_run=max_per_run, max_wait=float(self.config.max_wait))
        except SyndicateError as exc:
            raise PluginError(f"{where}.{exc}" if str(exc).startswith(("channels", "max_per_run"))
                              else f"{where}: {exc}") from None
        return config

    @event_priority(-100)
    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        self.files = files
        if self.options is not None:
            for channel in make_channels(self.options, sandbox_url="http://127.0.0.1:8787"):
                if isinstance(channel, IndexNowChannel) and channel.settings.options.get("key"):
                    name, content = channel.key_file()
                    if files.get_file_from_path(name) is None:
                        files.append(File.generated(config, name, content=content))
        return files

    def on_build_error(self, *, error: Exception) -> None:
        self.failed = True

    @event_priority(-100)
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if self.options is None or self.files is None:
            return
        try:
            self.posts = gather_posts(self.files, config, self.config.posts)
        except SyndicateError as exc:
            raise PluginError(f"syndicate: {exc}") from None

    def on_shutdown(self) -> None:
        if self.command == "gh-deploy":
            return  # announced after the push, from _after_gh_deploy
        if sys.exc_info()[0] is not None:
            return  # the build failed (strict, error, Ctrl-C): announce nothing
        self._announce()

    def _after_gh_deploy(self) -> None:
        if sys.exc_info()[1] is not None:
            log.warning("gh-deploy did not succeed; nothing announced")
            return
        self._announce()

    # ------------------------------------------------------------------ the run

    def _announce(self) -> None:
        if self.decision.action == "off" or self.options is None:
            return
        if self.failed or self.posts is None:
            log.warning("the build did not finish; nothing announced")
            return
        if self.dirty:
            log.warning("--dirty build: nothing announced (a partial build cannot see every post)")
            return
        try:
            if self.decision.sends:
                self._send(self.options, self.posts)
            else:
                self._plan(self.options, self.posts)
        except SyndicateError as exc:
            raise PluginError(f"syndicate: {exc}") from None

    def _send(self, options: Options, posts: list[Post]) -> None:
        console = Console(stderr=True)
        if not console.is_terminal:  # CI logs: no wrapping of keys and URLs at 80 columns
            console = Console(stderr=True, width=200)
        log.info(f"sending ({self.decision.reason}){' to the sandbox' if options.sandbox else ''}")
        if console.is_terminal:
            with RichReporter(console, log.info) as reporter:
                report = send(options, posts, reporter)
        else:
            report = send(options, posts, PlainReporter(log.info))
        if not report.results:
            log.info("nothing pending: every post is announced everywhere (0 requests)")
        else:
            console.print(summary_table(report))
        for key in report.deferred:
            log.warning(f"deferred by max_per_run, goes out next run: {key}")
        undone = undone_lines(report)
        if undone:
            raise PluginError(f"syndicate: {len(undone)} pair(s) left undone (see {options.ledger_path.name}):\n  "
                              + "\n  ".join(undone))

    def _plan(self, options: Options, posts: list[Post]) -> None:
        the_plan = plan(options, posts)
        if not the_plan.pairs and not the_plan.deferred:
            log.info(f"plan ({self.decision.reason}): nothing pending")
            return
        log.info(f"plan ({self.decision.reason}): {len(the_plan.pairs)} pair(s) would be sent; nothing sent")
        for line in plan_lines(the_plan):
            log.info(line)

    def _ledger_path(self, config: MkDocsConfig) -> Path:
        return (Path(config.config_file_path).parent / self.config.ledger).resolve()
