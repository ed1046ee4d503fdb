"""A post's image (issue 35): which image and which alt text, the warning for a missing alt, and
an image made to fit a service's limits (content/images.py, content/fitting.py)."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import pytest
from conftest import make_post
from PIL import Image

from mkdocs_syndicate.config.channels import Site
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.content.fitting import TooLarge, fit
from mkdocs_syndicate.content.images import PostImage, first_image, post_image
from mkdocs_syndicate.sources.feed import read_feed

pytestmark = pytest.mark.unit

SITE_URL = "https://example.com/"


def encoded(width: int, height: int, kind: str = "PNG", mode: str = "RGB", noise: bool = False) -> bytes:
    """A real image: noise (incompressible) when a test needs bytes, else a flat colour."""
    if noise:
        import os

        picture = Image.frombytes(mode, (width, height), os.urandom(width * height * len(mode)))
    else:
        picture = Image.new(mode, (width, height), (200, 120, 40, 128)[: len(mode)])
    out = io.BytesIO()
    picture.save(out, kind)
    return out.getvalue()


def image_of(data: bytes, mime: str = "image/png") -> PostImage:
    return PostImage(data, mime, "0" * 64, "alt", "x.png", "https://example.com/x.png")


# ---------------------------------------------------------------- which image, which alt text


def test_the_first_image_of_the_html_with_its_alt_text_or_none():
    html = '<p>Intro</p><img src="data:image/png;base64,AA" alt="inline"><img src="../img/a.png" alt="A chart"><img src="b.png">'
    assert first_image(html, "https://example.com/blog/p/") == ("https://example.com/blog/img/a.png", "A chart")
    assert first_image('<img src="b.png">', "https://example.com/p/") == ("https://example.com/p/b.png", None)
    assert first_image('<img src="b.png" alt="">', "https://example.com/p/") == ("https://example.com/p/b.png", "")
    assert first_image("<img alt src='b.png'>", "https://example.com/p/")[1] == ""  # bare alt: decorative
    assert first_image("<p>no image</p>", "https://example.com/p/") is None


def feed_with(tmp_path, item: dict) -> list:
    feed = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "Site",
        "items": [
            {"id": "1", "url": f"{SITE_URL}posts/p/", "title": "P", "date_published": "2026-11-20T00:00:00Z", **item}
        ],
    }
    path = tmp_path / "feed.json"
    path.write_text(json.dumps(feed), encoding="utf-8")
    return read_feed(str(path), SITE_URL)


def test_a_feed_entry_without_an_image_field_gives_its_contents_first_image_and_alt(tmp_path):
    (post,) = feed_with(tmp_path, {"content_html": '<p>x</p><img src="/img/a.png" alt="A lighthouse">'})
    assert (post.image, post.image_alt) == ("https://example.com/img/a.png", "A lighthouse")
    (post,) = feed_with(tmp_path, {"image": "/img/e.png", "content_html": '<img src="/img/a.png" alt="A">'})
    assert (post.image, post.image_alt) == ("https://example.com/img/e.png", None)  # an enclosure has no alt


def site_with(tmp_path, data: bytes) -> Site:
    (tmp_path / "site" / "img").mkdir(parents=True, exist_ok=True)
    (tmp_path / "site" / "img" / "a.png").write_bytes(data)
    return Site(SITE_URL, "Site", str(tmp_path / "site"))


def test_an_image_without_alt_text_is_a_warning_naming_the_post_and_a_decorative_one_is_not(tmp_path):
    site = site_with(tmp_path, encoded(40, 30))
    post = make_post(3, image=f"{SITE_URL}img/a.png")
    image, notes = post_image(post, site.url, site.site_dir)
    assert image is not None and image.alt == "" and image.mime == "image/png"
    (note,) = notes
    assert note.startswith("docs/blog/post-3.md: image https://example.com/img/a.png has no alt text")
    assert 'image_alt: ""' in note
    image, notes = post_image(replace(post, image_alt=""), site.url, site.site_dir)
    assert image is not None and image.alt == "" and notes == ()
    image, notes = post_image(replace(post, image_alt="A chart"), site.url, site.site_dir)
    assert image is not None and image.alt == "A chart" and notes == ()


def channel(tmp_path, site: Site, raw: dict):
    from mkdocs_syndicate.sandbox.site import make_channels

    options = parse_options({"ch": raw}, ledger_path=tmp_path / "ledger.yml", site=site, sandbox=False, sending=False)
    (made,) = make_channels(options)
    return made


def test_the_warning_reaches_the_plan_of_a_channel_that_sends_the_image(tmp_path):
    site = site_with(tmp_path, encoded(40, 30))
    post = make_post(3, image=f"{SITE_URL}img/a.png")
    masto = {"type": "mastodon", "instance": "https://mastodon.example", "token": "t"}
    prepared = channel(tmp_path, site, masto).prepare(post)
    assert prepared.image is not None and any("has no alt text" in w for w in prepared.warnings)
    assert channel(tmp_path, site, masto).preview(post, prepared).endswith("\n[image a.png, no alt text]")
    assert channel(tmp_path, site, {**masto, "embed": "card"}).prepare(post).image is None
    bsky = {"type": "bluesky", "handle": "me.bsky.social", "app_password": "p"}
    assert channel(tmp_path, site, bsky).prepare(post).image is None  # the card stays Bluesky's default
    assert channel(tmp_path, site, {**bsky, "embed": "image"}).prepare(post).image is not None


# ---------------------------------------------------------------- made to fit


def test_an_image_within_the_limits_goes_byte_for_byte_with_its_size():
    data = encoded(64, 48)
    fitted = fit(image_of(data), max_bytes=len(data), max_pixels=64 * 48)
    assert (fitted.data, fitted.width, fitted.height, fitted.resized) == (data, 64, 48, False)


def test_a_photo_over_the_byte_limit_is_made_a_smaller_jpeg_under_it():
    data = encoded(600, 400, noise=True)
    fitted = fit(image_of(data), max_bytes=len(data) // 4)
    assert fitted.resized and fitted.mime == "image/jpeg" and len(fitted.data) <= len(data) // 4
    assert abs(fitted.width / fitted.height - 1.5) < 0.02  # the aspect ratio kept
    assert Image.open(io.BytesIO(fitted.data)).size == (fitted.width, fitted.height)


def test_an_image_over_the_pixel_limit_is_scaled_under_it_and_transparency_stays_png():
    data = encoded(300, 200, mode="RGBA")
    fitted = fit(image_of(data), max_bytes=10**7, max_pixels=150 * 100)
    assert fitted.resized and fitted.width * fitted.height <= 150 * 100 and fitted.mime == "image/png"


def test_an_image_that_cannot_be_made_small_enough_is_refused_with_the_numbers():
    data = encoded(300, 300, noise=True)
    with pytest.raises(
        TooLarge, match=rf"image https://example.com/x.png: {len(data)} bytes, 300×300 pixels; the limit is 100 bytes"
    ):
        fit(image_of(data), max_bytes=100)


def test_an_animated_gif_over_the_limit_is_refused_not_flattened():
    frames = [Image.new("RGB", (80, 80), colour) for colour in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:])
    with pytest.raises(TooLarge, match="animated image is not made smaller"):
        fit(image_of(out.getvalue(), "image/gif"), max_bytes=10)


def test_the_plugins_choice_front_matter_first_then_the_pages_first_image_and_bad_values_named():
    from mkdocs_syndicate.errors import PostError
    from mkdocs_syndicate.sources.mkdocs_build import _image

    page, url, src = '<p>x</p><img src="../img/b.png" alt="B">', "https://example.com/blog/p/", "docs/blog/p.md"
    assert _image({"image": "/img/a.png", "image_alt": "A"}, page, url, src) == ("https://example.com/img/a.png", "A")
    assert _image({"image": "/img/a.png"}, page, url, src) == ("https://example.com/img/a.png", None)
    assert _image({}, page, url, src) == ("https://example.com/blog/img/b.png", "B")
    assert _image({"image_alt": ""}, page, url, src) == ("https://example.com/blog/img/b.png", "")
    assert _image({}, "<p>none</p>", url, src) == (None, None)
    with pytest.raises(PostError, match=r"docs/blog/p.md: front matter 'image_alt' must be text"):
        _image({"image": "/img/a.png", "image_alt": 3}, page, url, src)


def test_dev_takes_the_posts_own_image_as_its_cover_never_its_bodys_first_image(tmp_path):
    from mkdocs_syndicate.channels.forem import ForemChannel

    (in_body,) = feed_with(tmp_path, {"content_html": '<p>x</p><img src="/img/a.png" alt="A">'})
    (own,) = feed_with(tmp_path, {"image": "/img/e.png", "content_html": '<img src="/img/a.png" alt="A">'})
    dev = channel(tmp_path, Site(SITE_URL, "Site"), {"type": "forem", "api_key": "k"})
    assert isinstance(dev, ForemChannel)
    assert in_body.image_in_body and "main_image" not in dev.article(in_body)["article"]
    assert dev.article(own)["article"]["main_image"] == "https://example.com/img/e.png"
