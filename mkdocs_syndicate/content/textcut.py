"""Text as people read it: grapheme clusters (what a person calls a character: an emoji family,
a letter with its accents) and cutting a text short at a word's end. Shared by the messages
(content/messages.py) and the thread splitter (content/threads.py)."""

from __future__ import annotations

ELLIPSIS = "…"


def graphemes(text: str) -> list[str]:
    import regex  # Unicode grapheme clusters, loaded when a message is measured

    found: list[str] = regex.findall(r"\X", text)
    return found


def grapheme_length(text: str) -> int:
    return len(graphemes(text))


def shorten(text: str, keep: int) -> str:
    """At most `keep` graphemes, the last an ellipsis, cut where a word ends ("…next to mk…" is
    no word); a text without spaces there (Chinese, Japanese, one long word) is cut where it must."""
    parts = graphemes(text)
    if len(parts) <= keep:
        return text
    if keep <= 0:
        return ""
    return cut_before(parts[: keep - 1], parts[keep - 1])


def cut_before(kept: list[str], following: str) -> str:
    """The graphemes `kept` from a text's start, `following` the first left out, closed with an
    ellipsis where a word ends; where the cut falls inside a word, it ends before that word,
    unless that drops more than half of what was kept (one long word, a text without spaces)."""
    if not following.isspace():  # the cut falls inside a word: end before it
        spaces = [index for index, part in enumerate(kept) if part.isspace()]
        if spaces and spaces[-1] >= len(kept) // 2:  # not at the cost of half the text
            kept = kept[: spaces[-1]]
    return "".join(kept).rstrip().rstrip(",;:").rstrip() + ELLIPSIS
