"""What a thread carries and how a corrected one is cut (issue 53 item 8, issue 49 item 7).

- A long post with `thread: true` is threaded whole (not its 400-character excerpt), up to its
  `<!-- more -->` with `thread_text: excerpt`, or its description with `thread_text: description`.
- A small fix of a long thread edits the part it is in, in place: the thread keeps its parts'
  boundaries where they still fit (content/resplit.py), changes its number of parts only when the
  text needs it, and the plan says which.
"""

from __future__ import annotations

import random

import pytest
from conftest import SITE, make_post, write_ledger

from mkdocs_syndicate.channels.mastodon_text import mastodon_length
from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.content.messages import LengthRule, message_sha256, render_message
from mkdocs_syndicate.engine.plan import Change, make_plan
from mkdocs_syndicate.engine.thread_changes import next_change
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.schema import Part, Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.output.plan import full_plan_lines, plan_lines
from mkdocs_syndicate.registry import clients

pytestmark = pytest.mark.unit

TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}\n\n{{ hashtags }}"
MASTODON = LengthRule(500, mastodon_length)
WORDS = [
    "the",
    "post",
    "says",
    "a",
    "thing",
    "about",
    "syndication",
    "and",
    "ledgers",
    "then",
    "kills",
    "and",
    "reads",
    "back",
    "every",
    "copy",
]
AT = "2026-12-01T00:00:00Z"


def paragraphs(seed: int, count: int) -> list[str]:
    """`count` paragraphs of one to four sentences of 6 to 18 words, the same for a seed."""
    rng = random.Random(seed)

    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))).capitalize() + "."

    return [" ".join(sentence() for _ in range(rng.randint(1, 4))) for _ in range(count)]


def html(paras: list[str]) -> str:
    return "<h1>A long post</h1>\n" + "\n".join(f"<p>{p}</p>" for p in paras)


# ---------------------------------------------------------------- what a thread carries


def test_a_long_post_without_a_description_is_threaded_whole_not_its_excerpt():
    """Issue 53 item 8: the post's excerpt (its first paragraph, cut to 400 characters) fitted in
    one status, so a 2,000-character post went out as one shortened status."""
    paras = paragraphs(1, 12)
    post = make_post(1, title="A long post", description="", body_html=html(paras), excerpt_source=paras[0])
    message = render_message(post, "m", TEMPLATE, MASTODON, "S", where="t", max_parts=10)
    assert len(message.parts) >= 4, message.parts
    said = " ".join(" ".join(part.split()) for part in message.parts)
    assert all(p in said for p in paras), "every paragraph of the post is in the thread"
    assert "…" not in said and not any(n for n in message.notes if "cut" in n)
    assert all(mastodon_length(part) <= 500 for part in message.parts)
    assert post.url in message.parts[0] and "A long post\n\nA long post" not in message.parts[0]


def test_a_thread_is_cut_where_paragraphs_end():
    paras = paragraphs(2, 12)
    post = make_post(1, title="A long post", description="", body_html=html(paras), excerpt_source=paras[0])
    message = render_message(post, "m", TEMPLATE, MASTODON, "S", where="t", max_parts=10)
    assert len(message.parts) >= 4
    for part in message.parts[1:]:
        assert part.endswith("."), part  # each ends where a paragraph or a sentence does


def test_thread_text_excerpt_carries_the_post_up_to_its_more_marker_whole():
    paras = paragraphs(3, 8)
    body = html(paras[:4]) + "\n<!-- more -->\n" + "\n".join(f"<p>{p}</p>" for p in paras[4:])
    post = make_post(1, title="A long post", description="", body_html=body, excerpt_source="\n\n".join(paras[:4]))
    message = render_message(post, "m", TEMPLATE, MASTODON, "S", where="t", max_parts=10, thread_text="excerpt")
    said = " ".join(" ".join(part.split()) for part in message.parts)
    assert len(message.parts) >= 2 and all(p in said for p in paras[:4]), message.parts
    assert not any(p in said for p in paras[4:]) and "…" not in said


def test_thread_text_description_threads_the_description_as_before():
    paras = paragraphs(4, 12)
    description = "A short summary of the post."
    post = make_post(1, title="A long post", description=description, body_html=html(paras))
    alone = render_message(post, "m", TEMPLATE, MASTODON, "S", where="t", max_parts=10, thread_text="description")
    assert alone.parts == () and description in alone.text
    whole = render_message(post, "m", TEMPLATE, MASTODON, "S", where="t", max_parts=10)
    assert len(whole.parts) >= 4 and paras[-1] in " ".join(whole.parts[-1].split())
    # A post whose whole text fits in one message is one message, exactly as without threads.
    short = make_post(
        1, title="A short post", description="", body_html="<p>Just this.</p>", excerpt_source="Just this."
    )
    threaded = render_message(short, "m", TEMPLATE, MASTODON, "S", where="t", max_parts=4, thread_text="post")
    assert threaded == render_message(short, "m", TEMPLATE, MASTODON, "S", where="t")


def test_thread_text_is_checked_and_needs_threads():
    def parse(**settings):
        raw = {"masto": {"type": "mastodon", "instance": "https://m.example", "token": "t0ken", **settings}}
        return parse_channels(raw, clients())

    assert parse(thread=True)[0].thread_text == "post"
    assert parse(thread=True, thread_text="excerpt")[0].thread_text == "excerpt"
    with pytest.raises(ConfigError, match=r"channels\.masto\.thread_text.*only with 'thread: true'"):
        parse(thread_text="excerpt")
    with pytest.raises(ConfigError, match=r"channels\.masto\.thread_text.*post or excerpt or description"):
        parse(thread=True, thread_text="all")


# ---------------------------------------------------------------- a corrected thread keeps its cuts

# A 22-part thread (seed 93, 44 paragraphs) which, cut afresh after a 12-character fix in its
# third paragraph, is 21 parts: every part after the fix moves up, one is deleted.
SEED, COUNT, FIXED = 93, 44, 2


def masto_channel():
    raw = {"masto": {"type": "mastodon", "instance": "https://m.example", "token": "t0ken", "thread": True}}
    raw["masto"]["max_parts"] = 25
    return [clients()[s.type](s, SITE) for s in parse_channels(raw, clients())]


def fixed(paras: list[str], delta: str = "cut") -> list[str]:
    p = paras[FIXED]
    at = p.find(" ", len(p) // 2)
    changed = p[:at] + p[at + 12 :] if delta == "cut" else p[:at] + " " + delta + p[at:]
    return [*paras[:FIXED], changed, *paras[FIXED + 1 :]]


def sent(tmp_path, channels, paras):
    """The thread as it went out (a first plan's message), and the ledger that records it."""
    post = make_post(1, title="A long post", description="\n\n".join(paras), tags=("python",))
    (pair,) = make_plan(Ledger.read(tmp_path / "none.yml"), [post], channels, None).pairs
    message = pair.prepared.message
    assert message is not None
    parts = tuple(Part(str(n), None, message_sha256(text)) for n, text in enumerate(message.texts, 1))
    record = Record(State.DONE, 1, AT, remote_id="1", message_sha256=message.sha256, created_at=AT, parts=parts)
    path = tmp_path / "ledger.yml"
    write_ledger(path, {(post.key, "masto"): record})
    return message.texts, path


def replan(path, channels, paras):
    post = make_post(1, title="A long post", description="\n\n".join(paras), tags=("python",))
    plan = make_plan(Ledger.read(path), [post], channels, None)
    (pair,) = plan.pairs
    assert pair.op is Change.UPDATE and pair.prepared.message is not None
    return plan, pair.prepared.message.texts


def test_a_12_character_fix_in_a_22_part_thread_edits_that_part_in_place(tmp_path):
    channels = masto_channel()
    paras = paragraphs(SEED, COUNT)
    before, path = sent(tmp_path, channels, paras)
    assert len(before) == 22
    plan, after = replan(path, channels, fixed(paras))
    assert len(after) == 22, "a fix that fits keeps the thread's number of parts"
    changed = [n for n, (old, new) in enumerate(zip(before, after, strict=True), 1) if old != new]
    assert len(changed) == 1, changed
    assert any("a thread of 22 parts, 1 of its parts edited in place" in line for line in plan_lines(plan)), plan_lines(
        plan
    )


def test_a_fix_the_part_cannot_hold_grows_the_thread_and_the_plan_says_why(tmp_path):
    channels = masto_channel()
    paras = paragraphs(SEED, COUNT)
    before, path = sent(tmp_path, channels, paras)
    longer = fixed(paras, "which, said again at length, " * 12)
    plan, after = replan(path, channels, longer)
    assert len(after) == 23
    first = next(n for n, (old, new) in enumerate(zip(before, after, strict=False)) if old != new)
    assert after[:first] == before[:first] and first >= 1, "the parts before the fix are kept"
    assert after[-1] == before[-1], "the parts after it keep their text (their place moves one down)"
    said = "\n".join(full_plan_lines(plan, "a test", None))
    assert "a thread of 22 parts becomes 23: the text needs more parts" in said, said
    resumed_part_by_part(path, channels, longer, after)


def resumed_part_by_part(path, channels, paras, target) -> None:
    """A run killed between two part changes plans again from the record as it stands (some parts
    already changed): the thread it aims at must not move, or the change would never end."""
    record = Ledger.read(path).record("blog/post-1/", "masto")
    assert record is not None
    parts = list(record.parts)
    for _ in range(30):
        step = next_change(tuple(parts), target)
        if step is None:
            break
        kind, number = step
        if kind == "update":
            parts[number - 1] = Part(parts[number - 1].remote_id, None, message_sha256(target[number - 1]))
        elif kind == "send":
            parts.append(Part(str(100 + number), None, message_sha256(target[number - 1])))
        else:
            parts.pop()
        thread_sha = message_sha256("a thread being changed")
        halfway = Record(State.DONE, 1, AT, remote_id="1", message_sha256=thread_sha, created_at=AT, parts=tuple(parts))
        write_ledger(path, {("blog/post-1/", "masto"): halfway})
        if next_change(tuple(parts), target) is not None:
            assert replan(path, channels, paras)[1] == target, f"after {kind} of part {number}"
    assert next_change(tuple(parts), target) is None
