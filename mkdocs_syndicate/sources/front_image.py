"""Front matter `image:` of a post in an MkDocs build: a path in it is relative to the post's
Markdown file, as MkDocs reads a link in the Markdown (`image: images/x.png` in a blog post's
file names the `images` folder beside that file), not to the post's URL, which Material's blog
puts elsewhere (under the post's date). A path that names no file of the build is a build
warning naming the post, said while the build runs: `--strict` then stops the build before
anything is sent."""

from __future__ import annotations

import posixpath
from urllib.parse import quote, unquote, urljoin, urlsplit

from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page


def front_matter_image(value: str, page: Page, files: Files | None, page_url: str, site_url: str) -> tuple[str, str]:
    """(the image's URL, a warning naming the post when no file of the build is that image, or "")."""
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or value.startswith("/") or files is None:
        return urljoin(page_url, value), ""  # a URL, or a path from the site's root: as written
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), unquote(parts.path)))
    found = files.get_file_from_path(target)
    if found is None:  # written relative to the post's URL, as it was read before: still that file
        by_url = urlsplit(urljoin(page_url, value)).path
        site_path = urlsplit(site_url).path
        if by_url.startswith(site_path):
            found = files.get_file_from_path(unquote(by_url[len(site_path) :]))
    if found is not None:
        return urljoin(site_url, quote(found.url)), ""
    where = f"{page.file.src_uri}" if not page.file.abs_src_path else page.file.abs_src_path
    warning = (
        f"{where}: front matter image {value!r} is no file of the site: looked for {target} in the docs "
        "(a path in `image:` is relative to the post's Markdown file, as MkDocs reads links); "
        "the post would be announced without its image"
    )
    return urljoin(site_url, quote(target)), warning
