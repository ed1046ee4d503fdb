import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from mkdocs_syndicate.errors import LedgerError
from mkdocs_syndicate.ledger.fast import parse_canonical
from mkdocs_syndicate.ledger.format import dump, parse, parse_yaml
from mkdocs_syndicate.ledger.schema import PostEntry, Record, State

pytestmark = pytest.mark.unit

SAMPLE = {
    "blog/2026/11/28/idempotency/": PostEntry(
        url="https://example.com/blog/2026/11/28/idempotency/",
        title="幂等性：让发布 Agent 不怕中途被杀",
        channels={
            "devto": Record(
                State.DONE, 1, "2026-12-02T07:01:15Z", remote_id="2093312", remote_url="https://dev.to/me/x-3b1k"
            ),
            "indexnow": Record(State.DONE, 1, "2026-12-02T07:00:02Z"),
            "mastodon": Record(State.IN_FLIGHT, 1, "2026-12-02T07:00:03Z", idempotency_key="ab" * 32),
            "weibo": Record(
                State.FAILED, 2, "2026-12-02T07:02:00Z", error="429 rate limited; retry after 2026-12-02T08:00:00Z"
            ),
        },
    )
}


def test_round_trip_and_canonical_layout():
    text = dump(SAMPLE)
    assert parse(text, "ledger.yml") == SAMPLE
    assert text.endswith("\n...\n")
    lines = text.splitlines()
    # one line per (post, channel) record, channels sorted
    record_lines = [line for line in lines if line.startswith("      ")]
    assert [line.split(":")[0].strip() for line in record_lines] == ["devto", "indexnow", "mastodon", "weibo"]
    assert dump(parse(text, "x")) == text  # deterministic


def test_any_yaml_loader_reads_the_same_data():
    loaded = yaml.safe_load(dump(SAMPLE))
    assert loaded["version"] == 1
    rec = loaded["posts"]["blog/2026/11/28/idempotency/"]["channels"]["devto"]
    assert rec == {
        "state": "done",
        "attempts": 1,
        "at": "2026-12-02T07:01:15Z",
        "remote_id": "2093312",
        "remote_url": "https://dev.to/me/x-3b1k",
    }


def test_hand_edited_block_style_loads():
    text = """version: 1
posts:
  blog/a/:
    url: https://example.com/blog/a/
    title: A
    channels:
      mastodon:
        state: done
        attempts: 1
        at: 2026-12-02T07:00:03Z
        remote_id: "1234"
...
"""
    rec = parse(text, "l.yml")["blog/a/"].channels["mastodon"]
    assert rec == Record(State.DONE, 1, "2026-12-02T07:00:03Z", remote_id="1234")


@pytest.mark.parametrize(
    "field, plain",
    [
        ("remote_id", "0123"),
        ("remote_id", "1234"),
        ("remote_id", "0x1F"),
        ("remote_id", "1.5e+3"),
        ("remote_id", "1_000"),
        ("error", "1:30"),
        ("note", "yes"),
        ("remote_url", "2026-12-02"),
        ("message_sha256", ".inf"),
    ],
)
def test_hand_edited_text_that_yaml_reads_as_something_else_is_refused_with_its_line(field, plain):
    text = (
        "version: 1\nposts:\n  blog/a/:\n    url: https://example.com/blog/a/\n    title: A\n"
        f"    channels:\n      mastodon:\n        state: done\n        {field}: {plain}\n...\n"
    )
    with pytest.raises(LedgerError, match=rf"l.yml:9: .*{field} must be text.*put it in quotes"):
        parse(text, "l.yml")


@pytest.mark.parametrize("plain", ["1:30", "0x1F", "0123", "1.5e+3", "true"])
def test_a_title_or_url_yaml_reads_as_a_number_is_refused(plain):
    text = f"version: 1\nposts:\n  blog/a/:\n    url: https://example.com/a/\n    title: {plain}\n...\n"
    with pytest.raises(LedgerError, match=r"l.yml:5: .*title must be text"):
        parse(text, "l.yml")


@pytest.mark.parametrize("version", ["true", "1.0", '"1"', "0x1"])
def test_a_version_that_only_looks_like_1_is_refused(version):
    with pytest.raises(LedgerError, match=r"l.yml:1: unknown version"):
        parse(f"version: {version}\nposts: {{}}\n...\n", "l.yml")


@pytest.mark.parametrize(
    "text, fragment, line",
    [
        ("version: 1\nposts: {}\n", "end marker", None),
        ("version: 3\nposts: {}\n...\n", "unknown version", 1),
        ("version: 1\nposts:\n  a/: &x {url: u, title: t}\n  b/: *x\n...\n", "aliases", 3),
        (
            "version: 1\nposts:\n  a/:\n    url: u\n    title: t\n    channels:\n      m: {state: sent}\n...\n",
            "unknown state",
            7,
        ),
        (
            "version: 1\nposts:\n  a/:\n    url: u\n    channels:\n      m: {state: done, atempts: 1}\n...\n",
            "unknown field 'atempts'",
            6,
        ),
        ("version: 1\nposts: [\n...\n", "not valid YAML", None),
        (
            "version: 1\nposts:\n  a/:\n    url: u\n    channels:\n      m: {state: done, at: yesterday}\n...\n",
            "'at' must be a UTC time",
            6,
        ),
        (
            "version: 1\nposts:\n  a/: {url: !!python/object/new:os.system [echo], title: t}\n...\n",
            "expected a single value",
            3,
        ),
    ],
)
def test_rejections_name_file_and_line(text, fragment, line):
    with pytest.raises(LedgerError) as info:
        parse(text, "site/ledger.yml")
    message = str(info.value)
    assert "site/ledger.yml" in message
    assert fragment in message
    if line is not None:
        assert info.value.line == line


def test_every_byte_prefix_is_rejected():
    text = dump(SAMPLE)
    data = text.encode()
    for cut in range(len(data)):
        prefix = data[:cut].decode("utf-8", errors="ignore")
        if prefix == text.rstrip("\n"):
            assert parse(prefix, "l.yml") == SAMPLE  # only the final newline is missing
            continue
        with pytest.raises(LedgerError):
            parse(prefix, "l.yml")


tricky = st.one_of(
    st.sampled_from(
        [
            "no",
            "on",
            "~",
            "null",
            "1e3",
            "0x10",
            "12:30",
            "2024-01-02",
            "yes",
            "-",
            "? x",
            "a: b",
            "#x",
            "x #y",
            "[a]",
            "{b}",
            "&a",
            "*a",
            "!t",
            "|",
            ">",
            "'",
            '"',
            "%",
            "@",
            "`",
            "https://x.com/a?b=c&d=e#f",
            "",
            " lead",
            "trail ",
            "\u2028",
            "\ufeff",
            "\x85",
        ]
    ),
    st.text(min_size=0, max_size=40),
)


@given(key=tricky, title=tricky, channel=tricky, remote=tricky)
def test_round_trip_property(key, title, channel, remote):
    posts = {
        key: PostEntry(
            url="https://e.com/" + key,
            title=title,
            channels={channel: Record(State.DONE, 3, "2026-01-01T00:00:00Z", remote_id=remote)},
        )
    }
    text = dump(posts)
    assert parse(text, "l.yml") == posts
    assert "&" not in text.split("\n")[0]  # header line untouched
    assert yaml.safe_load(text)["posts"][key]["channels"][channel]["remote_id"] == remote


# Text as it can reach the ledger from a feed or a server's answer: any code point, lone
# surrogates included (st.text leaves those out by default), and keys past YAML's 1,024-character
# limit for implicit keys.
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
long_text = st.builds(
    lambda unit, n, tail: unit * n + tail,
    st.sampled_from(["a", "/", "\x01", "é", "😀", "\ud800", '"']),
    st.integers(300, 1500),
    any_text,
)


def readable(value: str) -> str:
    """What the writer promises for a value: itself, a lone surrogate made U+FFFD."""
    return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in value)


@given(
    key=st.one_of(any_text, long_text),
    title=st.one_of(any_text, long_text),
    channel=st.one_of(any_text, long_text),
    remote=st.one_of(any_text, long_text),
)
def test_everything_the_writer_writes_every_reader_reads_back(key, title, channel, remote):
    posts = {
        key: PostEntry(
            url="https://e.com/" + key,
            title=title,
            channels={channel: Record(State.DONE, 3, "2026-01-01T00:00:00Z", remote_id=remote)},
        )
    }
    text = dump(posts)
    expected = {
        readable(key): PostEntry(
            url=readable("https://e.com/" + key),
            title=readable(title),
            channels={readable(channel): Record(State.DONE, 3, "2026-01-01T00:00:00Z", remote_id=readable(remote))},
        )
    }
    assert parse_yaml(text, "l.yml") == expected  # libyaml, when installed
    assert parse(text, "l.yml") == expected
    fast = parse_canonical(text)
    assert fast is None or fast == expected
    plain = yaml.safe_load(text)["posts"][readable(key)]  # the pure-Python reader
    assert plain["title"] == readable(title)
    assert plain["channels"][readable(channel)]["remote_id"] == readable(remote)


def test_a_key_past_the_implicit_key_limit_is_written_explicitly_and_read_back():
    key = "blog/" + "a" * 1100 + "/"
    posts = {
        key: PostEntry(
            url="https://e.com/" + key, title="t", channels={"m": Record(State.DONE, 1, "2026-01-01T00:00:00Z")}
        )
    }
    text = dump(posts)
    assert f"  ? {key}\n  :\n    url:" in text
    assert parse(text, "l.yml") == posts == parse_yaml(text, "l.yml")


def test_a_sandbox_record_carries_its_flag_written_only_when_true_and_read_alike():
    """Issue 36: a sandbox run's records say so (`sandbox: true`), a real run's say nothing; the
    flag makes the ledger version 2, and every reader reads it."""
    real = {
        "blog/a/": PostEntry(
            "https://example.com/blog/a/", "A", {"masto": Record(State.DONE, 1, "2026-12-02T07:00:03Z")}
        )
    }
    assert "sandbox" not in dump(real) and "version: 1" in dump(real)
    rehearsed = {
        "blog/a/": PostEntry(
            "https://example.com/blog/a/",
            "A",
            {
                "masto": Record(
                    State.DONE, 1, "2026-12-02T07:00:03Z", remote_url="http://127.0.0.1:8787/m/1", sandbox=True
                )
            },
        )
    }
    text = dump(rehearsed)
    assert 'remote_url: "http://127.0.0.1:8787/m/1", sandbox: true}' in text and "version: 2" in text
    assert parse_canonical(text) == parse_yaml(text, "l.yml") == parse(text, "l.yml") == rehearsed
    assert yaml.safe_load(text)["posts"]["blog/a/"]["channels"]["masto"]["sandbox"] is True
    by_hand = parse_yaml(text.replace("sandbox: true", "sandbox: false"), "l.yml")  # a hand edit: a real record
    assert by_hand["blog/a/"].channels["masto"].sandbox is False and "sandbox" not in dump(by_hand)
    for wrong in ("yes", '"true"', "1", "True"):
        with pytest.raises(LedgerError, match=r"l\.yml:8: record \(blog/a/, masto\): sandbox must be true or false"):
            parse_yaml(text.replace("sandbox: true", f"sandbox: {wrong}"), "l.yml")


def test_media_ids_round_trip_in_every_reader_and_bad_ones_are_named():
    """An upload's id goes into the ledger before the status that uses it (engine/uploads.py):
    the dumper, the fast reader and the full parser agree on it, and a hand edit that breaks
    it is refused with the record and the line."""
    from mkdocs_syndicate.ledger.schema import Media

    media = (Media("110", "ab" * 32), Media("bafkrei-x", "cd" * 32, mime="image/png", size=123456))
    posts = {
        "p/": PostEntry(
            url="https://example.com/p/",
            title="P",
            channels={"bsky": Record(State.IN_FLIGHT, 1, "2026-12-02T07:00:03Z", idempotency_key="k", media=media)},
        )
    }
    text = dump(posts)
    assert "media: [{id: '110'" not in text  # quoted the way the dumper quotes: read back as text
    assert "version: 2" in text  # a version 1 reader would refuse the field
    assert parse_canonical(text) == posts == parse_yaml(text, "x")
    bad = text.replace("size: 123456", "size: big")
    with pytest.raises(LedgerError, match=r"\(p/, bsky\).*size must be a whole number"):
        parse(bad, "ledger.yml")
    with pytest.raises(LedgerError, match="media item 1 must be a mapping with an id and a sha256"):
        parse(text.replace('id: "110", ', ""), "ledger.yml")
