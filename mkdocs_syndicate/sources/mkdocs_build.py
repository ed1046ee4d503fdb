"""Posts from a built MkDocs site: which pages are posts, and their final URL, date and metadata.

Runs in on_post_build, when Material's blog has rewritten post URLs and drafts are excluded.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pathspec
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

from mkdocs_syndicate.content.identity import canonical_path, post_key_of
from mkdocs_syndicate.content.images import first_image
from mkdocs_syndicate.content.pages import REMOVED_FLAG, PageFacts, SitePages
from mkdocs_syndicate.content.portable import code_languages, excerpt_markdown
from mkdocs_syndicate.content.posts import Post, as_datetime, check_syndicate_id, parse_syndicate_meta
from mkdocs_syndicate.errors import PostError
from mkdocs_syndicate.sources.front_image import front_matter_image

try:  # Material's blog is optional
    from material.plugins.blog.structure import Post as MaterialPost
except ImportError:  # pragma: no cover - material not installed
    MaterialPost = None


def blog_enabled(config: MkDocsConfig) -> bool:
    return any(name in config.plugins for name in ("material/blog", "blog"))


def post_selector(config: MkDocsConfig, globs: list[str] | None) -> Callable[[Page], bool]:
    """Which pages are posts: those `posts:` globs match; else, with Material's blog, its posts;
    else pages whose front matter says `syndicate: true` (or has `syndicate:` settings)."""
    spec = pathspec.PathSpec.from_lines("gitwildmatch", globs) if globs else None
    use_blog = spec is None and blog_enabled(config)

    def is_post(page: Page) -> bool:
        if spec is not None:
            return spec.match_file(page.file.src_uri)
        if use_blog:
            return MaterialPost is not None and isinstance(page, MaterialPost)
        meta = page.meta or {}
        return meta.get("syndicate") is True or isinstance(meta.get("syndicate"), dict)

    return is_post


def post_key(page: Page) -> str:
    """The page's ledger key: its front matter `syndicate_id`, else its URL path (canonical)."""
    key = (page.meta or {}).get("syndicate_id") or canonical_path(page.url)
    return key if isinstance(key, str) else ""


def source_folder(config: MkDocsConfig) -> Path:
    """docs_dir, whose git history says where a renamed post's file went (engine/history.py)."""
    return Path(config.docs_dir)


def redirect_keys(files: Files, config: MkDocsConfig) -> dict[str, str]:
    """The site's redirects (mkdocs-redirects' `redirect_maps`: old page → new page or URL) as
    old page key → new page key, each spelt as MkDocs spells the page's URL. A post announced
    under the old page is the same post under the new one (engine/moves.py)."""
    plugin = config.plugins.get("redirects")
    maps = getattr(plugin, "config", {}).get("redirect_maps") if plugin is not None else None
    if not isinstance(maps, dict):
        return {}
    site_url = config.site_url or ""
    keys: dict[str, str] = {}
    for old, new in maps.items():
        if not isinstance(old, str) or not isinstance(new, str):
            continue
        old_key = canonical_path(File(old, config.docs_dir, config.site_dir, config.use_directory_urls).url)
        new_key = _redirect_target(new, files, config, site_url)
        if new_key is not None and new_key != old_key:
            keys[old_key] = new_key
    return keys


def _redirect_target(target: str, files: Files, config: MkDocsConfig, site_url: str) -> str | None:
    """A redirect's target as a page key: a page of the site (`new.md`, `new.md#part`) or a URL."""
    if "://" in target:
        return post_key_of(target, site_url)
    path = target.split("#", 1)[0]
    found = files.get_file_from_path(path)
    if found is not None:
        return canonical_path(found.url)
    return canonical_path(path.lstrip("/")) if path else None


def gather_posts(
    files: Files,
    config: MkDocsConfig,
    globs: list[str] | None,
    hashtags_from: tuple[str, ...] = ("tags",),
    warn: Callable[[str], None] | None = None,
) -> list[Post]:
    """The build's posts; `warn` (the plugin's log, by default) says what the build warns of them:
    an image that is no file, as the build runs, so that `--strict` stops it before a send."""
    if warn is None:
        from mkdocs.plugins import get_plugin_logger

        warn = get_plugin_logger("syndicate").warning
    is_post = post_selector(config, globs)
    return [
        page_to_post(file.page, config, hashtags_from, files, warn)
        for file in files.documentation_pages()
        if file.page is not None and is_post(file.page)
    ]


def site_pages(files: Files, config: MkDocsConfig, globs: list[str] | None) -> SitePages:
    """Every page of the build, excluded ones too (a Material blog draft is left out of the
    build, not of the site's files): what tells a removed post from one that is only no longer
    a post (engine/intent.py)."""
    is_post = post_selector(config, globs)
    facts = []
    for file in files.documentation_pages(inclusion=lambda _: True):
        page = file.page
        meta: Mapping[str, Any] = (page.meta or {}) if page is not None else _front_matter(file)
        # MkDocs' own drafts (`draft_docs`) are left out of `mkdocs build`; front matter says the rest.
        draft = bool(meta.get("draft")) or file.inclusion == InclusionLevel.DRAFT
        if MaterialPost is not None and isinstance(page, MaterialPost):
            draft = bool(getattr(page.config, "draft", draft))
        syndicate = meta.get("syndicate")
        facts.append(
            PageFacts(
                src=file.src_uri,
                key=(post_key(page) if page is not None else "") or canonical_path(file.url),
                built=bool(file.inclusion.is_included()),  # type: ignore[no-untyped-call]
                draft=draft,
                removed=syndicate == REMOVED_FLAG,
                opted_out=syndicate is False,
                post=page is not None and is_post(page),
            )
        )
    return SitePages(tuple(facts))


def _front_matter(file: File) -> Mapping[str, Any]:
    """The front matter of a page the build left out (MkDocs' draft_docs, exclude_docs): it has
    no Page to read it; {} when it cannot be read."""
    from mkdocs.utils.meta import get_data

    try:
        meta = get_data(file.content_string)[1]
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _dated(page: Page, meta: Mapping[str, Any], source: str) -> tuple[dt.datetime, bool, list[Any]]:
    """(date, draft, categories): Material's blog metadata for its posts, else the front matter."""
    if MaterialPost is not None and isinstance(page, MaterialPost):
        blog: Any = page.config  # Material's blog metadata (untyped; page is its Post here)
        return as_datetime(blog.date.created, source), bool(blog.draft), list(blog.categories)
    return as_datetime(meta.get("date"), source), bool(meta.get("draft")), list(meta.get("categories") or [])


def _description(meta: Mapping[str, Any], title: str) -> str:
    description = str(meta.get("description") or "").strip()
    return "" if description.casefold() == title.casefold() else description  # the title is said already


def _image(
    meta: Mapping[str, Any], html: str, url: str, source: str, resolve: Callable[[str], str] | None = None
) -> tuple[str | None, str | None]:
    """The post's image and its alt text: front matter `image` (its URL by `resolve`) and
    `image_alt`, else the first image the page shows, with its alt attribute (content/images.py)."""
    alt = meta.get("image_alt")
    if alt is not None and not isinstance(alt, str):
        raise PostError(f"{source}: front matter 'image_alt' must be text ('' for a decorative image)")
    image = meta.get("image")
    if image is not None and not isinstance(image, str):
        raise PostError(f"{source}: front matter 'image' must be the image's path or URL, as text")
    if image:
        return resolve(image) if resolve is not None else urljoin(url, image), alt
    found = first_image(html, url)
    if found is None:
        return None, None
    return found[0], alt if alt is not None else found[1]


def page_to_post(
    page: Page,
    config: MkDocsConfig,
    hashtags_from: tuple[str, ...] = ("tags",),
    files: Files | None = None,
    warn: Callable[[str], None] | None = None,
) -> Post:
    """The post a page is. With the build's `files`, a path in front matter `image` is relative
    to the page's Markdown file, and one naming no file of the build is said by `warn`."""
    source = f"{config.docs_dir}/{page.file.src_uri}"
    meta: Mapping[str, Any] = page.meta or {}
    enabled, overrides = parse_syndicate_meta(meta.get("syndicate"), source)
    site_url = config.site_url or ""
    url = page.canonical_url or urljoin(site_url, page.url)
    key = post_key(page)
    if not key:
        raise PostError(f"{source}: front matter 'syndicate_id' must be text")
    if "syndicate_id" in meta:
        check_syndicate_id(key, source)
    date, draft, categories = _dated(page, meta, source)
    # Which front-matter lists feed `tags`/`hashtags` is the site's choice (hashtags_from).
    tags = [
        *(meta.get("tags") or [] if "tags" in hashtags_from else []),
        *(categories if "categories" in hashtags_from else []),
    ]

    def resolve(value: str) -> str:
        found, missing = front_matter_image(value, page, files, url, site_url)
        if missing and warn is not None:
            warn(missing)
        return found

    image, image_alt = _image(meta, page.content or "", url, source, resolve)
    title = str(page.title or meta.get("title") or key)
    description = _description(meta, title)
    # Without one: Material's excerpt (before <!-- more -->), else the first paragraph.
    markdown = page.markdown or ""
    excerpt_source = "" if description else excerpt_markdown(markdown)
    return Post(
        key=key,
        url=url,
        title=title,
        date=date,
        source=source,
        description=description,
        tags=tuple(str(t) for t in tags),
        draft=draft,
        # No HTML when this build did not render the page (`serve --dirty`): DEV then refuses it.
        body_html=page.content or "",
        body_missing=page.content is None,
        code_languages=code_languages(markdown),
        image=image,
        image_alt=image_alt,
        image_in_body=image is not None and not meta.get("image"),
        opted_out=enabled is False,
        overrides=overrides,
        excerpt_source=excerpt_source,
        src=page.file.src_uri,
        pin=key if "syndicate_id" in meta else None,
    )
