"""The GitHub Action (action.yml): its steps' scripts run here as a runner would run them, against
the sandbox's emulators and a real git remote (a bare repository): the ledger pushed as the run
goes, a failing job when pairs are left undone, two runs racing on two clones with each post
announced once; and the action and its example workflow clean under actionlint and zizmor."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import mastodon_raw
from sites import ROOT
from test_git import GIT_ENV, clone, git, make_remote, remote_ledger
from test_workflow import tool

from mkdocs_syndicate.ledger.format import parse
from mkdocs_syndicate.ledger.schema import State

pytestmark = pytest.mark.process

ACTION = ROOT / "action.yml"
RUN = ROOT / "action" / "run.sh"
INSTALL = ROOT / "action" / "install.sh"
EXAMPLES = sorted((ROOT / "docs" / "recipes").glob("*.yml"))
SITE = "https://example.com/"

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>A blog</title>
  <link href="https://example.com/"/>
  <updated>2026-11-22T10:00:00Z</updated>
  <id>https://example.com/</id>
{entries}
</feed>
"""
ENTRY = """  <entry>
    <title>Post {n}</title>
    <link href="https://example.com/posts/post-{n}/"/>
    <id>https://example.com/posts/post-{n}/</id>
    <published>2026-11-{n:02d}T09:30:00Z</published>
    <summary>About post {n}.</summary>
    <content type="html">&lt;p&gt;The whole of post {n}.&lt;/p&gt;</content>
  </entry>"""


def feed(count: int) -> str:
    return ATOM.format(entries="\n".join(ENTRY.format(n=n) for n in range(1, count + 1)))


def channels(sandbox) -> dict:
    return {
        "masto": mastodon_raw(sandbox),
        "bsky": {
            "type": "bluesky",
            "service": sandbox.url + "/bluesky",
            "handle": "sandbox.bsky.social",
            "app_password": "sandbox-bsky-app-password",
        },
        "devto": {
            "type": "forem",
            "api": sandbox.url + "/forem/api",
            "api_key": "sandbox-forem-api-key",
            "min_interval": 0,
        },
    }


def site_repository(folder: Path, sandbox, posts: int = 3) -> Path:
    """A site's repository on a bare remote: a syndicate.yml with no `git:` settings (the action's
    inputs give them) and the feed its generator wrote."""
    bare = make_remote(folder)
    seed = clone(bare, folder / "seed")
    settings = {"site_url": SITE, "site_name": "A blog", "backlog": "send", "channels": channels(sandbox)}
    (seed / "syndicate.yml").write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
    (seed / "public").mkdir()
    (seed / "public" / "atom.xml").write_text(feed(posts), encoding="utf-8")
    git("add", "syndicate.yml", "public/atom.xml", cwd=seed)
    git("commit", "--quiet", "-m", "the site", cwd=seed)
    git("push", "--quiet", "origin", "HEAD:main", cwd=seed)
    return bare


def runner_env(folder: Path, **inputs: str) -> dict[str, str]:
    """A runner's environment for the action's run step: the inputs as action.yml passes them,
    GitHub's variables, and the command the install step made (here: this interpreter's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_", "INPUT_"))}
    env.update(GIT_ENV)
    env.update(
        CI="true",
        GITHUB_ACTIONS="true",
        GITHUB_EVENT_NAME="push",
        GITHUB_REF_NAME="main",
        GITHUB_STEP_SUMMARY=str(folder / "summary.md"),
        NO_MKDOCS_2_WARNING="1",
        SYNDICATE_BIN=str(Path(sys.executable).parent / "mkdocs-syndicate"),
    )
    env.update({"INPUT_" + name.upper(): value for name, value in inputs.items()})
    return env


DEFAULT_INPUTS = {"command": "announce", "feed": "public/atom.xml", "config": "syndicate.yml", "mode": "send"}
DEFAULT_INPUTS |= {"git_push": "true", "git_remote": "origin", "git_branch": "", "site_dir": ""}


def start_action(work: Path, **inputs: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["bash", str(RUN)],
        cwd=work,
        env=runner_env(work.parent, **{**DEFAULT_INPUTS, **inputs}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_action(work: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    process = start_action(work, **inputs)
    out, err = process.communicate(timeout=180)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def sent(sandbox) -> dict[str, list[str]]:
    """What each at-most-once emulator holds, one entry per copy made."""
    state = sandbox.snapshot()
    return {
        "masto": [s["text"] for s in state["mastodon"]["statuses"]],
        "devto": [a["title"] for a in state["forem"]["articles"]],
        "bsky": [
            r["value"]["text"]
            for r in state["bluesky"]["records"].values()
            if r["value"].get("$type") == "app.bsky.feed.post"
        ],
    }


def test_the_action_announces_from_the_feed_and_pushes_the_ledger_as_it_goes(tmp_path, sandbox):
    bare = site_repository(tmp_path, sandbox)
    work = clone(bare, tmp_path / "work")
    result = run_action(work)
    assert result.returncode == 0, result.stdout + result.stderr
    pushed = parse(remote_ledger(bare) or "", "remote")
    assert sorted(pushed) == ["posts/post-1/", "posts/post-2/", "posts/post-3/"]
    assert {r.state for e in pushed.values() for r in e.channels.values()} == {"done"}
    # Pushed as it went: the in_flight records before the sends, then the done ones ([skip ci]).
    log = git("--git-dir", str(bare), "log", "--format=%s", "main", cwd=tmp_path)
    assert "in_flight for" in log and "done for" in log and "[skip ci]" in log, log
    copies = sent(sandbox)
    assert all(len(made) == 3 for made in copies.values()), copies
    # A second run of the workflow (the next push) sends nothing.
    requests = len(sandbox.requests())
    again = run_action(clone(bare, tmp_path / "next"))
    assert again.returncode == 0, again.stderr
    assert len(sandbox.requests()) == requests


def test_two_runs_racing_on_two_clones_announce_each_post_once(tmp_path, sandbox):
    """Two workflow runs at once (say `concurrency:` was left out): each pushes its in_flight
    records before sending, so the run whose push is refused takes the other's ledger and never
    sends on a stale one. Every post is announced exactly once on each channel, and a later run
    finishes whatever the loser left."""
    bare = site_repository(tmp_path, sandbox, posts=4)
    first, second = clone(bare, tmp_path / "runner-1"), clone(bare, tmp_path / "runner-2")
    racing = [start_action(first), start_action(second)]
    outputs = [process.communicate(timeout=180) for process in racing]
    # The loser of a pair exits 1 (left to the winner, not_attempted) or 0: never anything else.
    assert {process.returncode for process in racing} <= {0, 1}, outputs
    later = run_action(clone(bare, tmp_path / "runner-3"))
    assert later.returncode == 0, later.stdout + later.stderr
    pushed = parse(remote_ledger(bare) or "", "remote")
    assert {r.state for e in pushed.values() for r in e.channels.values()} == {"done"}
    copies = sent(sandbox)
    for channel, made in copies.items():
        assert sorted(made, key=str) == sorted(set(made), key=str) and len(made) == 4, (channel, made, outputs)


def test_the_job_fails_when_pairs_are_left_undone_and_says_which(tmp_path, sandbox):
    bare = site_repository(tmp_path, sandbox, posts=2)
    work = clone(bare, tmp_path / "work")
    sandbox.add_fault(
        {"channel": "mastodon", "action": "status", "status": 422, "body": {"error": "Validation failed"}}
    )
    result = run_action(work)
    assert result.returncode == 1, result.stdout + result.stderr
    refused = [line for line in result.stderr.splitlines() if "masto" in line and "failed" in line]
    assert refused and "422" in result.stderr, result.stderr
    pushed = parse(remote_ledger(bare) or "", "remote")
    states = {(k, c): r.state for k, e in pushed.items() for c, r in e.channels.items()}
    assert sorted(states.values()).count(State.FAILED) == 1 and states[("posts/post-1/", "devto")] == "done", states
    # The next run (the next push, the hourly schedule) sends what is left, and the job is green.
    again = run_action(clone(bare, tmp_path / "next"))
    assert again.returncode == 0, again.stderr
    assert all(len(made) == 2 for made in sent(sandbox).values())


def test_wrong_inputs_are_named_and_plan_and_pull_requests_send_nothing(tmp_path, sandbox):
    bare = site_repository(tmp_path, sandbox, posts=1)
    work = clone(bare, tmp_path / "work")
    for name, value, said in (
        ("mode", "sometimes", "input mode: 'sometimes' is none of send, auto, plan, off"),
        ("command", "deploy", "input command: 'deploy' is none of announce, inject, site-files"),
        ("git_push", "yes", "input git-push: 'yes' is neither true nor false"),
    ):
        wrong = run_action(work, **{name: value})
        assert wrong.returncode == 2 and f"::error title=mkdocs-syndicate::{said}" in wrong.stdout, wrong
    bad_branch = run_action(work, git_branch="-x")
    assert bad_branch.returncode == 2 and "--git-branch" in bad_branch.stderr, bad_branch.stderr
    planned = run_action(work, mode="plan")
    assert planned.returncode == 0 and "3 pair(s) would be sent" in planned.stdout, planned
    event = runner_env(tmp_path, **{**DEFAULT_INPUTS, "mode": "auto"}) | {"GITHUB_EVENT_NAME": "pull_request"}
    on_pr = subprocess.run(["bash", str(RUN)], cwd=work, env=event, capture_output=True, text=True, timeout=120)
    assert on_pr.returncode == 0 and "only the plan, nothing sent" in on_pr.stdout, on_pr
    assert run_action(work, mode="off").returncode == 0
    assert sandbox.requests() == [] and remote_ledger(bare) is None


def test_a_git_remote_input_with_credentials_is_refused_without_them_in_the_log_and_the_summary(tmp_path):
    """`git-remote: https://user:token@host/x.git` was echoed whole in the error (issue 53)."""
    work = tmp_path / "work"
    work.mkdir()
    refused = run_action(work, git_remote="https://ci:Tok3nValue99@git.example/x.git")
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert refused.returncode == 2, refused
    assert "Tok3nValue99" not in refused.stdout + refused.stderr + summary, (refused, summary)
    said = "input git-remote: 'https://***@git.example/x.git' has credentials in it; give a remote's name"
    assert f"::error title=mkdocs-syndicate::{said}" in refused.stdout, refused.stdout
    assert said in summary, summary


def test_site_files_through_the_action_writes_the_key_file_before_the_deploy(tmp_path, sandbox):
    bare = site_repository(tmp_path, sandbox, posts=1)
    work = clone(bare, tmp_path / "work")
    settings = yaml.safe_load((work / "syndicate.yml").read_text())
    settings["channels"]["ping"] = {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "site-key-1234"}
    (work / "syndicate.yml").write_text(yaml.safe_dump(settings))
    result = run_action(work, command="site-files", site_dir="public")
    assert result.returncode == 0, result.stderr
    assert (work / "public" / "site-key-1234.txt").read_text() == "site-key-1234"


def test_inject_through_the_action_puts_each_announced_posts_copies_on_its_built_page(tmp_path, sandbox):
    """`command: inject` on a site any generator built: the key file, then each post the ledger has
    copies of gets its "Also on" block in its page; a page without copies and a second run change
    no byte. Run before the first announce it finds no copies and says so."""
    bare = site_repository(tmp_path, sandbox, posts=2)
    work = clone(bare, tmp_path / "work")
    settings = yaml.safe_load((work / "syndicate.yml").read_text())
    settings["channels"]["ping"] = {"type": "indexnow", "endpoint": sandbox.url + "/indexnow", "key": "site-key-1234"}
    (work / "syndicate.yml").write_text(yaml.safe_dump(settings))
    pages = {n: work / "public" / "posts" / f"post-{n}" / "index.html" for n in (1, 2)}
    about = work / "public" / "about" / "index.html"
    for path in (*pages.values(), about):
        path.parent.mkdir(parents=True)
        path.write_text(
            "<!doctype html><html><head><title>P</title></head><body><article><p>Text.</p></article></body></html>"
        )
    before = {path: path.read_bytes() for path in (*pages.values(), about)}
    first = run_action(work, command="inject", site_dir="public")
    assert first.returncode == 0, first.stdout + first.stderr
    assert (work / "public" / "site-key-1234.txt").read_text() == "site-key-1234"
    assert {path: path.read_bytes() for path in before} == before  # nothing announced yet
    announced = run_action(work)
    assert announced.returncode == 0, announced.stdout + announced.stderr
    second = run_action(work, command="inject", site_dir="public")
    assert second.returncode == 0, second.stdout + second.stderr
    for n, page in pages.items():
        html = page.read_text()
        assert html.count('rel="syndication"') == 3 and "u-syndication" in html, (n, html)
    assert about.read_bytes() == before[about]
    injected = {path: path.read_bytes() for path in pages.values()}
    again = run_action(work, command="inject", site_dir="public")
    assert again.returncode == 0 and {path: path.read_bytes() for path in pages.values()} == injected
    assert "0 page(s) changed" in again.stderr, again.stderr


# ---------------------------------------------------------------------- the action's own files


def test_the_action_is_composite_passes_inputs_through_the_environment_and_pins_nothing_unpinned():
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    # Inputs reach the scripts as environment variables, never spliced into a shell line.
    assert all("${{" not in step["run"] for step in steps), steps
    assert [step["run"] for step in steps] == [
        '"$GITHUB_ACTION_PATH/action/install.sh"',
        '"$GITHUB_ACTION_PATH/action/run.sh"',
    ]
    run_env = steps[1]["env"]
    for name in action["inputs"]:
        if name not in ("python", "working-directory"):
            assert run_env["INPUT_" + name.upper().replace("-", "_")] == "${{ inputs." + name + " }}"
    assert not any("uses" in step for step in steps)  # no third-party action inside it


def test_the_action_and_its_example_workflows_lint_clean_with_actionlint(tmp_path):
    """actionlint checks workflows, and reads a local action's action.yml to check the inputs a
    workflow gives it: so each example runs here as a workflow of a repository holding the action
    (`uses: ./`), which makes a misspelt or missing input an error."""
    assert EXAMPLES, "no example workflow in docs/recipes/"
    project = tmp_path / "project"
    (project / ".github" / "workflows").mkdir(parents=True)
    git("init", "--quiet", str(project), cwd=tmp_path)
    (project / "action.yml").write_text(ACTION.read_text())
    for example in EXAMPLES:
        text = example.read_text()
        assert "uses: mkdocs-syndicate/mkdocs-syndicate@v1" in text, example
        local = text.replace("uses: mkdocs-syndicate/mkdocs-syndicate@v1", "uses: ./")
        (project / ".github" / "workflows" / example.name).write_text(local)
    result = subprocess.run([tool("actionlint")], cwd=project, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_action_and_its_example_workflows_have_no_zizmor_findings_even_pedantic():
    """With action/zizmor.yml: the examples may name this action by its tag (`@v1`); any other
    action must be pinned by commit. Each keeps the checkout's token on purpose (the deploy and
    the ledger's pushes use it) and says so where it does (`zizmor: ignore[artipacked]`)."""
    config = ROOT / "action" / "zizmor.yml"
    result = subprocess.run(
        [
            tool("zizmor"),
            "--offline",
            "--persona",
            "pedantic",
            "--config",
            str(config),
            str(ACTION),
            *map(str, EXAMPLES),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and "No findings to report" in result.stdout, result.stdout + result.stderr
    for example in EXAMPLES:
        ignored = [line for line in example.read_text().splitlines() if "zizmor: ignore" in line]
        assert len(ignored) == 1 and "artipacked" in ignored[0], example


def test_the_example_workflows_grant_contents_write_alone_and_pin_actions_by_commit():
    import re

    for example in EXAMPLES:
        data = yaml.safe_load(example.read_text())
        assert data["permissions"] == {}, example
        for name, job in data["jobs"].items():
            assert job["permissions"] in ({"contents": "read"}, {"contents": "write"}), (example, name)
            if any("mkdocs-syndicate@" in str(step.get("uses")) for step in job["steps"]):
                assert job["concurrency"]["cancel-in-progress"] is False, (example, name)
        for line in example.read_text().splitlines():
            if "uses:" in line and "mkdocs-syndicate@" not in line:
                assert re.search(r"uses: [\w.-]+/[\w.-]+@[0-9a-f]{40}  # v\d+\.\d+\.\d+$", line), line


def test_every_recipe_page_shows_its_example_workflow_as_it_is():
    for example in EXAMPLES:
        page = example.with_suffix(".md")
        assert example.read_text() in page.read_text(), page


def test_the_scripts_are_executable_and_bash():
    for script in (RUN, INSTALL):
        text = script.read_text()
        assert (
            os.access(script, os.X_OK) and text.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in text
        )


def test_the_install_step_installs_the_actions_own_version_once_per_job(tmp_path):
    """`uses: …@v1` runs the package of that checkout (not whatever an index has), in a virtual
    environment of its own that sees the job's packages; a second use in the job installs nothing."""
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    outputs = tmp_path / "outputs"
    # Without the suite's PYTHONPATH (conftest.py puts this checkout first for its children): the
    # point is which copy the action's own environment imports.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "INPUT_", "PIP_", "PYTHONPATH"))}
    env |= {"RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(outputs), "INPUT_PYTHON": sys.executable}

    def install() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", str(INSTALL)], env=env, capture_output=True, text=True, timeout=600)

    first = install()
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"mkdocs-syndicate, version {version}" in first.stdout
    (line,) = outputs.read_text().splitlines()
    command = Path(line.removeprefix("bin="))
    assert command == tmp_path / "mkdocs-syndicate-action" / "bin" / "mkdocs-syndicate"
    installed = subprocess.run(
        [str(command.parent / "python"), "-c", "import mkdocs_syndicate, sys; print(mkdocs_syndicate.__file__)"],
        cwd=tmp_path,  # not this checkout, whose package `python -c` would find first
        env=env,
        capture_output=True,
        text=True,
    )
    assert str(tmp_path) in installed.stdout, installed  # its own copy, not this checkout's editable one
    marker = command.parent.parent / ".installed-from"
    stamp = marker.stat().st_mtime_ns
    again = install()
    assert again.returncode == 0 and marker.stat().st_mtime_ns == stamp, again.stderr  # nothing installed again
    env["INPUT_PYTHON"] = "no-such-python"
    missing = install()
    assert missing.returncode == 1 and "input python: 'no-such-python' is not a command" in missing.stdout
