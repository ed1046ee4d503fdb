"""What readers do with a post, as the services' public reads show it to a reader's browser
(`comments: true`): replies (nested, with content warnings, labels, hidden and blocked ones),
likes and reposts. Written from the services' sources, not from the comments script:

- Mastodon: `REST::StatusSerializer` (`replies_count`, `reblogs_count`, `favourites_count`,
  `spoiler_text`, `sensitive`), `PostStatusService` (a status with a spoiler text is sensitive),
  `Api::V1::StatusesController#show` (a token only if given: `authorize_if_got_token!`).
- Bluesky's AppView (bluesky-social/atproto `packages/bsky/src/views/index.ts`, the v1 `thread`
  and `threadReplies`): a root post's view carries its `threadgate` (with `hiddenReplies`) and
  its counts; v1 still returns the replies the author hid (only getPostThreadV2 drops them); a
  reply whose author and its parent's author block each other (a third-party block) and a deleted
  reply are left out, with what is below them; for a reader without a session there is no
  viewer, so no `#blockedPost` and no mutes; labels (`!hide`, `porn`, …) are returned on the
  post view for the client to act on.
- Forem (forem/forem `Api::CommentsController#index`, `app/views/api/v0/comments/*.jbuilder`):
  `GET /api/comments?a_id=` lists the article's threads, root comments paged by `page` and
  `per_page` (default 50), each with its `children`; a comment deleted or hidden by the article's
  author keeps its place with a placeholder text and an empty `user`; CORS echoes the Origin for
  `GET /api/comments*` (`config/initializers/cors.rb`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
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


def mastodon_counts(state: dict[str, Any], status: dict[str, Any]) -> dict[str, int]:
    """REST::StatusSerializer's counts: replies_count (the direct replies, StatusStat), reblogs_count,
    favourites_count."""
    below = [r for r in state.get("replies", []) if r.get("in_reply_to_id") == status["id"]]
    given = counts(state, status["id"])
    return {"replies_count": len(below), "reblogs_count": given["reposts"], "favourites_count": given["likes"]}


# ---------------------------------------------------------------- Bluesky's AppView

WARNING_LABELS = frozenset({"!hide", "!warn", "porn", "sexual", "nudity", "graphic-media", "gore"})


def label(uri: str, cid: str, value: str, at: str) -> dict[str, Any]:
    """com.atproto.label.defs#label, as Bluesky's moderation service (its DID) applies it."""
    return {"src": "did:plc:ar7c4by46qjdydhdevvrndac", "uri": uri, "cid": cid, "val": value, "cts": at}


def bluesky_thread(
    state: dict[str, Any],
    root: dict[str, Any],
    depth: int,
    threadgate: dict[str, Any] | None,
    own_replies: Callable[[str], list[dict[str, Any]]] = lambda uri: [],
) -> dict[str, Any]:
    """app.bsky.feed.getPostThread's `thread` for our post `root` (a postView), v1: the replies
    tree `depth` levels down, in the order they were indexed; `own_replies(uri)` the account's own
    posts replying to `uri` (a thread's later parts: the AppView indexes them like any reply)."""
    replies = state.get("replies", [])
    children: dict[str, list[dict[str, Any]]] = {}
    for entry in replies:
        children.setdefault(entry["parent"], []).append(entry)

    def view(entry: dict[str, Any]) -> dict[str, Any]:
        post = dict(entry["post"])
        post["replyCount"] = sum(1 for child in children.get(post["uri"], []) if not child.get("deleted"))
        given = counts(state, post["uri"])
        post["likeCount"], post["repostCount"] = given["likes"], given["reposts"]
        return post

    def below(uri: str, level: int) -> list[dict[str, Any]] | None:
        if level > depth:
            return None
        found = []
        for entry in children.get(uri, []):
            # Deleted, or a third-party block between the reply's author and its parent's: left
            # out with what is below it (threadReplies returns undefined for both).
            if entry.get("deleted") or entry.get("blocked"):
                continue
            node: dict[str, Any] = {"$type": "app.bsky.feed.defs#threadViewPost", "post": view(entry)}
            deeper = below(entry["post"]["uri"], level + 1)
            if deeper is not None:
                node["replies"] = deeper
            found.append(node)
        for own in own_replies(uri):
            node = {"$type": "app.bsky.feed.defs#threadViewPost", "post": view({"post": own})}
            deeper = below(own["uri"], level + 1)
            if deeper is not None:
                node["replies"] = deeper
            found.append(node)
        return found

    post = dict(root)
    post["replyCount"] = sum(1 for child in children.get(post["uri"], []) if not child.get("deleted"))
    given = counts(state, post["uri"])
    post["likeCount"], post["repostCount"] = given["likes"], given["reposts"]
    if threadgate is not None:
        post["threadgate"] = threadgate
    thread: dict[str, Any] = {"$type": "app.bsky.feed.defs#threadViewPost", "post": post}
    replies = below(post["uri"], 1)
    if replies is not None:
        thread["replies"] = replies
    return thread


def bluesky_threadgate(state: dict[str, Any], did: str, root_uri: str, now: str) -> dict[str, Any] | None:
    """The root post's threadgateView (app.bsky.feed.defs#threadgateView): its record lists the
    replies the author hid (app.bsky.feed.threadgate `hiddenReplies`)."""
    hidden = [e["post"]["uri"] for e in state.get("replies", []) if e.get("hidden")]
    if not hidden:
        return None
    rkey = root_uri.rsplit("/", 1)[-1]
    record = {"$type": "app.bsky.feed.threadgate", "post": root_uri, "hiddenReplies": hidden, "createdAt": now}
    return {"uri": f"at://{did}/app.bsky.feed.threadgate/{rkey}", "cid": "bafyreithreadgate" + rkey, "record": record}


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
