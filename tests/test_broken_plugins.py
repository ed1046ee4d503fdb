"""A broken channel plugin installed anywhere in the environment (issue 36): it broke every build
of every site with a traceback, and its import ran on every command. Now it is imported only by a
site that names its type, and is that site's config error, in one line naming the package and the
entry point. Each case is a real installed distribution (a `.dist-info` with `entry_points.txt` in
a folder on sys.path), found by importlib.metadata as pip's would be."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import SITE, ListReporter, make_post

from mkdocs_syndicate import registry
from mkdocs_syndicate.config.run import parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.errors import ConfigError

MARK = "import pathlib, os\npathlib.Path(os.environ['PIGEON_MARK']).write_text('imported')\n"  # side effects
MODULE_OK_CLIENT = (
    MARK
    + """
from mkdocs_syndicate.channel_api import Channel, ChannelType

class NoSend(Channel):
    type_name = "pigeon"
    def prepare(self, post, created_at=None, life=0):
        raise AssertionError("never reached")

CHANNEL = ChannelType("pigeon", "{module}:{client}", "{module}:Nothing", "Pigeon")
"""
)

BROKEN = {
    "raises on import": (
        "pigeon_raises:CHANNEL",
        MARK + "raise RuntimeError('the pigeon\\x1b[2J flew away')\n",
        r"the entry point cannot be loaded: RuntimeError: the pigeon.* flew away",
    ),
    "not a ChannelType": (
        "pigeon_raises:CHANNEL",
        MARK + "CHANNEL = 'a string'\n",
        r"is not a ChannelType named 'pigeon'",
    ),
    "a missing module": (
        "pigeon_missing:CHANNEL",
        None,
        r"cannot be loaded: ModuleNotFoundError: No module named 'pigeon_missing'",
    ),
    "a missing attribute": ("pigeon_raises:NOPE", MARK, r"cannot be loaded: AttributeError: .*NOPE"),
    "a missing client class": (
        "pigeon_raises:CHANNEL",
        MODULE_OK_CLIENT.format(module="pigeon_raises", client="Gone"),
        r"its client pigeon_raises:Gone cannot be loaded: AttributeError",
    ),
    "a client that is not a Channel": (
        "pigeon_raises:CHANNEL",
        MODULE_OK_CLIENT.format(module="pigeon_raises", client="ChannelType"),
        r"its client pigeon_raises:ChannelType is not a Channel subclass",
    ),
    "a client without send": (
        "pigeon_raises:CHANNEL",
        MODULE_OK_CLIENT.format(module="pigeon_raises", client="NoSend"),
        r"its client pigeon_raises:NoSend does not implement send",
    ),
}


def install(folder: Path, value: str, module: str | None) -> Path:
    """A distribution `pigeon-post 1.0` declaring the channel type `pigeon` = `value`."""
    info = folder / "pigeon_post-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pigeon-post\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[mkdocs_syndicate.channels]\npigeon = {value}\n")
    if module is not None:
        (folder / f"{value.partition(':')[0]}.py").write_text(textwrap.dedent(module))
    return folder


@pytest.fixture
def environment_with(tmp_path, monkeypatch):
    """Install a broken plugin into a folder on sys.path, with a fresh registry that has not read
    the group yet (as at the start of a command)."""

    def installed(case: str) -> Path:
        value, module, _ = BROKEN[case]
        folder = install(tmp_path / "site-packages", value, module)
        monkeypatch.syspath_prepend(str(folder))
        monkeypatch.setenv("PIGEON_MARK", str(tmp_path / "imported"))
        monkeypatch.setattr(registry, "TYPES", registry._Types(registry.BUILT_IN))
        for name in [m for m in sys.modules if m.startswith("pigeon_")]:
            monkeypatch.delitem(sys.modules, name)
        return folder

    return installed


def options_for(raw: dict, tmp_path: Path, **extra):
    return parse_options(raw, ledger_path=tmp_path / "ledger.yml", site=SITE, sending=True, **extra)


MASTODON = {"type": "mastodon", "instance": "https://m.example", "token": "a-token-1234"}


@pytest.mark.unit
@pytest.mark.parametrize("case", list(BROKEN))
@pytest.mark.parametrize("sandbox", [False, True])
def test_a_site_that_does_not_name_a_broken_plugin_builds_without_importing_it(
    case, sandbox, environment_with, tmp_path
):
    environment_with(case)
    options = options_for({"masto": MASTODON}, tmp_path, sandbox=sandbox)
    assert [c.type for c in options.channels] == ["mastodon"]
    assert not (tmp_path / "imported").exists(), "the broken plugin's module was imported"


@pytest.mark.unit
@pytest.mark.parametrize("case", list(BROKEN))
def test_a_site_that_names_a_broken_plugin_gets_one_config_error_naming_package_and_entry_point(
    case, environment_with, tmp_path
):
    environment_with(case)
    value, _, problem = BROKEN[case]
    with pytest.raises(ConfigError) as caught:
        options_for({"masto": MASTODON, "coop": {"type": "pigeon", "timeout": -1}}, tmp_path, sandbox=False)
    said = str(caught.value)
    assert "\x1b" not in said and "Traceback" not in said
    line = next(line for line in said.splitlines() if "channels.coop.type" in line)
    prefix = f"channel type 'pigeon' (from package pigeon-post 1.0, entry point pigeon = {value} in group "
    assert prefix in line and "fix or uninstall that package" in line, line
    assert __import__("re").search(problem, line), line


EMULATOR_NOT_AN_EMULATOR = {
    "a dict": "NotAnEmulator = {'client_options': 'no'}\n",
    "a class of its own": "class NotAnEmulator:\n    name = 'pigeon'\n",
}


@pytest.mark.unit
@pytest.mark.parametrize("case", list(EMULATOR_NOT_AN_EMULATOR))
def test_an_emulator_entry_that_is_not_an_emulator_is_a_config_error_naming_the_package(case, tmp_path, monkeypatch):
    """Every send build ended in `AttributeError: ... 'client_options'` (from output/siteurl.py)."""
    from mkdocs_syndicate.output.siteurl import placeholder

    module = (
        "from toyping import ToyPingChannel\nfrom mkdocs_syndicate.channel_api import ChannelType\n\n"
        "class Pigeon(ToyPingChannel):\n    type_name = 'pigeon'\n\n"
        + EMULATOR_NOT_AN_EMULATOR[case]
        + "CHANNEL = ChannelType('pigeon', 'pigeon_emulator:Pigeon', 'pigeon_emulator:NotAnEmulator', 'Pigeon')\n"
    )
    monkeypatch.syspath_prepend(str(install(tmp_path / "site-packages", "pigeon_emulator:CHANNEL", module)))
    monkeypatch.setattr(registry, "TYPES", registry._Types(registry.BUILT_IN))
    monkeypatch.delitem(sys.modules, "pigeon_emulator", raising=False)
    coop = {"coop": {"type": "pigeon", "endpoint": "https://pigeon.example", "token": "a-token-1234"}}
    # A real send: the emulator is not needed, and the placeholder check does not trip over it.
    warned = placeholder(options_for(coop, tmp_path, sandbox=False))
    assert warned is not None and warned[0], warned
    with pytest.raises(ConfigError) as caught:  # a rehearsal: the emulator is what it runs
        options_for(coop, tmp_path, sandbox=True)
    said = str(caught.value)
    assert said.startswith("channels.coop.type: channel type 'pigeon' (from package pigeon-post 1.0, entry point"), said
    assert "its emulator pigeon_emulator:NotAnEmulator is not an Emulator subclass; fix or uninstall" in said, said


@pytest.mark.http
def test_a_client_without_send_is_refused_before_any_in_flight_record(environment_with, tmp_path, clock):
    environment_with("a client without send")
    with pytest.raises(ConfigError, match="does not implement send"):
        send(
            options_for({"coop": {"type": "pigeon"}}, tmp_path, sandbox=True),
            [make_post(1)],
            ListReporter(),
            clock=clock,
        )
    assert not (tmp_path / "ledger.yml").exists()


@pytest.mark.process
def test_the_cli_on_other_sites_works_and_on_the_naming_site_says_one_line(tmp_path):
    value, module, _ = BROKEN["raises on import"]
    folder = install(tmp_path / "site-packages", value, module)
    env = {"PYTHONPATH": str(folder), "PIGEON_MARK": str(tmp_path / "imported"), "PATH": "/usr/bin:/bin"}
    for name, channels in (
        ("other", "masto: {type: mastodon, instance: 'https://m.example'}"),
        ("naming", "coop: {type: pigeon}"),
    ):
        site = tmp_path / name
        site.mkdir()
        (site / "syndicate.yml").write_text(f"site_url: https://example.com/\nchannels:\n  {channels}\n")
    cli = [sys.executable, "-m", "mkdocs_syndicate.cli", "status", "--config-file"]
    other = subprocess.run([*cli, "syndicate.yml"], cwd=tmp_path / "other", env=env, capture_output=True, text=True)
    assert other.returncode == 0, other.stderr
    assert not (tmp_path / "imported").exists()
    naming = subprocess.run([*cli, "syndicate.yml"], cwd=tmp_path / "naming", env=env, capture_output=True, text=True)
    assert naming.returncode != 0 and "Traceback" not in naming.stderr, naming.stderr
    assert "channels.coop.type: channel type 'pigeon' (from package pigeon-post 1.0" in naming.stderr, naming.stderr
