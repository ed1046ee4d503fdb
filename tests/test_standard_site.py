"""standard.site (issue 37) beyond the shared suites: the document's fields, adoption and the
Bluesky reference against the emulator, and what the build adds to the site from the ledger with
no request (the publication's well-known file, each post's `<link rel="site.standard.document">`)."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import SITE, ListReporter, make_post, write_ledger
from sites import mkdocs, post, write_site

from mkdocs_syndicate.channels.standard import PUBLICATION, document_path, publication_rkey
from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.content.pagehtml import Additions, added
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.sources.standard_site import WELL_KNOWN, document_head_tag, document_uris, well_known_file

DID = "did:plc:abcdefghijklmnopqrstuvwx"
AT = "2026-12-01T00:00:00Z"
DOC = f"at://{DID}/site.standard.document/3mabcdefghij2"


def std_raw(sandbox, **extra) -> dict:
    return {
        "type": "standard",
        "service": sandbox.url + "/standard",
        "handle": "sandbox.bsky.social",
        "app_password": "sandbox-bsky-app-password",
        "keep_session": False,
        **extra,
    }


def bsky_raw(sandbox) -> dict:
    return {
        "type": "bluesky",
        "service": sandbox.url + "/bluesky",
        "handle": "sandbox.bsky.social",
        "app_password": "sandbox-bsky-app-password",
        "keep_session": False,
    }


def run(folder, channels: dict, posts, clock, site=SITE):
    folder.mkdir(exist_ok=True)
    opts = parse_options(channels, ledger_path=folder / "ledger.yml", site=site, sandbox=False, sending=True)
    return send(opts, posts, ListReporter(), clock=clock)


def only_document(sandbox) -> dict:
    ((_, stored),) = documents(sandbox).items()
    value: dict = stored["value"]
    return value


def documents(sandbox) -> dict:
    return sandbox.snapshot()["standard"].get("collections", {}).get("site.standard.document", {})


@pytest.mark.unit
def test_the_path_is_what_follows_the_publications_url():
    site = Site("https://example.com/blog/", "x")
    assert document_path(make_post(1, url="https://example.com/blog/a/b/"), site.url) == "/a/b/"


@pytest.mark.unit
def test_the_well_known_file_and_the_links_come_from_the_ledger(tmp_path):
    raw = {"std": {"type": "standard", "handle": "me", "app_password": "x"}, "m": {"type": "mastodon"}}
    write_ledger(
        tmp_path / "ledger.yml",
        {
            ("blog/a/", "std"): Record(State.DONE, at=AT, remote_id=DOC),
            ("blog/b/", "std"): Record(State.DONE, at=AT, remote_id=DOC.replace("2", "3"), sandbox=True),
            ("blog/c/", "std"): Record(State.IN_FLIGHT, at=AT, idempotency_key="3mabcdefghij4"),
            ("blog/d/", "std"): Record(State.DONE, at=AT, remote_id='at://did:plc:x/site.standard.document/"><script>'),
        },
    )
    assert document_uris(tmp_path / "ledger.yml", raw) == {"blog/a/": DOC}
    assert set(document_uris(tmp_path / "ledger.yml", raw, sandbox=True)) == {"blog/a/", "blog/b/"}
    rkey = publication_rkey("https://example.com/", "std")
    expected = [(WELL_KNOWN, f"at://{DID}/{PUBLICATION}/{rkey}")]
    assert well_known_file(tmp_path / "ledger.yml", raw, "https://example.com/") == expected
    # The specification puts a non-root publication's file at the domain's root: not ours to write.
    assert well_known_file(tmp_path / "ledger.yml", raw, "https://example.com/project/") == []
    assert well_known_file(tmp_path / "none.yml", raw, "https://example.com/") == []
    page = "<html><head><title>x</title></head><body></body></html>"
    assert added(page, Additions((document_head_tag(DOC),))).html == (
        f'<html><head><title>x</title><link rel="site.standard.document" href="{DOC}">\n</head><body></body></html>'
    )


@pytest.mark.http
def test_a_document_holds_the_posts_fields_and_points_to_the_bluesky_post(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    bluesky = bsky_raw(sandbox)
    one = make_post(1, tags=("python",), body_html="<p>Hello <b>world</b>.</p>")
    assert not run(tmp_path, {"bsky": bluesky}, [one], clock).undone
    report = run(tmp_path, {"bsky": bluesky, "std": std_raw(sandbox, bluesky="bsky")}, [one], clock)
    assert [r.state for r in report.results] == ["done"]
    ((_, stored),) = documents(sandbox).items()
    value = stored["value"]
    post_uri = Ledger.read(tmp_path / "ledger.yml").record(one.key, "bsky").remote_id
    assert value["bskyPostRef"]["uri"] == post_uri and value["bskyPostRef"]["cid"]
    assert value["site"] == f"at://did:plc:sandbox0000000000000000/{PUBLICATION}/{publication_rkey(SITE.url, 'std')}"
    assert (value["path"], value["title"], value["tags"], value["textContent"]) == (
        "/blog/post-1/",
        "Post 1",
        ["python"],
        "Hello world.",
    )
    publications = sandbox.snapshot()["standard"]["collections"][PUBLICATION]
    assert [p["value"]["url"] for p in publications.values()] == ["https://example.com"]


@pytest.mark.http
def test_a_bluesky_post_made_after_the_document_is_referenced_by_the_next_edit(tmp_path, sandbox, clock):
    """The document went out before its Bluesky post existed (Bluesky refused on the first run,
    sent on the second): the run after the one that made the Bluesky post updates the document
    in place with `bskyPostRef`, its CID the Bluesky record's, and a run after that has nothing
    to do. The channel learns of the post from the post it is handed (`Post.copies`, from the
    ledger at planning), never from the ledger mid-run."""
    sandbox.now = clock.time
    channels = {"bsky": bsky_raw(sandbox), "std": std_raw(sandbox, bluesky="bsky")}
    one = make_post(1)
    sandbox.add_fault({"channel": "bluesky", "action": "status", "status": 400, "match": "putRecord"})
    first = run(tmp_path, channels, [one], clock)
    assert sorted((r.channel, r.state) for r in first.results) == [("bsky", "failed"), ("std", "done")]
    assert "bskyPostRef" not in only_document(sandbox)
    second = run(tmp_path, channels, [one], clock)
    assert [(r.channel, r.state) for r in second.results] == [("bsky", "done")]
    third = run(tmp_path, channels, [one], clock)
    assert [(r.channel, r.detail) for r in third.results] == [("std", "updated (proved by a read of the copy)")], (
        third.results
    )
    post_uri = Ledger.read(tmp_path / "ledger.yml").record(one.key, "bsky").remote_id
    (bluesky_post,) = sandbox.snapshot()["bluesky"]["records"].values()
    assert only_document(sandbox)["bskyPostRef"] == {"uri": post_uri, "cid": bluesky_post["cid"]}
    assert run(tmp_path, channels, [one], clock).results == []


@pytest.mark.http
def test_a_document_another_tool_made_is_adopted_not_written_again(tmp_path, sandbox, clock):
    import httpx

    sandbox.now = clock.time
    session = httpx.post(
        sandbox.url + "/standard/xrpc/com.atproto.server.createSession",
        json={"identifier": "sandbox.bsky.social", "password": "sandbox-bsky-app-password"},
    ).json()
    theirs = {
        "site": "https://example.com",
        "path": "/blog/post-1/",
        "title": "Mine",
        "publishedAt": "2025-01-01T00:00:00Z",
    }
    made = httpx.post(
        sandbox.url + "/standard-pds/xrpc/com.atproto.repo.createRecord",
        headers={"Authorization": f"Bearer {session['accessJwt']}"},
        json={"repo": session["did"], "collection": "site.standard.document", "record": theirs},
    ).json()
    report = run(tmp_path, {"std": std_raw(sandbox)}, [make_post(1), make_post(2)], clock)
    assert [r.state for r in report.results] == ["done", "done"]
    assert Ledger.read(tmp_path / "ledger.yml").record("blog/post-1/", "std").remote_id == made["uri"]
    assert sorted(d["value"]["path"] for d in documents(sandbox).values()) == ["/blog/post-1/", "/blog/post-2/"]


@pytest.mark.http
def test_an_edit_updates_the_document_at_its_key_and_a_read_settles_it(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    one = make_post(1)
    run(tmp_path, {"std": std_raw(sandbox)}, [one], clock)
    report = run(tmp_path, {"std": std_raw(sandbox)}, [dataclasses.replace(one, title="Post 1, fixed")], clock)
    assert [r.detail for r in report.results] == ["updated (proved by a read of the copy)"], report.results
    ((_, stored),) = documents(sandbox).items()
    assert stored["value"]["title"] == "Post 1, fixed"


@pytest.mark.http
def test_the_runs_summary_names_the_document_where_other_channels_name_the_copys_url(tmp_path, sandbox, clock):
    """A document has no web page: its at:// URI is its address, in the summary's "remote /
    reason" column, the log's line, the terminal's table and the Actions summary, as a copy's URL
    is for the other channels (it said "sent" and "updated", and no document at all)."""
    import io

    from rich.console import Console

    from mkdocs_syndicate.output.actions import run_summary
    from mkdocs_syndicate.output.progress import summary_table
    from mkdocs_syndicate.output.reporters import PlainReporter, summary_lines

    sandbox.now = clock.time
    one = make_post(1)
    sent = run(tmp_path, {"std": std_raw(sandbox)}, [one], clock)
    edited = run(tmp_path, {"std": std_raw(sandbox)}, [dataclasses.replace(one, title="Post 1, fixed")], clock)
    uri = Ledger.read(tmp_path / "ledger.yml").record(one.key, "std").remote_id
    assert uri and uri.startswith("at://did:plc:sandbox0000000000000000/site.standard.document/")
    for report, how in ((sent, "sent"), (edited, "updated (proved by a read of the copy)")):
        ((result,),) = [report.results]
        assert (result.state, result.detail) == ("done", how)
        assert summary_lines(report)[1] == f"  {one.key}  std  done  {uri}"
        logged: list[str] = []
        PlainReporter(logged.append).pair_finished(result)
        assert logged == [f"std: {one.key} done {uri} ({how})"]
        table = io.StringIO()
        Console(file=table, width=300).print(summary_table(report))
        assert uri in table.getvalue()
        assert f"| {one.key} | std | {uri} |" in run_summary(report, "ledger.yml")


@pytest.mark.process
def test_a_build_writes_the_well_known_file_and_each_posts_link(tmp_path):
    """A sandbox build announces; the next build (no request: the ledger) serves the publication's
    URI and links each post to its document in its <head>."""
    config = write_site(
        tmp_path,
        {
            "sandbox": True,
            "mode": "send",
            "channels": {"std": {"type": "standard", "handle": "x", "app_password": "y"}},
        },
        {"a.md": post("A")},
    )
    first = mkdocs(config)
    assert first.returncode == 0, first.stderr
    book = Ledger.read(tmp_path / "ledger.yml")
    ((key, entry),) = book.posts.items()
    uri = entry.channels["std"].remote_id
    second = mkdocs(config)
    assert second.returncode == 0, second.stderr
    well_known = (tmp_path / "site" / ".well-known" / "site.standard.publication").read_text()
    assert (
        well_known
        == f"at://did:plc:sandbox0000000000000000/{PUBLICATION}/{publication_rkey('https://example.com/', 'std')}"
    )
    page = (tmp_path / "site" / key / "index.html").read_text()
    assert f'<link rel="site.standard.document" href="{uri}">' in page.split("</head>")[0]


@pytest.mark.process
def test_site_files_writes_the_well_known_file_for_a_site_the_plugin_does_not_build(tmp_path):
    """A Zensical or Hugo site: `mkdocs-syndicate site-files` writes the publication's file too."""
    import os
    import subprocess
    import sys

    import yaml

    (tmp_path / "public").mkdir()
    channels = {"std": {"type": "standard", "handle": "me.example", "app_password": "x"}}
    settings = {"site_url": "https://example.com/", "site_dir": "public", "links": False, "channels": channels}
    (tmp_path / "syndicate.yml").write_text(yaml.safe_dump(settings))
    write_ledger(tmp_path / "ledger.yml", {("blog/a/", "std"): Record(State.DONE, at=AT, remote_id=DOC)})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_"))}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs_syndicate.cli", "site-files"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    written = (tmp_path / "public" / ".well-known" / "site.standard.publication").read_text()
    assert written == f"at://{DID}/{PUBLICATION}/{publication_rkey('https://example.com/', 'std')}"
