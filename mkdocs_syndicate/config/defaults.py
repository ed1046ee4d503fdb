"""The site-level settings' allowed values and defaults, declared once: the MkDocs plugin's config
schema and every module that acts on a setting take them from here (and nothing heavy is
imported to know them)."""

from __future__ import annotations

MODES = ("auto", "send", "plan", "off")
BACKLOGS = ("adopt", "send")  # a first run: adopt old posts (skipped) or announce them
SANDBOX_PACINGS = ("fast", "real")  # sandbox: min_interval / 100, or as configured
LINKS = ("block", "meta-only", "off")  # `links:` on post pages (`false` means off)
LINKS_REBUILD_ENV = "MKDOCS_SYNDICATE_LINKS_REBUILD"  # set for links_rebuild's build: it only plans
HASHTAG_SOURCES = ("tags", "categories")  # front-matter lists that may feed `tags`/`hashtags`

DEFAULT_LEDGER = "ledger.yml"
DEFAULT_MAX_PER_RUN = 10
# Seconds between the two reads of a removed post's page: one 404 (a deploy, a CDN hiccup) deletes nothing.
DEFAULT_REMOVAL_RECHECK = 30.0
DEFAULT_MAX_WAIT = 900.0  # longest wait (server-requested, or a settle time) sat through in one run
DEFAULT_BACKLOG = "adopt"
DEFAULT_BACKLOG_DAYS = 2
DEFAULT_STALE_AFTER_HOURS = 24
# Both, as a feed gives them (mkdocs-rss-plugin writes categories and tags as the entry's
# <category>): a blog with categories but no tags gets hashtags whichever source it uses.
DEFAULT_HASHTAGS_FROM = ("tags", "categories")


def unknown_setting(given: object, known: tuple[str, ...] | list[str]) -> tuple[str, str] | None:
    """The first key of `given` that is not a setting, and what to say about it (with the nearest
    known name): a misspelt `chanels:` must not mean "no channels, nothing to do"."""
    import difflib

    if not isinstance(given, dict):
        return None
    for key in given:
        if key not in known:
            near = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
            return str(key), "unknown setting" + (
                f"; did you mean '{near[0]}'?" if near else f" (known: {', '.join(sorted(known))})"
            )
    return None
