"""The public channel API (mkdocs_syndicate.channel_api, issue 37): its names are pinned here, and
every built-in channel, and the toy channel a third party would write, takes them from it and
from nowhere else. The emulator's four names live in mkdocs_syndicate.emulator_api, which loads
no client code: the built-in emulators take them from there and nothing from channel_api, and
channel_api re-exports the same objects."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import pytest

import mkdocs_syndicate
import mkdocs_syndicate.channel_api as api
import mkdocs_syndicate.emulator_api as emulator_api

pytestmark = pytest.mark.unit

PACKAGE = Path(mkdocs_syndicate.__file__).parent
TOYS = [Path(__file__).parent / "toychannel.py", Path(__file__).parent / "toyping.py"]  # at most once; batched

# Adding or removing a name is a change of the API third parties build on: change it here too,
# and in docs/channels.md.
PINNED = [
    "BadAnswer",
    "Channel",
    "ChannelSettings",
    "ChannelType",
    "ConfigError",
    "Copy",
    "CredentialCheck",
    "EXPIRY_WARNING",
    "Emulator",
    "Fitted",
    "Found",
    "Health",
    "Http",
    "Kind",
    "LengthRule",
    "Media",
    "MediaState",
    "Mention",
    "Message",
    "Option",
    "Outcome",
    "Part",
    "Post",
    "PostImage",
    "Prepared",
    "Presence",
    "Record",
    "Request",
    "Response",
    "Seen",
    "Site",
    "TooLarge",
    "Verdict",
    "WriteLimit",
    "check_unreachable",
    "client_id",
    "delete_outcome",
    "edit_outcome",
    "error_detail",
    "first_url",
    "fit",
    "grapheme_length",
    "identifier",
    "json_list",
    "json_object",
    "json_of",
    "links_in",
    "message_sha256",
    "no_alt_note",
    "objects",
    "optional_text",
    "optional_url",
    "post_image",
    "rate_limit_left",
    "render_message",
    "same_host",
    "same_origin",
    "scan_bound",
    "status_outcome",
    "timestamp",
    "transport_outcome",
]

# Where the names are defined: these modules may import them from their homes.
DEFINING = {PACKAGE / "channels" / name for name in ("base.py", "answers.py", "reading.py")}
# The emulator's side of the API, defined in emulator_api (which imports nothing of the package).
EMULATOR_SIDE = {"Emulator", "Request", "Response", "first_url"}
SANDBOX = PACKAGE / "sandbox"


def test_the_api_exports_exactly_the_pinned_names():
    assert sorted(api.__all__) == sorted(PINNED)
    assert len(set(api.__all__)) == len(api.__all__)
    public = {
        name
        for name, value in vars(api).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType) and name != "annotations"
    }
    assert public == set(PINNED), "a public name of channel_api that __all__ does not list (or the reverse)"
    assert all(getattr(api, name) is not None for name in PINNED)


def test_the_emulator_side_is_emulator_api_s_own():
    """The same objects from either module: a plugin's emulator may take them from channel_api
    (client and emulator in one module, as the toy) or from emulator_api (no client code loaded)."""
    assert set(emulator_api.__all__) == EMULATOR_SIDE <= set(PINNED)
    assert all(getattr(api, name) is getattr(emulator_api, name) for name in EMULATOR_SIDE)


def _api_imports_from_elsewhere(path: Path) -> list[str]:
    """`from X import N` of a channel-author name N from any X but channel_api (in functions too),
    or the emulator's names from emulator_api; a built-in emulator (sandbox/) takes nothing from
    channel_api at all, which would load the clients' base."""
    emulator = path.parent == SANDBOX and path.name != "site.py"  # site.py: the sandbox's wiring, not an emulator
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mkdocs_syndicate")):
            continue
        for alias in node.names:
            if node.module == "mkdocs_syndicate.channel_api" and emulator:
                found.append(f"{path.name}: {alias.name} from {node.module} (an emulator takes emulator_api's)")
            elif node.module == "mkdocs_syndicate.emulator_api" and alias.name in EMULATOR_SIDE:
                continue
            elif node.module != "mkdocs_syndicate.channel_api" and alias.name in PINNED:
                found.append(f"{path.name}: {alias.name} from {node.module}")
    return found


def _clients_and_emulators() -> list[Path]:
    files = [*(PACKAGE / "channels").glob("*.py"), *(PACKAGE / "sandbox").glob("*.py"), *TOYS]
    return sorted(path for path in files if path not in DEFINING)


def test_built_in_channels_emulators_and_the_toy_take_api_names_only_from_the_api():
    assert len(_clients_and_emulators()) > 10
    assert [line for path in _clients_and_emulators() for line in _api_imports_from_elsewhere(path)] == []


@pytest.mark.parametrize("toy", TOYS, ids=lambda path: path.stem)
def test_the_toy_channels_import_nothing_else_of_the_package(toy):
    """What a third party's package can rely on: each toy names the public module alone."""
    modules = set()
    for node in ast.walk(ast.parse(toy.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    assert {m for m in modules if m.split(".")[0] == "mkdocs_syndicate"} == {"mkdocs_syndicate.channel_api"}


def test_the_check_sees_an_api_name_taken_from_an_internal_module(tmp_path):
    """The walk sees a top-level and a function-level import, or it proves nothing."""
    module = tmp_path / "m.py"
    module.write_text(
        "from mkdocs_syndicate.channels.base import Channel, SKEW_MARGIN\n"
        "from mkdocs_syndicate.channel_api import Kind\n"
        "def f():\n    from mkdocs_syndicate.channels.reading import BadAnswer\n"
    )
    assert sorted(_api_imports_from_elsewhere(module)) == [
        "m.py: BadAnswer from mkdocs_syndicate.channels.reading",
        "m.py: Channel from mkdocs_syndicate.channels.base",
    ]


def test_the_check_sees_an_emulator_take_the_channel_api(tmp_path, monkeypatch):
    """An emulator (a module of sandbox/) that takes even an emulator name from channel_api loads
    the clients' base with it: the check names it; from emulator_api it is fine."""
    monkeypatch.setattr(f"{__name__}.SANDBOX", tmp_path)
    module = tmp_path / "pigeon.py"
    module.write_text(
        "from mkdocs_syndicate.channel_api import Emulator\nfrom mkdocs_syndicate.emulator_api import Request\n"
    )
    assert _api_imports_from_elsewhere(module) == [
        "pigeon.py: Emulator from mkdocs_syndicate.channel_api (an emulator takes emulator_api's)"
    ]
