"""Every channel type in the registry, built in or installed as a plugin, as the shared suites see
it: built from what its client and its emulator declare (docs/channels.md), so a new type is
covered with no edit to any suite. `EVERY_TYPE` holds them all (the contract's create, lost
answer, 429 and refused-credentials cases, and the wrong-shape answers, run for each: a batched,
at-least-once type such as IndexNow too); `SPECS` the at-most-once ones, which the suites about
reading before a resend (verify, faults around the commit, the crash suites) need."""

from __future__ import annotations

import dataclasses

from mkdocs_syndicate import registry


@dataclasses.dataclass
class Spec:
    type: str
    settings: dict
    bad_credentials: dict
    read_path: str  # a request of verify, to make it fail
    rate_limit: dict  # the 429 fault
    repeat_safe: bool = False  # a repeat is a no-op by construction (Bluesky)
    rate_limit_checked_first: bool = False  # its 429 proves nothing was made (Matrix)
    web_copies: bool = True  # a done copy has a web page (remote_url); standard.site's records do not
    at_most_once: bool = True  # else a repeat is harmless (a ping): delivered at least once, never read back
    batched: bool = False  # one request carries many posts (IndexNow)
    post_fields: dict = dataclasses.field(default_factory=dict)  # what a test post needs to give it work

    def post(self, n: int, **changes):
        """A test post this type has something to send for (Webmention: it links to a page)."""
        from conftest import make_post

        return make_post(n, **{**self.post_fields, **changes})

    def raw(self, sandbox, **extra):
        return self.raw_at(sandbox.url, **extra)

    def raw_at(self, url: str, **extra):
        """The channel's settings for the emulators served at `url`."""
        return {
            "type": self.type,
            **{k: (v.format(url=url) if isinstance(v, str) else v) for k, v in self.settings.items()},
            **extra,
        }


def spec_of(kind: registry.ChannelType) -> Spec:
    """The contract's view of a channel type, from what its client and emulator declare
    (docs/channels.md): every type in the registry, built in or installed as a plugin, is
    covered without an edit here."""
    client, emulator = kind.client_class(), kind.emulator_class()
    # The settings that point at the emulator, with its credentials (a rehearsal's toggles, such
    # as keep_session, are not the contract's), plus what a real user supplies (Weibo's rip).
    pointing = {k: v for k, v in emulator.client_options("{url}", "{url}").items() if isinstance(v, str)}
    settings = {**pointing, **emulator.user_settings, "min_interval": 0}
    secrets = [name for name, option in client.options.items() if option.kind == "secret"]
    return Spec(
        kind.name,
        settings,
        # A secret whose shape the config checks (a Nostr key) cannot be any wrong text: the
        # emulator names one the service refuses.
        dict(
            getattr(emulator, "refused_credentials", None) or {n: f"wrong-{n.replace('_', '-')}-123" for n in secrets}
        ),
        emulator.read_marker,
        dict(emulator.rate_limit_fault),
        client.repeat_safe,
        client.rate_limit_checked_first,
        client.web_copies,
        client.default_delivery == "at_most_once",
        client.batched,
        {"body_html": f'<p>It cites <a href="{emulator.cited_page}">a page</a>.</p>'} if emulator.cited_page else {},
    )


# Types these suites cannot judge by the posts a service received, with why: their own tests
# hold them to their delivery instead.
NOT_POST_COUNTED = {
    "websub": "a hub is told that a feed changed, never which post: it learns the posts only by "
    "fetching the feed, which these suites' posts are in nowhere (tests/test_websub*.py: pinged "
    "at least once, the hub's fetch finding the posts in a built feed, kills around the ping)",
}
EVERY_TYPE = {name: spec_of(kind) for name, kind in registry.TYPES.items() if name not in NOT_POST_COUNTED}
SPECS = {name: spec for name, spec in EVERY_TYPE.items() if spec.at_most_once and not spec.batched}
