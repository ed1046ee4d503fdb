"""A Matrix room as an mkdocs-syndicate channel: a third-party package, registered through the
`mkdocs_syndicate.channels` entry-point group alone (docs/channels.md in mkdocs-syndicate)."""

from mkdocs_syndicate.registry import ChannelType

CHANNEL = ChannelType(
    "matrix",
    "mkdocs_syndicate_matrix.client:MatrixChannel",
    "mkdocs_syndicate_matrix.emulator:MatrixEmulator",
    "Matrix",
)
