"""The site URL every announcement carries: a warning, once per build (plan and send), when it
is a placeholder, a name reserved for examples and tests (RFC 2606, RFC 6761) such as the docs'
`site_url: https://example.com/`. Posts announced so link nowhere, publicly, for good."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from mkdocs_syndicate.config.run import Options

_EXAMPLE_DOMAINS = ("example.com", "example.net", "example.org")  # RFC 2606, section 3
_RESERVED_TLDS = ("example", "test", "invalid")  # RFC 2606, section 2


def placeholder(options: Options) -> tuple[bool, str] | None:
    """(whether it is a warning, what to say) when site_url's host is reserved; None when it is a
    real one. Only a note where nothing leaves this machine: in the sandbox, or when every channel
    talks to a loopback server (a rehearsal). A local address (localhost) is the sandbox's own."""
    host = (urlsplit(options.site.url).hostname or "").rstrip(".").lower()
    reason = _reserved(host)
    local = _local(host)
    if reason is None and not local:
        return None
    rehearsal = options.sandbox or _all_channels_local(options)
    if reason is None:  # localhost, 127.0.0.1: nobody else can open the links
        if options.sandbox:
            return None
        reason = "is this machine: nobody else can open the announced links"
    text = (
        f"site_url {options.site.url}: {host} {reason}; every announcement carries a link under it, "
        "and a public post cannot be taken back: set site_url in "
        f"{options.site.config_name} to your site's address"
    )
    return (False, text + " (fine for this rehearsal)") if rehearsal else (True, text)


def _reserved(host: str) -> str | None:
    if host in _EXAMPLE_DOMAINS or host.endswith(tuple("." + d for d in _EXAMPLE_DOMAINS)):
        return "is reserved for examples (RFC 2606)"
    if host.rsplit(".", 1)[-1] in _RESERVED_TLDS:
        return f"is in .{host.rsplit('.', 1)[-1]}, reserved for examples and tests (RFC 2606)"
    return None


def _local(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):  # RFC 6761, section 6.3
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _all_channels_local(options: Options) -> bool:
    """Every enabled channel's service address (the settings its emulator would replace) is a
    loopback one: nothing is announced beyond this machine."""
    from mkdocs_syndicate.registry import TYPES, PluginError

    enabled = [channel for channel in options.channels if channel.enabled]
    for channel in enabled:
        kind = TYPES[channel.type]
        spec = kind.client_class().options
        try:
            addresses = kind.emulator_class().client_options("http://127.0.0.1", "http://127.0.0.1")
        except PluginError:  # a plugin's broken emulator: its addresses are unknown, so not local
            return False
        served = [channel.options.get(name) for name in addresses if name in spec and spec[name].kind == "url"]
        if not all(isinstance(url, str) and _local((urlsplit(url).hostname or "").lower()) for url in served):
            return False
    return bool(enabled)
