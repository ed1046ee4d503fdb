"""What a reader sees while the conversation loads and after (issue 39), in a real browser: the
page does not jump as the replies fill in (Cumulative Layout Shift, from the browser's own
`layout-shift` entries), and the replies are readable (text against its background at least
4.5:1, WCAG's AA for body text) in Material's light scheme, its dark one (`slate`) and MkDocs's
default theme, each a small site built here."""

from __future__ import annotations

import datetime as dt
import html as entities
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from channel_specs import SPECS
from conftest import TRUSTED_INDEXNOW_KEYS
from sites import mkdocs, post, write_site
from test_conversation import served
from test_crosslinks import CHROMIUM_FLAGS, chromium

from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.registry import emulators
from mkdocs_syndicate.sandbox import SandboxServer

# The tests keep to one worker (xdist_group), so that the module's fixture
# (three themed sites built and measured in Chromium) is made once a run, not once a worker.
pytestmark = [pytest.mark.process, pytest.mark.xdist_group("reader-layout")]

THEMES: dict[str, dict[str, Any]] = {
    "material-light": {"name": "material"},
    "material-slate": {"name": "material", "palette": {"scheme": "slate"}},
    "mkdocs": {"name": "mkdocs"},
}

# Put first in the page's <head>: the layout shifts from the start (buffered), then, once the
# replies are shown and two frames are painted, the measures as JSON in <html data-measured>.
MEASURE = """<script>
(function () {
  var cls = 0, shifts = [];
  try {
    new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (e) {
        if (e.hadRecentInput) return;
        cls += e.value;
        shifts.push({ value: e.value, sources: (e.sources || []).map(function (s) {
          var r = s.previousRect, q = s.currentRect;
          return (s.node ? s.node.nodeName + "." + (s.node.className || "") + " " +
            String(s.node.textContent || "").trim().slice(0, 30) : "?") +
            " from " + [r.x, r.y, r.width, r.height].join(",") + " to " + [q.x, q.y, q.width, q.height].join(",");
        }) });
      });
    }).observe({ type: "layout-shift", buffered: true });
  } catch (e) { shifts.push({ error: String(e) }); }
  function rgba(value) {
    var m = String(value).match(/rgba?\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    var p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(parseFloat);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  }
  function over(top, below) {   // `top` composited over an opaque `below`
    var a = top[3];
    return [0, 1, 2].map(function (i) { return top[i] * a + below[i] * (1 - a); }).concat([1]);
  }
  function background(element) {   // the opaque colour behind `element`
    var layers = [];
    for (var e = element; e; e = e.parentElement) {
      var c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    var colour = [255, 255, 255, 1];   // the canvas
    for (var i = layers.length - 1; i >= 0; i--) colour = over(layers[i], colour);
    return colour;
  }
  function opacity(element) {
    var o = 1;
    for (var e = element; e; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity);
    return o;
  }
  function luminance(c) {
    var l = c.slice(0, 3).map(function (v) {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  }
  function contrast() {   // every element of the replies that holds text of its own
    var found = [];
    var section = document.querySelector("section.syndicate-replies");
    var aside = document.querySelector("aside.syndicate-links");
    [section, aside].forEach(function (root) {
      if (!root) return;
      [root].concat(Array.prototype.slice.call(root.querySelectorAll("*"))).forEach(function (e) {
        var own = Array.prototype.some.call(e.childNodes, function (n) { return n.nodeType === 3 && n.nodeValue.trim(); });
        if (!own || !e.getClientRects().length) return;
        var bg = background(e);
        var fg = rgba(getComputedStyle(e).color);
        fg = over([fg[0], fg[1], fg[2], fg[3] * opacity(e)], bg);
        var a = luminance(fg), b = luminance(bg);
        found.push({ element: e.nodeName + "." + (e.className || ""), text: e.textContent.trim().slice(0, 40),
          ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05),
          color: fg.slice(0, 3).map(Math.round), background: bg.slice(0, 3).map(Math.round) });
      });
    });
    return found;
  }
  function done() {
    var section = document.querySelector("section.syndicate-replies");
    if (!section || section.hasAttribute("aria-busy")) { setTimeout(done, 50); return; }
    setTimeout(function () {
      document.documentElement.setAttribute("data-measured", JSON.stringify({ cls: cls, shifts: shifts, contrast: contrast() }));
    }, 1000);
  }
  window.addEventListener("load", done);
})();
</script>"""


@dataclass
class Measured:
    cls: float
    shifts: list[dict[str, Any]]
    contrast: list[dict[str, Any]]


def measure(url: str, profile: Path) -> Measured:
    html = subprocess.run(
        [
            chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--window-size=1280,800",
            "--virtual-time-budget=20000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    ).stdout
    found = re.search(r'<html[^>]*\sdata-measured="([^"]*)"', html)
    assert found, f"the page did not finish measuring: {html[html.find('<section') - 200 :][:3000]}"
    data = json.loads(entities.unescape(found.group(1)))
    return Measured(data["cls"], data["shifts"], data["contrast"])


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Measured]]:
    chromium()
    tmp = tmp_path_factory.mktemp("reader")
    with SandboxServer(tmp / "sandbox-state", emulators()) as sandbox:
        sandbox.emulators["indexnow"].trust(*TRUSTED_INDEXNOW_KEYS)
        measured: dict[str, Measured] = {}
        for name, theme in THEMES.items():
            folder = tmp / name
            blog = theme["name"] == "material"
            channels = {
                "masto": SPECS["mastodon"].raw(sandbox),
                "bsky": SPECS["bluesky"].raw(
                    sandbox, appview=f"{sandbox.url}/bluesky-appview", web_url=f"{sandbox.url}/bluesky"
                ),
            }
            config = write_site(
                folder,
                {"mode": "send", "comments": True, "channels": channels},
                {"a.md": post("Talked about", dt.date(2026, 11, 20))},
                blog=blog,
            )
            site = yaml.safe_load(config.read_text())
            site["theme"] = theme
            config.write_text(yaml.safe_dump(site, sort_keys=False))
            assert mkdocs(config).returncode == 0
            ledger = Ledger.read(folder / "ledger.yml")
            key = next(iter(ledger.posts))
            masto, bsky = ledger.record(key, "masto"), ledger.record(key, "bsky")
            assert masto and bsky and masto.remote_id and bsky.remote_id
            first = sandbox.add_reply("mastodon", masto.remote_id, author="ana", text="<p>Good read, thanks</p>")
            sandbox.add_reply("mastodon", first["id"], author="bo", text="<p>Agreed</p>")
            sandbox.add_reply("mastodon", masto.remote_id, author="cy", text="<p>The ending</p>", warning="Spoilers")
            sandbox.add_reply("bluesky", bsky.remote_id, author="dee", text="Nice one")
            sandbox.react("mastodon", masto.remote_id, likes=3, reposts=1)
            site["plugins"][-1]["syndicate"]["mode"] = "plan"
            config.write_text(yaml.safe_dump(site, sort_keys=False))
            built = mkdocs(config)
            assert built.returncode == 0, built.stderr
            (page,) = (
                p for p in (folder / "site").rglob("index.html") if '<aside class="syndicate-links' in p.read_text()
            )
            text = page.read_text()
            page.write_text(text.replace("<head>", "<head>" + MEASURE, 1))
            server = served(folder / "site")
            try:
                url = f"http://127.0.0.1:{server.server_address[1]}/{page.relative_to(folder / 'site').as_posix()}"
                measured[name] = measure(url, tmp / f"profile-{name}")
            finally:
                server.shutdown()
                server.server_close()
        yield measured


@pytest.mark.parametrize("theme", list(THEMES))
def test_the_page_does_not_shift_as_the_replies_fill_in(pages: dict[str, Measured], theme: str) -> None:
    """The page moving sideways as the replies make it scroll (a scrollbar appearing) and the
    footer moving down as they come (0.14 to 0.34 in all before) are gone: what may still move is
    the footer as the section takes its room, when the browser painted before the script ran,
    and the links after a count (under 0.02 measured). Google's "good" is under 0.1."""
    shown = pages[theme]
    assert shown.cls < 0.05, shown.shifts


@pytest.mark.parametrize("theme", list(THEMES))
def test_the_replies_are_readable_in_each_theme(pages: dict[str, Measured], theme: str) -> None:
    shown = pages[theme]
    assert len(shown.contrast) > 10
    poor = [c for c in shown.contrast if c["ratio"] < 4.5]
    assert not poor, json.dumps(poor, indent=1)
