"""A post's life: a removed post's copies are deleted only when the removal is proved, at most
`max_per_run` at a time, and never by accident (issue 34, "Removals"). Real `mkdocs build`
processes against the sandbox emulators. The site is `http://example.com/` and its "public"
pages come from a server on 127.0.0.1, reached as the build's HTTP proxy, over a folder the test
chooses (the built site: deployed; an older copy: not deployed yet)."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from channel_specs import SPECS
from conftest import indexnow_raw, mastodon_raw
from sites import command, mkdocs, post, write_site

from mkdocs_syndicate.ledger.schema import State
from mkdocs_syndicate.ledger.store import Ledger

pytestmark = pytest.mark.process


SITE = "http://example.com/"


class PublicSite:
    """The site as the web sees it: a static server over `root` (switch it to "deploy"), asked
    as a proxy (`GET http://example.com/posts/b/`), so the site keeps a name Mastodon links."""

    def __init__(self) -> None:
        self.root = Path()
        self.url = SITE
        self.asked: list[str] = []
        self.scripted: dict[str, list[int]] = {}  # a path's next answers (a maintenance page), then the files'
        handler = functools.partial(self._Handler, self)
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        proxy = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.env = {"HTTP_PROXY": proxy, "http_proxy": proxy, "NO_PROXY": "127.0.0.1,localhost"}
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    class _Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, site: PublicSite, *args, **kwargs) -> None:
            self.site = site
            super().__init__(*args, directory=str(site.root), **kwargs)

        def do_GET(self) -> None:
            self.site.asked.append(self.path)
            self.path = urlsplit(self.path).path or "/"  # a proxy's request names the whole URL
            script = self.site.scripted.get(self.path)
            if script:
                self.send_error(script.pop(0))
                return
            super().do_GET()

        def log_message(self, *args) -> None:  # quiet
            pass


@pytest.fixture
def public() -> Iterator[PublicSite]:
    site = PublicSite()
    yield site
    site.server.shutdown()
    site.server.server_close()


def channels(sandbox, removals: str = "delete") -> dict:
    forem = {"type": "forem", "api": sandbox.url + "/forem/api", "api_key": "sandbox-forem-api-key"}
    bsky = {
        "type": "bluesky",
        "service": sandbox.url + "/bluesky",
        "handle": "sandbox.bsky.social",
        "app_password": "sandbox-bsky-app-password",
    }
    return {
        "masto": mastodon_raw(sandbox, removals=removals),
        "devto": {**forem, "removals": removals, "min_interval": 0},  # DEV's 75 s pacing: not under test
        "bsky": {**bsky, "removals": removals},
        "ping": indexnow_raw(sandbox, key="site-key-1234", removals=removals),
    }


def two_posts(tmp_path: Path, sandbox, public: PublicSite, chosen: dict | None = None, **plugin) -> Path:
    """A site with posts a and b, announced everywhere; the public site serves its build."""
    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": chosen or channels(sandbox), **plugin},
        {
            "a.md": post("Alpha", description="The first."),
            "b.md": post("Beta", "2026-11-21", description="The second."),
        },
        site_url=public.url,
    )
    public.root = config.parent / "site"
    sandbox.key_file_root = config.parent / "site"
    first = mkdocs(config, env=public.env)
    assert first.returncode == 0, first.stderr
    return config


def remove_b(config: Path) -> None:
    (config.parent / "docs" / "posts" / "b.md").unlink()


def record(config: Path, key: str, channel: str):
    return Ledger.read(config.parent / "ledger.yml").record(key, channel)


def statuses(sandbox) -> list[dict]:
    return sandbox.snapshot()["mastodon"]["statuses"]


def test_a_removed_post_has_its_copies_deleted_everywhere_and_only_once(tmp_path, sandbox, public):
    config = two_posts(tmp_path, sandbox, public)
    assert len(statuses(sandbox)) == 2 and len(sandbox.snapshot()["bluesky"]["records"]) == 2
    remove_b(config)
    run = mkdocs(config, env=public.env)  # the build wrote no page for b: the public site answers 404
    assert run.returncode == 0, run.stderr
    snapshot = sandbox.snapshot()
    assert [s["text"] for s in snapshot["mastodon"]["statuses"] if "Beta" in s["text"]] == []
    assert len(snapshot["mastodon"]["statuses"]) == 1
    assert len(snapshot["bluesky"]["records"]) == 1
    beta = [a for a in snapshot["forem"]["articles"] if a["title"] == "Beta"]
    assert [a["published"] for a in beta] == [False]  # DEV: unpublished, the author's draft again
    assert snapshot["indexnow"]["pings"][-1]["urls"] == [public.url + "posts/b/"]
    for channel in ("masto", "devto", "bsky", "ping"):
        gone = record(config, "posts/b/", channel)
        assert gone is not None and gone.state == State.DELETED and gone.op is None, (channel, gone)
        kept = record(config, "posts/a/", channel)
        assert kept is not None and kept.state == State.DONE
    requests = sum(len(sandbox.requests(name)) for name in ("mastodon", "forem", "bluesky", "indexnow"))
    again = mkdocs(config, env=public.env)
    assert again.returncode == 0 and "nothing pending" in again.stderr, again.stderr
    assert sum(len(sandbox.requests(name)) for name in ("mastodon", "forem", "bluesky", "indexnow")) == requests


def test_a_deleted_copy_stays_named_by_its_id_and_is_never_linked_or_touched_again(tmp_path, sandbox, public):
    """The deleted records keep the ids and URLs of the copies the removal proved gone (the
    ledger says which copy was removed); when the post comes back, its page links none of them,
    `status` lists them as deleted, and no run sends a request for them."""
    config = two_posts(tmp_path, sandbox, public)
    source = config.parent / "docs" / "posts" / "b.md"
    text = source.read_text()
    made = {channel: record(config, "posts/b/", channel) for channel in ("masto", "devto", "bsky")}
    assert all(r is not None and r.remote_id and r.remote_url for r in made.values()), made
    remove_b(config)
    assert mkdocs(config, env=public.env).returncode == 0
    for channel, before in made.items():
        gone = record(config, "posts/b/", channel)
        assert gone is not None and gone.state == State.DELETED, (channel, gone)
        assert (gone.remote_id, gone.remote_url) == (before.remote_id, before.remote_url), (channel, gone)
    masto_id = made["masto"].remote_id
    assert masto_id not in {s["id"] for s in statuses(sandbox)}  # the copy the record names is the one gone
    source.write_text(text.replace("The second.", "The second, corrected."))  # back, and edited
    requests = sum(len(sandbox.requests(name)) for name in ("mastodon", "forem", "bluesky"))
    back = mkdocs(config, env=public.env)
    assert back.returncode == 0 and "nothing pending" in back.stderr, back.stderr
    assert sum(len(sandbox.requests(name)) for name in ("mastodon", "forem", "bluesky")) == requests
    page = (config.parent / "site" / "posts" / "b" / "index.html").read_text()
    assert not [r.remote_url for r in made.values() if r.remote_url in page]
    assert "Also on" not in page
    shown = command(config, "status", "--json", env=public.env)
    out, err = shown.communicate(timeout=120)
    assert shown.returncode == 0, err
    (listed,) = [p["channels"] for p in json.loads(out)["posts"] if p["key"] == "posts/b/"]
    for channel, before in made.items():
        assert (listed[channel]["state"], listed[channel]["remote_id"]) == ("deleted", before.remote_id)


def test_removals_keep_is_the_default_and_the_plan_says_which_copies_remain(tmp_path, sandbox, public):
    config = two_posts(tmp_path, sandbox, public, chosen={"masto": mastodon_raw(sandbox)})
    remove_b(config)
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0 and "nothing pending" in run.stderr, run.stderr
    plan = command(config, "plan", env=public.env)  # from the build just made
    out, err = plan.communicate(timeout=120)
    assert plan.returncode == 0, err
    assert "posts/b/: gone from the source (posts/b.md is not in the build); kept on masto" in out + err
    assert len(statuses(sandbox)) == 2
    assert not [r for r in sandbox.requests("mastodon") if r["method"] == "DELETE"]


def test_a_page_that_still_answers_is_not_removed_until_it_is_gone(tmp_path, sandbox, public):
    """The plugin runs before the deploy: the removed post's page is still on the web. Nothing is
    deleted until it answers 404 (a broken glob, a draft, a build on a branch: the same)."""
    config = two_posts(tmp_path, sandbox, public, chosen={"masto": mastodon_raw(sandbox, removals="delete")})
    deployed = tmp_path / "deployed"
    shutil.copytree(config.parent / "site", deployed)
    public.root = deployed  # the web still has the old build
    remove_b(config)
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0, run.stderr
    assert "posts/b/: gone from the source (posts/b.md is not in the build), but" in run.stderr
    assert "http://example.com/posts/b/ answered 200" in run.stderr
    assert len(statuses(sandbox)) == 2
    public.root = config.parent / "site"  # deployed
    after = mkdocs(config, env=public.env)
    assert after.returncode == 0, after.stderr
    assert len(statuses(sandbox)) == 1
    assert record(config, "posts/b/", "masto").state == State.DELETED


def test_a_build_that_finds_no_posts_deletes_nothing_and_says_why(tmp_path, sandbox, public):
    config = two_posts(tmp_path, sandbox, public, chosen={"masto": mastodon_raw(sandbox, removals="delete")})
    for source in (config.parent / "docs" / "posts").iterdir():
        source.unlink()  # every post gone at once (a broken glob looks the same to the plugin)
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0, run.stderr
    assert "no posts were found in the source" in run.stderr
    assert len(statuses(sandbox)) == 2
    assert not [r for r in sandbox.requests("mastodon") if r["method"] == "DELETE"]


def test_a_removed_post_that_comes_back_is_not_announced_again_until_resolved(tmp_path, sandbox, public):
    config = two_posts(tmp_path, sandbox, public, chosen={"masto": mastodon_raw(sandbox, removals="delete")})
    source = config.parent / "docs" / "posts" / "b.md"
    text = source.read_text()
    remove_b(config)
    assert mkdocs(config, env=public.env).returncode == 0
    assert len(statuses(sandbox)) == 1
    source.write_text(text)  # it comes back
    back = mkdocs(config, env=public.env)
    assert back.returncode == 0 and "nothing pending" in back.stderr, back.stderr
    assert len(statuses(sandbox)) == 1
    plan = command(config, "plan", env=public.env)
    out, err = plan.communicate(timeout=120)
    assert "posts/b/: its copies on masto were deleted" in out + err and "--retry" in out + err
    resolve = command(config, "resolve", "posts/b/", "masto", "--retry", env=public.env)
    out, err = resolve.communicate(timeout=120)
    assert resolve.returncode == 0, out + err
    # The instance keeps the deleted status's Idempotency-Key for an hour; the pair's second life
    # sends under a key of its own, so the new copy is posted at once rather than refused.
    again = mkdocs(config, env=public.env)
    assert again.returncode == 0, again.stderr
    assert len(statuses(sandbox)) == 2
    assert record(config, "posts/b/", "masto").state == State.DONE


def test_deletes_count_toward_max_per_run(tmp_path, sandbox, public):
    import yaml

    config = two_posts(tmp_path, sandbox, public, chosen={"masto": mastodon_raw(sandbox, removals="delete")})
    raw = yaml.safe_load(config.read_text())
    raw["plugins"][0]["syndicate"]["max_per_run"] = 1
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    for name in ("a.md", "b.md"):
        (config.parent / "docs" / "posts" / name).unlink()
    (config.parent / "docs" / "posts" / "c.md").write_text(post("Gamma", "2026-11-22"))
    first = mkdocs(config, env=public.env)  # Gamma takes the run's one slot; both deletes wait
    assert len(statuses(sandbox)) == 3, first.stderr
    assert "the copies of removed post posts/a/ are deleted next run" in first.stderr
    second = mkdocs(config, env=public.env)
    assert len(statuses(sandbox)) == 2, second.stderr
    third = mkdocs(config, env=public.env)
    assert third.returncode == 0, third.stderr
    assert len(statuses(sandbox)) == 1


def test_a_delete_whose_answer_was_lost_is_settled_by_reading_the_copy(tmp_path, sandbox, public):
    config = two_posts(tmp_path, sandbox, public, chosen={"masto": mastodon_raw(sandbox, removals="delete")})
    remove_b(config)
    sandbox.add_fault({"channel": "mastodon", "action": "drop_after", "match": "DELETE /api/v1/statuses/"})
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0, run.stderr
    assert record(config, "posts/b/", "masto").state == State.DELETED
    deletes = [r for r in sandbox.requests("mastodon") if r["method"] == "DELETE"]
    assert len(deletes) == 1 and len(statuses(sandbox)) == 1


def test_a_proxy_404_to_a_delete_proves_nothing_and_the_copy_is_read(tmp_path, sandbox, public):
    """A 404 without Mastodon's JSON (a proxy's page) is not "already deleted": the copy's own id
    is read, it is still there, and it is deleted."""
    config = two_posts(tmp_path, sandbox, public, chosen={"masto": mastodon_raw(sandbox, removals="delete")})
    remove_b(config)
    sandbox.add_fault(
        {
            "channel": "mastodon",
            "action": "status",
            "status": 404,
            "body": b"<html>Not Found</html>",
            "times": 1,
            "match": "DELETE /api/v1/statuses/",
        }
    )
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0, run.stderr
    assert record(config, "posts/b/", "masto").state == State.DELETED
    assert len(statuses(sandbox)) == 1


def test_an_old_post_moved_outside_since_is_not_taken_for_removed(tmp_path, sandbox, public):
    """Every post the source lists is matched, not only the announceable ones: an old Material
    blog post whose title edit moved it (a new slug), with `since` past its date, is the same
    post (its source file says so), not a removed one whose copies go."""
    import yaml

    config = write_site(
        tmp_path / "site",
        {"mode": "send", "channels": {"masto": mastodon_raw(sandbox, removals="delete")}},
        {"a.md": "---\ndate: 2026-11-20\n---\n# Alpha\n\nText.\n"},
        blog=True,
        site_url=public.url,
    )
    public.root = config.parent / "site"
    assert mkdocs(config, env=public.env).returncode == 0
    source = config.parent / "docs" / "blog" / "posts" / "a.md"
    source.write_text(source.read_text().replace("# Alpha", "# Alpha again"))
    raw = yaml.safe_load(config.read_text())
    raw["plugins"][1]["syndicate"]["since"] = "2026-11-25"
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    run = mkdocs(config, env=public.env)
    assert run.returncode == 0, run.stderr
    assert len(statuses(sandbox)) == 1
    assert not [r for r in sandbox.requests("mastodon") if r["method"] == "DELETE"]


def test_removals_delete_on_a_channel_that_cannot_delete_is_refused_by_name(tmp_path, sandbox, public):
    weibo = {**SPECS["weibo"].raw(sandbox), "removals": "delete"}
    config = write_site(tmp_path / "site", {"mode": "send", "channels": {"wb": weibo}}, {"a.md": post("A")})
    run = mkdocs(config, env=public.env)
    assert run.returncode != 0
    assert "channels.wb.removals" in run.stderr and "weibo cannot delete a post" in run.stderr


def test_a_rehearsal_deletes_the_emulators_copies_when_the_build_drops_the_page(tmp_path, sandbox):
    """In the sandbox nothing is public: a page the build did not write is the proof."""
    config = write_site(
        tmp_path / "site",
        {
            "mode": "send",
            "sandbox": True,
            "channels": {
                "masto": {
                    "type": "mastodon",
                    "instance": "https://mastodon.example",
                    "token": "x",
                    "removals": "delete",
                }
            },
        },
        {"a.md": post("Alpha"), "b.md": post("Beta", "2026-11-21")},
    )
    assert mkdocs(config).returncode == 0
    ledger = config.parent / "ledger.yml"
    assert Ledger.read(ledger).record("posts/b/", "masto").state == State.DONE
    remove_b(config)
    run = mkdocs(config)
    assert run.returncode == 0, run.stderr
    assert Ledger.read(ledger).record("posts/b/", "masto").state == State.DELETED


def test_the_command_run_after_the_deploy_deletes_what_the_build_removed(tmp_path, sandbox, public):
    """The documented path for a site that deploys after building: a build that sends nothing
    saves its posts, the deploy takes the page down, `mkdocs-syndicate run` deletes the copies."""
    import yaml

    config = two_posts(tmp_path, sandbox, public, chosen={"masto": mastodon_raw(sandbox, removals="delete")})
    deployed = tmp_path / "deployed"
    shutil.copytree(config.parent / "site", deployed)
    public.root = deployed
    remove_b(config)
    raw = yaml.safe_load(config.read_text())
    raw["plugins"][0]["syndicate"]["mode"] = "plan"
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    assert mkdocs(config, env=public.env).returncode == 0
    assert len(statuses(sandbox)) == 2
    public.root = config.parent / "site"  # mkdocs gh-deploy
    run = command(config, "run", env=public.env)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, out + err
    assert len(statuses(sandbox)) == 1 and record(config, "posts/b/", "masto").state == State.DELETED
