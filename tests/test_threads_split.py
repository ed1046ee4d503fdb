"""The thread splitter (content/threads.py) and a long message as a thread (messages.render_message
with `max_parts`): boundaries, each service's counting, the first part's URL and hashtags."""

import pytest
from conftest import make_post

from mkdocs_syndicate.channels.bluesky_text import bluesky_length
from mkdocs_syndicate.channels.mastodon_text import mastodon_length
from mkdocs_syndicate.content.messages import LengthRule, render_message
from mkdocs_syndicate.content.posts import ChannelOverride
from mkdocs_syndicate.content.textcut import grapheme_length
from mkdocs_syndicate.content.threads import split
from mkdocs_syndicate.errors import PostError

pytestmark = pytest.mark.unit

TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}\n\n{{ hashtags }}"

P1 = "The first paragraph says one thing. It says it in two sentences."
P2 = "The second paragraph goes on for a while, and it has more words than the first one has."
P3 = "A third, short."


def test_a_text_that_fits_is_one_part():
    assert split("Short. Text.", 300, grapheme_length, 4) == (["Short. Text."], False)


def test_paragraphs_come_first():
    parts, cut = split(f"{P1}\n\n{P2}\n\n{P3}", 110, grapheme_length, 4)
    assert parts == [P1, f"{P2}\n\n{P3}"] and not cut


def test_then_sentences_then_words():
    parts, cut = split(P1 + " " + P2, 70, grapheme_length, 4)
    assert parts[0] == "The first paragraph says one thing. It says it in two sentences."
    assert not cut and all(grapheme_length(p) <= 70 for p in parts)
    # No sentence end in reach: the last word end, never inside a word.
    words, _ = split("alpha beta gamma delta epsilon zeta eta theta", 20, grapheme_length, 4)
    assert words == ["alpha beta gamma", "delta epsilon zeta", "eta theta"]


def test_a_sentence_end_that_keeps_less_than_half_is_passed_over_for_a_word_end():
    parts, _ = split("Hi. " + "word " * 30, 40, grapheme_length, 4)
    assert parts[0] != "Hi." and grapheme_length(parts[0]) > 30


def test_graphemes_are_never_split_and_count_one():
    family = "👩\u200d👩\u200d👧\u200d👦"
    parts, cut = split(family * 12, 5, grapheme_length, 4)
    assert parts == [family * 5, family * 5, family * 2] and not cut
    accents = "e\u0301" * 7
    assert split(accents, 3, grapheme_length, 4)[0][0] == "e\u0301" * 3


def test_cjk_is_cut_after_a_full_stop_or_between_characters():
    parts, cut = split("这是第一句话。这是第二句话。这是第三句话。", 8, grapheme_length, 4)
    assert parts == ["这是第一句话。", "这是第二句话。", "这是第三句话。"] and not cut
    long, _ = split("没有标点的一段很长很长的中文文字", 6, grapheme_length, 4)
    assert all(grapheme_length(p) <= 6 for p in long) and "".join(long) == "没有标点的一段很长很长的中文文字"


def test_mastodon_counts_a_url_as_23_and_never_breaks_it():
    url = "https://example.com/" + "a" * 80
    text = f"Read {url} for the whole story of this thing. " + "More words here. " * 10
    parts, _ = split(text, 60, mastodon_length, 4)
    assert url in parts[0]  # 5 + 23 + the words: fits in 60 by Mastodon's count, not by length
    assert all(mastodon_length(p) <= 60 for p in parts)


def test_beyond_max_parts_the_last_part_is_cut_with_an_ellipsis():
    parts, cut = split(" ".join(["sentence number one."] * 40), 50, grapheme_length, 3)
    assert len(parts) == 3 and cut and parts[-1].endswith("…")
    assert all(grapheme_length(p) <= 50 for p in parts)


def _post(description: str, **kwargs: object):
    return make_post(1, title="A long post", description=description, tags=("python",), **kwargs)


def test_a_long_message_is_a_thread_with_the_url_and_hashtags_first():
    post = _post(f"{P1}\n\n{P2}\n\n{P3} " + "More text follows here. " * 12)
    message = render_message(post, "bsky", TEMPLATE, LengthRule(150, bluesky_length), "S", where="t", max_parts=4)
    assert len(message.parts) >= 3 and message.text == message.parts[0]
    assert post.url in message.parts[0] and "#python" in message.parts[0]
    assert all(post.url not in p and "#python" not in p for p in message.parts[1:])
    assert all(bluesky_length(p) <= 150 for p in message.parts)
    assert message.parts[1].startswith(P2[:20]) or message.parts[1].startswith("The second")
    assert "(2/" not in message.parts[1]  # markers only when the template asks for them


def test_markers_where_the_template_asks():
    post = _post(" ".join([P1, P2, P3] * 3))
    template = "{{ title }} ({{ part }}/{{ parts }})\n\n{{ description }}\n\n{{ url }}"
    message = render_message(post, "bsky", template, LengthRule(120, bluesky_length), "S", where="t", max_parts=4)
    total = len(message.parts)
    assert total >= 3 and message.parts[0].startswith(f"A long post (1/{total})")
    assert all(p.endswith(f" ({n}/{total})") for n, p in enumerate(message.parts[1:], 2))
    assert all(bluesky_length(p) <= 120 for p in message.parts)


def test_a_message_that_fits_is_unchanged_by_threads():
    post = _post(P1)
    one = render_message(post, "m", TEMPLATE, LengthRule(500, mastodon_length), "S", where="t")
    threaded = render_message(post, "m", TEMPLATE, LengthRule(500, mastodon_length), "S", where="t", max_parts=4)
    assert threaded == one and threaded.parts == () and threaded.sha256 == one.sha256


def test_without_threads_a_long_message_is_still_shortened():
    post = _post(" ".join([P1, P2] * 5))
    message = render_message(post, "m", TEMPLATE, LengthRule(150, mastodon_length), "S", where="t")
    assert message.parts == () and message.length <= 150 and "…" in message.text


def test_a_thread_hash_covers_every_part():
    post = _post(" ".join([P1, P2] * 2))
    a = render_message(post, "m", TEMPLATE, LengthRule(150, mastodon_length), "S", where="t", max_parts=4)
    b = render_message(
        _post(" ".join([P1, P2] * 2) + " Changed."),
        "m",
        TEMPLATE,
        LengthRule(150, mastodon_length),
        "S",
        where="t",
        max_parts=4,
    )
    assert len(a.parts) == len(b.parts) == 3 and a.parts[0] == b.parts[0] and a.sha256 != b.sha256


def test_an_authors_long_text_is_split_when_its_url_lands_first():
    url = "https://example.com/blog/post-1/"
    text = f"My own words {url}\n\n" + "More of what I have to say. " * 10
    post = _post("d", overrides={"m": ChannelOverride(text=text)})
    message = render_message(post, "m", TEMPLATE, LengthRule(100, mastodon_length), "S", where="t", max_parts=4)
    assert len(message.parts) >= 3 and post.url in message.parts[0]
    late = _post("d", overrides={"m": ChannelOverride(text="Words. " * 30 + post.url)})
    with pytest.raises(PostError, match="URL"):
        render_message(late, "m", TEMPLATE, LengthRule(100, mastodon_length), "S", where="t", max_parts=4)
