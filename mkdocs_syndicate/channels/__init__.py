"""Channel types by the name used in `channels.<id>.type`."""

from __future__ import annotations

from .base import Channel
from .indexnow import IndexNowChannel
from .mastodon import MastodonChannel

REGISTRY: dict[str, type[Channel]] = {
    cls.type_name: cls for cls in (IndexNowChannel, MastodonChannel)
}
