"""What a settings file can make the tool read (issue 36): `ledger: /dev/zero` reached a
MemoryError at 3.8 GB, and a 2,000,000-element list under an unknown key took 1 GB before the key
was refused. A ledger that is not a regular file is refused by its setting before it is read; a
config file over 1 MiB before it is parsed."""

from __future__ import annotations

import os

import pytest

from mkdocs_syndicate.config.site import load_site
from mkdocs_syndicate.config.standalone import MAX_CONFIG_BYTES
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
