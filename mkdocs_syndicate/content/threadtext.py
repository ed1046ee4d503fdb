"""What a thread carries (issue 53 item 8): the whole post, not the 400-character excerpt a
single message says; and a corrected thread cut where it was cut before (content/resplit.py).

A message says the post's description (front matter, else its excerpt: the part before
`<!-- more -->` or the first paragraph, cut to 400 characters). A thread has room for more, and a
long post with `thread: true` that went out as its excerpt, split, was the post cut short. So a
thread's text is chosen by the channel's `thread_text`:

- `post` (the default): the whole post as plain text, each paragraph, heading and list item its
  own paragraph (content/portable.py `plain_text`), without the plugin's "Also on" block and
  without a first heading that repeats the title; a post whose description says more than its
  page (a feed entry with a summary only, a page without a body) is threaded from its description;
- `excerpt`: the same, up to the post's `<!-- more -->` (the whole post when it has none);
- `description`: the description, as a single message says it.

The post goes out as a thread only when that text does not fit in one message; a post that fits
is one message, exactly as without `thread: true`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mkdocs_syndicate.content.textcut import shorten
from mkdocs_syndicate.safety import public_text

if TYPE_CHECKING:
    from mkdocs_syndicate.content.posts import Post
    from mkdocs_syndicate.content.threads import Measure

THREAD_TEXTS = ("post", "excerpt", "description")
DEFAULT_THREAD_TEXT = "post"


def page_text(post: Post, choice: str) -> str:
    """The post's page as a thread carries it ("" without a page to give), before neutralising."""
    if choice == "description" or not post.body_html or post.body_missing:
        return ""
    from mkdocs_syndicate.content.crosslinks import without_block
    from mkdocs_syndicate.content.portable import MORE, plain_text

    page = without_block(post.body_html)
    if choice == "excerpt" and (more := MORE.search(page)) is not None:
        page = page[: more.start()]
    return public_text(plain_text(page, post.title))


def chosen(post: Post, choice: str, description: str, neutraliser: Callable[[str], str], most: int) -> str:
    """The text a thread of `post` carries (`description`: the message's, neutralised; `most`:
    the longest text a template is given)."""
    whole = neutraliser(shorten(page_text(post, choice), most))
    return whole if len(whole) > len(description) else description  # a feed's summary may say more


def threaded(
    render: Callable[[str, str, int, int], str],
    title: str,
    text: str,
    limit: int,
    measure: Measure,
    max_parts: int,
    marked: bool,
    before: tuple[str, ...],
) -> tuple[list[str], bool]:
    """The thread's parts and whether the last was cut; no parts when the text fits in one
    message (it is one message then) or cannot be a thread. `before`: the hashes of the parts the
    copy has, whose boundaries are kept wherever they still fit."""
    from mkdocs_syndicate.content.resplit import Shape, resplit
    from mkdocs_syndicate.content.threads import thread_of

    if measure(render(title, text, 1, 1)) <= limit:
        return [], False
    kept = resplit(Shape(render, title, limit, measure, marked), text, before, max_parts) if before else None
    if kept is not None:
        return kept, False
    return thread_of(render, title, text, limit, measure, max_parts, marked=marked)
