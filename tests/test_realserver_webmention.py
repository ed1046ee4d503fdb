"""The Webmention channel against django-webmention itself (tests/realserver_webmention.py), not
only against our emulator: its endpoint is found by its middleware's `Link` header, it verifies
the source as it does in production (fetches the post, looks for the target), keeps a Webmention
per (source, target), and when an edit takes a link out, or the post is removed (its page
answering 410), the channel tells it again and it marks the mention no longer current."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import FakeClock, ListReporter, make_post
from realserver_webmention import Pages, Receiver, start_receiver

from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger

# One worker runs the module (pytest-xdist's loadgroup, conftest.py): the receiver starts once.
pytestmark = [pytest.mark.realserver, pytest.mark.xdist_group("realserver-webmention")]


@pytest.fixture(scope="module")
def receiver(tmp_path_factory):
    yield from start_receiver(tmp_path_factory.mktemp("django-webmention"))


@pytest.fixture
def pages():
    site = Pages()
    yield site
    site.close()


def linking(*targets: str, text: str = "") -> str:
    return f"<p>{text}</p>" + "".join(f'<p><a href="{t}">a note</a></p>' for t in targets)


def run(folder, pages: Pages, posts, clock):
    folder.mkdir(exist_ok=True)
    opts = parse_options(
        {"wm": {"type": "webmention", "allow_loopback": True}},
        ledger_path=folder / "ledger.yml",
        site=Site(pages.url, "Pages"),
        sandbox=False,
        sending=True,
    )
    return send(opts, posts, ListReporter(), clock=clock)


def publish(pages: Pages, post) -> None:
    pages.pages[f"/{post.key}"] = (200, post.body_html)


def test_webmention_django_webmention_verifies_keeps_and_drops_mentions(tmp_path, receiver: Receiver, pages):
    clock = FakeClock()
    a, b = receiver.note("webmention-a"), receiver.note("webmention-b")
    one = make_post(1, url=f"{pages.url}blog/post-1/", body_html=linking(a, b))
    two = make_post(2, url=f"{pages.url}blog/post-2/", body_html=linking(a))
    publish(pages, one)
    publish(pages, two)
    report = run(tmp_path, pages, [one, two], clock)
    assert [r.state for r in report.results] == ["done", "done"], report.results
    book = Ledger.read(tmp_path / "ledger.yml")
    told = book.record("blog/post-1/", "wm")
    assert told is not None
    endpoint = f"{receiver.url}/webmention/receive"  # named by its middleware's Link header
    assert [(m.target, m.endpoint, m.status) for m in told.mentions] == [(a, endpoint, 202), (b, endpoint, 202)]
    assert sorted(receiver.mentions()) == sorted([(one.url, a, True), (one.url, b, True), (two.url, a, True)])

    # An edit takes b out: b is told again, django-webmention finds no link, and drops it (400).
    edited = replace(one, body_html=linking(a, text="Edited."))
    publish(pages, edited)
    report = run(tmp_path, pages, [edited, two], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    told = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "wm")
    assert told is not None
    assert [(m.target, m.status, m.unlinked) for m in told.mentions] == [(a, 202, False), (b, 400, True)]
    assert (one.url, b, False) in receiver.mentions() and (one.url, a, True) in receiver.mentions()

    # The post is removed (its page answers 410): a is told again; django-webmention cannot fetch
    # the source and marks the mention no longer current.
    pages.pages[f"/{one.key}"] = (410, "<p>Gone</p>")
    report = run(tmp_path, pages, [two], clock)
    assert [(r.post_key, r.state) for r in report.results] == [("blog/post-1/", "deleted")], report.results
    gone = Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "wm")
    assert gone is not None and gone.state == State.DELETED
    assert sorted(receiver.mentions()) == sorted([(one.url, a, False), (one.url, b, False), (two.url, a, True)])
