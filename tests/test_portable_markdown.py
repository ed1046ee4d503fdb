"""DEV bodies from real posts: what the site shows, DEV must show too.

The posts in tests/data/material-blog are Material for MkDocs' own blog (see its NOTICE). They are
built by MkDocs as a Material blog with the extensions Material's documentation recommends, and
announced to the sandbox's DEV. The HTML MkDocs made (the build's record of the post) and the
Markdown DEV received, rendered by Python-Markdown with only what DEV has (tables, footnotes,
fenced code, strikethrough), must say the same words and carry the same code; no MkDocs syntax may
be left as text or turn into a code block; every link must work off the site.
"""

from __future__ import annotations

import collections
import html as html_text
import json
import re
import shutil
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest
import yaml
from sites import mkdocs

from mkdocs_syndicate.content.portable import code_languages, portable_markdown

# The tests keep to one worker (xdist_group), so that the module's fixture
# (a Material blog built and sent to DEV) is made once a run, not once a worker.
pytestmark = pytest.mark.xdist_group("material-blog-on-dev")

DATA = Path(__file__).parent / "data" / "material-blog"
POSTS = sorted(p for p in DATA.glob("*.md") if p.name != "NOTICE.md")
# superfences stands in for CommonMark's fences, which Python-Markdown's fenced_code only reads at
# the top level (not in a blockquote, where admonitions go).
DEV_EXTENSIONS = ["pymdownx.superfences", "footnotes", "tables", "pymdownx.tilde"]
MATERIAL_EXTENSIONS = [
    "abbr",
    "admonition",
    "attr_list",
    "def_list",
    "footnotes",
    "md_in_html",
    "tables",
    {"toc": {"permalink": True}},
    "pymdownx.details",
    {"pymdownx.highlight": {"anchor_linenums": True}},
    "pymdownx.inlinehilite",
    "pymdownx.superfences",
    {"pymdownx.tabbed": {"alternate_style": True}},
    "pymdownx.tilde",
    {
        "pymdownx.emoji": {
            "emoji_index": "!!python/name:material.extensions.emoji.twemoji",
            "emoji_generator": "!!python/name:material.extensions.emoji.to_svg",
        }
    },
]
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4c50000000049454e44ae426082"
)


class Rendered(HTMLParser):
    """An HTML fragment's words, its code blocks and the targets of its links and images (line
    numbers, which are not the code, left out)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self.code: list[str] = []
        self.targets: list[str] = []
        self._pre = self._numbers = 0
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if self._numbers or {"linenos", "linenodiv"} & set(classes):
            self._numbers += 1
        if tag == "pre" and not self._numbers:
            self._pre += 1
            self.code.append("")
        self.targets += [value for name, value in attrs if (tag, name) in (("a", "href"), ("img", "src")) and value]

    def handle_endtag(self, tag: str) -> None:
        if self._numbers:
            self._numbers -= 1
        elif tag == "pre":
            self._pre -= 1

    def handle_data(self, data: str) -> None:
        if self._numbers:
            return
        if self._pre:
            self.code[-1] += data
        self.words += re.findall(r"\w+", data)


def as_dev_shows(text: str) -> Rendered:
    return Rendered(markdown.markdown(text, extensions=DEV_EXTENSIONS))


def without_title(html: str, title: str) -> str:
    """DEV shows the title itself: a first heading that says just the title is not repeated."""
    heading = re.match(r"\s*<h1[^>]*>(.*?)</h1>", html, re.DOTALL)
    same = (
        heading and " ".join(html_text.unescape(re.sub(r"<[^>]+>", " ", heading.group(1))).strip("¶ ").split()) == title
    )
    return html[heading.end() :] if heading and same else html


@pytest.fixture(scope="module")
def announced(tmp_path_factory):
    """{post file name: (the HTML MkDocs made, the Markdown DEV received, the post's URL)}."""
    folder = tmp_path_factory.mktemp("material-blog")
    posts = folder / "docs" / "blog" / "posts"
    posts.mkdir(parents=True)
    (folder / "docs" / "index.md").write_text("# Home\n")
    (folder / "docs" / "blog" / "index.md").write_text("# Blog\n")
    authors = set()
    for path in POSTS:
        shutil.copy(path, posts / path.name)
        text = path.read_text(encoding="utf-8")
        authors |= set(yaml.safe_load(text.split("---\n", 2)[1]).get("authors") or [])
        for image in re.findall(r"(?:\]\(|\]: )(\.?/?[\w./-]+\.png)", text):  # the posts' own images
            (posts / image).parent.mkdir(parents=True, exist_ok=True)
            (posts / image).write_bytes(PNG)
    (folder / "docs" / "blog" / ".authors.yml").write_text(
        yaml.safe_dump(
            {
                "authors": {
                    name: {"name": name, "description": "-", "avatar": "https://example.com/a.png"} for name in authors
                }
            }
        )
    )
    config = {
        "site_name": "Material's blog, as a test",
        "site_url": "https://blog.example/",
        "theme": {"name": "material", "features": ["content.code.annotate"]},
        "plugins": [
            "blog",
            {
                "syndicate": {
                    "mode": "send",
                    "sandbox": True,
                    "backlog": "send",
                    "channels": {"devto": {"type": "forem", "api_key": "x-key-12", "min_interval": 0}},
                }
            },
        ],
        "markdown_extensions": MATERIAL_EXTENSIONS,
    }
    text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    (folder / "mkdocs.yml").write_text(
        text.replace("'!!python/name:", "!!python/name:").replace("to_svg'", "to_svg").replace("twemoji'", "twemoji")
    )
    result = mkdocs(folder / "mkdocs.yml")
    assert result.returncode == 0, result.stderr[-3000:]
    built = json.loads((folder / ".syndicate-cache" / "ledger.yml.posts.json").read_text())["posts"]
    articles = json.loads((folder / ".syndicate-sandbox" / "state.json").read_text())["forem"]["articles"]
    bodies = {a["canonical_url"]: a["body_markdown"] for a in articles}
    return {
        Path(p["source"]).name: (without_title(p["body_html"], p["title"]), bodies[p["url"]], p["url"]) for p in built
    }


@pytest.mark.process
@pytest.mark.parametrize("path", POSTS, ids=[p.stem for p in POSTS])
def test_a_real_post_says_the_same_on_dev(announced, path):
    html, body, _ = announced[path.name]
    before, after = Rendered(html), as_dev_shows(body)
    missing = collections.Counter(before.words) - collections.Counter(after.words)
    extra = collections.Counter(after.words) - collections.Counter(before.words)
    assert not missing and not extra, f"{path.name}: words lost {dict(missing)}, words added {dict(extra)}"
    # The same code, no more: an admonition's or a tab's content must not turn into a code block.
    marker = re.compile(r"\((\d+)\)!")
    assert sorted(c.strip("\n") for c in after.code) == sorted(marker.sub(r"(\1)", c).strip("\n") for c in before.code)


@pytest.mark.process
@pytest.mark.parametrize("path", POSTS, ids=[p.stem for p in POSTS])
def test_no_mkdocs_syntax_is_left_and_every_link_works_off_the_site(announced, path):
    _, body, _url = announced[path.name]
    outside_code = re.sub(r"^[ >]*(`{3,}).*?^[ >]*\1", "", body, flags=re.MULTILINE | re.DOTALL)
    assert not re.search(r"^[ >]*(!!!|\?\?\?|===)", outside_code, re.MULTILINE)
    assert not re.search(r"\{ *[.#:]|\{ *[\w-]+=|:(material|octicons|fontawesome)-", outside_code)
    assert "<svg" not in body and "headerlink" not in body and not re.search(r"\(\d+\)!", body)
    for target in as_dev_shows(body).targets:
        assert target.startswith(("https://", "http://", "#", "mailto:")), f"{path.name}: {target}"
    for image in re.findall(r"!\[[^\]]*\]\((\S+)", body):
        assert image.startswith("https://blog.example/"), image  # the site's image, where the site has it


@pytest.mark.unit
def test_the_posts_hold_what_the_conversion_is_for():
    """The data must keep holding each construct, or the tests above prove less than they say."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in POSTS)
    for construct in (
        r"^!!! \w",
        r"^\?\?\? \w",
        r"^ +=== \"",
        r"# \(\d\)!",
        r"\{ \.[\w-]+",
        r"\[\^\d\]:",
        r"^ *!\[[^\]]+\]$",
        r"^ *!\[[^\]]+\]\(\./",
        r"^\| ",
        ":octicons-",
        r"^ +``` \w",
        "markdown>",
    ):
        assert re.search(construct, text, re.MULTILINE), construct


def material_html(source: str) -> str:
    """What MkDocs with Material's extensions makes of `source` (in-process Python-Markdown)."""
    extensions = [e if isinstance(e, str) else next(iter(e)) for e in MATERIAL_EXTENSIONS if "emoji" not in str(e)]
    configs = {
        next(iter(e)): next(iter(e.values()))
        for e in MATERIAL_EXTENSIONS
        if isinstance(e, dict) and "emoji" not in str(e)
    }
    return markdown.markdown(textwrap.dedent(source), extensions=extensions, extension_configs=configs)


TEMPLATE_POST = """\
    # A post from a template

    !!!info
        Written without the space, as post templates do.

    ???tip "A folded tip"
        Hidden until opened.

    ![Screenshot [2560x1080]](../media/wide.png)

    ``` py title="main.py"
    print("hi")  # (1)!
    ```

    1.  Says hello.
    """


@pytest.mark.unit
def test_what_templates_write_is_converted_too():
    source = textwrap.dedent(TEMPLATE_POST)
    text = portable_markdown(
        material_html(source), "https://blog.example/2026/a/", "A post from a template", code_languages(source)
    )
    assert text.startswith("> **Info**\n>\n> Written without the space, as post templates do.")
    assert "> **A folded tip**\n>\n> Hidden until opened." in text
    assert "![Screenshot [2560x1080]](https://blog.example/2026/media/wide.png)" in text
    assert '**main.py**\n\n```py\nprint("hi")  # (1)\n```\n\n1. Says hello.' in text
    assert as_dev_shows(text).code == ['print("hi")  # (1)\n']


@pytest.mark.unit
def test_tabs_in_either_style_become_a_bold_line_and_their_content():
    source = '=== "pip"\n\n    Use pip.\n\n=== "uv"\n\n    Use uv.\n'
    for style in (True, False):
        html = markdown.markdown(
            source, extensions=["pymdownx.tabbed"], extension_configs={"pymdownx.tabbed": {"alternate_style": style}}
        )
        assert portable_markdown(html, "https://x.example/p/") == "**pip**\n\nUse pip.\n\n**uv**\n\nUse uv."


@pytest.mark.unit
def test_a_code_block_holding_fences_gets_a_longer_fence():
    html = material_html("````markdown\n```py\nx = 1\n```\n````\n")
    text = portable_markdown(html, "https://x.example/p/", languages=code_languages("````markdown\n```py\n"))
    assert text == "````markdown\n```py\nx = 1\n```\n````"
    assert as_dev_shows(text).code == ["```py\nx = 1\n```\n"]


@pytest.mark.unit
def test_footnotes_stay_footnotes():
    html = material_html("Said[^1] twice[^note].\n\n[^1]: First.\n[^note]: Second.\n")
    text = portable_markdown(html, "https://x.example/p/")
    assert text == "Said[^1] twice[^note].\n\n[^1]: First.\n\n[^note]: Second."


@pytest.mark.unit
def test_code_languages_come_from_the_source_by_first_line():
    source = "```py\n\nx = 1\n```\n\n``` { .sh .no-copy }\nls\n```\n\n```\nplain\n```\n"
    assert code_languages(source) == {"x = 1": "py", "ls": "sh"}


@pytest.mark.unit
def test_a_loose_list_keeps_its_blank_lines_and_a_tight_one_has_none():
    """Items holding paragraphs or quotes keep a blank line between them (else a quote's last line
    takes the next item in as its own); a list of plain items stays tight. Once broken unseen,
    when a later module-level name rebound the block tags this test names."""
    loose = portable_markdown(material_html("- First.\n\n    > Quoted.\n\n- Second.\n"), "https://x.example/p/")
    assert loose == "- First.\n\n  > Quoted.\n\n- Second.", loose
    tight = portable_markdown(material_html("- one\n- two\n"), "https://x.example/p/")
    assert tight == "- one\n- two", tight
    code = portable_markdown("<ul><li>Run:<pre><code>ls</code></pre></li><li>Done.</li></ul>", "https://x.example/p/")
    assert "```\n\n- Done." in code, code
