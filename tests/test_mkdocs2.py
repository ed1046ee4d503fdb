"""MkDocs 2.0 (its pre-release from PyPI, in a venv of its own: tests/realserver/install) runs no
plugins and reads no mkdocs.yml, so a blog built with it is announced the way any generator's is:
from its feed, with `inject` putting each post's copies on its built page (docs/recipes/mkdocs-2.md).
Its dev releases read no front matter and write no feed, so the blog keeps a JSON Feed of its own
in `docs/`, which the build copies as it is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import PLUGIN_PYTHONPATH, mastodon_raw
from realserver_pds import cached_install, unavailable

from mkdocs_syndicate.ledger.format import parse

pytestmark = pytest.mark.process

HERE = Path(__file__).resolve().parent / "realserver"
BLOG = "https://blog.example.org/"


def mkdocs2() -> Path:
    folder = cached_install("SYNDICATE_MKDOCS2_DIR", "mkdocs2", HERE / "mkdocs2-requirements.txt")
    program = folder / "venv" / "bin" / "mkdocs"
    if not (folder / ".installed").exists() or not program.exists():
        unavailable("mkdocs2", f"MkDocs 2.0 is not installed in {folder}")
    return program


def write_blog(folder: Path, sandbox) -> None:
    (folder / "docs" / "posts").mkdir(parents=True)
    (folder / "docs" / "README.md").write_text("# A blog\n\n- [Hello](posts/hello.md)\n")
    (folder / "docs" / "posts" / "hello.md").write_text("# Hello, MkDocs 2.0\n\nNo plugins, and still announced.\n")
    feed = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "A blog",
        "home_page_url": BLOG,
        "items": [
            {
                "id": BLOG + "posts/hello/",
                "url": BLOG + "posts/hello/",
                "title": "Hello, MkDocs 2.0",
                "content_text": "No plugins, and still announced.",
                "date_published": "2026-12-01T09:00:00Z",
            }
        ],
    }
    (folder / "docs" / "feed.json").write_text(json.dumps(feed, indent=2))
    settings: dict[str, object] = {"site_url": BLOG, "site_name": "A blog", "backlog": "send", "site_dir": "site"}
    settings["channels"] = {"masto": mastodon_raw(sandbox)}
    (folder / "syndicate.yml").write_text(yaml.safe_dump(settings, sort_keys=False))


def ours(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_"))}
    env["PYTHONPATH"] = PLUGIN_PYTHONPATH
    command = [sys.executable, "-m", "mkdocs_syndicate.cli", *args]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=180)


def test_a_blog_built_by_mkdocs_2_is_announced_from_its_feed_and_its_page_shows_the_copy(tmp_path, sandbox):
    program = mkdocs2()
    blog = tmp_path / "blog"
    write_blog(blog, sandbox)
    built = subprocess.run([str(program), "build"], cwd=blog, capture_output=True, text=True, timeout=180)
    assert built.returncode == 0, built.stdout + built.stderr
    page = blog / "site" / "posts" / "hello" / "index.html"
    home = blog / "site" / "index.html"
    assert page.is_file() and (blog / "site" / "feed.json").is_file(), sorted(p.name for p in blog.rglob("*"))
    before = home.read_bytes()

    sent = ours(blog, "run", "-f", "syndicate.yml", "--feed", "site/feed.json")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    ledger = parse((blog / "ledger.yml").read_text(), "ledger.yml")
    record = ledger["posts/hello/"].channels["masto"]
    assert record.state == "done" and record.remote_url
    assert len(sandbox.snapshot()["mastodon"]["statuses"]) == 1

    injected = ours(blog, "inject", "-f", "syndicate.yml", "site")
    assert injected.returncode == 0, injected.stderr
    html = page.read_text()
    assert f'href="{record.remote_url}"' in html and 'rel="syndication"' in html, html[-2000:]
    assert home.read_bytes() == before
    again = ours(blog, "inject", "-f", "syndicate.yml", "site")
    assert again.returncode == 0 and page.read_text() == html
    # A second run of the announcement sends nothing.
    assert ours(blog, "run", "-f", "syndicate.yml", "--feed", "site/feed.json").returncode == 0
    assert len(sandbox.snapshot()["mastodon"]["statuses"]) == 1
