"""What git mode reads that a user or another writer controls (issue 36): a ledger on the remote
branch that is not UTF-8, a remote or branch setting git cannot take. Each is a clear error naming
the branch and file, or the setting; never a traceback."""

from __future__ import annotations

import pytest
from conftest import make_post, mastodon_raw
from test_git import clone, git, make_remote, run

from mkdocs_syndicate.errors import ConfigError, LedgerError
from mkdocs_syndicate.ledger.gitsettings import GitSettings

pytestmark = pytest.mark.process


@pytest.fixture
def repo(tmp_path, monkeypatch):
    from test_git import GIT_ENV

    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    bare = make_remote(tmp_path)
    return bare, clone(bare, tmp_path / "work")


def test_a_ledger_on_the_remote_branch_that_is_not_utf8_is_named(repo, sandbox, tmp_path):
    bare, work = repo
    other = clone(bare, tmp_path / "other")
    (other / "ledger.yml").write_bytes(b"# mkdocs-syndicate ledger\nposts:\n  caf\xe9/: {}\n")
    git("add", "ledger.yml", cwd=other)
    git("commit", "--quiet", "-m", "a latin-1 ledger", cwd=other)
    git("push", "--quiet", "origin", "HEAD:main", cwd=other)
    git("fetch", "--quiet", "origin", cwd=work)
    with pytest.raises(
        LedgerError, match=r"^ledger origin/main:ledger\.yml: not UTF-8 text \(byte 38\); a ledger is UTF-8"
    ):
        run(work, {"masto": mastodon_raw(sandbox)}, [make_post(1)])
    assert sandbox.requests() == []


@pytest.mark.parametrize("setting", ["remote", "branch"])
@pytest.mark.parametrize("value", ["my origin", "-upload-pack=evil", "a..b", "x\ty"])
def test_a_git_name_git_cannot_take_is_a_config_error_naming_the_setting(setting, value):
    with pytest.raises(ConfigError, match=rf"^git\.{setting}: .* is not a name git accepts"):
        GitSettings(commit=True, push=True, **{setting: value})


@pytest.mark.parametrize(
    "remote, shown",
    [
        ("https://ci:Tok3nValue99@git.example/x.git", "https://***@git.example/x.git"),
        ("ci:Tok3nValue99@git.example:x.git", "***@git.example:x.git"),
    ],
)
def test_a_remote_given_as_a_url_with_credentials_is_refused_without_them(tmp_path, remote, shown):
    """The Action's git-remote input `https://user:token@host/x.git` was echoed whole in the error."""
    from click.testing import CliRunner

    from mkdocs_syndicate.cli import main

    (tmp_path / "syndicate.yml").write_text("site_url: https://example.com/\nchannels: {}\n")
    result = CliRunner().invoke(main, ["run", "-f", str(tmp_path / "syndicate.yml"), "--git-remote", remote])
    assert result.exit_code == 2, result.output
    assert "Tok3nValue99" not in result.output and f"{shown!r} looks like a URL with credentials" in result.output
    with pytest.raises(ConfigError) as caught:
        GitSettings(push=True, remote=remote)
    assert "Tok3nValue99" not in str(caught.value) and shown in str(caught.value)


def test_a_remote_with_a_space_in_syndicate_yml_is_named_before_any_git(tmp_path):
    from test_feed import cli

    (tmp_path / "syndicate.yml").write_text(
        "site_url: https://example.com/\ngit: {push: true, remote: 'my origin'}\nchannels: {}\n"
    )
    result = cli(tmp_path, "status")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "git.remote: 'my origin' is not a name git accepts" in result.stderr, result.stderr


def test_a_remote_tracking_answer_that_names_no_object_is_no_ledger(repo, sandbox):
    """The header `git cat-file --batch` gives a name it cannot find is `<name> missing`, and the
    name is split on spaces no longer: it crashed with ValueError from int('missing')."""
    from mkdocs_syndicate.ledger.gitmirror import GitMirror

    _bare, work = repo
    mirror = GitMirror(work / "ledger.yml", GitSettings(commit=True, push=True, branch="main"))
    mirror.start()
    mirror._run_bytes = lambda *args, input_bytes: (  # type: ignore[method-assign]  # git's answer, faked
        b"refs/remotes/a b/main missing\nrefs/remotes/a b/main:ledger.yml missing\n"
    )
    assert mirror._remote_ledger() == (None, None)
