import pytest

from mkdocs_syndicate.engine.modes import decide

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "mode, command, serving, env, action",
    [
        ("auto", "build", False, {}, "plan"),
        ("auto", "build", False, {"CI": "true"}, "send"),
        ("auto", "build", False, {"CI": "true", "GITHUB_EVENT_NAME": "pull_request"}, "plan"),
        ("auto", "build", False, {"CI": "true", "GITHUB_EVENT_NAME": "pull_request_target"}, "plan"),
        ("auto", "build", False, {"CI": "true", "GITHUB_EVENT_NAME": "push"}, "send"),
        ("auto", "build", False, {"CI": "true", "CI_MERGE_REQUEST_IID": "7"}, "plan"),
        ("auto", "build", False, {"CI": "true", "CI_PIPELINE_SOURCE": "merge_request_event"}, "plan"),
        ("auto", "gh-deploy", False, {}, "send"),
        ("auto", "build", True, {"CI": "true"}, "off"),  # serve --clean reports "build"
        ("send", "serve", True, {}, "off"),
        ("send", "build", False, {}, "send"),
        ("plan", "gh-deploy", False, {"CI": "true"}, "plan"),
        ("off", "gh-deploy", False, {"CI": "true"}, "off"),
    ],
)
def test_mode_decisions(mode, command, serving, env, action):
    assert decide(mode, command, serving, env).action == action
