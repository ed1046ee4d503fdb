"""Front matter `image:` in a Material blog post, written as the README shows (issue 53): it was
resolved against the post's URL (`blog/2026/11/20/harbour/images/...`), not its Markdown file, so
the post went out without its image; the warning came after the summary, and `CI=true mkdocs
build --strict` exited 0. Now a path is relative to the Markdown file, as MkDocs reads links, and
one that names no file is a build warning said before anything is sent."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from conftest import site_channels
from PIL import Image
from sites import mkdocs, post, write_site

pytestmark = pytest.mark.process


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (120, 80), (30, 90, 150)).save(out, "PNG")
    return out.getvalue()


def blog_site(tmp_path, sandbox, *, with_file: bool):
    harbour = post("Harbour", dt.date(2026, 11, 20), image="images/harbour.png", image_alt="A harbour at dawn")
    config = write_site(tmp_path / "site", {"channels": site_channels(sandbox)}, {"harbour.md": harbour}, blog=True)
    if with_file:
        (config.parent / "docs" / "blog" / "posts" / "images").mkdir()
        (config.parent / "docs" / "blog" / "posts" / "images" / "harbour.png").write_bytes(png())
    sandbox.key_file_root = config.parent / "site"
    return config


def test_an_image_path_in_a_blog_posts_front_matter_is_relative_to_its_markdown_file(tmp_path, sandbox):
    config = blog_site(tmp_path, sandbox, with_file=True)
    result = mkdocs(config, "build", "--strict", env={"CI": "true"})
    assert result.returncode == 0, result.stderr
    (status,) = sandbox.snapshot()["mastodon"]["statuses"]
    (media_id,) = status["media_ids"]
    assert sandbox.snapshot()["mastodon"]["media"][media_id]["description"] == "A harbour at dawn"


def test_an_image_that_is_no_file_fails_a_strict_build_before_anything_is_sent(tmp_path, sandbox):
    config = blog_site(tmp_path, sandbox, with_file=False)
    result = mkdocs(config, "build", "--strict", env={"CI": "true"})
    assert result.returncode != 0, result.stderr
    said = "front matter image 'images/harbour.png' is no file of the site: looked for blog/posts/images/harbour.png"
    assert said in result.stderr and "harbour.md" in result.stderr, result.stderr
    assert sandbox.requests() == [] and not (config.parent / "ledger.yml").exists()
