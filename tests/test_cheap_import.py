"""Every `mkdocs` command imports the plugin, `serve` included: importing it, and a build that
sends nothing, must not load the HTTP client, the terminal UI, the template engine, the sandbox or
the git mirror (benchmarks/startup.py measures the time; this checks what is loaded)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from sites import post, write_site

from mkdocs_syndicate.ledger.format import dump
from mkdocs_syndicate.ledger.schema import PostEntry, Record, State

pytestmark = pytest.mark.process

HEAVY = (
    "httpx",
    "httpcore",
    "rich",
    "jinja2.sandbox",
    "regex",
    "filelock",
    "mkdocs_syndicate.sandbox.server",
    "mkdocs_syndicate.ledger.gitmirror",
    "mkdocs_syndicate.engine.runner",
    "mkdocs_syndicate.engine.syndication",
    "mkdocs_syndicate.output.progress",
    "asyncio",
)

PROBE = textwrap.dedent("""
    import json, sys
    import mkdocs.config.defaults, mkdocs.plugins, mkdocs.structure.files, mkdocs.structure.pages
    before = set(sys.modules)
    if sys.argv[1] == "import":
        import mkdocs_syndicate.plugin
    elif sys.argv[1] == "api":
        import mkdocs_syndicate.channel_api
    else:
        from mkdocs.__main__ import cli
        try:
            cli(["build", "-q", "-f", sys.argv[2]], standalone_mode=False)
        except SystemExit:
            pass
    print(json.dumps(sorted(set(sys.modules) - before)))
""")


def loaded(*args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_importing_the_plugin_loads_nothing_heavy():
    assert heavy(loaded("import")) == []


def test_the_channel_api_loads_nothing_heavy():
    """A channel plugin's package imports the public channel API: a build that names its type but
    sends nothing must stay as cheap as one of built-in types."""
    modules = loaded("api")
    assert "mkdocs_syndicate.channel_api" in modules and heavy(modules) == []


def test_a_build_with_nothing_to_send_loads_nothing_heavy(tmp_path):
    channels = {
        "masto": {
            "type": "mastodon",
            "instance": "https://m.example",
            "token": "x-token-1",
            "template": "{{ title }} {{ url }}",
        },
        "ping": {"type": "indexnow", "key": "plan-key-1234"},
    }
    config = write_site(tmp_path, {"mode": "plan", "channels": channels}, {"a.md": post("A")})
    entry = PostEntry(
        "https://example.com/posts/a/",
        "A",
        {
            "masto": Record(State.DONE, 1, "2026-12-01T00:00:00Z", remote_id="1"),
            "ping": Record(State.DONE, 1, "2026-12-01T00:00:00Z"),
        },
    )
    (tmp_path / "ledger.yml").write_text(dump({"posts/a/": entry}))
    modules = loaded("build", str(config))
    assert "mkdocs_syndicate.plugin" in modules and heavy(modules) == []


EMULATORS_ALONE = textwrap.dedent("""
    import importlib, json, sys
    from mkdocs_syndicate.registry import BUILT_IN
    for kind in BUILT_IN:
        module, _, name = kind.emulator.partition(":")
        getattr(importlib.import_module(module), name)
    import mkdocs_syndicate.sandbox.server  # what serves them
    print(json.dumps(sorted(sys.modules)))
""")


def test_the_emulators_load_no_client_code():
    """Issue 37: an emulator is written from the service, not from the client, and stands alone:
    importing every built-in emulator, and the server that hosts them, loads no module of the
    clients (their base and the public channel API that gathers it included)."""
    result = subprocess.run([sys.executable, "-c", EMULATORS_ALONE], capture_output=True, text=True, check=True)
    modules = json.loads(result.stdout.splitlines()[-1])
    assert "mkdocs_syndicate.sandbox.matrix" in modules and "mkdocs_syndicate.emulator_api" in modules
    client_side = [m for m in modules if m.startswith(("mkdocs_syndicate.channels", "mkdocs_syndicate.channel_api"))]
    assert client_side == []
