"""The public channel API (mkdocs_syndicate.channel_api, issue 37): its names are pinned here, and
every built-in channel and emulator, and the toy channel a third party would write, takes them
from it and from nowhere else."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import pytest

import mkdocs_syndicate
import mkdocs_syndicate.channel_api as api

pytestmark = pytest.mark.unit

PACKAGE = Path(mkdocs_syndicate.__file__).parent
TOY = Path(__file__).parent / "toychannel.py"

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
    "Site",
    "TooLarge",
    "Verdict",
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
DEFINING = {PACKAGE / "channels" / "base.py", PACKAGE / "channels" / "reading.py"}


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


def _api_imports_from_elsewhere(path: Path) -> list[str]:
    """`from X import N` of a channel-author name N from any X but channel_api (in functions too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("mkdocs_syndicate")
            and node.module != "mkdocs_syndicate.channel_api"
        ):
            found += [f"{path.name}: {a.name} from {node.module}" for a in node.names if a.name in PINNED]
    return found


def _clients_and_emulators() -> list[Path]:
    files = [*(PACKAGE / "channels").glob("*.py"), *(PACKAGE / "sandbox").glob("*.py"), TOY]
    return sorted(path for path in files if path not in DEFINING)


def test_built_in_channels_emulators_and_the_toy_take_api_names_only_from_the_api():
    assert len(_clients_and_emulators()) > 10
    assert [line for path in _clients_and_emulators() for line in _api_imports_from_elsewhere(path)] == []


def test_the_toy_channel_imports_nothing_else_of_the_package():
    """What a third party's package can rely on: the toy names the public module alone."""
    modules = set()
    for node in ast.walk(ast.parse(TOY.read_text("utf-8"))):
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
