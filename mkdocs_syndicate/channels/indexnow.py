"""IndexNow: one batched POST per host for every pending URL (≤ 10,000 each). At-least-once: a
resend is harmless and there is nothing to read back, so an in_flight record is simply resent.
Only a 200 is done: a 202 means the engines have not validated the key yet, so the URLs stay
in_flight (with the 202 noted) and the next run pings them again."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

from mkdocs_syndicate.channel_api import (
    Channel,
    ConfigError,
    CredentialCheck,
    Health,
    Http,
    Kind,
    Option,
    Outcome,
    Post,
    Prepared,
    check_unreachable,
    message_sha256,
    status_outcome,
    transport_outcome,
)
from mkdocs_syndicate.content.crosslinks import without_block
from mkdocs_syndicate.lazyre import lazy_compile

_KEY = lazy_compile(r"[A-Za-z0-9-]{8,128}")
MAX_URLS = 10_000


# Said wherever the key is wrong or missing: the error is where a newcomer looks, not the README.
MAKE_A_KEY = 'make one with: python3 -c "import uuid; print(uuid.uuid4().hex)"'


def _check_key(key: str, setting: str) -> str:
    if not _KEY.fullmatch(key):
        raise ConfigError(f"an IndexNow key is 8-128 characters from a-z, A-Z, 0-9 and '-'; {MAKE_A_KEY}", setting)
    return key


class IndexNowChannel(Channel):
    type_name = "indexnow"
    default_delivery = "at_least_once"
    batched = True
    edits_in_place = True  # a changed page is pinged again (no copy to edit: the ping is the update)
    deletes = True  # a removed page is pinged too: IndexNow is told of deletions as of changes
    options: ClassVar[Mapping[str, Option]] = {
        "endpoint": Option("url", default="https://api.indexnow.org/indexnow"),
        "key": Option(
            "text",
            required=True,
            help=f"8-128 letters, digits or '-'; the plugin publishes it as <key>.txt; {MAKE_A_KEY}",
            check=_check_key,
        ),
        "key_location": Option("url", help="where the key file is served; default <site_url><key>.txt"),
    }

    @property
    def key(self) -> str:
        return str(self.settings.options["key"])

    def site_files(self) -> list[tuple[str, str]]:
        """The key file, served at the site root so the engines can check the key."""
        return [(f"{self.key}.txt", self.key)] if self.settings.options.get("key") else []

    @property
    def key_location(self) -> str:
        return self.settings.options.get("key_location") or f"{self.site.url}{self.key}.txt"

    def prepare(self, post: Post, created_at: str | None = None, life: int = 0) -> Prepared:
        # What the page says, hashed: a post changed after its ping is pinged again (`edits: update`),
        # which is what IndexNow is for: "tell the engines a URL's content changed".
        body = without_block(post.body_html)  # the "Also on" links change with each announcement
        page = "\x00".join(
            (post.url, post.title, post.description, post.excerpt_source, body, *post.tags, post.image or "")
        )
        return Prepared(None, description=f"ping {post.url}", payload_sha256=message_sha256(page))

    def _key_checked_at(self) -> str:
        local = self._key_file_in_built_site()
        in_sandbox = f"; the sandbox's engine reads it from the built site: {local}" if local else ""
        return f"the engines fetch {self.key_location}{in_sandbox}"

    def _key_file_in_built_site(self) -> Path | None:
        """Where an engine on this machine (the sandbox's) reads the key file: a public key
        location is read from the built site, not the web. None for a real engine."""
        from mkdocs_syndicate.config.channels import is_loopback

        endpoint = urlsplit(self.settings.options["endpoint"]).hostname or ""
        location = urlsplit(self.key_location).hostname or ""
        if self.site.site_dir and is_loopback(endpoint) and not is_loopback(location):
            return Path(self.site.site_dir, f"{self.key}.txt")
        return None

    def batches(self, posts: list[Post]) -> list[list[Post]]:
        by_host: dict[str, list[Post]] = {}
        for post in posts:
            by_host.setdefault(urlsplit(post.url).netloc, []).append(post)
        return [group[i : i + MAX_URLS] for group in by_host.values() for i in range(0, len(group), MAX_URLS)]

    async def send_batch(self, http: Http, posts: list[Post]) -> Outcome:
        import httpx

        body = {
            "host": urlsplit(posts[0].url).hostname,
            "key": self.key,
            "keyLocation": self.key_location,
            "urlList": [p.url for p in posts],
        }
        try:
            response = await http.request(
                "POST",
                self.settings.options["endpoint"],
                json=body,
                headers={"Content-Type": "application/json; charset=utf-8"},
            )
        except httpx.TransportError as exc:
            return transport_outcome(exc)
        if response.status_code == 200:
            return Outcome(Kind.DONE)
        if response.status_code == 202:
            # "URL received. IndexNow key validation pending": the engines fetch the key file
            # later, and Yandex says to submit again until the answer is 200.
            return Outcome(Kind.ACCEPTED, error=f"202 accepted, key validation pending ({self._key_checked_at()})")
        outcome = status_outcome(response, http.now())
        if response.status_code == 403:
            local = self._key_file_in_built_site()
            where, fix = (
                (f"{local} (served as {self.key_location})", "build the site")
                if local
                else (self.key_location, "deploy the site")
            )
            return Outcome(
                Kind.REFUSED,
                error=f"403 key not accepted: {where} is missing or does not contain the key ({fix}, then run again)",
            )
        if response.status_code == 422:
            return Outcome(
                Kind.REFUSED,
                error=f"422 {(outcome.error or '').removeprefix('422 refused')}".rstrip()
                + " (a URL is not on the key's host, or the key is malformed)",
            )
        return outcome

    async def check_credentials(self, http: Http) -> CredentialCheck:
        """IndexNow's credential is the key file on the live site: the engines fetch it, and refuse
        every ping (403) while it is missing or says another key. In the sandbox its engine reads
        the built site, so the check does too."""
        import httpx

        local = self._key_file_in_built_site()
        if local is not None:
            try:
                said = local.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                return _key_file_check(self.key, None, f"{local}: {exc.strerror or exc}", "build the site")
            return _key_file_check(self.key, said, str(local), "build the site")
        try:
            response = await http.request("GET", self.key_location)  # the client follows no redirect
        except httpx.HTTPError as exc:
            return check_unreachable(exc)
        if response.status_code != 200:
            said = f"{self.key_location} answered {response.status_code}"
            return _key_file_check(self.key, None, said, "deploy the site")
        return _key_file_check(self.key, response.text, self.key_location, "deploy the site")


def _key_file_check(key: str, said: str | None, where: str, fix: str) -> CredentialCheck:
    """The key file's text against the key: the engines want the key alone (a trailing newline aside)."""
    action = f"{fix} with the plugin (it writes <key>.txt), or run `mkdocs-syndicate site-files`"
    if said is None:
        return CredentialCheck(Health.FAILING, problem=f"the key file is not there ({where})", action=action)
    if said.strip() != key:
        return CredentialCheck(
            Health.FAILING, problem=f"the key file at {where} does not hold the configured key", action=action
        )
    return CredentialCheck(Health.OK, details=(f"key file at {where}",))
