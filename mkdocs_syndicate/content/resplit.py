"""A corrected thread cut again where it was cut before (issue 49 item 7): stable splitting.

A thread is cut greedily (content/threads.py): each part takes as much as fits. Cut again after
a small fix, greedy cutting moves every boundary after the fix (a part that lost a few characters
takes a paragraph of the next, and so on down the thread), and a 22-part thread corrected by 12
characters lost a part: one edit became twenty edits and a delete. Here the new text is cut at the
boundaries the copy has, wherever they still hold:

- the ledger knows each part only by the hash of its text (`Part.message_sha256`), so a part is
  found in the new text by trying the cut points (ends of words) after the part before it, and
  before the part after it: a part whose text is unchanged keeps its place, from the start down
  and from the end up;
- what is left between (the parts that changed) is cut greedily; when it needs fewer parts than
  it had, the longest is cut in two until it has as many again; an unchanged part found between
  two changed ones (two fixes far apart) keeps its place too;
- the thread has another number of parts only when the changed text needs more parts than it
  had (or none at all), and every part must still fit, under the numbering it ends with.

None when it cannot be done (a part no longer fits, more than `max_parts`): the caller cuts the
thread greedily, as a new one. Pure: no channel, no ledger.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from mkdocs_syndicate.content.threads import Measure, boundaries, cut_point, split_with

Render = Callable[[str, str, int, int], str]
WINDOW = 8  # a part holds at most this many characters per unit of its limit (a URL counts 23)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()  # content/messages.py's message_sha256


@dataclass(frozen=True)
class Shape:
    """How a thread's parts are made from its text: the first is the template's message (`render`
    with the head of the text), each later one the text itself, with " (k/n)" when `marked`."""

    render: Render
    title: str
    limit: int
    measure: Measure
    marked: bool

    def text(self, number: int, piece: str, total: int) -> str:
        if number == 1:
            return self.render(self.title, piece, 1, total)
        return f"{piece} ({number}/{total})" if self.marked else piece

    def fits(self, number: int, piece: str, total: int) -> bool:
        return self.measure(self.text(number, piece, total)) <= self.limit


class _Cutter:
    """The text, its cut points, and the hashes of the parts the copy has (`before[k - 1]` is
    part k's, under the numbering of a thread of `len(before)` parts)."""

    def __init__(self, shape: Shape, text: str, before: tuple[str, ...]) -> None:
        self.shape, self.text, self.before, self.total = shape, text, before, len(before)
        paragraphs, sentences, words = boundaries(text, len(text))
        self.cuts = sorted({*words, *sentences, len(text)})
        self.strong = sorted({*paragraphs, *sentences, len(text)})  # where a part was cut, nearly always
        self.reach = WINDOW * shape.limit + 64

    def piece(self, start: int, end: int) -> str:
        return self.text[start:end].strip()

    def is_part(self, number: int, start: int, end: int) -> bool:
        piece = self.piece(start, end)
        return bool(piece) and _sha(self.shape.text(number, piece, self.total)) == self.before[number - 1]

    def ends_after(self, start: int, upto: int) -> list[int]:
        low = bisect.bisect_right(self.cuts, start)
        high = bisect.bisect_right(self.cuts, min(upto, start + self.reach))
        return self.cuts[low:high]

    def starts_before(self, end: int, downto: int) -> list[int]:
        """Cut points after which a later part ending at `end` may start, nearest first."""
        low = bisect.bisect_left(self.cuts, max(downto, end - self.reach))
        return [cut for cut in reversed(self.cuts[low:]) if cut < end]

    def solve(self, start: int, end: int, low: int, high: int) -> list[str]:
        """The pieces of text[start:end], which parts low..high (by number, inclusive) held."""
        pieces: list[str] = []
        while low <= high:  # from the start down: the parts that are unchanged
            found = next((cut for cut in self.ends_after(start, end) if self.is_part(low, start, cut)), None)
            if found is None:
                break
            pieces.append(self.piece(start, found))
            start, low = found, low + 1
        tail: list[str] = []
        while high >= max(low, 2):  # from the end up (the first part starts the text: found above)
            found = next((cut for cut in self.starts_before(end, start) if self.is_part(high, cut, end)), None)
            if found is None:
                break
            tail.insert(0, self.piece(found, end))
            end, high = found, high - 1
        return pieces + self.between(start, end, low, high) + tail

    def between(self, start: int, end: int, low: int, high: int) -> list[str]:
        """What changed: an unchanged part inside keeps its place, the rest is cut afresh."""
        for number in range(max(low + 1, 2), high):
            anchor = self.anchor(number, start, end)
            if anchor is not None:
                left = self.solve(start, anchor[0], low, number - 1)
                return [*left, self.piece(*anchor), *self.solve(anchor[1], end, number + 1, high)]
        return self.fresh(start, end, low, max(0, high - low + 1))

    def anchor(self, number: int, start: int, end: int) -> tuple[int, int] | None:
        """Where part `number` is, unchanged, inside text[start:end]: between two of the strong
        cut points (a paragraph's or a sentence's end), where the greedy cut put it."""
        inside = [cut for cut in self.strong if start < cut <= end]
        for index, begin in enumerate(inside):
            for stop in inside[index + 1 :]:
                if stop - begin > self.reach:
                    break
                if self.is_part(number, begin, stop):
                    return begin, stop
        return None

    def fresh(self, start: int, end: int, number: int, had: int) -> list[str]:
        """text[start:end] cut greedily, then its longest piece cut in two until it has as many
        pieces as the parts it replaces (`had`), where it can be."""
        rest, shape, total = self.piece(start, end), self.shape, self.total
        if not rest:
            return []
        pieces: list[str] = []
        if start == 0:  # the first part: the template's message with the head of the text
            cut = cut_point(rest, lambda head: shape.fits(1, head, total))
            pieces, rest = [rest[:cut].rstrip()], rest[cut:].strip()
        if rest:
            first = max(number, 2)
            pieces += split_with(rest, lambda at, piece: shape.fits(at, piece, total), 10_000, first)[0]
        while len(pieces) < had:
            longest = max(range(len(pieces)), key=lambda index: shape.measure(pieces[index]))
            piece = pieces[longest]
            cut = cut_point(piece, _at_most(shape.measure, shape.measure(piece) // 2))
            if not 0 < cut < len(piece) or not piece[cut:].strip():
                break
            pieces[longest : longest + 1] = [piece[:cut].rstrip(), piece[cut:].strip()]
        return pieces


def _at_most(measure: Measure, most: int) -> Callable[[str], bool]:
    return lambda text: measure(text) <= most


def resplit(shape: Shape, text: str, before: tuple[str, ...], max_parts: int) -> list[str] | None:
    """The thread's parts for `text`, cut where the copy's parts (`before`: their hashes) were cut
    wherever they still hold; None when that gives no thread that fits (the caller cuts afresh)."""
    if len(before) < 2 or not text.strip():
        return None
    cutter = _Cutter(shape, text, before)
    pieces = cutter.solve(0, len(text), 1, len(before))
    total = len(pieces)
    if not 2 <= total <= max_parts or any(not piece for piece in pieces):
        return None
    if not all(shape.fits(number, piece, total) for number, piece in enumerate(pieces, 1)):
        return None  # a part no longer fits (a longer marker, a smaller limit): cut afresh
    return [shape.text(number, piece, total) for number, piece in enumerate(pieces, 1)]
