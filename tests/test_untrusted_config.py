"""What a settings file can make the tool read (issue 36): `ledger: /dev/zero` reached a
MemoryError at 3.8 GB, and a 2,000,000-element list under an unknown key took 1 GB before the key
was refused. A ledger that is not a regular file is refused by its setting before it is read; a
config file over 1 MiB before it is parsed."""

from __future__ import annotations

import os

import pytest

from mkdocs_syndicate.config.files import MAX_CONFIG_BYTES
from mkdocs_syndicate.config.site import load_site
from mkdocs_syndicate.errors import ConfigError

pytestmark = pytest.mark.unit


def standalone(folder, text: str):
    path = folder / "syndicate.yml"
    path.write_text("site_url: https://example.com/\n" + text, encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_a_ledger_that_is_not_a_regular_file_is_refused_by_its_setting_before_it_is_read(tmp_path, kind):
    target = {"device": "/dev/zero", "fifo": str(tmp_path / "ledger.fifo"), "folder": str(tmp_path / "ledger")}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    if kind == "folder":
        os.mkdir(target)
    site = load_site(standalone(tmp_path, f"ledger: {target}\nchannels: {{}}\n"))
    with pytest.raises(ConfigError) as caught:
        site.options(sending=False)
    said = str(caught.value)
    assert said.startswith(f"{tmp_path / 'syndicate.yml'}: ledger: {target} exists and is not a regular file"), said


def test_a_ledger_that_does_not_exist_yet_is_fine(tmp_path):
    site = load_site(standalone(tmp_path, "ledger: records/ledger.yml\nchannels: {}\n"))
    assert site.options(sending=False).ledger_path == tmp_path / "records" / "ledger.yml"


def test_a_syndicate_yml_over_1_mib_is_refused_before_it_is_parsed(tmp_path):
    path = standalone(tmp_path, "junk:\n" + "- 1\n" * (MAX_CONFIG_BYTES // 4))
    with pytest.raises(ConfigError, match=r"syndicate\.yml: larger than 1 MiB \(1048576 bytes\)"):
        load_site(path)


def test_an_mkdocs_yml_over_1_mib_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "mkdocs.yml"
    path.write_text("site_name: x\nplugins: [syndicate]\nextra:\n  junk:\n" + "  - 1\n" * (MAX_CONFIG_BYTES // 6))
    with pytest.raises(ConfigError, match=r"mkdocs\.yml: larger than 1 MiB"):
        load_site(path)


def test_a_syndicate_yml_just_under_the_bound_is_read(tmp_path):
    path = standalone(tmp_path, "channels: {}\n# " + "x" * (MAX_CONFIG_BYTES - 100) + "\n")
    assert load_site(path).settings.channels == {}


def _loaded_in_a_thread(path):
    """load_site(path) run where a hang can be seen: (what it raised or returned, whether it hung).
    A hung read is released by opening and closing the FIFO's other end, so the test ends."""
    import threading

    outcome: list[object] = []

    def load() -> None:
        try:
            outcome.append(load_site(path))
        except Exception as exc:  # the test looks at what it was
            outcome.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(60)  # a guard against a hang, not a measure of speed: the refusal reads nothing
    hung = worker.is_alive()
    if hung:
        os.close(os.open(path, os.O_WRONLY))  # EOF for the blocked reader
        worker.join()
    return outcome[0], hung


@pytest.mark.parametrize("name", ["syndicate.yml", "mkdocs.yml", "properdocs.yml"])
def test_a_config_that_is_a_fifo_is_refused_without_being_read(tmp_path, name):
    path = tmp_path / name
    os.mkfifo(path)
    outcome, hung = _loaded_in_a_thread(path)
    assert not hung, f"{name} as a FIFO: the read blocked (plan -f {name} would hang for ever)"
    assert isinstance(outcome, ConfigError), outcome
    assert str(outcome) == f"{path}: not a regular file (a FIFO, a device or a folder); name a file"


def test_a_large_config_with_env_tags_is_refused_before_the_tags_are_looked_for(tmp_path, monkeypatch):
    """A 4 MB syndicate.yml containing `!ENV` cost 27 s and 775 MB (its YAML composed whole to find
    the variables) before the 1 MiB bound refused it."""
    from mkdocs_syndicate.config import envtags

    def composed(data):
        raise AssertionError(f"{len(data)} bytes composed to find !ENV before the bound was checked")

    monkeypatch.setattr(envtags, "env_variables", composed)
    path = standalone(tmp_path, "token: !ENV MASTODON_TOKEN\njunk:\n" + "- 1\n" * (4 * MAX_CONFIG_BYTES // 4))
    with pytest.raises(ConfigError, match=r"syndicate\.yml: larger than 1 MiB \(1048576 bytes\)"):
        load_site(path)


def test_the_env_scan_of_a_config_mkdocs_read_is_bounded_too(tmp_path, monkeypatch):
    """In a build MkDocs has read mkdocs.yml itself; the plugin's scan for `!ENV` variables reads
    it bounded, and a file over the bound is an error of its settings (its values could not be
    named in the other errors)."""
    from mkdocs_syndicate.config.schema import SyndicateConfig

    path = tmp_path / "mkdocs.yml"
    path.write_text("site_name: x\n# !ENV\n" + "#" * MAX_CONFIG_BYTES + "\n")
    settings = SyndicateConfig(config_file_path=str(path))
    settings.load_dict({})
    failed, _warnings = settings.validate()
    assert [(key, str(error)) for key, error in failed] == [("", f"{path}: larger than 1 MiB (1048576 bytes)")]


SITE_URLS = {
    "newline inside": '"https://example.com/\\nInjected line"',
    "block scalar of two lines": "|\n  https://example.com/\n  blog/",
    "tab": '"https://exa\\tmple.com/"',
    "bidi override": '"https://example.com/\\u202e"',
}
# MkDocs' own check of mkdocs.yml's site_url rebuilds it with urlunsplit, which drops \n and \t:
# only what is left of them after that reaches the plugin.
IN_MKDOCS_YML = ("newline inside", "bidi override")


@pytest.mark.parametrize(
    "name, written",
    [("syndicate.yml", text) for text in SITE_URLS.values()] + [("mkdocs.yml", SITE_URLS[k]) for k in IN_MKDOCS_YML],
    ids=[f"syndicate.yml, {k}" for k in SITE_URLS] + [f"mkdocs.yml, {k}" for k in IN_MKDOCS_YML],
)
def test_a_site_url_with_a_line_break_or_invisible_character_is_refused(tmp_path, name, written):
    """urlsplit drops \\n, \\r and \\t silently, so `site_url` with a newline passed every check and
    went into posts and pages as written (issue 53)."""
    path = tmp_path / name
    plugin = "plugins:\n  - syndicate: {channels: {}}\n" if name == "mkdocs.yml" else "channels: {}\n"
    (tmp_path / "docs").mkdir()
    path.write_text(f"site_name: x\nsite_url: {written}\n{plugin}", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_site(path).options(sending=False)
    said = str(caught.value)
    assert "site_url: has a line break, white space or an invisible character in it" in said, said
    assert str(path) in said and "\n" not in said, said
