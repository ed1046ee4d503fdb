"""A post's content fingerprint: its date and a small sketch of its text, kept in its ledger entry,
so that a renamed post is still known where no history says so (a shallow clone, a rename not yet
committed). The weakest evidence of identity (engine/moves.py): a match needs the same date and
nearly the same text, and anything less sure is for a person to decide.

The sketch is a bottom-k MinHash of the text's word 3-shingles: the k smallest CRC-32s of the
shingles of the text's opening (its first 3,000 characters of HTML, tags stripped, case folded). Two sketches share
about as many of their values as the texts share shingles (Jaccard), so a typo fixed or a
retitled heading still matches and an unrelated post shares none. Bounded per post (a long post
costs no more than its opening): about 0.1 ms a post, a second for a site of 10,000.
"""

from __future__ import annotations

import heapq
import html
import re
import zlib
from dataclasses import dataclass

from mkdocs_syndicate.content.crosslinks import without_block
from mkdocs_syndicate.content.posts import Post

K = 8  # values kept: 8 × 8 hex digits in the ledger
_HTML = 3000  # the post read, at most: its opening says which post it is, and costs the same for all
_WORDS = 500
_TAG = re.compile(r"<[^>]*>")
_WORD = re.compile(r"\w+")
# Same date and at least this share of the sketch: the same post (a typo, a heading, a link).
SAME = 0.75
# Same date and at least this, or the same sketch under another date: perhaps; a person decides.
PERHAPS = 0.4


@dataclass(frozen=True)
class Fingerprint:
    date: str  # the post's date, YYYY-MM-DD
    sketch: tuple[int, ...]
    opening: str = ""  # a CRC-32 of the HTML read (#hex): an unchanged post needs no new sketch

    def text(self) -> str:
        return " ".join([self.date, *([self.opening] if self.opening else []), *(f"{v:08x}" for v in self.sketch)])

    @classmethod
    def parse(cls, text: str | None) -> Fingerprint | None:
        """A ledger's `fingerprint`, or None when it is absent or not one (a hand edit)."""
        if not text:
            return None
        date, *values = text.split()
        opening = values.pop(0) if values and values[0].startswith("#") else ""
        try:
            return cls(date, tuple(int(value, 16) for value in values), opening)
        except ValueError:
            return None

    def likeness(self, other: Fingerprint) -> float:
        """The share of the two texts' shingles both have, as their sketches estimate it."""
        if not self.sketch or not other.sketch:
            return 1.0 if self.sketch == other.sketch else 0.0
        union = heapq.nsmallest(K, set(self.sketch) | set(other.sketch))
        both = set(self.sketch) & set(other.sketch)
        return sum(value in both for value in union) / len(union)


def opening_of(post: Post) -> str:
    """What a fingerprint reads of the post, as a CRC-32: cheap, so that an unchanged post is told
    without its sketch being made again (a site's every post, on every run)."""
    return f"#{zlib.crc32(_read(post).encode('utf-8', 'surrogatepass')):08x}"


def _read(post: Post) -> str:
    """The HTML a fingerprint reads: the post's opening, without the Also on block this plugin
    adds to the page once it is announced (the post did not change)."""
    return without_block(post.body_html)[:_HTML] if post.body_html else post.title


def fingerprint_of(post: Post) -> Fingerprint:
    words = _WORD.findall(html.unescape(_TAG.sub(" ", _read(post))).casefold())[:_WORDS]
    shingles = {" ".join(words[n : n + 3]) for n in range(max(1, len(words) - 2))} if words else set()
    sketch = heapq.nsmallest(K, {zlib.crc32(shingle.encode("utf-8", "surrogatepass")) for shingle in shingles})
    return Fingerprint(post.date.date().isoformat(), tuple(sorted(sketch)), opening_of(post))
