"""What goes out, as people would write it: a summary when there is no description, no title said
twice, hashtags only from the lists the site chose, and DEV bodies without MkDocs-only syntax."""

from __future__ import annotations

import textwrap

import pytest
import yaml
from sites import mkdocs, write_site

from mkdocs_syndicate.content.portable import excerpt, portable_markdown

pytestmark = pytest.mark.http

FRONT = "---\ndate: 2026-11-20\nsyndicate: true\n{extra}---\n\n"


def page(body: str, **meta: str) -> str:
    extra = "".join(f"{k}: {v}\n" for k, v in meta.items())
    return FRONT.format(extra=extra) + textwrap.dedent(body).lstrip()


def sandboxed(folder, **plugin):
    channels = {
        "masto": {"type": "mastodon", "instance": "https://m.example", "token": "x-token-1"},
        "devto": {"type": "forem", "api_key": "x-key-12"},
    }
    return write_site(folder, {"mode": "send", "sandbox": True, "channels": channels, **plugin}, {})


def sent(folder):
    import json

    return json.loads((folder / ".syndicate-sandbox" / "state.json").read_text())


def test_excerpt_rules():
    assert excerpt("# T\n\nFirst *para* with [a link](x.md).\n\nSecond.", "T") == "First para with a link."
    assert excerpt("Before the cut.\n\n<!-- more -->\n\nAfter.", "T") == "Before the cut."
    assert excerpt("# T\n\n!!! note\n    not this\n\nThis one.", "T") == "This one."
    assert excerpt("T\n\nmore", "T") == ""  # only the title again
    assert excerpt("word " * 200, "T").endswith("…") and len(excerpt("word " * 200, "T")) <= 400


@pytest.mark.process
def test_a_post_without_description_is_announced_with_its_excerpt_and_the_title_is_not_repeated(tmp_path):
    config = sandboxed(tmp_path)
    docs = tmp_path / "docs" / "posts"
    (docs / "a.md").write_text(
        page("""\
        # Alpha

        Why *this* matters, in [one line](b.md).

        <!-- more -->

        The rest.
        """)
    )
    (docs / "b.md").write_text(page("# Beta\n\nBody of beta.\n", description="Beta"))
    result = mkdocs(config)
    assert result.returncode == 0, result.stderr
    texts = {s["text"].splitlines()[0]: s["text"] for s in sent(tmp_path)["mastodon"]["statuses"]}
    assert "Why this matters, in one line." in texts["Alpha"]
    assert texts["Beta"].count("Beta") == 1  # a description equal to the title is not said twice
    (article,) = [a for a in sent(tmp_path)["forem"]["articles"] if a["title"] == "Alpha"]
    assert article["description"] == "Why this matters, in one line."


@pytest.mark.process
def test_hashtags_come_from_tags_and_categories_as_a_feed_gives_them_unless_the_site_chooses(tmp_path):
    """A blog with categories but no tags got no hashtags through the plugin, while `--feed`
    (whose <category> holds both) gave them: one rule for both sources."""
    blog_post = page("# Gamma\n\nText.\n", tags="[mkdocs]", categories="[Release Notes]")
    default = sandboxed(tmp_path / "default")
    (tmp_path / "default" / "docs" / "posts" / "c.md").write_text(blog_post)
    assert mkdocs(default).returncode == 0
    (status,) = sent(tmp_path / "default")["mastodon"]["statuses"]
    assert "#mkdocs" in status["text"] and "#ReleaseNotes" in status["text"]

    only_categories = sandboxed(tmp_path / "categories")
    (tmp_path / "categories" / "docs" / "posts" / "c.md").write_text(
        page("# Gamma\n\nText.\n", categories="[Release Notes]")
    )
    planning = sandboxed(tmp_path / "plan", mode="plan")
    (tmp_path / "plan" / "docs" / "posts" / "c.md").write_text(page("# Gamma\n\nText.\n", categories="[Release Notes]"))
    planned = mkdocs(planning)
    assert "hashtags and DEV tags come from front matter tags and categories (hashtags_from)" in planned.stderr
    assert mkdocs(only_categories).returncode == 0
    (status,) = sent(tmp_path / "categories")["mastodon"]["statuses"]
    assert "#ReleaseNotes" in status["text"]

    tags_only = sandboxed(tmp_path / "tags", hashtags_from=["tags"])
    (tmp_path / "tags" / "docs" / "posts" / "c.md").write_text(blog_post)
    assert mkdocs(tags_only).returncode == 0
    (status,) = sent(tmp_path / "tags")["mastodon"]["statuses"]
    assert "#mkdocs" in status["text"] and "#ReleaseNotes" not in status["text"]


MATERIAL = """\
# Delta

Intro.

<!-- more -->

!!! warning "Mind the gap"
    Between the train and the platform.

??? info
    Folded away.

=== "pip"

    ```sh
    pip install thing
    ```

=== "uv"

    Use uv.

A claim (1)
{ .annotate }

1.  The annotation.

[Button](https://example.com/){ .md-button }
"""


@pytest.mark.process
def test_dev_bodies_are_portable_markdown(tmp_path):
    """Through a real build: the site's own extensions make the HTML, and DEV gets it as Markdown."""
    config = sandboxed(tmp_path)
    site = yaml.safe_load(config.read_text())
    site["markdown_extensions"] = [
        "admonition",
        "attr_list",
        "pymdownx.details",
        "pymdownx.superfences",
        {"pymdownx.tabbed": {"alternate_style": True}},
    ]
    config.write_text(yaml.safe_dump(site))
    (tmp_path / "docs" / "posts" / "d.md").write_text(page(MATERIAL))
    assert mkdocs(config).returncode == 0
    (article,) = sent(tmp_path)["forem"]["articles"]
    converted = article["body_markdown"]
    assert converted.startswith("Intro.\n\n> **Mind the gap**\n>\n> Between the train and the platform.")
    assert "> **Info**\n>\n> Folded away." in converted
    assert "**pip**\n\n```sh\npip install thing\n```" in converted and "**uv**\n\nUse uv." in converted
    assert "{" not in converted and "A claim (1)" in converted and "1. The annotation." in converted
    assert "[Button](https://example.com/)" in converted
    assert "<!-- more -->" not in converted and "!!!" not in converted and "===" not in converted


def test_code_blocks_are_left_alone():
    html = '<pre><code class="language-markdown">!!! note\n    stays\n&lt;!-- more --&gt;\n</code></pre>'
    assert portable_markdown(html, "https://example.com/p/") == "```markdown\n!!! note\n    stays\n<!-- more -->\n```"
