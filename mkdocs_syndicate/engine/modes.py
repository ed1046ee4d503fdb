"""Whether this MkDocs invocation sends, only plans, or does nothing (docs/design/mkdocs-events.md, "Modes").

auto: send on gh-deploy (after the push) and on build when CI is true, except pull-request builds;
otherwise plan. serve never sends and never writes the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from mkdocs_syndicate.config.defaults import MODES  # noqa: F401 (the modes decide() understands)


class Decision(NamedTuple):  # not a dataclass: every `mkdocs` command imports this, and defining one costs ~0.7 ms
    action: str  # send | plan | off
    reason: str

    @property
    def sends(self) -> bool:
        return self.action == "send"


def is_ci(env: Mapping[str, str]) -> bool:
    return env.get("CI", "").strip().lower() in ("true", "1", "yes")


def pull_request_reason(env: Mapping[str, str]) -> str | None:
    event = env.get("GITHUB_EVENT_NAME", "")
    if event in ("pull_request", "pull_request_target"):
        return f"GitHub {event} build"
    if env.get("CI_MERGE_REQUEST_IID") or env.get("CI_PIPELINE_SOURCE") == "merge_request_event":
        return "GitLab merge request pipeline"
    return None


def decide(mode: str, command: str, serving: bool, env: Mapping[str, str]) -> Decision:
    if mode == "off":
        return Decision("off", "mode: off")
    if serving:
        return Decision("off", "mkdocs serve never sends nor writes the ledger")
    if mode == "plan":
        return Decision("plan", "mode: plan")
    if mode == "send":
        return Decision("send", "mode: send")
    if command == "gh-deploy":
        return Decision("send", "mode auto: gh-deploy (sends after the push)")
    if not is_ci(env):
        return Decision("plan", "mode auto: not in CI (CI is not true)")
    pr = pull_request_reason(env)
    if pr:
        return Decision("plan", f"mode auto: {pr}")
    return Decision("send", "mode auto: CI build")
