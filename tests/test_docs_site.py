"""The documentation site (issue 40): built with MkDocs, Material and this plugin from docs/, every
link and anchor between its pages resolving, its release post planned (by default) or announced to
the sandbox (when SYNDICATE_MODE asks); and every setting the schema knows documented in a settings
table of its page, with no table naming a setting the schema does not know.

A settings table is marked for this check by the HTML comment before it, `<!-- settings: SCOPE -->`
(invisible on the page): SCOPE is `plugin`, `git`, `channel` (what every channel takes),
`type NAME` (a channel type's own), `syndicate.yml` (its keys beyond the plugin's) or
`channel class` (what a channel type's author declares). The builds run on a copy of the site in
tmp_path: the working tree's docs-ledger.yml, caches and site/ are never written.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import yaml
from sites import ROOT

import mkdocs_syndicate
from mkdocs_syndicate.channels.base import Channel
from mkdocs_syndicate.config.channels import COMMON, Option, OptionKind
from mkdocs_syndicate.config.schema import GitConfig, SyndicateConfig, names_of
from mkdocs_syndicate.config.standalone import SITE_KEYS
from mkdocs_syndicate.registry import BUILT_IN

DOCS = ROOT / "docs"
MARKER = re.compile(r"^<!-- settings: ([\w.\- ]+) -->$")
# A table whose first header cell says what its rows are: "setting", "`git:` setting", "attribute".
SETTINGS_HEADER = re.compile(r"^\|\s*(?:`[^`]+`\s*)?(setting|attribute)\s*\|")
FIRST_NAME = re.compile(r"`([A-Za-z_][\w.]*)")


# ---------------------------------------------------------------- what the docs say


@dataclasses.dataclass(frozen=True)
class Row:
    scope: str
    name: str
    where: str  # page:line


def documented() -> tuple[list[Row], list[str]]:
    """Every row of every marked settings table, and every settings table left unmarked."""
    rows: list[Row] = []
    unmarked: list[str] = []
    for page in sorted(DOCS.rglob("*.md")):
        lines = page.read_text(encoding="utf-8").split("\n")
        rel = page.relative_to(ROOT)
        scope = None
        for number, line in enumerate(lines, 1):
            marked = MARKER.match(line.strip())
            if marked:
                scope = marked.group(1)
                continue
            if not line.startswith("|"):
                if line.strip():
                    scope = None  # a marker belongs to the table right after it (blank lines between)
                continue
            if SETTINGS_HEADER.match(line) and (number < 2 or not lines[number - 2].startswith("|")):
                if scope is None:
                    unmarked.append(f"{rel}:{number}")
                continue
            if scope is None or re.match(r"^\|[\s:|-]+\|$", line):
                continue
            first = line.split("|")[1]
            name = FIRST_NAME.search(first)
            if name:
                rows.append(Row(scope, name.group(1), f"{rel}:{number}"))
    return rows, unmarked


# ---------------------------------------------------------------- what the schema knows


def class_attributes() -> set[str]:
    """What a channel type's author declares on a Channel subclass: its ClassVars."""
    hints = typing.get_type_hints(Channel, include_extras=True)
    return {name for name, hint in hints.items() if typing.get_origin(hint) is typing.ClassVar}


def schema() -> dict[str, set[str]]:
    scopes = {
        "plugin": set(names_of(SyndicateConfig)),
        "git": set(names_of(GitConfig)),
        "channel": set(COMMON),
        "syndicate.yml": set(SITE_KEYS),
        "channel class": class_attributes(),
    }
    for kind in BUILT_IN:
        scopes[f"type {kind.name}"] = set(kind.client_class().options)
    return scopes


def missing_and_unknown() -> tuple[list[str], list[str]]:
    rows, unmarked = documented()
    known = schema()
    said: dict[str, set[str]] = {}
    for row in rows:
        said.setdefault(row.scope, set()).add(row.name)
    missing = [
        f"{scope}: {name}" for scope, names in sorted(known.items()) for name in sorted(names - said.get(scope, set()))
    ]
    unknown = [f"{row.where}: {row.name!r} in a table of scope {row.scope!r}" for row in rows if row.scope not in known]
    for row in rows:
        allowed = known.get(row.scope, set())
        if row.scope.startswith("type "):
            allowed = allowed | COMMON  # a type's page may restate a common setting's own default (DEV's min_interval)
        if row.scope in known and row.name not in allowed:
            unknown.append(f"{row.where}: {row.name!r} is not a {row.scope} setting the schema knows")
    unknown += [f"{where}: a settings table with no <!-- settings: SCOPE --> marker" for where in unmarked]
    return missing, unknown


@pytest.mark.unit
def test_every_setting_of_the_schema_is_documented():
    missing, _ = missing_and_unknown()
    assert missing == [], "settings the docs' settings tables do not list:\n" + "\n".join(missing)


@pytest.mark.unit
def test_no_documented_setting_is_unknown_to_the_schema():
    _, unknown = missing_and_unknown()
    assert unknown == [], "\n".join(unknown)


@pytest.mark.unit
def test_the_channel_author_page_names_every_field_and_kind_of_an_option():
    """docs/channels.md shows `Option(kind, required=…, …)`: each keyword it shows is a field of
    Option, and each field and each kind a third party may use is named on the page."""
    page = (DOCS / "channels.md").read_text(encoding="utf-8")
    fields = [f.name for f in dataclasses.fields(Option)]
    shown = re.search(r"`Option\(kind((?:, \w+=…)*)\)`", page)
    assert shown, "docs/channels.md no longer shows Option's signature"
    keywords = re.findall(r"(\w+)=…", shown.group(1))
    assert set(keywords) <= set(fields), set(keywords) - set(fields)
    assert set(keywords) == set(fields) - {"kind"}, (
        f"not shown in Option(...): {sorted(set(fields) - {'kind'} - set(keywords))}"
    )
    kinds = typing.get_args(OptionKind)
    assert [k for k in kinds if f"`{k}`" not in page] == []


@pytest.mark.unit
def test_the_check_finds_a_missing_and_an_unknown_setting(tmp_path, monkeypatch):
    """The scanner itself, on a page of its own: a marked table missing `ledger` and naming
    `ledgr`, and a settings table with no marker."""
    docs = tmp_path / "docs"
    docs.mkdir()
    plugin = sorted(set(names_of(SyndicateConfig)) - {"ledger"})
    table = "| setting | default | meaning |\n|---|---|---|\n" + "".join(
        f"| `{n}` | x | y |\n" for n in [*plugin, "ledgr"]
    )
    (docs / "page.md").write_text(f"# Page\n\n<!-- settings: plugin -->\n\n{table}\nText.\n\n{table}", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "DOCS", docs)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    missing, unknown = missing_and_unknown()
    assert "plugin: ledger" in missing
    assert any("'ledgr' is not a plugin setting" in u for u in unknown)
    assert any(u.startswith("docs/page.md:") and "no <!-- settings" in u for u in unknown)


# ---------------------------------------------------------------- the site, built


def site_copy(tmp_path: Path) -> Path:
    """The docs site as the repository has it, copied: a build writes its caches beside the ledger."""
    site = tmp_path / "repo"
    shutil.copytree(DOCS, site / "docs")
    shutil.copy2(ROOT / "mkdocs.yml", site / "mkdocs.yml")
    shutil.copy2(ROOT / "docs-ledger.yml", site / "docs-ledger.yml")
    return site


def build(site: Path, out: Path, *args: str, mode: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "DOCS_SITE_URL"))}
    env |= {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    if mode is not None:
        env["SYNDICATE_MODE"] = mode
    command = [sys.executable, "-m", "mkdocs", "build", "-f", str(site / "mkdocs.yml"), "-d", str(out), *args]
    return subprocess.run(command, cwd=site, env=env, capture_output=True, text=True, timeout=600)


def release_post() -> tuple[Path, str]:
    """The blog post announcing this version, and its ledger key."""
    version = mkdocs_syndicate.__version__
    for post in sorted((DOCS / "blog" / "posts").glob("*.md")):
        text = post.read_text(encoding="utf-8")
        if re.search(rf"^# mkdocs-syndicate {re.escape(version)}$", text, re.MULTILINE):
            meta = yaml.safe_load(text.split("---")[1])
            return post, f"blog/{meta['slug']}/"
    raise AssertionError(f"no post in docs/blog/posts/ is titled '# mkdocs-syndicate {version}'")


@pytest.mark.process
def test_the_docs_build_strict_and_only_plan_the_release_post(tmp_path):
    """`mkdocs build --strict`: no broken link or anchor between pages, no page left out of the
    nav, no warning; the plugin plans the release post on every channel and sends nothing."""
    site = site_copy(tmp_path)
    ledger = (site / "docs-ledger.yml").read_bytes()
    _, key = release_post()
    done = build(site, tmp_path / "out", "--strict")
    assert done.returncode == 0, done.stdout + done.stderr
    log = done.stderr
    assert "WARNING" not in log, log
    assert "syndicate: plan (mode: plan)" in log and "nothing sent" in log, log
    for channel in ("indexnow", "mastodon", "bluesky", "devto"):
        assert f"syndicate: {channel}: would send {key}" in log, log
    assert (site / "docs-ledger.yml").read_bytes() == ledger
    assert not (site / ".syndicate-sandbox").exists()  # no emulator was started
    assert (tmp_path / "out" / key / "index.html").is_file()
    assert (tmp_path / "out" / "services" / "mastodon" / "index.html").is_file()


# Counts, once the page is laid out, the code blocks wider than their box (a horizontal scroll).
OVERFLOW_PROBE = """<script>
addEventListener("load", () => {
  const wide = [...document.querySelectorAll(".md-typeset pre > code")].filter((c) => c.scrollWidth > c.clientWidth + 1);
  document.body.setAttribute("data-wide-code", String(wide.length));
});
</script>"""


@pytest.mark.process
def test_the_quick_start_commands_show_whole_at_1280_pixels(tmp_path):
    """The home page's quick start in headless Chromium, 1,280 px wide: no code block scrolls
    sideways (each long command wraps in its block: docs/stylesheets/extra.css)."""
    from test_crosslinks import CHROMIUM_FLAGS, chromium

    site = site_copy(tmp_path)
    done = build(site, tmp_path / "out")
    assert done.returncode == 0, done.stdout + done.stderr
    page = tmp_path / "out" / "index.html"
    page.write_text(page.read_text(encoding="utf-8").replace("</body>", OVERFLOW_PROBE + "</body>"), encoding="utf-8")
    shown = subprocess.run(
        [
            chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1280,900",
            "--virtual-time-budget=10000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    found = re.search(r'data-wide-code="(\d+)"', shown)
    assert found, shown[-2000:]
    assert found.group(1) == "0", f"{found.group(1)} code block(s) scroll sideways at 1,280 px"


@pytest.mark.process
def test_the_release_post_is_announced_to_the_sandbox_when_the_mode_says_send(tmp_path):
    site = site_copy(tmp_path)
    _, key = release_post()
    done = build(site, tmp_path / "out", mode="send")
    assert done.returncode == 0, done.stdout + done.stderr
    ledger = yaml.safe_load((site / "docs-ledger.yml").read_text(encoding="utf-8"))
    records = ledger["posts"][key]["channels"]
    assert set(records) == {"indexnow", "mastodon", "bluesky", "devto"}
    assert all(record["sandbox"] is True for record in records.values())  # the emulators', never a service's
    assert all(records[c]["state"] == "done" for c in ("mastodon", "bluesky", "devto")), records
    assert records["mastodon"]["remote_url"].startswith("http://127.0.0.1:")


@pytest.mark.unit
def test_the_channels_overview_says_what_each_type_declares():
    """docs/services/index.md: one row per built-in type, each linking its page, whose delivery,
    edits and removals say what the type's class declares."""
    page = (DOCS / "services" / "index.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| \[`(\w+)`\]\(\1\.md\) \|.*$", page, re.MULTILINE)}
    assert set(rows) == {kind.name for kind in BUILT_IN}
    for kind in BUILT_IN:
        client = kind.client_class()
        cells = [cell.strip() for cell in rows[kind.name].split("|")[1:-1]]
        _, _, delivery, changed, removed = cells
        assert delivery.startswith("at least once" if client.default_delivery == "at_least_once" else "at most once")
        assert ("no-op" in delivery) == client.repeat_safe, kind.name
        assert changed.startswith("left as it is") != client.edits_in_place, kind.name
        assert removed.startswith("kept") != client.deletes, kind.name
