import pytest

from mkdocs_syndicate.channels.forem import forem_tags, same_url, strip_title_heading
from mkdocs_syndicate.content.links import absolutize, relative_to

pytestmark = pytest.mark.unit

BASE = "https://example.com/blog/post/"


def test_relative_links_images_references_and_html_become_absolute():
    text = ("See [other](../other/) and ![pic](img/a.png \"title\").\n\n"
            "[ref]: notes.html\n<img src=\"b.jpg\"> [abs](https://x.example/) [top](#here)\n")
    out = absolutize(text, relative_to(BASE))
    assert "[other](https://example.com/blog/other/)" in out
    assert "![pic](https://example.com/blog/post/img/a.png \"title\")" in out
    assert "[ref]: https://example.com/blog/post/notes.html" in out
    assert '<img src="https://example.com/blog/post/b.jpg">' in out
    assert "[abs](https://x.example/)" in out and "[top](#here)" in out


def test_fenced_code_is_left_alone():
    text = "```md\n[x](rel.md)\n```\n[y](rel.md)\n"
    out = absolutize(text, relative_to(BASE))
    assert "[x](rel.md)" in out and "[y](https://example.com/blog/post/rel.md)" in out


def test_forem_tag_form_and_url_matching_and_title_heading():
    assert forem_tags(("Python", "Open Source", "c++", "python", "a", "b", "c")) == ["python", "opensource", "c", "a"]
    assert same_url("http://Example.com/a", "https://example.com/a/")
    assert not same_url("https://example.com/a/b", "https://example.com/a/")
    assert strip_title_heading("# Hello\n\nBody", "Hello") == "Body"
    assert strip_title_heading("Intro\n# Hello", "Hello") == "Intro\n# Hello"


def test_a_forem_tag_that_needs_combining_marks_is_left_out_not_misspelt():
    """हिन्दी without its virama is हिनदी, another word: Forem's rule cannot keep the mark, so the
    tag is dropped (with a warning), and tags whose marks compose away (café) stay."""
    from conftest import make_post

    from mkdocs_syndicate.channels.base import Site
    from mkdocs_syndicate.channels.forem import ForemChannel
    from mkdocs_syndicate.channels.settings import parse_channels
    from mkdocs_syndicate.registry import clients

    assert forem_tags(("हिन्दी", "cafe\u0301", "日本語")) == ["café", "日本語"]
    settings = parse_channels({"devto": {"type": "forem", "api_key": "k" * 24}}, clients())[0]
    prepared = ForemChannel(settings, Site("https://example.com/", "Example")).prepare(
        make_post(1, tags=("हिन्दी", "python"), body="Text."))
    assert any("tag 'हिन्दी' is left out on devto" in w for w in prepared.warnings)
