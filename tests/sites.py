"""Temporary MkDocs sites for plugin tests, built by a real `python -m mkdocs` process."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def under_test(env: dict) -> dict:
    """`env` with this checkout first on PYTHONPATH: a child imports the package under test, not
    the one the venv's editable install points at (another git worktree's)."""
    paths = [str(ROOT), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    return {**env, "PYTHONPATH": os.pathsep.join(paths)}


def write_site(
    folder: Path, plugin: dict, posts: dict[str, str], *, blog: bool = False, site_url: str = "https://example.com/"
) -> Path:
    """posts: {file name: front matter + body}. Returns the mkdocs.yml path."""
    docs = folder / "docs"
    post_dir = docs / ("blog/posts" if blog else "posts")
    post_dir.mkdir(parents=True, exist_ok=True)
    (docs / "index.md").write_text("# Home\n", encoding="utf-8")
    if blog:
        (docs / "blog" / "index.md").write_text("# Blog\n", encoding="utf-8")
    for name, text in posts.items():
        (post_dir / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    # The tests' posts are dated November 2026; a first run would adopt them (backlog: adopt, the
    # default) — tests of that say so, the others announce them. A removal is proved without the
    # wait between its two reads (removal_recheck), unless a test sets one.
    plugin = {"backlog": "send", "removal_recheck": 0, **plugin}
    config = {
        "site_name": "Test Site",
        "site_url": site_url,
        "theme": {"name": "material"} if blog else {"name": "mkdocs"},
        "plugins": (["blog"] if blog else []) + [{"syndicate": plugin}],
    }
    path = folder / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def post(title: str, date: str | dt.date = "2026-11-20", **front) -> str:
    meta = {"date": date, "syndicate": True, **front}
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + f"---\n\n# {title}\n\nBody of {title}.\n"


def mkdocs(
    config: Path, *args: str, env: dict | None = None, timeout: float = 120, program: str = "mkdocs"
) -> subprocess.CompletedProcess:
    """`mkdocs <args>` (default: build) on `config`; `program="properdocs"` runs ProperDocs, MkDocs
    1.6's continuation, the same way."""
    full_env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CI", "GITHUB_EVENT_NAME", "CI_MERGE_REQUEST_IID", "CI_PIPELINE_SOURCE", "SYNDICATE_MODE")
    }
    full_env.update({"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"})
    full_env = under_test({**full_env, **(env or {})})
    command = [sys.executable, "-m", program, *(args or ("build",)), "-f", str(config)]
    return subprocess.run(command, cwd=config.parent, env=full_env, capture_output=True, text=True, timeout=timeout)


def command(config: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    """`mkdocs-syndicate <args>` as a process started like a terminal's job (Ctrl-C reaches it)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "CI", "GITHUB_"))},
        "NO_MKDOCS_2_WARNING": "1",
        **(env or {}),
    }
    env = under_test(env)
    return subprocess.Popen(
        [sys.executable, "-m", "mkdocs_syndicate.cli", args[0], "-f", str(config), *args[1:]],
        cwd=config.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_like_a_terminal_job,  # noqa: PLW1509 (signal.signal only)
    )


def _like_a_terminal_job() -> None:
    """A shell without job control starts background commands (a CI step run with `&`, say) with
    Ctrl-C ignored, and children inherit that; a command in a terminal gets it. Tests of Ctrl-C
    would otherwise wait out a 60 s pause on such a machine."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
