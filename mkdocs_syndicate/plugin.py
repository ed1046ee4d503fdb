"""The MkDocs glue: when to run, what to hand over, how to fail the build. Nothing else lives here.

- on_startup: remember the command; hook the end of gh-deploy (on_shutdown runs *before* its push).
- on_config: reset per-build state (plugin instances are reused), validate every setting (a plan
  build whose settings a previous one validated, and found nothing pending, reuses that verdict
  if the ledger and the posts are unchanged too: sources/plan_snapshot.py).
- on_files (late): publish the files channels add to the site (the IndexNow key file).
- on_page_content: on a post's page, the copies the ledger records (page.meta.syndication and,
  by default, an "Also on" block of links).
- on_post_build (late): collect posts with their final URLs; save them for `mkdocs-syndicate run`;
  in plan mode, print the plan (here, so its warnings count for --strict).
- on_shutdown / after the gh-deploy push: send, print the summary, fail on undone work.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from mkdocs.config.base import ConfigErrors, ConfigWarnings
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority, get_plugin_logger
from mkdocs.structure.files import File, Files, InclusionLevel

from mkdocs_syndicate.config import defaults as settings
from mkdocs_syndicate.config.schema import SyndicateConfig, as_errors
from mkdocs_syndicate.engine.modes import Decision, decide, pull_request_reason
from mkdocs_syndicate.errors import SyndicateError
from mkdocs_syndicate.safety import PrintableRecords

if TYPE_CHECKING:
    from mkdocs.structure.pages import Page

    from mkdocs_syndicate.config.run import Options
    from mkdocs_syndicate.content.crosslinks import RepliesOf, Vetting
    from mkdocs_syndicate.content.pagehtml import HeadTag
    from mkdocs_syndicate.content.posts import Post
    from mkdocs_syndicate.ledger.schema import Record

    Copies = tuple[dict[str, dict[str, Record]], dict[str, str], RepliesOf | None, Vetting | None]

# Importing this module (every `mkdocs` command does, `serve` too) loads only what it needs to
# know the settings: the rest is imported by the events that use it, and HTTP, the terminal UI,
# templates, the sandbox and git only by a build that sends.

log = get_plugin_logger("syndicate")
log.logger.addFilter(PrintableRecords())  # every line it logs: escape sequences shown, never acted on


class SyndicatePlugin(BasePlugin[SyndicateConfig]):  # type: ignore[no-untyped-call]
    def load_config(
        self, options: dict[str, Any], config_file_path: str | None = None
    ) -> tuple[ConfigErrors, ConfigWarnings]:
        """Stricter than MkDocs: an unknown setting is an error (config.schema.as_errors)."""
        return as_errors(options, *super().load_config(options, config_file_path))

    def __init__(self) -> None:
        self.command = "build"
        self.dirty = False
        self.serving = False
        self._reset()

    def _reset(self) -> None:
        self.decision = Decision("off", "not configured")
        self.options: Options | None = None
        self.snapshot: dict[str, Any] | None = None  # a previous plan build's "nothing pending"
        self.inputs: str | None = None  # this build's ledger and posts, digested (plan builds only)
        self.site_url: str | None = None
        self.site_files: list[tuple[str, str]] = []
        self.files: Files | None = None
        self.posts: list[Post] | None = None
        self.failed = False
        self.links = "off"
        self.mkdocs_config: MkDocsConfig | None = None
        self.post_pages: Callable[[Page], bool] | None = None  # which pages are posts, once known
        self.copies: Copies | None = None  # the ledger's posts, the channels' labels, where replies are read
        self.documents: dict[str, str] | None = None  # standard.site: post key → its document's at:// URI

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
        self.site_url = config.site_url
        self.decision = decide(self.config.mode, self.command, self.serving, os.environ)
        if os.environ.get(settings.LINKS_REBUILD_ENV) == "1":
            self.decision = Decision("plan", "the build again, for the links to the new copies (links_rebuild)")
        if self.config.mode == "off":
            return config
        self.links = self._links_setting()
        self.mkdocs_config = config
        if not self.decision.sends:
            self.snapshot = self._quiet_snapshot(config)
            if self.snapshot is not None:
                return config  # settings validated by an earlier build, unchanged since
        else:
            self._refuse_a_rebuild_it_cannot_make(config)
        self._validate(config)
        return config

    def _validate(self, config: MkDocsConfig) -> None:
        from mkdocs_syndicate.config.site import options_from

        try:
            self.options = options_from(config, self.config, sending=self.decision.sends)
        except SyndicateError as exc:
            raise PluginError(str(exc)) from None

    @event_priority(-100)
    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        self.files = files
        if self.snapshot is not None:
            self.site_files = [(name, content) for name, content in self.snapshot["site_files"]]
        elif self.options is not None:
            from mkdocs_syndicate.sandbox.site import site_files

            self.site_files = site_files(self.options)
        # The sandbox's key file only in a build that sends to it: this folder is deployed for real.
        rehearsal = self._sandbox_site_files() if self.decision.sends else []
        for name, content in self.site_files + rehearsal + self._standard_site_file(config):  # IndexNow's key file…
            if files.get_file_from_path(name) is None:  # included even under a dot folder (.well-known)
                files.append(File.generated(config, name, content=content, inclusion=InclusionLevel.INCLUDED))
        if self.config.comments and self.links == "block":
            from mkdocs_syndicate.content.crosslinks import SCRIPT_PATH, comments_script

            files.append(File.generated(config, SCRIPT_PATH, content=comments_script()))
        return files

    def on_page_content(self, html: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        if self.links == "off":
            return html
        from mkdocs_syndicate.content import crosslinks
        from mkdocs_syndicate.sources.mkdocs_build import post_key

        if self.copies is None:  # once per build
            self.copies = self._ledger_copies(config)
        posts, labels, replies_of, vetting = self.copies
        if not posts or not self._post_pages(config)(page):
            return html
        key = post_key(page)
        found = crosslinks.copies(posts.get(key), labels, replies_of, vetting, key)
        page.meta["syndication"] = [copy.as_meta() for copy in found]
        if self.links == "block" and found:
            from mkdocs.utils import get_relative_url

            script = get_relative_url(crosslinks.SCRIPT_PATH, page.url) if self.config.comments else None
            return html + "\n" + crosslinks.block_html(found, self.config.links_lead, script)
        return html

    def _sandbox_site_files(self) -> list[tuple[str, str]]:
        from mkdocs_syndicate.sandbox.site import sandbox_site_files

        return sandbox_site_files(self.options) if self.options is not None else []

    def _standard_site_file(self, config: MkDocsConfig) -> list[tuple[str, str]]:
        """standard.site's `/.well-known/site.standard.publication`, from the ledger (no request)."""
        from mkdocs_syndicate.config.site import ledger_path
        from mkdocs_syndicate.sources.standard_site import well_known_file

        try:
            path = ledger_path(config, self.config)
            return well_known_file(path, self.config.channels, config.site_url or "", sandbox=self.config.sandbox)
        except SyndicateError as exc:
            raise PluginError(f"syndicate: {exc}") from None

    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        """A post page's head: standard.site's `<link rel="site.standard.document">` (from the
        ledger) and `<meta name="fediverse:creator">` (the settings, the post's front matter)."""
        if self.config.mode == "off":
            return output
        head = self._document_tags(page, config) + self._creator_tags(page, config)
        if not head:
            return output
        from mkdocs_syndicate.content.pagehtml import Additions, added

        return added(output, Additions(tuple(head))).html

    def _document_tags(self, page: Page, config: MkDocsConfig) -> list[HeadTag]:
        if self.documents is None:  # once per build
            from mkdocs_syndicate.config.site import ledger_path
            from mkdocs_syndicate.sources.standard_site import document_uris

            try:
                path = ledger_path(config, self.config)
                self.documents = document_uris(path, self.config.channels, sandbox=self.config.sandbox)
            except SyndicateError as exc:
                raise PluginError(f"syndicate: {exc}") from None
        if not self.documents:
            return []
        from mkdocs_syndicate.sources.mkdocs_build import post_key
        from mkdocs_syndicate.sources.standard_site import document_head_tag

        uri = self.documents.get(post_key(page))
        return [document_head_tag(uri)] if uri else []

    def _creator_tags(self, page: Page, config: MkDocsConfig) -> list[HeadTag]:
        """The post's author's fediverse account: its front matter `fediverse_creator`, else the
        site's (a multi-author blog names each post's)."""
        own = (page.meta or {}).get("fediverse_creator")
        if own is None and not self.config.fediverse_creator:
            return []
        if not self._post_pages(config)(page):
            return []
        from mkdocs_syndicate.content.pagehtml import creator_head_tag, handle_problem

        if own is not None and (problem := handle_problem(own)) is not None:
            raise PluginError(f"syndicate: {page.file.src_uri}: front matter fediverse_creator: {problem}")
        return [creator_head_tag(str(own or self.config.fediverse_creator))]

    def _post_pages(self, config: MkDocsConfig) -> Callable[[Page], bool]:
        if self.post_pages is None:
            from mkdocs_syndicate.sources.mkdocs_build import post_selector

            self.post_pages = post_selector(config, self.config.posts)
        return self.post_pages

    def _links_setting(self) -> str:
        value = self.config.links
        links = "off" if value is False else "block" if value is True else value
        if links not in settings.LINKS:
            from mkdocs_syndicate.redaction import env_named  # a value read by !ENV: shown by its name

            raise PluginError(env_named(f"syndicate: links: must be block, meta-only or false, not {value!r}"))
        return str(links)

    def _ledger_copies(self, config: MkDocsConfig) -> Copies:
        """What the committed ledger says went out (no request), what each channel is called, and
        (comments: true) where a reader's browser reads each copy's replies."""
        from mkdocs_syndicate.content.crosslinks import Vetting
        from mkdocs_syndicate.sources.ledger_copies import own_urls, replies_locator

        posts, names = self._shown_copies(config)
        if not posts:
            return posts, names, None, None
        # Only a copy on its channel's own service is linked (the ledger is hand-editable).
        vetting = Vetting(own_urls(self.config.channels, config.site_url or ""), self.config.sandbox, log.warning)
        if not self.config.comments:
            return posts, names, None, vetting
        return posts, names, replies_locator(self.config.channels, sandbox=self.config.sandbox), vetting

    def _shown_copies(self, config: MkDocsConfig) -> tuple[dict[str, dict[str, Record]], dict[str, str]]:
        from mkdocs_syndicate.config.site import ledger_path
        from mkdocs_syndicate.content.crosslinks import labels
        from mkdocs_syndicate.registry import named_in
        from mkdocs_syndicate.sources.ledger_copies import done_copies

        try:
            posts = done_copies(ledger_path(config, self.config), sandbox=self.config.sandbox)
        except SyndicateError as exc:
            raise PluginError(f"syndicate: {exc}") from None
        services = {name: kind.service or name for name, kind in named_in(self.config.channels).items()}
        return posts, labels(self.config.channels, services)

    def on_build_error(self, *, error: Exception) -> None:
        self.failed = True

    @event_priority(-100)
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if (self.options is None and self.snapshot is None) or self.files is None:
            return
        from mkdocs_syndicate.sources.manifest import manifest_path, write_manifest
        from mkdocs_syndicate.sources.mkdocs_build import gather_posts

        try:
            self.posts = gather_posts(self.files, config, self.config.posts, tuple(self.config.hashtags_from))
        except SyndicateError as exc:
            raise PluginError(f"syndicate: {exc}") from None
        if self.snapshot is not None:
            if self._still_quiet(config, self.posts):
                log.info(f"plan ({self.decision.reason}): nothing pending")
                return
            self._validate(config)  # something changed: the whole work after all
        assert self.options is not None
        from mkdocs_syndicate.sources.mkdocs_build import redirect_keys, site_pages, source_folder

        self.options.redirects, self.options.docs_dir = redirect_keys(self.files, config), source_folder(config)
        pages = self.options.pages = site_pages(self.files, config, self.config.posts)  # a removal's judge
        if not self.serving and not self.dirty:
            # For `mkdocs-syndicate run/plan/adopt`, which work from the last build's posts.
            try:
                path, url = manifest_path(self.options.ledger_path), self.options.site.url
                write_manifest(path, self.posts, url, dt.datetime.now(dt.UTC), pages)
            except OSError as exc:  # only `mkdocs-syndicate run/plan/adopt` need it; the build goes on
                log.warning(f"could not save the posts for mkdocs-syndicate run: {exc}")
        if self.decision.action == "plan" and not self.dirty:
            # Here, not at shutdown: MkDocs counts this event's warnings for --strict.
            try:
                self._plan(self.options, self.posts)
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
        """Send, at the end of a build that succeeded (plan mode did its work in on_post_build)."""
        if self.decision.action == "off" or self.options is None:
            return
        if self.failed or self.posts is None:
            log.warning("the build did not finish; nothing announced")
            return
        if self.dirty:
            log.warning("--dirty build: nothing announced (a partial build cannot see every post)")
            return
        if not self.decision.sends:
            return  # plan mode: already printed in on_post_build
        try:
            self._send(self.options, self.posts)
        except SyndicateError as exc:
            if getattr(exc, "trace", ""):  # a bug: its (redacted) traceback for `mkdocs build -v`
                log.debug(exc.trace)  # type: ignore[attr-defined]
            raise PluginError(f"syndicate: {exc}") from None

    def _send(self, options: Options, posts: list[Post]) -> None:
        from mkdocs_syndicate.output.display import run_with_display, undone_message  # loads HTTP and rich
        from mkdocs_syndicate.sandbox.site import sandbox_note

        note = sandbox_note(options)
        log.info(f"sending ({self.decision.reason}){' ' + note if note else ''}")
        _warn_of_a_placeholder_site_url(options)
        report = run_with_display(options, posts, log.info, log.warning)
        self._rebuild_for_new_links()
        message = undone_message(report, options)
        if message:
            raise PluginError(f"syndicate: {message}")

    def _rebuild_for_new_links(self) -> None:
        """links_rebuild: the pages were made before this run announced; when it recorded new
        copies, build once more (planning only: nothing is announced twice) so this deploy
        carries their links."""
        config = self.mkdocs_config
        if not self.config.links_rebuild or self.links == "off" or self.command != "build" or config is None:
            return
        from mkdocs_syndicate.content import crosslinks

        shown_before = crosslinks.all_copies(*self.copies[:2]) if self.copies else set()
        if crosslinks.all_copies(*self._shown_copies(config)) == shown_before:
            return
        import subprocess

        log.info("building the pages again, with the links to the new copies (links_rebuild)")
        rebuilt = subprocess.run(
            _rebuild_command(config),
            env={**os.environ, settings.LINKS_REBUILD_ENV: "1"},
            capture_output=True,
            text=True,
            check=False,
        )
        if rebuilt.returncode != 0:
            tail = "\n".join(rebuilt.stderr.strip().splitlines()[-5:])
            raise PluginError(
                f"syndicate: the announcements went out, but building the pages again with their "
                f"links failed (links_rebuild); the next build will carry them:\n{tail}"
            )

    def _refuse_a_rebuild_it_cannot_make(self, config: MkDocsConfig) -> None:
        """links_rebuild builds again from the config file: one read from standard input is gone.
        Said before anything is sent."""
        rebuilding = self.config.links_rebuild and self.links != "off" and self.command == "build"
        if rebuilding and not config.config_file_path:
            raise PluginError(
                "syndicate: links_rebuild: the pages cannot be built again from a config read from "
                "standard input (-f -); build with -f mkdocs.yml, or set links_rebuild: false"
            )

    def _plan(self, options: Options, posts: list[Post]) -> None:
        from mkdocs_syndicate.engine.preview import plan
        from mkdocs_syndicate.output.plan import hashtag_source, log_plan, stale_pending

        the_plan = plan(options, posts)
        hashtags_from = hashtag_source(self.config.hashtags_from)
        log_plan(the_plan, self.decision.reason, log.info, hashtags_from=hashtags_from, site_url=options.site.url)
        if the_plan.pairs:
            _warn_of_a_placeholder_site_url(options)
        self._remember_if_quiet(options, posts, the_plan)
        hours = self.config.stale_after_hours
        # A pull request cannot announce anything: old pending posts are news for its author, not
        # a fault of the change, so they do not fail `mkdocs build --strict` there.
        report = log.info if pull_request_reason(os.environ) else log.warning
        for line in stale_pending(the_plan, dt.datetime.now(dt.UTC), hours, ledger_exists=options.ledger_path.exists()):
            report(line)

    # ------------------------------------------------------------------ a plan build's shortcut

    def _quiet_snapshot(self, config: MkDocsConfig) -> dict[str, Any] | None:
        """The last plan build's "nothing pending", if the settings are exactly what it validated."""
        from mkdocs_syndicate.config.site import ledger_path
        from mkdocs_syndicate.sources import plan_snapshot

        snapshot = plan_snapshot.load(plan_snapshot.snapshot_path(ledger_path(config, self.config)))
        if snapshot is None:
            return None
        settings_now = plan_snapshot.settings_fingerprint(
            dict(self.config), config.site_url, self.decision.action, snapshot["secret_names"]
        )
        return snapshot if settings_now is not None and settings_now == snapshot.get("settings") else None

    def _still_quiet(self, config: MkDocsConfig, posts: list[Post]) -> bool:
        from mkdocs_syndicate.config.site import ledger_path
        from mkdocs_syndicate.sources import plan_snapshot
        from mkdocs_syndicate.sources.manifest import manifest_path, post_to_json

        assert self.snapshot is not None
        path = ledger_path(config, self.config)
        # Kept: when something did change, the plan that follows writes nothing, and a new
        # snapshot rests on the same digest.
        self.inputs = plan_snapshot.inputs_fingerprint(path, [post_to_json(p) for p in posts])
        return plan_snapshot.still_quiet(self.snapshot, self.inputs, dt.datetime.now(dt.UTC)) and (
            self.serving or self.dirty or manifest_path(path).exists()
        )

    def _remember_if_quiet(self, options: Options, posts: list[Post], the_plan: Any) -> None:
        """After a plan that found nothing to do, nothing to adopt and nothing to warn about."""
        from mkdocs_syndicate.registry import named_in
        from mkdocs_syndicate.sources import plan_snapshot
        from mkdocs_syndicate.sources.manifest import post_to_json

        path = plan_snapshot.snapshot_path(options.ledger_path)
        quiet = not the_plan.pairs and not the_plan.deferred and the_plan.adoption is None
        if not quiet or self.dirty:
            plan_snapshot.forget(path)
            return
        secret_names = {
            name: [key for key, option in kind.client_class().options.items() if option.kind == "secret"]
            for name, kind in named_in(self.config.channels).items()
        }
        settings_now = plan_snapshot.settings_fingerprint(
            dict(self.config), self.site_url, self.decision.action, secret_names
        )
        if settings_now is None:
            return
        with contextlib.suppress(OSError):  # only a shortcut for the next build
            plan_snapshot.save(
                path,
                settings=settings_now,
                inputs=self.inputs
                or plan_snapshot.inputs_fingerprint(options.ledger_path, [post_to_json(p) for p in posts]),
                secret_names=secret_names,
                site_files=self.site_files,
                due=plan_snapshot.next_due([p.date for p in posts], dt.datetime.now(dt.UTC)),
            )


def _warn_of_a_placeholder_site_url(options: Options) -> None:
    from mkdocs_syndicate.output.siteurl import placeholder

    found = placeholder(options)
    if found is not None:
        warning, text = found
        (log.warning if warning else log.info)(text)


def _rebuild_command(config: MkDocsConfig) -> list[str]:
    """This `mkdocs build` again (links_rebuild): the same program (MkDocs or ProperDocs), config
    file and command-line settings. MkDocs lays the command line over the file (`load_config(**options)`
    in mkdocs/__main__.py), so each setting it can change is passed: its effective value where it
    round-trips (site_dir, strict, use_directory_urls), the option as given where it does not
    (`-t` replaces the whole theme). `-P`: nothing is imported from the working folder, which
    `python -m` would put first on sys.path (a stray mkdocs.py there)."""
    context = click.get_current_context(silent=True)
    given = context.params if context is not None and context.command.name == "build" else {}
    return [
        sys.executable,
        "-P",
        "-m",
        type(config).__module__.split(".")[0],  # the program whose config this is: mkdocs, properdocs
        "build",
        "-f",
        config.config_file_path,
        "-d",
        config.site_dir,
        "--strict" if config.strict else "--no-strict",
        "--use-directory-urls" if config.use_directory_urls else "--no-directory-urls",
        *(["-t", str(given["theme"])] if given.get("theme") else []),
    ]
