"""What a build knows of every page of the site, posts or not (`SitePages`): the facts a removal
is judged by (engine/intent.py). A post missing from the posts a run is handed may be a removed
one (its source file gone), or one that only stopped being a post (`syndicate: false`, a narrowed
`posts:` glob), or a draft: only the build's pages tell them apart. No MkDocs here: the plugin
fills them in (sources/mkdocs_build.py), the manifest keeps them for `mkdocs-syndicate run`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

REMOVED_FLAG = "removed"  # front matter `syndicate: removed`: the author takes the post down


@dataclass(frozen=True)
class PageFacts:
    """One page of the build, as a removal needs to see it."""

    src: str  # the source file, relative to docs_dir
    key: str  # its post key (its URL path, or its syndicate_id)
    built: bool = True  # the build writes it (a Material blog draft is not written)
    draft: bool = False  # front matter `draft: true` (or Material's blog says it is a draft)
    removed: bool = False  # front matter `syndicate: removed`
    opted_out: bool = False  # front matter `syndicate: false`
    post: bool = False  # the site's posts: globs (or its blog, or `syndicate: true`) select it

    def as_json(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "key": self.key,
            "built": self.built,
            "draft": self.draft,
            "removed": self.removed,
            "opted_out": self.opted_out,
            "post": self.post,
        }

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> PageFacts:
        return cls(
            str(item["src"]),
            str(item["key"]),
            bool(item["built"]),
            bool(item["draft"]),
            bool(item["removed"]),
            bool(item["opted_out"]),
            bool(item["post"]),
        )


@dataclass(frozen=True)
class SitePages:
    """Every page of one build. `known` False: a saved build older than these facts (nothing can
    be told about a post it does not list, so nothing is removed until the site is built again)."""

    pages: tuple[PageFacts, ...] = ()
    known: bool = True
    _by_src: dict[str, PageFacts] = field(default_factory=dict, init=False, compare=False, repr=False)
    _by_key: dict[str, PageFacts] = field(default_factory=dict, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_src.update((page.src.casefold(), page) for page in self.pages)
        self._by_key.update((page.key, page) for page in self.pages)

    def find(self, src: str | None, key: str) -> PageFacts | None:
        """The page from the post's source file (however its case is spelt, as a case-insensitive
        file system would), else the page at its key."""
        return (self._by_src.get(src.casefold()) if src else None) or self._by_key.get(key)


UNKNOWN_PAGES = SitePages(known=False)
