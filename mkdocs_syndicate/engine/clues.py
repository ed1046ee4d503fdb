"""The two clues to a post's identity that are not written in it or in its entry: its source
file's git history (the most trusted of all) and its content fingerprint (the least). Each names
an entry of the ledger no post of this build has (an orphan), or doubts between some: a post in
doubt is held for a person, never announced again (docs/moves.md).

History: git saw the entry's file renamed, through any number of steps, to the post's file. A
rename with edits (git's similarity under 100) is trusted when the entry's date is the post's
(an old entry with no fingerprint: git alone), else doubted: deleting one release's notes and
writing the next one's in one commit looks like a rename to git.

Content: the post's fingerprint (content/fingerprint.py) against each orphan's. One orphan of the
same date and nearly the same text is the post; two are a tie; a likeness short of that, or the
same text under another date, is a doubt.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from mkdocs_syndicate.content.fingerprint import PERHAPS, SAME, Fingerprint, fingerprint_of
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.history import History, Trail
from mkdocs_syndicate.ledger.schema import Posts

Match = tuple[str, str]  # (the entry's key, why it is the post)


@dataclass(frozen=True)
class Doubt:
    """A post that may be an old one: which, and why no clue was sure."""

    post_key: str
    olds: tuple[str, ...]
    why: str

    def line(self) -> str:
        olds = " or ".join(self.olds)
        pin = f"`syndicate_id: {self.olds[0]}`" if len(self.olds) == 1 else "`syndicate_id:` and the old key"
        return (
            f"needs review: {self.post_key} may be the same post as {olds} ({self.why}); it is not announced "
            f"until you decide. The same post: give its front matter {pin}. A new post: "
            f"`mkdocs-syndicate resolve {self.post_key} CHANNEL --retry` on any one channel (the post is then "
            "known, and announced on every channel)"
        )


class Clues:
    """History and fingerprints of the orphans of one build. `claimed`: the entries taken so far
    (shared with engine/moves.py, which adds each match)."""

    def __init__(self, posts: Posts, claimed: set[str], srcs_now: set[str], history: History | None) -> None:
        self.posts, self.claimed, self.srcs_now, self.history = posts, claimed, srcs_now, history

    def _orphans(self) -> list[str]:
        return [key for key in self.posts if key not in self.claimed]

    @functools.cached_property
    def _trails(self) -> dict[str, list[tuple[str, Trail]]]:
        """A file of this build → the orphans whose files git saw renamed to it. git is asked only
        when some orphan's file is gone."""
        gone = [(key, src) for key in self._orphans() if (src := self.posts[key].src) and src not in self.srcs_now]
        if self.history is None or not gone:
            return {}
        found: dict[str, list[tuple[str, Trail]]] = {}
        for key, src in gone:
            trail = self.history.trail(src)
            if trail is not None:
                found.setdefault(trail.path, []).append((key, trail))
        return found

    def by_history(self, post: Post) -> Match | Doubt | None:
        hits = [(key, trail) for key, trail in self._trails.get(post.src, []) if key not in self.claimed]
        if not hits:
            return None
        if len(hits) > 1:
            olds = tuple(key for key, _ in hits)
            return Doubt(post.key, olds, f"git saw more than one file renamed to {post.src}")
        key, trail = hits[0]
        src = self.posts[key].src
        why = f"its file's history: git saw {src} renamed to {post.src}"
        kept = Fingerprint.parse(self.posts[key].fingerprint)
        if trail.similarity == 100 or kept is None or kept.date == fingerprint_of(post).date:
            return key, why
        return Doubt(post.key, (key,), f"{why} with changes ({trail.similarity}% alike), but under another date")

    def by_content(self, post: Post) -> Match | Doubt | None:
        now = fingerprint_of(post)
        sure, perhaps = [], []
        for key in self._orphans():
            kept = Fingerprint.parse(self.posts[key].fingerprint)
            if kept is None:
                continue
            likeness = kept.likeness(now)
            if kept.date == now.date and likeness >= SAME:
                sure.append(key)
            elif likeness >= (PERHAPS if kept.date == now.date else SAME):
                perhaps.append(key)
        if len(sure) == 1:
            return sure[0], "its content and date (no history shows a rename)"
        if sure:
            return Doubt(post.key, tuple(sure), "more than one old post has its content and date")
        if perhaps:
            return Doubt(post.key, tuple(perhaps), "a likeness of content, not proof")
        return None


def first(*found: Match | Doubt | None) -> Match | Doubt | None:
    """The first match among clues in their order of trust; else the first doubt; else None."""
    matches = [item for item in found if isinstance(item, tuple)]
    if matches:
        return matches[0]
    return next((item for item in found if isinstance(item, Doubt)), None)
