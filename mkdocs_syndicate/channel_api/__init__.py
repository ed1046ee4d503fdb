"""The public API for channel authors: everything a channel type needs, from one place.

A channel type (built in, or a package of its own: docs/channels.md) imports these names from
here and nothing else from mkdocs_syndicate; every built-in channel does the same, and every
built-in emulator takes its four names from emulator_api (tests/test_channel_api.py holds them to
it, and pins this list). The names live where the project keeps them (channels/base.py,
channels/reading.py, config/channels.py, content/, ledger/schema.py, registry.py,
emulator_api.py); this module only gathers them, and importing it loads no HTTP client, no
template engine and no server (tests/test_cheap_import.py).

- Registering a type: `ChannelType`.
- The client: `Channel`, its settings (`Option`, `ChannelSettings`, `Site`, `ConfigError` for an
  option's own check), what it is handed (`Post`, `Record`) and what it makes of a post
  (`Prepared`, a `Message` from `render_message` under a `LengthRule`; `client_id` for a key
  chosen before the call).
- What it answers: `Outcome` and its `Kind`, `Verdict` and `Found` (a read after an unknown
  outcome), `Copy` (an edit's read), `Presence` (a delete's read), `Seen` (either, with the links
  the copy shows: `links_in` finds them), `CredentialCheck` and `Health`; `Mention`, one
  Webmention target's sub-record (`Outcome.mentions`, `Record.mentions`).
- HTTP: the `Http` client it is given, and the shared readings of an answer (`status_outcome`,
  `transport_outcome`, `edit_outcome`, `delete_outcome`, `error_detail`, `rate_limit_left`,
  `check_unreachable`, `scan_bound`), and of its body (`json_object`, `identifier`, …, which raise
  `BadAnswer` on a shape the service does not document).
- A post's image (`uploads` types): `PostImage` from `post_image`, made to fit a service's
  limits by `fit` (`Fitted`, or `TooLarge` with the numbers), `no_alt_note` when it has no alt
  text; `Media` is what an upload made, `MediaState` what a read of it found.
- The emulator: `Emulator`, the `Request` it handles and the `Response` it gives, `first_url`.
  They live in `mkdocs_syndicate.emulator_api`, which imports nothing of the package: the
  built-in emulators import them from there, so that loading one loads no client code (this
  module loads the clients' base); a plugin may take them from either.
"""

from __future__ import annotations

from mkdocs_syndicate.channels.answers import (
    check_unreachable,
    delete_outcome,
    edit_outcome,
    error_detail,
    rate_limit_left,
    status_outcome,
    transport_outcome,
)
from mkdocs_syndicate.channels.base import (
    EXPIRY_WARNING,
    Channel,
    Copy,
    CredentialCheck,
    Found,
    Health,
    Http,
    Kind,
    MediaState,
    Outcome,
    Prepared,
    Presence,
    Seen,
    Verdict,
    WriteLimit,
)
from mkdocs_syndicate.channels.reading import (
    BadAnswer,
    identifier,
    json_list,
    json_object,
    json_of,
    objects,
    optional_text,
    optional_url,
    same_host,
    same_origin,
    scan_bound,
    timestamp,
)
from mkdocs_syndicate.config.channels import ChannelSettings, Option, Site
from mkdocs_syndicate.content.fitting import Fitted, TooLarge, fit
from mkdocs_syndicate.content.identity import client_id
from mkdocs_syndicate.content.images import PostImage, no_alt_note, post_image
from mkdocs_syndicate.content.messages import LengthRule, Message, message_sha256, render_message
from mkdocs_syndicate.content.ownership import links_in
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.content.textcut import grapheme_length
from mkdocs_syndicate.emulator_api import Emulator, Request, Response, first_url
from mkdocs_syndicate.errors import ConfigError
from mkdocs_syndicate.ledger.schema import Media, Mention, Part, Record
from mkdocs_syndicate.registry import ChannelType

__all__ = [
    "EXPIRY_WARNING",
    "BadAnswer",
    "Channel",
    "ChannelSettings",
    "ChannelType",
    "ConfigError",
    "Copy",
    "CredentialCheck",
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
