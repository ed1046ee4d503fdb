import pytest

from mkdocs_syndicate.ratelimit import server_delay

NOW = 1_764_658_800.0  # 2025-12-02T07:00:00Z


@pytest.mark.parametrize("headers, expected", [
    ({"Retry-After": "120"}, 120.0),
    ({"Retry-After": "Tue, 02 Dec 2025 07:00:30 GMT"}, 30.0),          # IMF-fixdate
    ({"Retry-After": "Tuesday, 02-Dec-25 07:00:30 GMT"}, 30.0),        # RFC 850
    ({"Retry-After": "Tue Dec  2 07:00:30 2025"}, 30.0),               # asctime
    ({"Retry-After": "soon"}, None),
    ({"X-RateLimit-Reset": "2025-12-02T07:05:00.019685Z"}, 300.019685),  # Mastodon
    ({"X-RateLimit-Reset": str(NOW + 60)}, 60.0),                      # epoch
    ({"X-RateLimit-Reset": "45"}, 45.0),                               # seconds-until
    ({"RateLimit-Reset": str(int(NOW) + 10)}, 10.0),                   # Bluesky epoch
    ({"X-RateLimit-Reset": "tomorrow"}, None),
    ({"Retry-After": "garbage", "X-RateLimit-Reset": "5"}, 5.0),       # falls through
    ({}, None),
])
def test_server_delay(headers, expected):
    delay = server_delay(headers, NOW)
    if expected is None:
        assert delay is None
    else:
        assert delay == pytest.approx(expected, abs=1e-3)


def test_past_reset_means_no_wait():
    assert server_delay({"X-RateLimit-Reset": "2020-01-01T00:00:00Z"}, NOW) == 0.0
