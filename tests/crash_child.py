"""A syndication run in its own process, for the crash tests: `python crash_child.py spec.json`.

Same code path as the plugin (`syndication.send`), without MkDocs' start-up cost, so hundreds of
kills fit in CI. Exit 0 when every pair is done, 1 when work is left, 2 on a refusal such as
a locked ledger, -9 when killed.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
from pathlib import Path

from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import SyndicateError
from mkdocs_syndicate.ledger.gitsettings import GitSettings
from mkdocs_syndicate.output.reporters import PlainReporter
from mkdocs_syndicate.timeutil import SystemClock


class OffsetClock(SystemClock):
    """The harness moves time forward (past the settle time) instead of sleeping through it."""

    def __init__(self, offset: float) -> None:
        self.offset = offset

    def time(self) -> float:
        return time.time() + self.offset


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    site = Site(spec["site_url"], "Crash Site", spec.get("site_dir", ""))
    options = parse_options(
        spec["channels"],
        ledger_path=Path(spec["ledger"]),
        site=site,
        sandbox=False,
        # max_wait 0: a pair that must wait out its settle time is left for
        # the next run (the harness moves the clocks) instead of sleeping
        sending=True,
        max_per_run=100,
        max_wait=0,
        removal_recheck=0,  # a removed page is read twice, without the wait between (not under test here)
        lock_timeout=float(os.environ.get("CRASH_LOCK_TIMEOUT", "10")),
        git=GitSettings(**spec.get("git", {})),
    )
    posts = [
        Post(
            key=p["key"],
            url=p["url"],
            title=p["title"],
            date=dt.datetime.fromisoformat(p["date"]),
            source=p["key"],
            description=p.get("description", ""),
            image=p.get("image"),
            image_alt=p.get("image_alt"),
            body_html=p.get("body_html", ""),
        )
        for p in spec["posts"]
    ]
    try:
        report = send(
            options, posts, PlainReporter(print), clock=OffsetClock(float(os.environ.get("CRASH_CLOCK_OFFSET", "0")))
        )
    except SyndicateError as exc:  # what the plugin turns into a build error
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for warning in report.warnings:  # as the plugin's log says them (an orphan upload, ...)
        print(f"warning: {warning}")
    return 1 if report.undone else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
