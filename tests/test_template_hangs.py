"""Templates that never finished (issue 36): numbers that grow past any size and loops that call
themselves. Each is rendered in a child process with a deadline, so a regression fails here
instead of hanging the suite."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mkdocs_syndicate.config.channels import parse_channels
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.registry import clients

DEADLINE = 60  # seconds; a bounded render takes well under one, an unbounded one never ends

CHILD = """
import sys
from pathlib import Path
from conftest import SITE, make_post
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.preview import plan
from mkdocs_syndicate.errors import PostError, ConfigError

options = parse_options(
    {"masto": {"type": "mastodon", "instance": "https://m.example", "template": sys.argv[1]}},
    ledger_path=Path(sys.argv[2]) / "ledger.yml", site=SITE, sandbox=False, sending=False,
)
try:
    print(plan(options, [make_post(1)]).pairs[0].prepared.message.text)
except (PostError, ConfigError) as exc:
    print("refused:", exc)
"""


def render_in_child(template: str, tmp_path) -> str:
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, template, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            cwd="tests",
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"rendering {template!r} did not finish in {DEADLINE} s")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


GROWING_NUMBERS = [
    "{{ ((((9**64)**64)**64)**64)**64 }}",
    "{% set ns = namespace(x=3) %}{% for i in range(40) %}{% set ns.x = ns.x * ns.x %}{% endfor %}{{ ns.x }}",
    "{% set ns = namespace(x=1) %}{% set ns.x = (2**64)**63 %}{% for i in range(100) %}{% set ns.x = ns.x + ns.x %}{% endfor %}{{ ns.x }}",
]


@pytest.mark.process
@pytest.mark.parametrize("template", GROWING_NUMBERS)
def test_a_number_that_grows_without_bound_is_refused_before_it_is_computed(template, tmp_path):
    said = render_in_child(template, tmp_path)
    assert said.startswith("refused: channels.masto.template: cannot render for docs/blog/post-1.md: ")
    assert "(at most 4096)" in said, said


@pytest.mark.process
def test_a_recursive_loop_is_refused_with_the_config_not_run(tmp_path):
    said = render_in_child(
        "{% for i in range(30) recursive %}{% if loop.depth < 30 %}{{ loop(range(30)) }}{% endif %}{% endfor %}",
        tmp_path,
    )
    assert said == (
        "refused: channels.masto.template: template line 1: a recursive loop is not available in message templates"
    ), said


@pytest.mark.unit
def test_a_recursive_loop_is_a_config_error_naming_the_template_setting():
    with pytest.raises(ConfigError, match=r"channels\.x\.template: template line 2: a recursive loop"):
        parse_channels(
            {"x": {"type": "mastodon", "template": "{{ title }}\n{% for t in tags recursive %}{% endfor %}"}}, clients()
        )


@pytest.mark.process
def test_ordinary_arithmetic_still_renders(tmp_path):
    said = render_in_child("{{ title }} {{ 2**64 * 3 + 5 - 7 }} {{ (-1)**63 }} {{ 7 // 2 }} {{ 2.5 * 2 }}", tmp_path)
    assert said.startswith("Post 1 55340232221128654846 -1 3 5.0"), said
