import errno
import os
import subprocess
import sys
import textwrap

import pytest

from mkdocs_syndicate.errors import LedgerError, LedgerLocked, LedgerWriteError
from mkdocs_syndicate.ledger import atomicfile
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger, PostRef

pytestmark = pytest.mark.http

POST = PostRef("blog/a/", "https://example.com/blog/a/", "A")


def test_transitions_are_written_and_reloaded(tmp_path):
    path = tmp_path / "ledger.yml"
    with Ledger.open_for_writing(path) as ledger:
        ledger.set(POST, "mastodon", Record(State.IN_FLIGHT, 1, "2026-12-02T07:00:00Z", idempotency_key="k"))
        ledger.set(POST, "mastodon", Record(State.DONE, 1, "2026-12-02T07:00:01Z", remote_id="9"))
        assert ledger.writes == 2
    again = Ledger.read(path)
    assert again.record("blog/a/", "mastodon") == Record(State.DONE, 1, "2026-12-02T07:00:01Z", remote_id="9")
    assert again.posts["blog/a/"].url == POST.url


def test_illegal_transition_is_a_bug_guard(tmp_path):
    with Ledger.open_for_writing(tmp_path / "l.yml") as ledger, pytest.raises(ValueError):
        ledger.set(POST, "m", Record(State.DONE, 1, "2026-12-02T07:00:01Z"))


def test_write_order_is_fsync_replace_then_folder_fsync(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append("fsync")
        real_fsync(fd)

    def replace(a, b):
        events.append("replace")
        real_replace(a, b)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    with Ledger.open_for_writing(tmp_path / "l.yml") as ledger:
        events.clear()
        ledger.set(POST, "m", Record(State.IN_FLIGHT, 1, "2026-12-02T07:00:00Z"))
    assert events == ["fsync", "replace", "fsync"]


def test_failed_write_keeps_old_file_and_poisons(tmp_path, monkeypatch):
    path = tmp_path / "l.yml"
    with Ledger.open_for_writing(path) as ledger:
        ledger.set(POST, "m", Record(State.IN_FLIGHT, 1, "2026-12-02T07:00:00Z"))
        before = path.read_bytes()

        def broken_fsync(fd):
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(os, "fsync", broken_fsync)
        with pytest.raises(LedgerWriteError):
            ledger.set(POST, "m", Record(State.DONE, 1, "2026-12-02T07:00:01Z"))
        monkeypatch.undo()
        assert path.read_bytes() == before
        assert not list(tmp_path.glob(".l.yml.*.tmp"))
        with pytest.raises(LedgerWriteError, match="earlier write failed"):
            ledger.set(POST, "m", Record(State.FAILED, 1, "2026-12-02T07:00:01Z", error="x"))
        assert ledger.record("blog/a/", "m").state == "in_flight"


def test_stale_temp_file_is_swept(tmp_path):
    path = tmp_path / "l.yml"
    stale = tmp_path / (atomicfile.temp_prefix(path) + "abc.tmp")
    stale.write_text("version: 1\nposts: {\n")
    Ledger.open_for_writing(path).close()
    assert not stale.exists()


@pytest.mark.process
def test_second_writer_is_refused_without_touching_the_ledger(tmp_path):
    path = tmp_path / "l.yml"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from mkdocs_syndicate.ledger.store import Ledger
        l = Ledger.open_for_writing(Path({str(path)!r}))
        print("locked", flush=True)
        time.sleep(30)
    """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(LedgerLocked, match="another mkdocs-syndicate run"):
            Ledger.open_for_writing(path, lock_timeout=0.2)
        assert not path.exists()
    finally:
        holder.kill()
        holder.communicate()  # waits, and closes its pipe
    # the OS released the lock of the killed holder: a new run gets it at once
    Ledger.open_for_writing(path, lock_timeout=1).close()


def test_corrupt_ledger_stops_before_anything(tmp_path):
    path = tmp_path / "l.yml"
    path.write_text("version: 1\nposts: {}\n")
    with pytest.raises(LedgerError, match="end marker"):
        Ledger.open_for_writing(path)
    Ledger.open_for_writing(path.with_name("other.yml")).close()  # the lock was released


def _block_style(text: str) -> str:
    """The ledger as a YAML formatter leaves it: block style everywhere, comments gone."""
    import yaml

    return yaml.safe_dump(yaml.safe_load(text), sort_keys=False, allow_unicode=True) + "...\n"


def test_a_run_writes_a_block_style_ledger_back_in_the_canonical_layout_once(tmp_path, sandbox):
    """Issue 36: a block-style ledger cost the full parser on every run (10,000 posts: 10 s and
    494 MB) while nothing changed; the first run that may write puts it back, saying so once."""
    from conftest import SITE, ListReporter, make_post, mastodon_raw

    from mkdocs_syndicate.config.run import parse_options
    from mkdocs_syndicate.engine.syndication import send
    from mkdocs_syndicate.ledger.format import dump, parse

    path = tmp_path / "ledger.yml"
    opts = parse_options({"masto": mastodon_raw(sandbox)}, ledger_path=path, site=SITE, sandbox=False, sending=True)
    assert not send(opts, [make_post(1), make_post(2)], ListReporter()).undone
    canonical = path.read_text()
    path.write_text(_block_style(canonical))
    Ledger.read(path)  # as a plan or `status` reads it: never written
    assert path.read_text() != canonical
    requests = len(sandbox.requests())

    report = send(opts, [make_post(1), make_post(2)], ListReporter())
    assert report.results == [] and len(sandbox.requests()) == requests
    assert path.read_text() == canonical == dump(parse(canonical, "x"))
    assert report.notes == ["ledger.yml was not in the canonical layout: rewritten (no record changed)"]
    written = path.stat().st_mtime_ns, path.stat().st_ino
    assert send(opts, [make_post(1), make_post(2)], ListReporter()).notes == []
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == written  # once: the next run writes nothing


def test_a_rehearsal_and_a_real_run_each_see_and_write_only_what_is_theirs(tmp_path):
    """Issue 36: a sandbox run's records say so and a real run sees none of them (its in_flight
    replaces one, even over a sandbox `done`: it is not a real copy); a sandbox run never writes
    over a real copy or a real request of unknown outcome (only over a real failed record)."""
    path = tmp_path / "ledger.yml"
    at = "2026-12-02T07:00:00Z"
    with Ledger.open_for_writing(path) as ledger:
        ledger.sandbox = False
        ledger.set(POST, "devto", Record(State.IN_FLIGHT, 1, at))
        ledger.set(POST, "devto", Record(State.FAILED, 0, at, error="refused"))
        ledger.sandbox = True
        ledger.set(POST, "masto", Record(State.IN_FLIGHT, 1, at))  # stamped, whoever wrote it
        ledger.set(
            POST, "masto", ledger.record("blog/a/", "masto").moved(State.DONE, at, remote_url="http://127.0.0.1/1")
        )
    assert "sandbox: true" in path.read_text()
    with Ledger.open_for_writing(path) as ledger:
        assert ledger.record("blog/a/", "masto").sandbox and ledger.sandbox_records() == 1  # a tool sees all
        ledger.sandbox = False
        assert ledger.record("blog/a/", "masto") is None and [c for _, c, _ in ledger.records()] == ["devto"]
        ledger.set(POST, "masto", Record(State.IN_FLIGHT, 1, at))  # no op, over a sandbox done: a first send
        ledger.set(POST, "masto", Record(State.DONE, 1, at, remote_id="9"))
        assert ledger.sandbox_records() == 0
        ledger.sandbox = True  # the next rehearsal
        assert not ledger.may_work_on(ledger.record("blog/a/", "masto"))
        with pytest.raises(ValueError, match="a sandbox run's in_flight over a real done record"):
            ledger.set(POST, "masto", Record(State.IN_FLIGHT, 2, at, op="update"))
        assert ledger.may_work_on(ledger.record("blog/a/", "devto"))  # real failed: pending to both
        ledger.set(POST, "devto", Record(State.IN_FLIGHT, 1, at))
    final = Ledger.read(path)
    assert final.record("blog/a/", "masto") == Record(State.DONE, 1, at, remote_id="9")
    assert final.record("blog/a/", "devto").sandbox
