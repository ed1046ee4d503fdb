"""Which ledger entry a post is, however it was found; and the ledger rewritten to say so.

One page is one post (docs/design/identity.md). A post whose key the ledger has is that entry.
Any other post is matched, among the entries no post of this build has by key, by what it carries,
in this order of trust (engine/clues.py for the first and the last):

1. its source file's git history: git saw the entry's file renamed to the post's;
2. its pinned `syndicate_id`, which an entry keeps as `id` once seen;
3. an alias: a key or URL the entry was announced under before an earlier move;
4. its URL, however spelt (the entry's `url`, read as a key of this site);
5. its source file (`src`): a Material blog post whose title edit changed its slug;
6. a redirect the site declares (mkdocs-redirects' `redirect_maps`) from the entry's page to it;
7. a feed's id for it (Atom `id`, RSS `guid`, JSON Feed `id`), which the entry keeps as `entry_id`;
8. its content fingerprint: the same date and nearly the same text as one entry's.

A tie, or a clue short of sure, is a doubt (`Identified.doubts`): the post is held for a person,
never announced as new.

A matched entry is re-keyed under the post's key now, with the old key and URL kept as aliases,
and what identifies the post (its `src`, its pin, its URL, its fingerprint) is written into its entry. One
exception: an entry kept under a pinned `syndicate_id` that the post, read from a feed, cannot
carry keeps its key, and the post takes it (a feed run and a plugin run then agree, with no
re-keying back and forth). All of it
goes to the ledger in one write before any request of the run (`Ledger.rewrite`), never only in
memory: after the next rename, the ledger alone must know the post. A plan (which writes
nothing) uses the same result in memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from mkdocs_syndicate.content.fingerprint import SAME, Fingerprint, fingerprint_of, opening_of
from mkdocs_syndicate.content.identity import post_key_of
from mkdocs_syndicate.content.posts import Post
from mkdocs_syndicate.engine.clues import Clues, Doubt, first
from mkdocs_syndicate.engine.history import History
from mkdocs_syndicate.ledger.schema import PostEntry, Posts


@dataclass(frozen=True)
class Move:
    old: str  # the entry's key in the ledger
    new: str  # the post's key in this build
    why: str  # what proved it is the same post

    def line(self) -> str:
        return f"moved: {self.old} → {self.new} (the same post, by {self.why}); not announced again"


@dataclass
class Identified:
    posts: Posts  # the ledger's posts with every move and identity fact applied
    moves: list[Move] = field(default_factory=list)
    learned: list[str] = field(default_factory=list)  # keys whose entry gained a fact (src, id, URL) without a move
    keys: dict[str, str] = field(default_factory=dict)  # a post's key → the pinned key it takes from its entry
    doubts: list[Doubt] = field(default_factory=list)  # posts that may be old ones: held for a person

    @property
    def changed(self) -> bool:
        return bool(self.moves or self.learned)

    def keyed(self, posts: list[Post]) -> list[Post]:
        """The posts, each under the key its entry has."""
        return [replace(post, key=self.keys[post.key]) if post.key in self.keys else post for post in posts]


def identify(
    ledger_posts: Posts,
    posts: list[Post],
    site_url: str,
    redirects: Mapping[str, str] | None = None,
    history: History | None = None,
) -> Identified:
    """Each post's entry found (see the module's docstring), and the ledger's posts as they must
    be written so that the next build finds them by key. `redirects`: old page key → new page key;
    `history`: the site's git history, when it is a checkout."""
    index = _Index(ledger_posts, site_url)
    claimed = {post.key for post in posts if post.key in ledger_posts}
    result = Identified(dict(ledger_posts))
    olds_of = _reversed(redirects or {})
    unknown = [post for post in posts if post.key not in ledger_posts]
    clues = Clues(ledger_posts, claimed, {post.src for post in posts if post.src}, history) if unknown else None
    for post in posts:
        if post.key in ledger_posts:
            _learn(result, post, post.key, site_url)
            continue
        assert clues is not None
        # In their order of trust; a sure clue ends the search, a doubt waits for a surer one.
        found = clues.by_history(post)
        if not isinstance(found, tuple):
            found = first(found, _find(index, post, site_url, olds_of, claimed))
        if not isinstance(found, tuple):
            found = first(found, clues.by_content(post))
        if isinstance(found, Doubt):
            result.doubts.append(found)
        if not isinstance(found, tuple):
            continue
        old, why = found
        claimed.add(old)
        if not post.pin and _pinned(old, result.posts[old], site_url):
            result.keys[post.key] = old
            _learn(result, replace(post, key=old), old, site_url)
            continue
        result.posts[post.key] = _moved(result.posts.pop(old), old, post)
        result.moves.append(Move(old, post.key, why))
    return result


class _Index:
    """The ledger's entries by each thing a post may be matched on."""

    def __init__(self, posts: Posts, site_url: str) -> None:
        self.keys = set(posts)
        self.by_id: dict[str, str] = {}
        self.by_entry_id: dict[str, str] = {}
        self.by_alias: dict[str, str] = {}
        self.by_page: dict[str, str] = {}
        self.by_src: dict[str, str] = {}
        for key, entry in posts.items():
            if entry.id:
                self.by_id.setdefault(entry.id, key)
            if entry.entry_id:
                self.by_entry_id.setdefault(entry.entry_id, key)
            if entry.src:
                self.by_src.setdefault(entry.src, key)
            page = post_key_of(entry.url, site_url) if entry.url else None
            if page is not None:
                self.by_page.setdefault(page, key)
            for alias in entry.aliases:
                if "://" in alias:
                    page = post_key_of(alias, site_url)
                    if page is not None:
                        self.by_page.setdefault(page, key)
                else:
                    self.by_alias.setdefault(alias, key)

    def entry_of_page(self, page: str) -> str | None:
        """The entry announced under this page's key, URL or an alias of either."""
        if page in self.keys:
            return page
        return self.by_page.get(page) or self.by_alias.get(page)


def _find(
    index: _Index, post: Post, site_url: str, olds_of: dict[str, list[str]], claimed: set[str]
) -> tuple[str, str] | None:
    """The unclaimed entry this post is, and why; None for a post the ledger has never seen."""
    page = post_key_of(post.url, site_url)
    candidates: list[tuple[str | None, str]] = [
        (index.by_id.get(post.pin) if post.pin else None, f"its syndicate_id {post.pin!r}"),
        (index.by_alias.get(post.key), f"an alias {post.key!r}"),
        (index.by_page.get(page) if page is not None else None, "its URL"),
        (index.by_alias.get(page) if page is not None else None, "an alias of its URL"),
        (index.by_src.get(post.src) if post.src else None, f"its source file {post.src}"),
    ]
    for old in olds_of.get(page or "", []):
        candidates.append((index.entry_of_page(old), f"a redirect from {old}"))
    if post.entry_id:
        named = post_key_of(post.entry_id, site_url)  # a permalink guid: the page first published
        found = index.by_entry_id.get(post.entry_id) or (index.entry_of_page(named) if named else None)
        candidates.append((found, f"its feed entry id {post.entry_id!r}"))
    for key, why in candidates:
        if key is not None and key not in claimed and key != post.key:
            return key, why
    return None


def _pinned(key: str, entry: PostEntry, site_url: str) -> bool:
    """Whether an entry's key is a pinned syndicate_id (a key is a page's path, or a pin)."""
    return entry.id == key or (bool(entry.url) and post_key_of(entry.url, site_url) != key)


def _reversed(redirects: Mapping[str, str]) -> dict[str, list[str]]:
    olds_of: dict[str, list[str]] = {}
    for old, new in redirects.items():
        olds_of.setdefault(new, []).append(old)
    return olds_of


def _moved(entry: PostEntry, old: str, post: Post) -> PostEntry:
    """The entry under its new key: the old key and URL kept as aliases, the post's facts in."""
    aliases = list(entry.aliases)
    for alias in (old, entry.url):
        if alias and alias not in aliases and alias not in (post.key, post.url):
            aliases.append(alias)
    return replace(
        entry,
        url=post.url,
        title=post.title or entry.title,
        src=post.src or entry.src,
        id=post.pin or entry.id,
        aliases=tuple(aliases),
        fingerprint=_fresh_fingerprint(entry, post) or entry.fingerprint,
        entry_id=post.entry_id or entry.entry_id,
    )


def _learn(result: Identified, post: Post, key: str, site_url: str) -> None:
    """An entry found by key that lacks what identifies its post (written before v2, or the post
    moved under a pin): its src, its pin, its URL now (the old one kept as an alias)."""
    entry = result.posts[key]
    url_moved = bool(entry.url) and post_key_of(entry.url, site_url) != post_key_of(post.url, site_url)
    wants_src = bool(post.src) and entry.src != post.src
    wants_id = post.pin is not None and entry.id != post.pin
    wants_entry_id = post.entry_id is not None and entry.entry_id != post.entry_id
    fingerprint = _fresh_fingerprint(entry, post)
    if not (url_moved or wants_src or wants_id or wants_entry_id or fingerprint):
        return
    aliases = entry.aliases
    if url_moved and entry.url not in aliases:
        aliases = (*aliases, entry.url)
    result.posts[key] = replace(
        entry,
        url=post.url if url_moved else entry.url,
        src=post.src or entry.src,
        id=post.pin or entry.id,
        aliases=aliases,
        fingerprint=fingerprint or entry.fingerprint,
        entry_id=post.entry_id or entry.entry_id,
    )
    result.learned.append(key)


def _fresh_fingerprint(entry: PostEntry, post: Post) -> str | None:
    """The post's fingerprint, when its entry has none or one that no longer matches it (a new
    date, much of the text rewritten); None when the entry's still does. Refreshed only then, so
    that a small edit writes nothing to the ledger."""
    if entry.src and not post.src:  # a feed's entry for a page the plugin read: another text, not an edit
        return None
    kept = Fingerprint.parse(entry.fingerprint)
    if kept is not None and kept.opening == opening_of(post) and kept.date == post.date.date().isoformat():
        return None  # the same text as when it was sketched
    now = fingerprint_of(post)
    if kept is not None and kept.opening and kept.date == now.date and kept.likeness(now) >= SAME:
        return None  # a small edit: the kept sketch still matches (one kept without its CRC is rewritten once)
    return now.text()
