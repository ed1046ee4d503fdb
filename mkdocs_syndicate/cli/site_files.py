"""`mkdocs-syndicate site-files`: what the site serves for syndication, written into a built site
the plugin did not build (Zensical, a feed)."""

from __future__ import annotations

from pathlib import Path

import click

from mkdocs_syndicate.cli.context import Invocation, config_file_option, guard, pass_invocation
from mkdocs_syndicate.config.run import Options
from mkdocs_syndicate.config.site import LoadedSite
from mkdocs_syndicate.safety import printable


@click.command("site-files")
@config_file_option
@click.option(
    "--site-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The built site (default: the config's site_dir).",
)
@pass_invocation
def site_files(given: Invocation, site_dir: Path | None) -> None:
    """Write what the site serves for syndication into the built site: the channels' files
    (IndexNow's key file), and for each post's links and replies `syndication.json` with the
    comments script (`links: false` leaves those out). The plugin does it during `mkdocs build`;
    a site built without it (Zensical, a feed) runs this between the build and the deploy.
    In a rehearsal too, the key file is the configured key's: this site is deployed for real."""
    from mkdocs_syndicate.sandbox.site import sandbox_site_files
    from mkdocs_syndicate.sandbox.site import site_files as channels_site_files
    from mkdocs_syndicate.sources.standard_site import well_known_file

    site = given.site
    options = given.options(sending=False)
    target = site_dir or Path(options.site.site_dir)
    if not target.is_dir():
        raise click.ClickException(f"site dir {target}: no such folder (build the site first, or give --site-dir)")
    # The sandbox's key file is left out: a run to the sandbox writes it into site_dir itself.
    channel_files = guard(lambda: channels_site_files(options))
    channel_files += guard(
        lambda: well_known_file(options.ledger_path, site.settings.channels, options.site.url, sandbox=options.sandbox)
    )
    files = channel_files + _link_files(site, options)
    for name, content in files:
        path = target / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        except OSError as exc:
            raise click.ClickException(f"{path}: could not write ({exc.strerror or exc})") from None
        click.echo(f"wrote {path}", err=True)
    for name, _ in guard(lambda: sandbox_site_files(options)):
        click.echo(f"left out {name} (the sandbox's: a run to the sandbox writes it into site_dir)", err=True)
    problem = _nothing_to_write(site) if not channel_files else None
    # A deploy without the key file would fail every IndexNow ping: say why, even when the
    # links' files were written. With no such channel at all, the links' files are enough.
    if problem is not None and not files:
        raise click.ClickException(problem)
    if problem is not None and not problem.startswith(_NO_CHANNEL_FILE):
        said = problem.replace("nothing written:", "no channel's file written:", 1)
        if not options.sandbox:
            raise click.ClickException(said)
        # A rehearsal's pings go to the sandbox, which a run gives its own key file (as the plugin's build).
        click.echo(f"warning: {said.rstrip('.')}; a rehearsal does without it, a real ping will not", err=True)


def _link_files(site: LoadedSite, options: Options) -> list[tuple[str, str]]:
    """`syndication.json` and the comments script that shows it on a post's page, unless `links`
    is off."""
    from mkdocs_syndicate.content.crosslinks import SCRIPT_PATH, comments_script
    from mkdocs_syndicate.sources.syndication_file import FILE_NAME, syndication_json

    settings = site.settings
    if settings.links is False or settings.links == "off":
        return []
    listing = guard(
        lambda: syndication_json(
            options.ledger_path,
            settings.channels,
            options.site.url,
            sandbox=options.sandbox,
            comments=settings.comments,
            lead=settings.links_lead,
            warn=lambda text: click.echo(f"warning: {printable(text)}", err=True),
        )
    )
    return [(FILE_NAME, listing), (SCRIPT_PATH, comments_script())]


def _nothing_to_write(site: LoadedSite) -> str:
    """What is missing when no channel has a file for the site: a setting, or such a channel."""
    from mkdocs_syndicate.channels.base import Channel
    from mkdocs_syndicate.config.completeness import missing_settings
    from mkdocs_syndicate.registry import clients

    raw = site.settings.channels
    with_files = {  # the channels whose type adds files to the site
        key: values
        for key, values in raw.items()
        if isinstance(values, dict) and values.get("type") in clients()
        if clients()[values["type"]].site_files is not Channel.site_files
    }
    missing = missing_settings(with_files, clients())
    if missing:
        said = "; ".join(f"{m.setting}: {m.problem}" for m in missing)
        return f"nothing written: {said}"
    return f"{_NO_CHANNEL_FILE} (IndexNow adds its key file)"


_NO_CHANNEL_FILE = "nothing written: no enabled channel adds a file to the site"
