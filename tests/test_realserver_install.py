"""tests/realserver/install, as `.ci/run` runs it: each realserver tier installed on its own, and
skipped, saying why, only when its registry cannot be reached (issue 37); any other failure fails.
The registries are made unreachable here (a stand-in `npm` whose `ping` fails; pip pointed at a
closed port with no configuration), so nothing leaves 127.0.0.1. The tiers' fixtures then skip
with the reason the install wrote, under `.ci/run` too, and fail on software missing otherwise."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from realserver_pds import unavailable

INSTALL = Path(__file__).parent / "realserver" / "install"


def fake_npm(folder: Path, *, ping_works: bool) -> Path:
    """An `npm` whose install fails; its `ping` fails too unless `ping_works`."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True)
    npm = bin_dir / "npm"
    ping = "exit 0" if ping_works else 'echo "npm error code ENETUNREACH" >&2; exit 1'
    npm.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        f"  ping) {ping} ;;\n"
        "  config) echo https://registry.npmjs.org/ ;;\n"
        '  *) echo "npm error network request failed" >&2; exit 1 ;;\n'
        "esac\n"
    )
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def installed(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / ".installed").touch()
    return folder


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# Every tier's folder setting: a tier a test does not name is installed already (a fake folder),
# and its line is left out of the stdout the test reads, so a tier added later changes no test.
TIER_DIRS = (
    "SYNDICATE_REALSERVER_DIR",
    "SYNDICATE_SYNAPSE_DIR",
    "SYNDICATE_NOSTR_DIR",
    "SYNDICATE_MKDOCS2_DIR",
    "SYNDICATE_WEBSUB_DIR",
    "SYNDICATE_WEBMENTION_DIR",
)


def install(
    tmp_path: Path, apt_get: str | None = None, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[list[str]]]:
    others = {name: str(installed(tmp_path / "others" / name)) for name in TIER_DIRS if name not in env}
    env = {**others, **env}
    skips = tmp_path / "skips"
    # The script adds Postgres and Redis with apt-get where they are missing: never from a test.
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "apt-get").write_text(apt_get or "#!/bin/sh\nexit 1\n")
    (stubs / "apt-get").chmod(0o755)
    # Postgres and Redis are there, unless a test says otherwise (SYNDICATE_POSTGRES_ROOT).
    (stubs / "redis-server").write_text("#!/bin/sh\nexit 0\n")
    (stubs / "redis-server").chmod(0o755)
    postgres = tmp_path / "postgres" / "15" / "bin"
    postgres.mkdir(parents=True, exist_ok=True)
    (postgres / "initdb").touch()
    full = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SYNDICATE_", "PIP_"))},
        "SYNDICATE_REALSERVER_SKIPS": str(skips),
        "SYNDICATE_POSTGRES_ROOT": str(tmp_path / "postgres"),
        **env,
    }
    full["PATH"] = f"{stubs}:{full['PATH']}"
    result = subprocess.run([str(INSTALL)], capture_output=True, text=True, env=full, timeout=300)
    lines = skips.read_text().splitlines() if skips.exists() else []
    result.stdout = "".join(f"{line}\n" for line in result.stdout.splitlines() if line not in others.values())
    return result, [line.split("\t") for line in lines]


@pytest.mark.process
def test_an_unreachable_npm_registry_skips_the_pds_tier_saying_why(tmp_path):
    bin_dir = fake_npm(tmp_path, ping_works=False)
    synapse, nostr = installed(tmp_path / "synapse"), installed(tmp_path / "nostr")
    websub, mkdocs2 = installed(tmp_path / "websub"), installed(tmp_path / "mkdocs2")
    result, skips = install(
        tmp_path,
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        SYNDICATE_REALSERVER_DIR=str(tmp_path / "pds"),
        SYNDICATE_SYNAPSE_DIR=str(synapse),
        SYNDICATE_NOSTR_DIR=str(nostr),
        SYNDICATE_WEBSUB_DIR=str(websub),
        SYNDICATE_MKDOCS2_DIR=str(mkdocs2),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        str(synapse),
        str(nostr),
        str(mkdocs2),
        str(websub),
    ]  # the other tiers are still installed
    assert [tier for tier, _ in skips] == ["pds"]
    assert "npm registry (https://registry.npmjs.org/) cannot be reached: npm error code ENETUNREACH" in skips[0][1]
    assert "realserver tier skipped (pds)" in result.stderr


@pytest.mark.process
def test_a_failed_install_with_the_npm_registry_answering_fails(tmp_path):
    bin_dir = fake_npm(tmp_path, ping_works=True)
    result, skips = install(
        tmp_path,
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        SYNDICATE_REALSERVER_DIR=str(tmp_path / "pds"),
        SYNDICATE_SYNAPSE_DIR=str(installed(tmp_path / "synapse")),
        SYNDICATE_NOSTR_DIR=str(installed(tmp_path / "nostr")),
        SYNDICATE_WEBSUB_DIR=str(installed(tmp_path / "websub")),
        SYNDICATE_MKDOCS2_DIR=str(installed(tmp_path / "mkdocs2")),
    )
    assert result.returncode == 1 and skips == [], result.stderr
    assert "though the npm registry answers" in result.stderr


UNREACHABLE_PYPI = {
    "PIP_CONFIG_FILE": os.devnull,  # no mirror from the machine's configuration
    "PIP_RETRIES": "0",
    "PIP_TIMEOUT": "5",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
}


@pytest.mark.process
def test_an_unreachable_pypi_skips_the_synapse_tier_saying_why(tmp_path):
    pds, nostr, websub = installed(tmp_path / "pds"), installed(tmp_path / "nostr"), installed(tmp_path / "websub")
    mkdocs2 = installed(tmp_path / "mkdocs2")
    result, skips = install(
        tmp_path,
        SYNDICATE_REALSERVER_DIR=str(pds),
        SYNDICATE_SYNAPSE_DIR=str(tmp_path / "synapse"),
        SYNDICATE_NOSTR_DIR=str(nostr),
        SYNDICATE_WEBSUB_DIR=str(websub),
        SYNDICATE_MKDOCS2_DIR=str(mkdocs2),
        PIP_INDEX_URL=f"http://127.0.0.1:{closed_port()}/simple",
        **UNREACHABLE_PYPI,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(pds), str(nostr), str(mkdocs2), str(websub)]
    assert [tier for tier, _ in skips] == ["synapse"]
    assert skips[0][1].startswith("PyPI cannot be reached for matrix-synapse==1.163.2: "), skips


@pytest.mark.process
def test_an_unreachable_pypi_skips_the_nostr_tier_saying_why(tmp_path):
    pds, synapse = installed(tmp_path / "pds"), installed(tmp_path / "synapse")
    websub, mkdocs2 = installed(tmp_path / "websub"), installed(tmp_path / "mkdocs2")
    result, skips = install(
        tmp_path,
        SYNDICATE_REALSERVER_DIR=str(pds),
        SYNDICATE_SYNAPSE_DIR=str(synapse),
        SYNDICATE_NOSTR_DIR=str(tmp_path / "nostr"),
        SYNDICATE_WEBSUB_DIR=str(websub),
        SYNDICATE_MKDOCS2_DIR=str(mkdocs2),
        PIP_INDEX_URL=f"http://127.0.0.1:{closed_port()}/simple",
        **UNREACHABLE_PYPI,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(pds), str(synapse), str(mkdocs2), str(websub)]
    assert [tier for tier, _ in skips] == ["nostr"]
    assert skips[0][1].startswith("PyPI cannot be reached for nostr-relay==1.14: "), skips
    assert "realserver tier skipped (nostr)" in result.stderr


@pytest.mark.process
def test_an_unreachable_pypi_skips_the_websub_tier_saying_why(tmp_path):
    pds, synapse, nostr, mkdocs2 = (installed(tmp_path / name) for name in ("pds", "synapse", "nostr", "mkdocs2"))
    result, skips = install(
        tmp_path,
        SYNDICATE_REALSERVER_DIR=str(pds),
        SYNDICATE_SYNAPSE_DIR=str(synapse),
        SYNDICATE_NOSTR_DIR=str(nostr),
        SYNDICATE_WEBSUB_DIR=str(tmp_path / "websub"),
        SYNDICATE_MKDOCS2_DIR=str(mkdocs2),
        PIP_INDEX_URL=f"http://127.0.0.1:{closed_port()}/simple",
        **UNREACHABLE_PYPI,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(pds), str(synapse), str(nostr), str(mkdocs2)]
    assert [tier for tier, _ in skips] == ["websub"]
    assert skips[0][1].startswith("PyPI cannot be reached for Flask-WebSub==0.4.1: "), skips
    assert "realserver tier skipped (websub)" in result.stderr


@pytest.mark.process
def test_an_unreachable_pypi_skips_the_webmention_tier_saying_why(tmp_path):
    result, skips = install(
        tmp_path,
        SYNDICATE_WEBMENTION_DIR=str(tmp_path / "webmention"),
        PIP_INDEX_URL=f"http://127.0.0.1:{closed_port()}/simple",
        **UNREACHABLE_PYPI,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # every other tier is installed (left out of stdout by `install`)
    assert [tier for tier, _ in skips] == ["webmention"]
    assert skips[0][1].startswith("PyPI cannot be reached for django-webmention==4.0.0: "), skips
    assert "realserver tier skipped (webmention)" in result.stderr


# apt-get as Debian's archive answers it: `update` fails when no mirror can be reached.
APT_UNREACHABLE = (
    '#!/bin/sh\n[ "$1" = update ] && { echo "E: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease";'
    " exit 100; }\nexit 100\n"
)
APT_BROKEN = '#!/bin/sh\n[ "$1" = update ] && exit 0\necho "E: Unable to correct problems."\nexit 100\n'


@pytest.mark.process
@pytest.mark.skipif(os.geteuid() != 0, reason="the script adds Postgres and Redis only as root")
def test_an_unreachable_package_archive_skips_the_appview_tier_saying_why(tmp_path):
    result, skips = install(tmp_path, apt_get=APT_UNREACHABLE, SYNDICATE_POSTGRES_ROOT=str(tmp_path / "none"))
    assert result.returncode == 0, result.stderr
    assert [tier for tier, _ in skips] == ["appview"], skips
    assert "package archive cannot be reached" in skips[0][1] and "Failed to fetch" in skips[0][1]


@pytest.mark.process
@pytest.mark.skipif(os.geteuid() != 0, reason="the script adds Postgres and Redis only as root")
def test_a_failed_postgres_install_with_the_archive_answering_fails(tmp_path):
    result, skips = install(tmp_path, apt_get=APT_BROKEN, SYNDICATE_POSTGRES_ROOT=str(tmp_path / "none"))
    assert result.returncode == 1 and skips == [], (result.stderr, skips)
    assert "though Debian's package archive answers" in result.stderr


@pytest.mark.unit
def test_a_tier_the_install_skipped_is_skipped_with_its_reason_even_where_it_is_required(tmp_path, monkeypatch):
    (tmp_path / "skips").write_text("synapse\tPyPI cannot be reached for matrix-synapse==1.163.2: refused\n")
    monkeypatch.setenv("SYNDICATE_REALSERVER_SKIPS", str(tmp_path / "skips"))
    monkeypatch.setenv("SYNDICATE_REALSERVER", "required")
    with pytest.raises(pytest.skip.Exception, match=r"realserver tier \(synapse\): PyPI cannot be reached"):
        unavailable("synapse", "Synapse is not installed in /nowhere")
    with pytest.raises(pytest.fail.Exception, match=r"realserver tier \(pds\): the reference PDS is not installed"):
        unavailable("pds", "the reference PDS is not installed in /nowhere")


@pytest.mark.unit
def test_each_kill_the_tier_leaves_out_has_a_twin_it_runs():
    """The realserver kills run one of each state the real server can be left in: a kill left out
    (realserver_child.SAME_FOR_THE_SERVER) leaves the server as a kill that runs does (the same
    number of posts held, the same record deleted or not), so the rerun asks it the same."""
    import realserver_child
    import test_realserver_bluesky
    import test_realserver_matrix

    families: dict[str, dict[str, tuple[Any, ...]]] = {
        "send": realserver_child.send_kills("PUT send"),
        "bluesky delete": test_realserver_bluesky.DELETE_KILLS,
        "matrix redaction": test_realserver_matrix.DELETE_KILLS,
        "matrix edit": test_realserver_matrix.EDIT_KILLS,
    }
    for family, kills in families.items():
        kept = realserver_child.distinct(kills)
        assert 2 <= len(kept) < len(kills), family
        outcomes = {kills[name][2] for name in kept}
        assert all(kill[2] in outcomes for kill in kills.values()), family
