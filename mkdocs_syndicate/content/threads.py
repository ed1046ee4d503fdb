"""A long text as a thread: cut into parts that each fit a channel's limit, counted as the
service counts (a `measure` the channel gives: graphemes for Bluesky, Mastodon's count with its
fixed weight per URL), at the best boundary: a paragraph, else a sentence, else a word, else
(a word longer than a part, or a script written without spaces) between two graphemes.

Pure: no channel, no template. `messages.render_message` decides what goes into the first part
(the template, with the post's URL and hashtags) and hands the rest of the description here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mkdocs_syndicate.content.textcut import graphemes, shorten

Measure = Callable[[str], int]

# Sentence ends: Latin punctuation before white space, or the ideographic full stop and the
# full-width marks, which Chinese and Japanese write with no space after them.
_LATIN_ENDS = ".!?…"
_WIDE_ENDS = "。！？；"
_CLOSERS = "\"')]}»”’」』）"  # a quote or bracket that closes the sentence belongs to it


def _offsets(text: str) -> list[int]:
    """The character offset where each grapheme starts, and the text's length last."""
    offsets, at = [], 0
    for piece in graphemes(text):
        offsets.append(at)
        at += len(piece)
    offsets.append(at)
    return offsets


def _longest_fit(text: str, offsets: Sequence[int], fits: Callable[[str], bool]) -> int:
    """The largest number of graphemes n such that the text's first n graphemes fit (a binary
    search: a longer prefix never counts less, except where it completes a URL, which the
    boundary search below steps back from)."""
    low, high = 0, len(offsets) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if fits(text[: offsets[middle]].rstrip()):
            low = middle
        else:
            high = middle - 1
    return low


def boundaries(text: str, end: int) -> tuple[list[int], list[int], list[int]]:
    """Cut points at or before `end` (character offsets, each the end of a part's text):
    paragraph ends, sentence ends and word ends."""
    paragraphs, sentences, words = [], [], []
    for index in range(1, min(end, len(text) - 1) + 1):
        char, before = text[index], text[index - 1]
        if char.isspace() and not before.isspace():
            words.append(index)
            if text.startswith("\n\n", index) or text.startswith("\n\n", index - 1):
                paragraphs.append(index)
            elif _ends_sentence(text, index):
                sentences.append(index)
        elif before in _WIDE_ENDS and char not in _CLOSERS and not char.isspace():
            sentences.append(index)
    return paragraphs, sentences, words


def _ends_sentence(text: str, index: int) -> bool:
    """Whether the text before `index` (followed by white space) ends a sentence."""
    at = index - 1
    while at > 0 and text[at] in _CLOSERS:
        at -= 1
    return text[at] in _LATIN_ENDS + _WIDE_ENDS


def cut_point(text: str, fits: Callable[[str], bool]) -> int:
    """Where to end the first part of `text` so that `text[:cut].rstrip()` fits: the whole text if
    it fits, else the last paragraph end that keeps at least half of what fits, else such a
    sentence end, else the last word end, else the last grapheme that fits. 0 if nothing fits."""
    offsets = _offsets(text)
    count = _longest_fit(text, offsets, fits)
    if count == len(offsets) - 1:
        return len(text)
    end = offsets[count]
    if end == 0:
        return 0
    paragraphs, sentences, words = boundaries(text, end)
    for found, half_kept in ((paragraphs, True), (sentences, True), (words, False)):
        # The last that fits (from the end: a shorter text fits when a longer one does, but for a
        # URL cut short, which Mastodon counts in full): one or two measures, not one per word.
        best = next((cut for cut in reversed(found) if fits(text[:cut].rstrip())), 0)
        if best and (not half_kept or best * 2 >= end):
            return best
    return end


def split(text: str, limit: int, measure: Measure, max_parts: int) -> tuple[list[str], bool]:
    """`text` as at most `max_parts` parts of at most `limit` (by `measure`), and whether the last
    part had to be cut (more text than `max_parts` parts hold: the rest is shortened with an
    ellipsis, as a single message is). Parts are stripped; none is empty."""
    return split_with(text, lambda _index, part: measure(part) <= limit, max_parts)


def split_with(
    text: str, fits: Callable[[int, str], bool], max_parts: int, first_index: int = 1
) -> tuple[list[str], bool]:
    """`split`, with a test per part (its number, counted from `first_index`, and its text): a part
    with a marker added fits differently."""
    parts: list[str] = []
    rest = text.strip()
    while rest:
        index = first_index + len(parts)
        if max_parts <= 0:
            return parts, True
        if len(parts) == max_parts - 1:
            last, shortened = _last_part(rest, _fits_as(fits, index))
            return [*parts, last] if last else parts, shortened
        cut = cut_point(rest, _fits_as(fits, index))
        if cut == 0:  # not one grapheme fits beside what the part must also hold
            return parts, True
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].strip()
    return parts, False


def _fits_as(fits: Callable[[int, str], bool], number: int) -> Callable[[str], bool]:
    return lambda part: fits(number, part)


def _last_part(rest: str, fits: Callable[[str], bool]) -> tuple[str, bool]:
    """The last allowed part: the rest if it fits, else the rest shortened with an ellipsis."""
    if fits(rest):
        return rest, False
    keep = len(graphemes(rest))
    low, high = 0, keep - 1  # the largest `keep` whose shortened text fits
    while low < high:
        middle = (low + high + 1) // 2
        if fits(shorten(rest, middle)):
            low = middle
        else:
            high = middle - 1
    return (shorten(rest, low) if low > 1 else ""), True


def thread_of(
    render: Callable[[str, str, int, int], str],
    title: str,
    description: str,
    limit: int,
    measure: Measure,
    max_parts: int,
    *,
    marked: bool,
) -> tuple[list[str], bool]:
    """A message over its limit as a thread: the first part is the template's message
    (`render(title, description, part, parts)`, which holds the post's URL and hashtags) with as
    much of the description as fits; the rest of the description follows in later parts, each
    ending with " (k/n)" when the template shows markers (`marked`: it uses `parts`). Returns the
    parts and whether the last was cut; no parts when even the first cannot hold the template's
    text (the caller shortens the title as for a single message)."""

    def later(text: str, number: int, total: int) -> str:
        return f"{text} ({number}/{total})" if marked else text

    total, head, cut = 2, "", False
    tail: list[str] = []
    for _ in range(4):  # the count shown in markers changes what fits: settle it (one more pass, in practice)
        count = total

        def first_fits(text: str, n: int = count) -> bool:
            return measure(render(title, text, 1, n)) <= limit

        head_end = cut_point(description, first_fits)
        head, rest = description[:head_end].rstrip(), description[head_end:].strip()
        if not first_fits(head) or not rest:
            return [], False

        def later_fits(number: int, part: str, n: int = count) -> bool:
            return measure(later(part, number, n)) <= limit

        tail, cut = split_with(rest, later_fits, max_parts - 1, 2)
        if not tail or 1 + len(tail) == total:
            break
        total = 1 + len(tail)
    if not tail:
        return [], False
    total = 1 + len(tail)
    return [render(title, head, 1, total), *(later(part, number, total) for number, part in enumerate(tail, 2))], cut
