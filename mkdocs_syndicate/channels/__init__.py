"""Channel types by the name used in `channels.<id>.type`."""

from __future__ import annotations

from .base import Channel
from .bluesky import BlueskyChannel
from .forem import ForemChannel
from .indexnow import IndexNowChannel
from .mastodon import MastodonChannel
from .weibo import WeiboChannel

REGISTRY: dict[str, type[Channel]] = {
    cls.type_name: cls
    for cls in (IndexNowChannel, MastodonChannel, ForemChannel, WeiboChannel, BlueskyChannel)
}
