import pytest

from mkdocs_syndicate.channels.forem import forem_tags, same_url

pytestmark = pytest.mark.unit


def test_forem_tag_form_and_url_matching():
    assert forem_tags(("Python", "Open Source", "c++", "python", "a", "b", "c")) == ["python", "opensource", "c", "a"]
    assert same_url("http://Example.com/a", "https://example.com/a/")
    assert not same_url("https://example.com/a/b", "https://example.com/a/")


def test_a_forem_tag_that_needs_combining_marks_is_left_out_not_misspelt():
    """हिन्दी without its virama is हिनदी, another word: Forem's rule cannot keep the mark, so the
    tag is dropped (with a warning), and tags whose marks compose away (café) stay."""
    from conftest import make_post

    from mkdocs_syndicate.channels.forem import ForemChannel
    from mkdocs_syndicate.config.channels import parse_channels
    from mkdocs_syndicate.config.run import Site
    from mkdocs_syndicate.registry import clients

    assert forem_tags(("हिन्दी", "cafe\u0301", "日本語")) == ["café", "日本語"]
    settings = parse_channels({"devto": {"type": "forem", "api_key": "k" * 24}}, clients())[0]
    prepared = ForemChannel(settings, Site("https://example.com/", "Example")).prepare(
        make_post(1, tags=("हिन्दी", "python"), body_html="<p>Text.</p>")
    )
    assert any("tag 'हिन्दी' is left out on devto" in w for w in prepared.warnings)
