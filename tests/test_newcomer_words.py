"""Words a newcomer tripped over (issue 40): `verify` said "nothing in flight" while `status`
listed an IndexNow in_flight; the adoption line came last in a first run that also sent; the
summary table was 200 columns wide in a CI log; the IndexNow key error did not say how to make a
key; the sample workflow upgraded a pinned MkDocs and skipped a site with pyproject.toml."""

from __future__ import annotations

import datetime as dt
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import SITE, make_post, mastodon_raw, write_ledger
from rich.console import Console
from sites import ROOT

from mkdocs_syndicate.cli import main
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.results import PairResult, PairState, RunReport
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.output import display

MAKE_A_KEY = 'python3 -c "import uuid; print(uuid.uuid4().hex)"'


def standalone(folder: Path, channels: str) -> str:
    (folder / "site").mkdir(exist_ok=True)
    path = folder / "syndicate.yml"
    path.write_text(f"site_url: https://example.com/\nchannels:\n{channels}", encoding="utf-8")
    return str(path)


# ---------------------------------------------------------------- verify and an in_flight ping


@pytest.mark.unit
def test_verify_says_it_leaves_an_in_flight_ping_to_the_next_run_as_status_lists_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = standalone(tmp_path, "  ping: {type: indexnow, key: site-key-1234}\n")
    write_ledger(
        tmp_path / "ledger.yml",
        {("blog/a/", "ping"): Record(State.IN_FLIGHT, 1, "2026-12-01T08:00:00Z", message_sha256="0" * 64)},
    )
    status = CliRunner().invoke(main, ["status", "-f", config])
    assert "in_flight" in status.output, status.output
    verify = CliRunner().invoke(main, ["verify", "-f", config])
    assert verify.exit_code == 0, verify.output
    assert "nothing in flight" not in verify.output
    assert "no in_flight record of an at-most-once channel (0 requests)" in verify.output
    assert (
        "1 in_flight record(s) of at-least-once channels not read back: a ping has nothing to read, "
        "so the next run sends it again" in verify.output
    )


# ---------------------------------------------------------------- what happened first is said first


@pytest.mark.http
def test_the_adoption_line_comes_before_the_sending_lines(tmp_path, sandbox, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    old = make_post(9, date=dt.datetime(2020, 1, 9, tzinfo=dt.UTC))  # before syndication started
    options = parse_options(
        {"masto": mastodon_raw(sandbox)},
        ledger_path=tmp_path / "ledger.yml",
        site=SITE,
        sandbox=False,
        sending=True,
        backlog="adopt",
        backlog_days=400,
    )
    lines: list[str] = []
    display.run_with_display(
        options, [old, make_post(1)], lines.append, lines.append, console=Console(file=io.StringIO())
    )
    assert lines[0].startswith("backlog: 1 post(s) dated before"), lines
    assert any(line.startswith("masto: blog/post-1/ done") for line in lines[1:]), lines


# ---------------------------------------------------------------- the summary in a CI log


LONG = "422 Validation failed: " + "the text is far too long for this instance " * 6


def summary_of(monkeypatch, capsys, columns: str | None) -> list[str]:
    """What run_with_display prints as its summary on stderr when stderr is a CI log, not a terminal."""
    report = RunReport(
        results=[
            PairResult(
                "blog/2026/11/28/idempotency/", "masto", PairState.DONE, "sent", "https://mastodon.example/@me/1137"
            ),
            PairResult("blog/2026/11/28/idempotency/", "devto", PairState.FAILED, LONG),
        ]
    )

    def sent(*args, **kwargs) -> RunReport:
        return report

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(display, "send", sent)
    display.run_with_display(None, [], lambda line: None, lambda line: None)
    return capsys.readouterr().err.splitlines()


@pytest.mark.unit
def test_the_summary_in_a_log_is_a_list_neither_padded_nor_wrapped(monkeypatch, capsys):
    lines = summary_of(monkeypatch, capsys, None)
    assert lines[0].startswith("summary: 2 pair(s)")
    assert any(line.endswith("  devto  failed  " + LONG.rstrip()) for line in lines), lines  # whole, on one line
    assert any(line.endswith("masto  done  https://mastodon.example/@me/1137") for line in lines), lines
    assert all(line == line.rstrip() for line in lines)  # no padding to a width
    assert not any("│" in line or "━" in line for line in lines)


@pytest.mark.unit
def test_the_summary_is_a_table_as_wide_as_columns_says(monkeypatch, capsys):
    lines = summary_of(monkeypatch, capsys, "100")
    assert any("│" in line for line in lines), lines
    assert max(len(line) for line in lines) <= 100


# ---------------------------------------------------------------- the IndexNow key


@pytest.mark.unit
@pytest.mark.parametrize("key", ["short", None])
def test_the_indexnow_key_error_says_how_to_make_one(tmp_path, key):
    raw = {"ping": {"type": "indexnow", **({"key": key} if key else {})}}
    with pytest.raises(ConfigError) as error:
        parse_options(raw, ledger_path=tmp_path / "ledger.yml", site=SITE, sandbox=False, sending=True)
    assert MAKE_A_KEY in str(error.value) and "channels.ping.key" in str(error.value)


# ---------------------------------------------------------------- the sample workflow's install step

WORKFLOW = ROOT / "docs" / "github-actions-publish.yml"
FAKE_PIP = """#!/bin/sh
# A pip that records its arguments (and the site requirements it was handed), and fails as pip's
# resolver would when told to.
printf '%s\\n' "$*" >> "$PIP_LOG"
for arg in "$@"; do
  case "$arg" in *.txt) [ -f "$arg" ] && sed 's/^/  req: /' "$arg" >> "$PIP_LOG" ;; esac
done
[ -z "$PIP_FAILS" ]
"""


def install_steps() -> list[str]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = [step for job in data["jobs"].values() for step in job["steps"]]
    return [step["run"] for step in steps if "pip install" in step.get("run", "")]


def run_install(site: Path, fails: bool = False) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    (scripts := site / ".fake-bin").mkdir()
    pip = scripts / "pip"
    pip.write_text(FAKE_PIP, encoding="utf-8")
    pip.chmod(0o755)
    (wheels := site / ".github" / "wheels").mkdir(parents=True)
    (wheels / "mkdocs_syndicate-0.1.0-py3-none-any.whl").write_bytes(b"")
    python = Path(sys.executable).parent
    (runner_temp := site / ".runner-temp").mkdir()
    env = {
        "PATH": f"{scripts}{os.pathsep}{python}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "PIP_LOG": str(site / "pip.log"),
        "RUNNER_TEMP": str(runner_temp),
        **({"PIP_FAILS": "1"} if fails else {}),
    }
    (script,) = set(install_steps())
    # As GitHub Actions runs a `run:` step on Linux: bash -e.
    done = subprocess.run(
        [shutil.which("bash") or "/bin/bash", "-e", "-c", script], cwd=site, env=env, capture_output=True, text=True
    )
    log = (site / "pip.log").read_text(encoding="utf-8").splitlines() if (site / "pip.log").exists() else []
    return done, log


@pytest.mark.process
def test_every_job_installs_with_the_same_script():
    assert len(install_steps()) == 3 and len(set(install_steps())) == 1


@pytest.mark.process
def test_a_site_with_requirements_txt_installs_it_with_the_plugin_in_one_resolution(tmp_path):
    (tmp_path / "requirements.txt").write_text("mkdocs==1.5.3\nmkdocs-glightbox\n", encoding="utf-8")
    done, log = run_install(tmp_path)
    assert done.returncode == 0, done.stderr
    installs = [line for line in log if not line.startswith("  req:")]
    assert len(installs) == 1, log  # one pip call: a pin the plugin cannot use fails, it is not upgraded
    assert (
        "-r requirements.txt" in installs[0] and ".github/wheels/mkdocs_syndicate-0.1.0-py3-none-any.whl" in installs[0]
    )
    assert "--upgrade" not in installs[0] and "-U " not in installs[0]


@pytest.mark.process
def test_a_site_with_pyproject_toml_installs_its_declared_dependencies(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "my-blog"\nversion = "1"\ndependencies = ["mkdocs-material==9.5.0", "mkdocs-rss-plugin"]\n',
        encoding="utf-8",
    )
    done, log = run_install(tmp_path)
    assert done.returncode == 0, done.stderr
    installs = [line for line in log if not line.startswith("  req:")]
    assert len(installs) == 1 and "mkdocs_syndicate-0.1.0-py3-none-any.whl" in installs[0], log
    assert "  req: mkdocs-material==9.5.0" in log and "  req: mkdocs-rss-plugin" in log


@pytest.mark.process
def test_a_site_that_declares_nothing_gets_material_and_the_plugin(tmp_path):
    done, log = run_install(tmp_path)
    assert done.returncode == 0, done.stderr
    assert log == ["install mkdocs-material .github/wheels/mkdocs_syndicate-0.1.0-py3-none-any.whl"]


@pytest.mark.process
def test_a_pin_the_plugin_cannot_use_fails_the_step(tmp_path):
    (tmp_path / "requirements.txt").write_text("mkdocs==1.5.3\n", encoding="utf-8")
    done, log = run_install(tmp_path, fails=True)  # pip's resolver: ResolutionImpossible
    assert done.returncode != 0
    assert len([line for line in log if not line.startswith("  req:")]) == 1  # nothing installed after it


# ---------------------------------------------------------------- adopt --before


@pytest.mark.unit
def test_adopt_before_says_which_date_it_compares_and_how_to_write_it():
    """`adopt --before yesterday` is refused as "not a date" with the forms it takes (issue 36);
    the help says the same before anyone tries: the post's own date, and how DATE is written."""
    shown = " ".join(CliRunner().invoke(main, ["adopt", "--help"]).output.split())
    assert "the post's own: front matter `date`, or the feed entry's" in shown
    assert "2026-11-28, 2026-11-28T09:30 or 2026-11-28T09:30:00+01:00 (UTC without an offset)" in shown
