import pytest
from conftest import make_post

from mkdocs_syndicate.channels.mastodon_text import mastodon_length
from mkdocs_syndicate.content.messages import LengthRule, hashtag, neutralise, render_message
from mkdocs_syndicate.content.posts import ChannelOverride
from mkdocs_syndicate.errors import PostError

pytestmark = pytest.mark.unit

TEMPLATE = "{{ title }}\n\n{{ description }}\n\n{{ url }}\n\n{{ hashtags }}"


def render(post, limit=500, template=TEMPLATE):
    return render_message(post, "masto", template, LengthRule(limit, mastodon_length), "Site", where="t")


def test_urls_count_23_and_graphemes_count_one():
    assert mastodon_length("https://example.com/a/very/long/path/that/is/long/") == 23
    assert mastodon_length("👩‍👩‍👧‍👦 e\u0301") == 3
    assert mastodon_length("hi @bob@mastodon.social") == len("hi @bob")


def test_too_long_shortens_description_then_title_never_the_url():
    post = make_post(1, title="T" * 100, description="D" * 600, url="https://example.com/" + "x" * 300)
    message = render(post, limit=200)
    assert message.length <= 200 and post.url in message.text
    assert "…" in message.text and message.text.startswith("T" * 100)
    tiny = render(post, limit=40)
    assert post.url in tiny.text and tiny.length <= 40 and "D" not in tiny.text


def test_cannot_fit_is_a_post_error_naming_the_source():
    post = make_post(1)
    with pytest.raises(PostError, match=r"docs/blog/post-1.md"):
        render(post, limit=10, template="{{ url }} {{ url }} fixed text here")


def test_mentions_and_hashtags_from_titles_are_neutralised():
    post = make_post(1, title="Why #1 matters to @bob", tags=("python", "Open Source"))
    text = render(post).text
    assert "#1" not in text and "@bob" not in text and neutralise("@bob") in text
    assert text.endswith("#python #OpenSource")


def test_hashtag_forms():
    assert hashtag("mkdocs") == "#mkdocs" and hashtag("open source") == "#OpenSource"
    assert hashtag("C++") == "#C" and hashtag("!!!") == ""


def test_front_matter_text_overrides_the_template_and_is_checked():
    post = make_post(1, overrides={"masto": ChannelOverride(text="Custom https://example.com/x")})
    assert render(post).text == "Custom https://example.com/x"
    long = make_post(1, overrides={"masto": ChannelOverride(text="x" * 501)})
    with pytest.raises(PostError, match=r"syndicate.masto.text"):
        render(long)


def test_empty_description_leaves_no_blank_lines_and_hash_is_stable():
    a = render(make_post(1, description=""))
    assert "\n\n\n" not in a.text and a.sha256 == render(make_post(1, description="")).sha256
    assert a.sha256 != render(make_post(2, description="")).sha256
