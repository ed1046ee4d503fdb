import pytest

from mkdocs_syndicate.net.ratehints import server_delay

pytestmark = pytest.mark.unit

NOW = 1_764_658_800.0  # 2025-12-02T07:00:00Z


@pytest.mark.parametrize(
    "headers, expected",
    [
        ({"Retry-After": "120"}, 120.0),
        ({"Retry-After": "Tue, 02 Dec 2025 07:00:30 GMT"}, 30.0),  # IMF-fixdate
        ({"Retry-After": "Tuesday, 02-Dec-25 07:00:30 GMT"}, 30.0),  # RFC 850
        ({"Retry-After": "Tue Dec  2 07:00:30 2025"}, 30.0),  # asctime
        ({"Retry-After": "soon"}, None),
        ({"X-RateLimit-Reset": "2025-12-02T07:05:00.019685Z"}, 300.019685),  # Mastodon
        ({"X-RateLimit-Reset": str(NOW + 60)}, 60.0),  # epoch
        ({"X-RateLimit-Reset": "45"}, 45.0),  # seconds-until
        ({"RateLimit-Reset": str(int(NOW) + 10)}, 10.0),  # Bluesky epoch
        ({"X-RateLimit-Reset": "tomorrow"}, None),
        ({"Retry-After": "garbage", "X-RateLimit-Reset": "5"}, 5.0),  # falls through
        ({}, None),
    ],
)
def test_server_delay(headers, expected):
    delay = server_delay(headers, NOW)
    if expected is None:
        assert delay is None
    else:
        assert delay == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize(
    "value",
    [
        "inf",
        "-inf",
        "nan",
        "1e400",
        "²",
        "١٢٠",
        "-5",
        "99999999999999999999999",
        "0x10",
        "1_000",
        "2020-01-01T00:00:00Z",  # a reset already past: stale or skewed, says nothing usable
        "Thu, 01 Jan 1970 00:00:00 GMT",
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Mon, 99 Foo 2025 99:99:99 GMT",
    ],
)
@pytest.mark.parametrize("header", ["Retry-After", "X-RateLimit-Reset", "RateLimit-Reset"])
def test_absurd_values_are_ignored_never_raised(header, value):
    delay = server_delay({header: value}, NOW)
    assert delay is None or 0 <= delay <= 7 * 86400, delay


def test_a_far_future_reset_is_clamped_to_a_week():
    assert server_delay({"Retry-After": "999999999999"}, NOW) == 7 * 86400
