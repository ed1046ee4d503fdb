"""The GitHub Actions workflow we ship: the properties the README promises, and README == file."""

from __future__ import annotations

import yaml

from sites import ROOT

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


def test_the_readme_shows_the_same_workflow():
    assert WORKFLOW.read_text() in (ROOT / "README.md").read_text()
