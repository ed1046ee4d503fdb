"""What readers do with a post, as the services' public reads show it to a reader's browser
(`comments: true`): replies (nested, with content warnings, labels, hidden and blocked ones),
likes and reposts. Written from the services' sources, not from the comments script:

- Mastodon: `REST::StatusSerializer` (`replies_count`, `reblogs_count`, `favourites_count`,
  `spoiler_text`, `sensitive`), `PostStatusService` (a status with a spoiler text is sensitive),
  `Api::V1::StatusesController#show` (a token only if given: `authorize_if_got_token!`).
- Bluesky's AppView (bluesky-social/atproto `packages/bsky/src/views/index.ts`, the v1 `thread`
  and `threadReplies`): a root post's view carries its `threadgate` (with `hiddenReplies`) and
  its counts, and the answer carries the same threadgate again beside `thread`
  (`api/app/bsky/feed/getPostThread.ts`'s presentation); v1 still returns the replies the author
  hid (only getPostThreadV2 drops them); a reply whose author and its parent's author block each
  other (a third-party block) and a deleted reply are left out, with what is below them; for a
  reader without a session there is no viewer, so no `#blockedPost` and no mutes; labels
  (`!hide`, `porn`, …) are returned on the post view for the client to act on. Replies come
  newest first, the account's own among the others: the data plane reads a thread's
  descendants `orderBy('post.sortAt', 'desc')` (`data-plane/server/routes/threads.ts`), a post's
  sortAt being the earlier of its createdAt and indexedAt (`indexing/plugins/post.ts`). Every
  threadViewPost has a `threadContext` (empty unless the root's author liked it); every post view
  has `bookmarkCount`, `quoteCount` and `labels`, and an external card's `embed` view
  (`views.post`, `views.externalEmbed`). Checked field by field against the AppView itself
  (tests/test_realserver_appview.py) and against an answer recorded from it
  (tests/data/appview-thread.json).
- Forem (forem/forem `Api::CommentsController#index`, `app/views/api/v0/comments/*.jbuilder`):
  `GET /api/comments?a_id=` lists the article's threads, root comments paged by `page` and
  `per_page` (default 50), each with its `children`; a comment deleted or hidden by the article's
  author keeps its place with a placeholder text and an empty `user`; CORS echoes the Origin for
  `GET /api/comments*` (`config/initializers/cors.rb`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Sequence
from typing import Any


def when(at: str | None, now: float) -> float:
    """The moment `at` names (ISO 8601 with an offset; none: UTC), else `now`."""
    if not at:
        return now
    moment = dt.datetime.fromisoformat(at.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def counts(state: dict[str, Any], post: str) -> dict[str, int]:
    """Likes and reposts readers gave `post` (its id or URI), as `SandboxServer.react` set them."""
    found = state.get("reactions", {}).get(post, {})
    return {"likes": int(found.get("likes", 0)), "reposts": int(found.get("reposts", 0))}


def react(state: dict[str, Any], post: str, likes: int, reposts: int) -> None:
    if likes < 0 or reposts < 0:
        raise ValueError("likes and reposts cannot be negative")
    state.setdefault("reactions", {})[post] = {"likes": likes, "reposts": reposts}


def account_id(author: str) -> str:
    """The same id for the same name on every run."""
    return str(int(hashlib.sha256(author.encode()).hexdigest()[:12], 16))


# ---------------------------------------------------------------- Mastodon


def mastodon_counts(
    state: dict[str, Any], status: dict[str, Any], own: Sequence[dict[str, Any]] = ()
) -> dict[str, int]:
    """REST::StatusSerializer's counts: replies_count (the direct replies, StatusStat), reblogs_count,
    favourites_count. `own`: the account's own statuses; one replying to `status` counts as any
    reply does (Status#increment_counter_caches: a thread's part 2 is one of part 1's replies)."""
    below = [r for r in (*state.get("replies", []), *own) if r.get("in_reply_to_id") == status["id"]]
    given = counts(state, status["id"])
    return {"replies_count": len(below), "reblogs_count": given["reposts"], "favourites_count": given["likes"]}


# ---------------------------------------------------------------- Bluesky's AppView

WARNING_LABELS = frozenset({"!hide", "!warn", "porn", "sexual", "nudity", "graphic-media", "gore"})


def label(uri: str, cid: str, value: str, at: str) -> dict[str, Any]:
    """com.atproto.label.defs#label, as Bluesky's moderation service (its DID) applies it."""
    return {"src": "did:plc:ar7c4by46qjdydhdevvrndac", "uri": uri, "cid": cid, "val": value, "cts": at}


def sort_at(post: dict[str, Any]) -> float:
    """A post's sortAt: the earlier of its record's createdAt and its indexedAt (a createdAt in
    the future does not put it first)."""
    indexed = when(post.get("indexedAt"), 0.0)
    try:
        created = when(str(post.get("record", {}).get("createdAt") or ""), indexed)
    except ValueError:
        created = indexed
    return min(created, indexed)


def author_view(did: str, handle: str, display_name: str | None = None) -> dict[str, Any]:
    """app.bsky.actor.defs#profileViewBasic as the AppView gives it to a reader without a session
    (views.profileBasic): no viewer; `associated.activitySubscription` the default
    ("followers") when the account declared none; displayName only when its profile has one."""
    view: dict[str, Any] = {"did": did, "handle": handle}
    if display_name:
        view["displayName"] = display_name
    return view | {"associated": {"activitySubscription": {"allowSubscriptions": "followers"}}, "labels": []}


def post_view(post: dict[str, Any], counted: dict[str, int]) -> dict[str, Any]:
    """app.bsky.feed.defs#postView: every count (bookmarks and quotes are none here), its labels,
    and the view of an external card (views.externalEmbed: the record's, thumb as a CDN image)."""
    view = dict(post)
    embed = (view.get("record") or {}).get("embed") or {}
    if embed.get("$type") == "app.bsky.embed.external" and isinstance(embed.get("external"), dict):
        external = {k: v for k, v in embed["external"].items() if k in ("uri", "title", "description")}
        thumb = embed["external"].get("thumb")
        if isinstance(thumb, dict) and isinstance(thumb.get("ref"), dict):
            did = str(view["uri"]).split("/")[2]
            external["thumb"] = f"https://cdn.bsky.app/img/feed_thumbnail/plain/{did}/{thumb['ref'].get('$link')}@jpeg"
        view["embed"] = {"$type": "app.bsky.embed.external#view", "external": external}
    view.setdefault("labels", [])
    return view | {"bookmarkCount": 0, "quoteCount": 0} | counted


def bluesky_thread(
    state: dict[str, Any],
    root: dict[str, Any],
    depth: int,
    threadgate: dict[str, Any] | None,
    own_replies: Callable[[str], list[dict[str, Any]]] = lambda uri: [],
) -> dict[str, Any]:
    """app.bsky.feed.getPostThread's `thread` for our post `root` (a postView), v1: the replies
    tree `depth` levels down, newest first by sortAt; `own_replies(uri)` the account's own posts
    replying to `uri` (a thread's later parts: the AppView indexes them like any reply)."""
    replies = state.get("replies", [])
    children: dict[str, list[dict[str, Any]]] = {}
    for entry in replies:
        children.setdefault(entry["parent"], []).append(entry)

    def view(post: dict[str, Any]) -> dict[str, Any]:
        given = counts(state, post["uri"])
        replied = sum(1 for child in children.get(post["uri"], []) if not child.get("deleted"))
        replied += len(own_replies(post["uri"]))
        return post_view(post, {"replyCount": replied, "repostCount": given["reposts"], "likeCount": given["likes"]})

    def below(uri: str, level: int) -> list[dict[str, Any]] | None:
        if level > depth:
            return None
        # Deleted, or a third-party block between the reply's author and its parent's: left out
        # with what is below it (threadReplies returns undefined for both).
        shown = [e["post"] for e in children.get(uri, []) if not (e.get("deleted") or e.get("blocked"))]
        shown += own_replies(uri)
        found = []
        for post in sorted(shown, key=sort_at, reverse=True):
            node: dict[str, Any] = {"$type": "app.bsky.feed.defs#threadViewPost", "post": view(post)}
            deeper = below(post["uri"], level + 1)
            if deeper is not None:
                node["replies"] = deeper
            found.append(node | {"threadContext": {}})
        return found

    post = view(root)
    if threadgate is not None:
        post["threadgate"] = threadgate
    thread: dict[str, Any] = {"$type": "app.bsky.feed.defs#threadViewPost", "post": post}
    replies = below(post["uri"], 1)
    if replies is not None:
        thread["replies"] = replies
    return thread | {"threadContext": {}}


def bluesky_threadgate(state: dict[str, Any], did: str, root_uri: str, now: str) -> dict[str, Any] | None:
    """The root post's threadgateView (app.bsky.feed.defs#threadgateView): its record lists the
    replies the author hid (app.bsky.feed.threadgate `hiddenReplies`)."""
    hidden = [
        e["post"]["uri"]
        for e in state.get("replies", [])
        if e.get("hidden") and e["post"]["record"]["reply"]["root"]["uri"] == root_uri
    ]
    if not hidden:
        return None
    rkey = root_uri.rsplit("/", 1)[-1]
    record = {"$type": "app.bsky.feed.threadgate", "post": root_uri, "hiddenReplies": hidden, "createdAt": now}
    return {
        "uri": f"at://{did}/app.bsky.feed.threadgate/{rkey}",
        "cid": "bafyreithreadgate" + rkey,
        "record": record,
        "lists": [],  # the lists its `allow` rules name (views.threadgate): it has none
    }


# ---------------------------------------------------------------- Forem


FOREM_PER_PAGE = 50
HIDDEN_TEXT = "Comment hidden by post author - thread only accessible via permalink"  # Comment.title_hidden
DELETED_TEXT = "Comment deleted"  # Comment.title_deleted


def forem_comment(comment: dict[str, Any], children: list[dict[str, Any]]) -> dict[str, Any]:
    """app/views/api/v0/comments/_comment.json.jbuilder, with its children."""
    shown: dict[str, Any] = {
        "type_of": "comment",
        "id_code": comment["id_code"],
        "created_at": comment["created_at"],
    }
    if comment.get("deleted"):
        shown |= {"body_html": f"<p>{DELETED_TEXT}</p>", "user": {}}
    elif comment.get("hidden"):
        shown |= {"body_html": f"<p>{HIDDEN_TEXT}</p>", "user": {}}
    else:
        shown |= {"body_html": comment["body_html"], "user": comment["user"]}
    return shown | {"children": children}


def forem_threads(comments: list[dict[str, Any]], article_id: str, page: int, per_page: int) -> list[dict[str, Any]]:
    """GET /api/comments?a_id=: the article's root comments, `per_page` of them from page
    `page` (1-based), oldest first, each with its whole subtree."""
    ours = [c for c in comments if c["article_id"] == article_id]
    by_parent: dict[str | None, list[dict[str, Any]]] = {}
    for comment in ours:
        by_parent.setdefault(comment.get("parent"), []).append(comment)

    def tree(comment: dict[str, Any]) -> dict[str, Any]:
        return forem_comment(comment, [tree(child) for child in by_parent.get(comment["id_code"], [])])

    roots = by_parent.get(None, [])
    start = (page - 1) * per_page
    return [tree(root) for root in roots[start : start + per_page]]


def id_code(number: int) -> str:
    """A comment's id as Forem shows it: `id.to_s(26)`."""
    digits = "0123456789abcdefghijklmnop"
    out = ""
    while True:
        number, rest = divmod(number, 26)
        out = digits[rest] + out
        if not number:
            return out
