"""A post's image (issue 35) sent to the third-party `mastodon-mock`, a second Mastodon server
nobody here wrote: the upload with its description, then the status naming it."""

from __future__ import annotations

import pytest
from conftest import ListReporter, make_post
from PIL import Image
from test_third_party import mastodon_mock, mock_statuses

from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = [pytest.mark.http, pytest.mark.process]
__all__ = ["mastodon_mock"]  # the fixture, used by name

ALT = "A chart of uploads per run, one bar each"


def test_mastodon_mock_takes_the_image_and_its_description_and_the_status_shows_it(tmp_path, mastodon_mock, clock):
    (tmp_path / "site" / "img").mkdir(parents=True)
    Image.new("RGB", (90, 60), (10, 120, 60)).save(tmp_path / "site" / "img" / "chart.png")
    site = Site("https://example.com/", "Example", str(tmp_path / "site"))
    channels = {"masto": {"type": "mastodon", "instance": mastodon_mock, "token": "mock_token"}}
    options = parse_options(channels, ledger_path=tmp_path / "ledger.yml", site=site, sandbox=False, sending=True)
    post = make_post(1, image="https://example.com/img/chart.png", image_alt=ALT)
    report = send(options, [post], ListReporter(), clock=clock)
    assert [r.state for r in report.results] == ["done"], report.results
    record = Ledger.read(tmp_path / "ledger.yml").record(post.key, "masto")
    (status,) = [s for s in mock_statuses(mastodon_mock) if s["id"] == record.remote_id]
    (attached,) = status["media_attachments"]
    assert attached["id"] == record.media[0].id and attached["description"] == ALT
