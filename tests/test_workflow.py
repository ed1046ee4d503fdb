"""The GitHub Actions workflow we ship: the properties the docs promise (docs/ci.md), and page == file."""

from __future__ import annotations

import pytest
import yaml
from sites import ROOT

pytestmark = pytest.mark.process

WORKFLOW = ROOT / "docs" / "github-actions-publish.yml"


def load():
    data = yaml.safe_load(WORKFLOW.read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def test_publish_never_runs_on_pull_requests_and_is_never_cancelled_midway():
    data = load()
    publish = data["jobs"]["publish"]
    assert publish["if"] == "github.event_name != 'pull_request'"
    assert publish["concurrency"]["cancel-in-progress"] is False
    assert publish["permissions"] == {"contents": "write"}
    step = next(s for s in publish["steps"] if "gh-deploy" in s.get("run", ""))
    assert step["env"]["SYNDICATE_MODE"] == "send"
    assert all(v.startswith("${{ secrets.") for k, v in step["env"].items() if k != "SYNDICATE_MODE")


def test_pull_requests_only_build_without_secrets():
    check = load()["jobs"]["check"]
    assert check["if"] == "github.event_name == 'pull_request'"
    assert "secrets." not in yaml.safe_dump(check) and check["permissions"] == {"contents": "read"}
    assert any(s.get("run") == "mkdocs build --strict" for s in check["steps"])


def test_the_ci_page_shows_the_same_workflow():
    assert WORKFLOW.read_text() in (ROOT / "docs" / "ci.md").read_text()


WORKFLOWS = [WORKFLOW, ROOT / ".github" / "workflows" / "release.yml"]


def tool(name):
    """A linter installed by the test extra, next to this interpreter (or on PATH)."""
    import shutil
    import sys
    from pathlib import Path

    found = Path(sys.executable).parent / name
    path = str(found) if found.exists() else shutil.which(name)
    if path is None:
        import pytest

        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return path


def test_the_workflows_lint_clean_with_actionlint():
    import subprocess

    result = subprocess.run([tool("actionlint"), *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_workflows_have_no_zizmor_findings_even_pedantic():
    """The one exception is documented where it is: the publish job keeps the checkout's token on
    purpose (gh-deploy and the ledger push use it) and uploads no artifact (`zizmor: ignore`)."""
    import subprocess

    result = subprocess.run(
        [tool("zizmor"), "--offline", "--persona", "pedantic", *map(str, WORKFLOWS)], capture_output=True, text=True
    )
    assert result.returncode == 0 and "No findings to report" in result.stdout, result.stdout + result.stderr
    ignored = [line for line in WORKFLOW.read_text().splitlines() if "zizmor: ignore" in line]
    assert len(ignored) == 1 and "artipacked" in ignored[0]


def test_actions_are_pinned_by_commit_with_the_version_beside_them():
    import re

    for path in WORKFLOWS:
        for line in path.read_text().splitlines():
            if "uses:" in line:
                assert re.search(r"uses: [\w.-]+/[\w.-]+@[0-9a-f]{40}  # v\d+\.\d+\.\d+$", line), line


def test_both_jobs_install_the_sites_own_requirements_when_it_has_them():
    """Real blogs use more plugins than Material (glightbox, minify): without them the build fails.
    How the step's script treats requirements.txt, pyproject.toml and a pin is run, with a fake pip,
    in tests/test_newcomer_words.py."""
    for job in ("check", "publish"):
        installs = [s["run"] for s in load()["jobs"][job]["steps"] if "pip install" in s.get("run", "")]
        assert len(installs) == 1 and "-r requirements.txt" in installs[0] and "pyproject.toml" in installs[0]
        assert installs[0].count("pip install") == 1  # one resolution: a pin is kept, or the step fails


def test_the_install_page_states_the_mkdocs_requirement_the_package_declares():
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (mkdocs,) = [d for d in declared if d.startswith("mkdocs>")]
    install = (ROOT / "docs" / "getting-started.md").read_text()
    assert f"`{mkdocs}`" in install and "MkDocs 1.6 or later" in install and "ResolutionImpossible" in install
    assert "MkDocs 1.6 or later" in (ROOT / "README.md").read_text()


def test_a_weekly_job_checks_the_credentials_and_fails_loudly():
    """Issue 38: an expired token is found before a post is missed, by a scheduled job that runs
    the credential check (read-only: no push, no token kept) and fails the run when one needs a person."""
    data = load()
    assert {"cron": "41 6 * * 1"} in data["on"]["schedule"]
    job = data["jobs"]["credentials"]
    assert job["if"] == "github.event.schedule == '41 6 * * 1' || github.event_name == 'workflow_dispatch'"
    assert job["permissions"] == {"contents": "read"}
    (check,) = [s for s in job["steps"] if "mkdocs-syndicate doctor" in s.get("run", "")]
    assert check["run"] == "mkdocs-syndicate doctor"  # its exit status is the job's: no `|| true`
    assert all(v.startswith("${{ secrets.") for v in check["env"].values())
