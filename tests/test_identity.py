"""Identity, end to end over real HTTP on 127.0.0.1: what counts as "the same post" on our side
(one key however a page is found, ids unique per site) and "our post" on the service's side (a read
must prove it is this post; absence is never guessed from clocks; a deleted post is not sent
again). Each scenario ends with exactly one post per pair on the server, or an honest
"needs review", and nothing lost."""

from __future__ import annotations

import datetime as dt

import pytest
from conftest import ListReporter, make_post, mastodon_raw, write_ledger

from mkdocs_syndicate.channels.bluesky_records import rkey_for
from mkdocs_syndicate.channels.mastodon import idempotency_key
from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.policy import DEFAULT_TRIES, MAX_UNCERTAIN_SENDS
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger
from mkdocs_syndicate.timeutil import to_iso

pytestmark = pytest.mark.http

SITE_A = Site("https://example.com/", "Example")
SITE_B = Site("https://example.com/zh/", "例子")


def channels(sandbox, *names, **extra):
    every = {
        "masto": mastodon_raw(sandbox),
        "sky": {
            "type": "bluesky",
            "service": f"{sandbox.url}/bluesky",
            "handle": "sandbox.bsky.social",
            "app_password": "sandbox-bsky-app-password",
        },
        "weibo": {
            "type": "weibo",
            "api": f"{sandbox.url}/weibo/2",
            "access_token": "sandbox-weibo-access-token",
            "rip": "203.0.113.7",
        },
        "devto": {
            "type": "forem",
            "api": f"{sandbox.url}/forem/api",
            "api_key": "sandbox-forem-api-key",
            "min_interval": 0,
        },
    }
    return {name: {**every[name], **extra} for name in names}


def run(folder, raw, posts, clock, site=SITE_A, **options):
    folder.mkdir(parents=True, exist_ok=True)
    opts = parse_options(
        raw, ledger_path=folder / "ledger.yml", site=site, sandbox=False, sending=True, max_wait=900, **options
    )
    return send(opts, posts, ListReporter(), clock=clock)


def post_on(site, n, **changes):
    return make_post(n, url=f"{site.url}blog/post-{n}/", **changes)


def statuses(sandbox):
    return sandbox.snapshot()["mastodon"]["statuses"]


def ledger(folder):
    return Ledger.read(folder / "ledger.yml")


def stamp(epoch):
    return to_iso(dt.datetime.fromtimestamp(epoch, dt.UTC))


# ------------------------------------------------------------------ our side: ids unique per site


def test_two_sites_on_one_account_each_get_their_own_posts(tmp_path, sandbox, clock):
    """Translations with the same file names, separate ledgers, the same Mastodon, Bluesky and
    Weibo accounts: site B's posts must exist, under B's own ids, not be "found" as A's."""
    sandbox.now = clock.time
    raw = channels(sandbox, "masto", "sky", "weibo")
    for site, folder in ((SITE_A, tmp_path / "a"), (SITE_B, tmp_path / "b")):
        report = run(folder, raw, [post_on(site, 1)], clock, site=site)
        assert not report.undone, report.results
        clock.now += 60
    state = sandbox.snapshot()
    assert len(state["mastodon"]["statuses"]) == 2
    assert len(state["bluesky"]["records"]) == 2
    assert len(state["weibo"]["statuses"]) == 2
    a, b = ledger(tmp_path / "a"), ledger(tmp_path / "b")
    for channel in ("masto", "sky", "weibo"):
        mine, theirs = a.record("blog/post-1/", channel), b.record("blog/post-1/", channel)
        assert mine.state == theirs.state == "done"
        assert mine.remote_id != theirs.remote_id, channel
    assert [SITE_B.url + "blog/post-1/" in s["text"] for s in statuses(sandbox)] == [False, True]


@pytest.mark.parametrize(
    "channel,emulator,created",
    [("masto", "mastodon", "statuses"), ("weibo", "weibo", "statuses"), ("devto", "forem", "articles")],
)
def test_a_read_does_not_take_another_sites_post_for_ours(tmp_path, sandbox, clock, channel, emulator, created):
    """Site A's post is on the account; site B's run was killed with the same post key in flight
    (nothing left). B's read sees A's post, same title, same path under another site_url, and must
    not call it B's: after the settle time B sends its own."""
    sandbox.now = clock.time
    raw = channels(sandbox, channel)
    assert not run(tmp_path / "a", raw, [post_on(SITE_A, 1, body_html="<p>Text.</p>")], clock).undone
    clock.now += 60
    at = stamp(clock.now)
    (tmp_path / "b").mkdir()
    write_ledger(
        tmp_path / "b" / "ledger.yml", {("blog/post-1/", channel): Record(State.IN_FLIGHT, 1, at, created_at=at)}
    )
    clock.now += 1200
    report = run(tmp_path / "b", raw, [post_on(SITE_B, 1, body_html="<p>Text.</p>")], clock, site=SITE_B)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(sandbox.snapshot()[emulator][created]) == 2
    assert (
        ledger(tmp_path / "a").record("blog/post-1/", channel).remote_id
        != ledger(tmp_path / "b").record("blog/post-1/", channel).remote_id
    )


def test_client_chosen_ids_differ_per_site_and_per_channel():
    a, b = post_on(SITE_A, 1), post_on(SITE_B, 1)
    assert a.key == b.key
    assert idempotency_key(a.url, "masto") != idempotency_key(b.url, "masto")
    assert idempotency_key(a.url, "masto") != idempotency_key(a.url, "masto2")
    assert rkey_for(a, "sky") != rkey_for(b, "sky")


def test_a_bluesky_record_at_our_key_that_is_another_sites_is_not_taken_for_ours(tmp_path, sandbox, clock):
    """A ledger from before per-site keys: B's in_flight record names the rkey A's post already
    has. The read finds A's record there; it does not link to B's post, so it is not B's: failed
    (no second write over A's), then sent under a fresh key."""
    sandbox.now = clock.time
    raw = channels(sandbox, "sky")
    assert not run(tmp_path / "a", raw, [post_on(SITE_A, 1)], clock).undone
    a_record = ledger(tmp_path / "a").record("blog/post-1/", "sky")
    taken_key = a_record.remote_id.rsplit("/", 1)[-1]
    clock.now += 3600
    at = stamp(clock.now - 1800)
    (tmp_path / "b").mkdir()
    write_ledger(
        tmp_path / "b" / "ledger.yml",
        {("blog/post-1/", "sky"): Record(State.IN_FLIGHT, 1, at, idempotency_key=taken_key, created_at=at)},
    )
    report = run(tmp_path / "b", raw, [post_on(SITE_B, 1)], clock, site=SITE_B)
    assert [r.state for r in report.results] == ["failed"], report.results
    assert "does not link to" in report.results[0].detail
    failed = ledger(tmp_path / "b").record("blog/post-1/", "sky")
    assert failed.idempotency_key is None
    assert len(sandbox.snapshot()["bluesky"]["records"]) == 1

    report = run(tmp_path / "b", raw, [post_on(SITE_B, 1)], clock, site=SITE_B)
    assert [r.state for r in report.results] == ["done"]
    records = sandbox.snapshot()["bluesky"]["records"]
    assert len(records) == 2
    assert sorted(r["value"]["embed"]["external"]["uri"] for r in records.values()) == [
        SITE_A.url + "blog/post-1/",
        SITE_B.url + "blog/post-1/",
    ]


# ------------------------------------------------------------------ their side: find what is ours


def test_a_url_with_an_apostrophe_is_found_as_mastodon_escapes_it(tmp_path, sandbox, clock):
    """Rails writes ' as &#39; in the href: the read compares unescaped links, so the status made
    by an answer-less request is found, not sent again."""
    sandbox.now = clock.time
    post = make_post(1, key="blog/it's-here/", url="https://example.com/blog/it's-here/")
    sandbox.add_fault({"channel": "mastodon", "action": "drop_after"})
    report = run(tmp_path, channels(sandbox, "masto"), [post], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(statuses(sandbox)) == 1
    assert "it&#39;s-here" in statuses(sandbox)[0]["content"]


def test_a_url_followed_by_cjk_punctuation_stays_the_post_url(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    raw = channels(sandbox, "masto", template="{{ title }}：{{ url }}。")
    sandbox.add_fault({"channel": "mastodon", "action": "drop_after"})
    report = run(tmp_path, raw, [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    (status,) = statuses(sandbox)
    assert status["text"] == "Post 1：https://example.com/blog/post-1/ 。"
    assert 'href="https://example.com/blog/post-1/"' in status["content"]


def test_a_server_clock_hours_behind_does_not_make_a_post_look_absent(tmp_path, sandbox, clock):
    """A killed run made the status; since then another app posted 45 more, so it is on page 2.
    The server stamps everything 3 h "before" our clock: a read that compared those stamps with
    our send time would stop on page 1 and call the post absent. It reads on, to 24 h before the
    first attempt, and finds it."""
    import httpx

    sandbox.now = clock.time
    sandbox.set_quirks("mastodon", clock_offset=-3 * 3600)
    post = make_post(1)
    made = sandbox.url + "/mastodon/api/v1/statuses"
    auth = {"Authorization": "Bearer sandbox-mastodon-token"}
    key = idempotency_key(post.url, "masto")
    at = stamp(clock.now)
    write_ledger(
        tmp_path / "ledger.yml",
        {("blog/post-1/", "masto"): Record(State.IN_FLIGHT, 1, at, idempotency_key=key, created_at=at)},
    )
    httpx.post(made, data={"status": f"Post 1 {post.url}"}, headers={**auth, "Idempotency-Key": key})
    for n in range(45):
        clock.now += 1
        httpx.post(made, data={"status": f"elsewhere {n}"}, headers=auth).raise_for_status()
    clock.now += 7200  # the key has expired: only the read stands between us and a duplicate
    report = run(tmp_path, channels(sandbox, "masto"), [post], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert sum(post.url in s["text"] for s in statuses(sandbox)) == 1


@pytest.mark.parametrize("emulator,channel", [("forem", "devto"), ("weibo", "weibo")])
def test_dev_and_weibo_read_past_a_page_of_posts_stamped_hours_behind(tmp_path, sandbox, clock, emulator, channel):
    """As for Mastodon: a killed run made the post, 101 more followed (so it is on page 2 of the
    listing), and the server's clock is 3 h behind ours. The read goes on to page 2 and finds it."""
    import httpx

    sandbox.now = clock.time
    sandbox.set_quirks(emulator, clock_offset=-3 * 3600)
    post = make_post(1, body_html="<p>Text.</p>")
    at = stamp(clock.now)
    record = Record(State.IN_FLIGHT, 1, at, created_at=at)
    if emulator == "weibo":
        from mkdocs_syndicate.channels.weibo import marker

        record = Record(State.IN_FLIGHT, 1, at, created_at=at, idempotency_key=marker(post.url, channel))
    write_ledger(tmp_path / "ledger.yml", {("blog/post-1/", channel): record})

    def make(n, text_or_article):
        if emulator == "forem":
            answer = httpx.post(
                sandbox.url + "/forem/api/articles",
                headers={"api-key": "sandbox-forem-api-key", "Accept": "application/vnd.forem.api-v1+json"},
                json={"article": text_or_article},
            )
        elif n:  # posted in Weibo's app: the API's budget is 100 calls a day
            sandbox.emulators["weibo"].add_from_app(text_or_article)
            return
        else:
            answer = httpx.post(
                sandbox.url + "/weibo/2/statuses/share.json",
                data={"access_token": "sandbox-weibo-access-token", "rip": "203.0.113.7", "status": text_or_article},
            )
        assert answer.status_code in (200, 201), answer.text

    if emulator == "forem":
        make(0, {"title": "Post 1", "body_markdown": "Text.", "published": True, "canonical_url": post.url})
    else:
        make(0, f"Post 1 {post.url} {record.idempotency_key}")
    for n in range(1, 102):
        clock.now += 130  # past both services' posting limits
        make(
            n,
            {"title": f"Elsewhere {n}", "body_markdown": "x", "published": True}
            if emulator == "forem"
            else f"Elsewhere {n} https://example.com/other/{n}/",
        )
    clock.now += 600
    before = len(sandbox.requests(emulator))
    report = run(tmp_path, channels(sandbox, channel), [post], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    # Found by the read alone: not even a create that DEV's canonical_url uniqueness would refuse.
    assert [r["method"] for r in sandbox.requests(emulator)[before:]].count("POST") == 0
    created = {"forem": "articles", "weibo": "statuses"}[emulator]
    assert len(sandbox.snapshot()[emulator][created]) == 102


@pytest.mark.parametrize("emulator,created", [("forem", "articles"), ("weibo", "statuses")])
def test_forem_and_weibo_stamp_with_their_own_clock(sandbox, clock, emulator, created):
    """The emulators' clock_offset quirk, which the scans above are tested against."""
    sandbox.now = clock.time
    sandbox.set_quirks(emulator, clock_offset=-3 * 3600)
    report = run(
        sandbox.state_dir.parent / emulator,
        channels(sandbox, {"forem": "devto"}.get(emulator, emulator)),
        [make_post(1)],
        clock,
    )
    assert not report.undone
    (item,) = sandbox.snapshot()[emulator][created]
    field = item.get("published_at") or item["created_at"]
    if emulator == "weibo":
        seen = dt.datetime.strptime(field, "%a %b %d %H:%M:%S %z %Y").timestamp()
    else:
        seen = dt.datetime.fromisoformat(field.replace("Z", "+00:00")).timestamp()
    assert abs(seen - (clock.now - 3 * 3600)) < 5


def test_the_retry_budget_holds_across_settle_waits_and_runs(tmp_path, sandbox, clock):
    """A server that makes the status but never answers, and a read that cannot recognise it (no
    URL in the message): every resend makes another status. The budget is counted in the ledger,
    so the pair stops at MAX_UNCERTAIN_SENDS, needs review, and a later run adds none."""
    sandbox.now = clock.time
    sandbox.set_quirks("mastodon", ignore_idempotency_key=True)
    sandbox.add_fault({"channel": "mastodon", "action": "drop_after", "times": 50})
    raw = channels(sandbox, "masto", template="{{ title }}")
    report = run(tmp_path, raw, [make_post(1)], clock)
    # One run sends at most its tries, settle waits included (they used to reset the count).
    assert [r.state for r in report.results] == ["in_flight"], report.results
    assert len(statuses(sandbox)) == DEFAULT_TRIES
    clock.now += 86_400
    report = run(tmp_path, raw, [make_post(1)], clock)
    assert report.results[0].needs_review and f"sent {MAX_UNCERTAIN_SENDS} times" in report.results[0].detail
    assert len(statuses(sandbox)) == MAX_UNCERTAIN_SENDS
    clock.now += 86_400
    report = run(tmp_path, raw, [make_post(1)], clock)
    assert report.results[0].needs_review and len(statuses(sandbox)) == MAX_UNCERTAIN_SENDS
    assert ledger(tmp_path).record("blog/post-1/", "masto").attempts == MAX_UNCERTAIN_SENDS


def test_a_429_after_the_commit_with_the_key_ignored_is_read_not_resent(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    sandbox.set_quirks("mastodon", ignore_idempotency_key=True)
    sandbox.add_fault(
        {"channel": "mastodon", "action": "status_after", "status": 429, "body": {"error": "Too many requests"}}
    )
    report = run(tmp_path, channels(sandbox, "masto"), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(statuses(sandbox)) == 1


def test_a_weibo_rate_limit_code_after_the_commit_is_read_not_resent(tmp_path, sandbox, clock):
    sandbox.now = clock.time
    sandbox.add_fault(
        {
            "channel": "weibo",
            "action": "status_after",
            "status": 403,
            "body": {"error": "User requests out of rate limit!", "error_code": 10023},
        }
    )
    report = run(tmp_path, channels(sandbox, "weibo"), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(sandbox.snapshot()["weibo"]["statuses"]) == 1


def test_forem_answering_200_html_is_ambiguous_not_a_refusal(tmp_path, sandbox, clock):
    """DEV documents 201; a 200 HTML page (a proxy, a maintenance page) after the article was made
    is read back before anything else, even with drafts (which have no canonical uniqueness)."""
    sandbox.now = clock.time
    sandbox.add_fault(
        {"channel": "forem", "action": "status_after", "status": 200, "body": "<html><body>OK</body></html>"}
    )
    report = run(tmp_path, channels(sandbox, "devto", published=False), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(sandbox.snapshot()["forem"]["articles"]) == 1


def test_a_status_deleted_by_its_author_while_in_flight_is_never_sent_again(tmp_path, sandbox, clock):
    """A killed run made the status; its author deleted it. The next run's read finds nothing, the
    replayed key answers the API's own 404 "Record not found": it existed, so the pair is
    deleted (schema v2's state for a copy proved gone), with that note, for good."""
    sandbox.now = clock.time
    post = make_post(1)
    key = idempotency_key(post.url, "masto")
    made = sandbox.url + "/mastodon/api/v1/statuses"
    import httpx

    headers = {"Authorization": "Bearer sandbox-mastodon-token", "Idempotency-Key": key}
    status = httpx.post(made, data={"status": f"Post 1 {post.url}"}, headers=headers).json()
    at = stamp(clock.now)
    write_ledger(
        tmp_path / "ledger.yml",
        {("blog/post-1/", "masto"): Record(State.IN_FLIGHT, 1, at, idempotency_key=key, created_at=at)},
    )
    httpx.delete(f"{made}/{status['id']}", headers=headers).raise_for_status()
    clock.now += 1200  # past settle, within the key's hour

    report = run(tmp_path, channels(sandbox, "masto"), [post], clock)
    assert [r.state for r in report.results] == ["deleted"], report.results
    record = ledger(tmp_path).record("blog/post-1/", "masto")
    assert record.state == "deleted" and "deleted" in record.note
    assert statuses(sandbox) == []
    clock.now += 7200  # the key has expired: a resend now would post again
    report = run(tmp_path, channels(sandbox, "masto"), [post], clock)
    assert report.results == [] and statuses(sandbox) == []


@pytest.mark.process
def test_two_sites_on_one_account_through_the_command(tmp_path, sandbox):
    """The same, as two users would run it: two sites built elsewhere (a feed and syndicate.yml
    each, the same file names under different site_urls), one Mastodon and one Bluesky account,
    `mkdocs-syndicate run` in real processes. Both ledgers done, four posts, each linking to its
    own site."""
    import yaml
    from test_feed import ATOM, cli

    raw = channels(sandbox, "masto", "sky")
    for name, site in (("a", SITE_A), ("b", SITE_B)):
        folder = tmp_path / name
        (folder / "public").mkdir(parents=True)
        only_first = (
            ATOM.split("<entry>")[0] + "<entry>" + ATOM.split("<entry>")[1].split("</entry>")[0] + "</entry></feed>"
        )
        (folder / "public" / "atom.xml").write_text(only_first.replace(SITE_A.url, site.url), encoding="utf-8")
        settings = {"site_url": site.url, "site_name": site.name, "mode": "send", "backlog": "send", "channels": raw}
        (folder / "syndicate.yml").write_text(yaml.safe_dump(settings, allow_unicode=True), encoding="utf-8")
        result = cli(folder, "run", "--feed", "public/atom.xml")
        assert result.returncode == 0, result.stderr
    state = sandbox.snapshot()
    texts = sorted(s["text"] for s in state["mastodon"]["statuses"])
    assert len(texts) == 2 and any(SITE_B.url in t for t in texts) and any(SITE_B.url not in t for t in texts)
    cards = sorted(r["value"]["embed"]["external"]["uri"] for r in state["bluesky"]["records"].values())
    assert cards == [SITE_A.url + "blog/group-commits/", SITE_B.url + "blog/group-commits/"]
    a, b = ledger(tmp_path / "a"), ledger(tmp_path / "b")
    for channel in ("masto", "sky"):
        assert a.record("blog/group-commits/", channel).remote_id != b.record("blog/group-commits/", channel).remote_id


@pytest.mark.parametrize("status", [200, 302])
def test_weibo_answering_outside_its_documentation_after_the_commit_is_read_not_resent(
    tmp_path, sandbox, clock, status
):
    sandbox.now = clock.time
    sandbox.add_fault(
        {"channel": "weibo", "action": "status_after", "status": status, "body": "<html><body>moved</body></html>"}
    )
    report = run(tmp_path, channels(sandbox, "weibo"), [make_post(1)], clock)
    assert [r.state for r in report.results] == ["done"], report.results
    assert len(sandbox.snapshot()["weibo"]["statuses"]) == 1


@pytest.mark.unit
@pytest.mark.parametrize(
    "code,kind",
    [
        (200, "AMBIGUOUS"),
        (204, "AMBIGUOUS"),
        (302, "AMBIGUOUS"),
        (404, "REFUSED"),
        (422, "REFUSED"),
        (429, "RATE_LIMITED"),
        (401, "AUTH"),
        (503, "AMBIGUOUS"),
    ],
)
def test_an_answer_neither_documented_success_nor_refusal_is_ambiguous(code, kind):
    import httpx

    from mkdocs_syndicate.channels.answers import status_outcome
    from mkdocs_syndicate.channels.base import Kind

    response = httpx.Response(code, text="<html>maintenance</html>", headers={"content-type": "text/html"})
    assert status_outcome(response, 0.0).kind is Kind[kind]
