"""The sandbox dashboard's images and threads as a real browser parses the page (issue 35): the
hostile alt text stays an attribute and text, no element comes from it, and replies are nested
under the posts they answer. tests/test_media_emulators.py checks the same page with Python's
HTML parser, without a browser."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_crosslinks import CHROMIUM_FLAGS, chromium
from test_media_emulators import HOSTILE, Cards, _dashboard_fixture

pytestmark = pytest.mark.process


def test_a_browser_shows_the_dashboards_images_alt_text_and_threads(sandbox, tmp_path: Path):
    browser = chromium()
    ids = _dashboard_fixture(sandbox)
    # Less virtual time than the page's 3-second refresh: the page as first shown.
    profile, budget = f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=1500"
    dom = subprocess.run(
        [browser, *CHROMIUM_FLAGS, profile, budget, "--dump-dom", f"{sandbox.url}/"],
        capture_output=True,
        text=True,
        timeout=180,
    ).stdout
    parsed = Cards()
    parsed.feed(dom)
    assert "script" not in parsed.tags
    cards = parsed.cards
    assert [alt for _, alt in cards[ids["root"]]["images"]] == [HOSTILE, ""]
    assert HOSTILE in cards[ids["root"]]["text"] and "no alt text" in cards[ids["root"]]["text"]
    assert cards[ids["reply"]]["parent"] == ids["root"]
    assert cards[ids["bsky_part"]]["parent"] == ids["bsky_root"]
    assert cards[ids["thread_event"]]["parent"] == ids["image_event"]
