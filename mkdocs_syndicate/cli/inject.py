"""`mkdocs-syndicate inject`: a site built by any generator gets, on each announced post's page,
what the plugin puts on an MkDocs one (sources/inject.py)."""

from __future__ import annotations

from pathlib import Path

import click

from mkdocs_syndicate.cli.context import Invocation, config_file_option, guard, pass_invocation
from mkdocs_syndicate.safety import printable


@click.command("inject")
@config_file_option
@click.argument("site_dir", required=False, type=click.Path(file_okay=False, path_type=Path))
@pass_invocation
def inject(given: Invocation, site_dir: Path | None) -> None:
    """Rewrite the built pages of SITE_DIR (default: the config's site_dir) in place: on each post
    the ledger has copies of, the "Also on" links (and with `comments: true` the replies' script),
    `fediverse:creator`, standard.site's link; and standard.site's `.well-known` file. From the
    committed ledger, no request. A second run changes nothing; other pages are not touched."""
    from mkdocs_syndicate.sources.inject import Settings
    from mkdocs_syndicate.sources.inject import inject as inject_pages

    site = given.site
    options = given.options(sending=False)
    target = site_dir or Path(options.site.site_dir)
    if not target.is_dir():
        raise click.ClickException(f"site dir {target}: no such folder (build the site first, or give SITE_DIR)")
    raw = site.settings
    links = "off" if raw.links is False else "block" if raw.links is True else str(raw.links)
    settings = Settings(
        options.ledger_path,
        raw.channels,
        options.site.url,
        target,
        sandbox=options.sandbox,
        links=links,
        lead=raw.links_lead,
        comments=raw.comments,
        fediverse_creator=raw.fediverse_creator,
        selector=raw.links_selector,
    )
    done = guard(lambda: inject_pages(settings, warn=lambda text: click.echo(f"warning: {printable(text)}", err=True)))
    for page, changes in done.changed.items():
        click.echo(f"{printable(page)}: {', '.join(changes)}", err=True)
    for name in done.files:
        click.echo(f"wrote {printable(str(target / name))}", err=True)
    for line in done.missing:
        click.echo(f"warning: {printable(line)}", err=True)
    for line in done.problems:
        click.echo(f"error: {printable(line)}", err=True)
    click.echo(f"inject: {len(done.changed)} page(s) changed, {done.unchanged} already up to date", err=True)
    if done.problems:
        raise click.ClickException(f"{len(done.problems)} page(s) could not take the links (see above)")
