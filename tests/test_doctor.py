"""Issue 38: credentials checked before they are needed (`mkdocs-syndicate doctor`): one
authenticated read per channel, against the emulators' healthy, revoked, expiring and wrong-scope
credentials; never a write, never the ledger."""

from __future__ import annotations

import asyncio

import pytest
from conftest import SITE

from mkdocs_syndicate.channels.base import Channel, CredentialCheck, Health, rate_limit_left
from mkdocs_syndicate.config.channels import parse_channels


@pytest.mark.unit
def test_a_channel_type_without_a_check_says_so_and_needs_no_person():
    class Quiet(Channel):
        type_name = "quiet"

    settings = parse_channels({"q": {"type": "quiet"}}, {"quiet": Quiet})[0]
    found = asyncio.run(Quiet(settings, SITE).check_credentials(None))  # type: ignore[arg-type]
    assert found == CredentialCheck(Health.NOT_CHECKED, problem="quiet has no credential check")
    assert not found.health.needs_a_person


@pytest.mark.unit
@pytest.mark.parametrize(
    ("headers", "said"),
    [
        (
            {
                "X-RateLimit-Limit": "300",
                "X-RateLimit-Remaining": "287",
                "X-RateLimit-Reset": "2026-12-04T18:00:00.019685Z",
            },
            "287 of 300 requests left (resets 2026-12-04T18:00:00Z)",
        ),
        (
            {"RateLimit-Limit": "5000", "RateLimit-Remaining": "4997", "RateLimit-Reset": "1796400000"},
            "4997 of 5000 requests left (resets 2026-12-04T16:00:00Z)",
        ),
        ({"X-RateLimit-Limit": "300", "X-RateLimit-Remaining": "²"}, None),
        ({}, None),
    ],
)
def test_rate_limit_left_is_read_where_the_service_reports_it(headers, said):
    assert rate_limit_left(headers) == said
