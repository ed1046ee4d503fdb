"""Removal only by the author's intent (issue 50, items 2, 4, 5): copies are deleted only when the
author removed the post (its source gone, `draft: true`, `syndicate: removed`), the build has no
page for it, and the web says 404 or 410 twice while the site's home page answers. Everything
else stops the announcements and deletes nothing, and the run says which. Real `mkdocs build`
and `mkdocs-syndicate` processes against the emulators; the public site is a loopback server
(test_post_removals.PublicSite) that can answer a scripted status before its files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from conftest import mastodon_raw
from sites import command, mkdocs, post, write_site
from test_post_removals import PublicSite, public, record, remove_b, statuses, two_posts

from mkdocs_syndicate.ledger.schema import State

pytestmark = pytest.mark.process

__all__ = ["public"]  # the fixture, shared


def masto(sandbox) -> dict:
    return {"masto": mastodon_raw(sandbox, removals="delete")}


def deletes(sandbox) -> list[dict]:
    return [r for r in sandbox.requests("mastodon") if r["method"] == "DELETE"]


def web_without_b(tmp_path: Path, config: Path, public: PublicSite) -> None:
    """The web answers 404 for b (a CDN hiccup, a deploy half done), whatever the build has."""
    deployed = tmp_path / "deployed"
    shutil.copytree(config.parent / "site", deployed)
    shutil.rmtree(deployed / "posts" / "b")
    public.root = deployed


def set_plugin(config: Path, **settings) -> None:
    raw = yaml.safe_load(config.read_text())
    raw["plugins"][-1]["syndicate"].update(settings)
    config.write_text(yaml.safe_dump(raw, sort_keys=False))


def plan_of(config: Path, public: PublicSite) -> str:
    shown = command(config, "plan", env=public.env)
    out, err = shown.communicate(timeout=120)
    assert shown.returncode == 0, out + err
    return out + err


def test_syndicate_false_with_its_page_built_and_a_404_deletes_nothing(tmp_path, sandbox, public):
    config = two_posts(tmp_path, sandbox, public, chosen=masto(sandbox))
    source = config.parent / "docs" / "posts" / "b.md"
    source.write_text(source.read_text().replace("syndicate: true", "syndicate: false"))
    web_without_b(tmp_path, config, public)
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0, run.stderr
    assert not deletes(sandbox) and len(statuses(sandbox)) == 2
    assert record(config, "posts/b/", "masto").state == State.DONE
    assert "posts/b/: marked syndicate: false (posts/b.md): no longer announced; its copies stay" in run.stderr


def test_a_narrowed_posts_glob_deletes_nothing(tmp_path, sandbox, public):
    config = two_posts(tmp_path, sandbox, public, chosen=masto(sandbox))
    set_plugin(config, posts=["posts/a.md"])
    web_without_b(tmp_path, config, public)
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0, run.stderr
    assert not deletes(sandbox) and len(statuses(sandbox)) == 2
    assert "posts/b/: still a page of the site (posts/b.md), no longer one of its posts" in run.stderr
    assert "no longer announced; its copies stay" in run.stderr


def test_a_maintenance_404_then_200_deletes_nothing(tmp_path, sandbox, public):
    """The author removed b, but the web still serves it (not deployed yet), after one 404."""
    config = two_posts(tmp_path, sandbox, public, chosen=masto(sandbox))
    deployed = tmp_path / "deployed"
    shutil.copytree(config.parent / "site", deployed)
    public.root = deployed
    public.scripted["/posts/b/"] = [404]
    remove_b(config)
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0, run.stderr
    assert not deletes(sandbox) and len(statuses(sandbox)) == 2
    assert "http://example.com/posts/b/ answered 404, then 200 0 s later: a passing 404 proves nothing" in run.stderr


def test_the_home_page_down_deletes_nothing(tmp_path, sandbox, public):
    config = two_posts(tmp_path, sandbox, public, chosen=masto(sandbox))
    public.scripted["/"] = [503] * 5
    remove_b(config)
    run = mkdocs(config, env=public.env)  # b's page is gone from the build and the web: 404 twice
    assert run.returncode == 0, run.stderr
    assert not deletes(sandbox) and len(statuses(sandbox)) == 2
    assert "the site's home page http://example.com/ answered 503: the site may be down" in run.stderr


def test_a_removal_is_shown_in_the_plan_then_deleted_with_its_evidence(tmp_path, sandbox, public):
    config = two_posts(tmp_path, sandbox, public, chosen=masto(sandbox))
    remove_b(config)
    set_plugin(config, mode="plan")
    built = mkdocs(config, env=public.env)
    assert built.returncode == 0, built.stderr
    planned = (
        "posts/b/: gone from the source (posts/b.md is not in the build); its copies on masto are deleted once "
        "the build has no page for it and its URL answers 404 or 410 twice, 0 s apart, with the site's home page up"
    )
    assert planned in built.stderr
    assert planned in plan_of(config, public)
    assert len(statuses(sandbox)) == 2
    public.asked.clear()
    run = command(config, "run", env=public.env)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, out + err
    assert len(statuses(sandbox)) == 1 and record(config, "posts/b/", "masto").state == State.DELETED
    evidence = (
        "posts/b/: removed (gone from the source (posts/b.md is not in the build); the build has no page for it; "
        "http://example.com/posts/b/ answered 404, then 404 0 s later; the home page http://example.com/ answered "
        "200): its copies on masto are deleted"
    )
    assert evidence in out + err
    assert public.asked.count("http://example.com/posts/b/") == 2
    assert public.asked.count("http://example.com/") == 1


def test_a_new_post_at_a_removed_posts_url_is_a_new_life(tmp_path, sandbox, public):
    config = two_posts(tmp_path, sandbox, public, chosen=masto(sandbox))
    remove_b(config)
    assert mkdocs(config, env=public.env).returncode == 0
    assert record(config, "posts/b/", "masto").state == State.DELETED and len(statuses(sandbox)) == 1
    source = config.parent / "docs" / "posts" / "b.md"
    source.write_text(post("Something else", "2026-12-01", description="Another post."))
    set_plugin(config, mode="plan")
    planned = mkdocs(config, env=public.env)
    assert planned.returncode == 0, planned.stderr
    for said in (planned.stderr, plan_of(config, public)):
        assert "posts/b/: a new post at the URL of a removed one (titled 'Something else'" in said, said
        assert "announced as new on masto" in said
    assert len(statuses(sandbox)) == 1
    set_plugin(config, mode="send")
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0, run.stderr
    assert "posts/b/: a new post at the URL of a removed one" in run.stderr
    texts = [s["text"] for s in statuses(sandbox)]
    assert len(texts) == 2 and any("Something else" in text for text in texts), texts
    again = record(config, "posts/b/", "masto")
    assert again.state == State.DONE and again.life == 1


def test_drafts_are_named_in_the_plan_with_what_happens_to_their_copies(tmp_path, sandbox, public):
    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": masto(sandbox)},
        {"a.md": post("Alpha"), "b.md": post("Beta", "2026-11-21"), "c.md": post("Gamma", draft=True)},
        site_url=public.url,
    )
    public.root = config.parent / "site"
    assert mkdocs(config, env=public.env).returncode == 0
    assert len(statuses(sandbox)) == 2
    source = config.parent / "docs" / "posts" / "b.md"
    source.write_text(post("Beta", "2026-11-21", draft=True))
    run = mkdocs(config, env=public.env)  # plain MkDocs still builds a draft: its page answers 200
    assert run.returncode == 0, run.stderr
    assert not deletes(sandbox) and len(statuses(sandbox)) == 2
    assert "posts/b/: marked as a draft (posts/b.md), but its page is in the built site" in run.stderr
    said = plan_of(config, public)
    assert "posts/c/: a draft (draft: true): not announced while it is one" in said
    assert (
        "posts/b/: marked as a draft (posts/b.md); its copies on masto are deleted once the build has no page" in said
    )


def test_a_material_blog_draft_is_named_in_the_plan(tmp_path, sandbox, public):
    config = write_site(
        tmp_path / "site",
        {"mode": "plan", "channels": masto(sandbox)},
        {
            "a.md": "---\ndate: 2026-11-20\n---\n# Alpha\n\nText.\n",
            "b.md": "---\ndate: 2026-11-21\ndraft: true\n---\n# Beta\n\nText.\n",
        },
        blog=True,
        site_url=public.url,
    )
    built = mkdocs(config, env=public.env)
    assert built.returncode == 0, built.stderr
    drafts = [line for line in built.stderr.splitlines() if "a draft (draft: true)" in line]
    assert len(drafts) == 1 and "beta" in drafts[0], built.stderr


def test_syndicate_removed_deletes_once_the_build_leaves_the_page_out(tmp_path, sandbox, public):
    """The flag is the author's word; the built site must agree: while the build still writes the
    page nothing goes, and once MkDocs' draft_docs leaves it out (and the web says 404 twice), the
    copies are deleted."""
    config = two_posts(tmp_path, sandbox, public, chosen=masto(sandbox))
    source = config.parent / "docs" / "posts" / "b.md"
    source.write_text(source.read_text().replace("syndicate: true", "syndicate: removed"))
    web_without_b(tmp_path, config, public)
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0, run.stderr
    assert "posts/b/: marked syndicate: removed (posts/b.md), but its page is in the built site" in run.stderr
    assert not deletes(sandbox) and len(statuses(sandbox)) == 2
    raw = yaml.safe_load(config.read_text())
    raw["draft_docs"] = "posts/b.md\n"
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    public.root = config.parent / "site"
    gone = mkdocs(config, env=public.env)
    assert gone.returncode == 0, gone.stderr
    assert not (config.parent / "site" / "posts" / "b" / "index.html").exists()
    assert "posts/b/: removed (marked syndicate: removed (posts/b.md); the build has no page for it;" in gone.stderr
    assert len(statuses(sandbox)) == 1 and record(config, "posts/b/", "masto").state == State.DELETED
