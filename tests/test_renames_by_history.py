"""Identity by history (issue 50, item 1): a post keeps its identity across a rename or move of its
source file, found from the site's own git history, and its copies are edited in place (the new
URL), never sent again. Each case was measured on the code before engine/history.py as a second
status, a second Bluesky record and a second Matrix message, exit 0.

Real components: a git checkout of the site (tests start `git`), `mkdocs build` processes (plain
MkDocs and Material's blog, as tests/sites.py builds them), the emulators for the services.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from channel_specs import SPECS
from conftest import mastodon_raw
from sites import mkdocs, post, write_site
from test_post_removals import PublicSite

from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
# Long enough that git's rename detection (50% alike) sees an edited file as renamed.
BODY = "".join(f"Paragraph {n} of a post about moving house, with enough words to be itself.\n\n" for n in range(12))


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stderr
    return done.stdout


def syndicate(config: Path, *args: str) -> subprocess.CompletedProcess:
    """`mkdocs-syndicate <command> -f mkdocs.yml <args>`."""
    command = [sys.executable, "-m", "mkdocs_syndicate.cli", args[0], "-f", str(config), *args[1:]]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_"))}
    return subprocess.run(command, cwd=config.parent, env=env, capture_output=True, text=True, timeout=120)


def article(title: str, body: str = BODY, **front) -> str:
    return post(title, dt.date(2026, 11, 20), **front).replace(f"Body of {title}.\n", body)


def channels(sandbox) -> dict:
    return {
        name: SPECS[kind].raw(sandbox)
        for name, kind in (("masto", "mastodon"), ("bsky", "bluesky"), ("room", "matrix"))
    }


class Site:
    """A site in a git checkout, announcing to Mastodon, Bluesky and Matrix emulators."""

    def __init__(self, tmp_path: Path, sandbox, files: dict[str, str], *, blog: bool = False) -> None:
        self.sandbox = sandbox
        self.config = write_site(tmp_path / "site", {"mode": "send", "channels": channels(sandbox)}, files, blog=blog)
        self.root = self.config.parent
        self.posts = self.root / "docs" / ("blog/posts" if blog else "posts")
        git(self.root, "init", "--quiet", "-b", "main")
        self.commit("the site")

    def commit(self, message: str) -> None:
        git(self.root, "add", "-A", "docs", "mkdocs.yml")
        git(self.root, "commit", "--quiet", "--allow-empty", "-m", message)

    def mv(self, old: str, new: str) -> None:
        (self.posts / new).parent.mkdir(parents=True, exist_ok=True)
        git(self.root, "mv", str(self.posts / old), str(self.posts / new))

    def edit(self, name: str, old: str, new: str) -> None:
        path = self.posts / name
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new), encoding="utf-8")

    def build(self, *, ok: bool = True) -> subprocess.CompletedProcess:
        done = mkdocs(self.config)
        assert (done.returncode == 0) == ok, done.stderr
        return done

    def copies(self) -> dict[str, list]:
        """Each service's copies: Mastodon statuses, Bluesky posts, Matrix messages (not edits)."""
        state = self.sandbox.snapshot()
        records = [r["value"] for r in state["bluesky"]["records"].values()]
        events = [e for e in state["matrix"]["events"] if e.get("type") == "m.room.message"]
        return {
            "masto": [s["content"] for s in state["mastodon"]["statuses"]],
            "bsky": [r for r in records if r.get("$type") == "app.bsky.feed.post"],
            "room": [e for e in events if (e["content"].get("m.relates_to") or {}).get("rel_type") != "m.replace"],
        }

    def assert_one_copy_each_edited_to(self, url: str) -> None:
        copies = self.copies()
        assert {name: len(found) for name, found in copies.items()} == {"masto": 1, "bsky": 1, "room": 1}, copies
        assert url in copies["masto"][0], copies["masto"]
        assert url in str(copies["bsky"][0]), copies["bsky"]
        edits = [e for e in self.sandbox.snapshot()["matrix"]["events"] if url in str(e.get("content"))]
        assert edits, "the Matrix message was not edited to the new URL"

    def entry(self, key: str):
        return Ledger.read(self.root / "ledger.yml").posts[key]


def announced(tmp_path, sandbox, files, *, blog=False) -> Site:
    site = Site(tmp_path, sandbox, files, blog=blog)
    site.build()
    assert {name: len(found) for name, found in site.copies().items()} == {"masto": 1, "bsky": 1, "room": 1}
    return site


def test_a_plain_rename_with_no_pin_and_no_redirect_is_the_same_post(tmp_path, sandbox):
    site = announced(tmp_path, sandbox, {"one.md": article("One")})
    site.mv("one.md", "one-new.md")
    site.commit("rename")
    moved = site.build()
    assert "moved: posts/one/ → posts/one-new/" in moved.stderr
    assert "its file's history: git saw posts/one.md renamed to posts/one-new.md" in moved.stderr
    site.assert_one_copy_each_edited_to("https://example.com/posts/one-new/")
    entry = site.entry("posts/one-new/")
    assert entry.src == "posts/one-new.md" and "https://example.com/posts/one/" in entry.aliases


def test_a_move_into_a_sub_folder_is_the_same_post(tmp_path, sandbox):
    site = announced(tmp_path, sandbox, {"one.md": article("One")})
    site.mv("one.md", "2026/one.md")
    site.commit("file by year")
    moved = site.build()
    assert "moved: posts/one/ → posts/2026/one/" in moved.stderr and "history" in moved.stderr
    site.assert_one_copy_each_edited_to("https://example.com/posts/2026/one/")


def test_a_case_only_rename_is_the_same_post(tmp_path, sandbox):
    site = announced(tmp_path, sandbox, {"One.md": article("One")})
    site.mv("One.md", "one.md")
    site.commit("lower case")
    moved = site.build()
    assert "moved: posts/One/ → posts/one/" in moved.stderr and "history" in moved.stderr
    site.assert_one_copy_each_edited_to("https://example.com/posts/one/")


def test_a_rename_in_the_same_commit_as_an_edit_is_the_same_post(tmp_path, sandbox):
    site = announced(tmp_path, sandbox, {"one.md": article("One")})
    site.mv("one.md", "one-edited.md")
    site.edit("one-edited.md", "Paragraph 3 of", "Paragraph three, rewritten, of")
    site.commit("rename and edit")
    moved = site.build()
    assert "moved: posts/one/ → posts/one-edited/" in moved.stderr and "history" in moved.stderr
    site.assert_one_copy_each_edited_to("https://example.com/posts/one-edited/")


@pytest.mark.parametrize("blog", [False, True], ids=["plain", "material-blog"])
def test_a_title_edit_and_a_rename_in_one_commit_are_the_same_post(tmp_path, sandbox, blog):
    pytest.importorskip("material") if blog else None
    site = announced(tmp_path, sandbox, {"hello.md": article("Hello, fediverse")}, blog=blog)
    site.mv("hello.md", "hello-again.md")
    site.edit("hello-again.md", "# Hello, fediverse", "# Hello again, fediverse")
    site.commit("retitled and renamed")
    moved = site.build()
    assert "history" in moved.stderr, moved.stderr
    new_url = (
        "https://example.com/blog/2026/11/20/hello-again-fediverse/"
        if blog
        else "https://example.com/posts/hello-again/"
    )
    site.assert_one_copy_each_edited_to(new_url)


def test_a_pin_added_in_the_same_commit_as_the_rename_is_the_same_post(tmp_path, sandbox):
    site = announced(tmp_path, sandbox, {"one.md": article("One")})
    site.mv("one.md", "one-pinned.md")
    (site.posts / "one-pinned.md").write_text(article("One", syndicate_id="my-key"), encoding="utf-8")
    site.commit("pin and rename")
    moved = site.build()
    assert "moved: posts/one/ → my-key" in moved.stderr and "history" in moved.stderr
    site.assert_one_copy_each_edited_to("https://example.com/posts/one-pinned/")
    assert site.entry("my-key").id == "my-key"


def test_a_pin_removed_and_the_file_renamed_later_is_the_same_post(tmp_path, sandbox):
    site = announced(tmp_path, sandbox, {"one.md": article("One", syndicate_id="my-key")})
    (site.posts / "one.md").write_text(article("One"), encoding="utf-8")
    site.commit("unpin")
    site.build()
    site.mv("one.md", "one-later.md")
    site.commit("rename later")
    site.build()
    site.assert_one_copy_each_edited_to("https://example.com/posts/one-later/")
    assert site.entry("my-key").src == "posts/one-later.md"


def test_a_shallow_clone_finds_a_rename_it_has_no_history_of_by_content(tmp_path, sandbox):
    """actions/checkout's default, fetch-depth: 1: the rename's commit has no parent in the clone,
    so git shows no rename; the ledger's fingerprint (date and text) still knows the post."""
    site = announced(tmp_path, sandbox, {"one.md": article("One")})
    git(site.root, "add", "ledger.yml")
    site.commit("ledger")
    site.mv("one.md", "one-new.md")
    site.commit("rename")
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "--quiet", "--depth", "1", f"file://{site.root}", str(ci))
    assert git(ci, "rev-parse", "--is-shallow-repository").strip() == "true"
    site.root, site.config, site.posts = ci, ci / "mkdocs.yml", ci / "docs" / "posts"
    moved = site.build()
    assert "moved: posts/one/ → posts/one-new/" in moved.stderr
    assert "its content and date" in moved.stderr
    site.assert_one_copy_each_edited_to("https://example.com/posts/one-new/")


def test_two_old_posts_the_new_one_is_equally_like_are_a_tie_held_for_review(tmp_path, sandbox):
    """No history (not a checkout) and two removed posts with the new one's date and text: which
    one it is nobody can tell. Held: nothing is sent, the build fails and says what to run."""
    site = announced(tmp_path, sandbox, {"a.md": article("Twin", syndicate_id="twin-a")})
    shutil.rmtree(site.root / ".git")
    (site.posts / "b.md").write_text(article("Twin", syndicate_id="twin-b"), encoding="utf-8")
    site.build()
    assert len(site.copies()["masto"]) == 2
    (site.posts / "a.md").unlink()
    (site.posts / "b.md").unlink()
    (site.posts / "c.md").write_text(article("Twin"), encoding="utf-8")
    held = site.build(ok=False)
    assert "needs review: posts/c/ may be the same post as twin-a or twin-b" in held.stderr
    assert "mkdocs-syndicate resolve posts/c/" in held.stderr
    assert len(site.copies()["masto"]) == 2 and len(site.copies()["bsky"]) == 2
    # A person decides: a new post. Said on one channel, the post is known: announced on each.
    decided = syndicate(site.config, "resolve", "posts/c/", "masto", "--retry")
    assert decided.returncode == 0 and "pending → failed" in decided.stdout, decided.stdout + decided.stderr
    site.build()
    assert {name: len(found) for name, found in site.copies().items()} == {"masto": 3, "bsky": 3, "room": 3}


@pytest.fixture
def public():
    """The site as the web sees it (tests/test_post_removals.py): pages a build no longer has 404."""
    site = PublicSite()
    yield site
    site.server.shutdown()
    site.server.server_close()


def test_the_old_posts_a_held_post_may_be_keep_their_copies_meanwhile(tmp_path, sandbox, public):
    """removals: delete, and both old posts' files and pages gone (their removal proved by the web):
    while the new post may be either, neither's copies are deleted; the author decides first."""
    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": {"masto": mastodon_raw(sandbox, removals="delete")}},
        {"a.md": article("Twin", syndicate_id="twin-a"), "b.md": article("Twin", syndicate_id="twin-b")},
        site_url=public.url,
    )
    public.root = config.parent / "site"
    assert mkdocs(config, env=public.env).returncode == 0
    posts = config.parent / "docs" / "posts"
    (posts / "a.md").unlink()
    (posts / "b.md").unlink()
    (posts / "c.md").write_text(article("Twin"), encoding="utf-8")
    held = mkdocs(config, env=public.env)
    assert held.returncode != 0 and "needs review: posts/c/" in held.stderr, held.stderr
    assert len(sandbox.snapshot()["mastodon"]["statuses"]) == 2, held.stderr
    book = Ledger.read(config.parent / "ledger.yml")
    assert {book.record(key, "masto").state for key in ("twin-a", "twin-b")} == {State.DONE}
    plan = syndicate(config, "plan")  # and the plan does not say they will be deleted
    assert "needs review: posts/c/" in plan.stdout and "deleted once" not in plan.stdout, plan.stdout


def test_the_command_run_after_a_build_finds_a_rename_by_history_too(tmp_path, sandbox):
    """`mode: plan` builds, `mkdocs-syndicate run` sends: the command reads mkdocs.yml's docs_dir."""
    site = Site(tmp_path, sandbox, {"one.md": article("One")})
    settings = yaml.safe_load(site.config.read_text())
    settings["plugins"][-1]["syndicate"]["mode"] = "plan"
    site.config.write_text(yaml.safe_dump(settings, sort_keys=False))
    site.commit("plan mode")
    site.build()
    assert syndicate(site.config, "run").returncode == 0
    site.mv("one.md", "one-new.md")
    site.edit("one-new.md", "Paragraph 2 of", "Paragraph two, and more words, of")
    site.commit("rename")
    site.build()
    moved = syndicate(site.config, "run")
    assert moved.returncode == 0, moved.stderr
    assert "its file's history" in moved.stdout + moved.stderr
    site.assert_one_copy_each_edited_to("https://example.com/posts/one-new/")
