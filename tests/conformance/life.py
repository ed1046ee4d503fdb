"""A post's life on one channel, event by event, each judged by what the service holds afterwards.

Two lives a channel: a post (with an image where the copy carries one) created, corrected, given
another alt text, another image, none, one again, moved, removed, announced again; and a long post
sent as a thread, grown, corrected, shrunk. Each event is one run of the engine in-process (real
HTTP to the service, the sandbox's clock), then four outcomes read from the service:

- **0 duplicates**: at most one copy of the post (under any URL it had), no thread part twice;
- **0 losses**: the copy is there with what the post says now (text, URL, image, parts), named
  by the ledger, or gone after a removal; for a ping, the page pinged;
- **0 orphans**: no upload the service keeps that no copy names, no thread part the record lost;
- **proved by a read**: the run's result says a read of the copy proved the change.

A cell is ✓, ✗ with the reason, or n/a with why the type has no such event or outcome."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from channel_specs import EVERY_TYPE, spec_of
from conftest import ListReporter, make_post
from crashlab import PublicSite
from test_image_channels import png
from test_thread_life import PARAGRAPHS

from conformance.service import Held, Holdings
from mkdocs_syndicate.config.run import Site, parse_options
from mkdocs_syndicate.engine.syndication import send
from mkdocs_syndicate.ledger.resolution import Decision, resolved
from mkdocs_syndicate.ledger.schema import Record, State
from mkdocs_syndicate.ledger.store import Ledger, PostRef, Transition
from mkdocs_syndicate.registry import TYPES

SITE = "http://example.com/"
OUTCOMES = ("0 duplicates", "0 losses", "0 orphans", "proved by a read")
OK = "✓"
CHANNEL = "ch"

# What a type's copy carries, where the defaults do not show it: the image as an upload (Bluesky
# and Matrix with `embed: image`; Mastodon's default), a thread (`thread: true`, parts small
# enough that each paragraph of the thread life is one).
IMAGE_SETTINGS: dict[str, dict[str, Any]] = {
    "mastodon": {},
    "bluesky": {"embed": "image"},
    "matrix": {"embed": "image"},
}
THREAD_SETTINGS: dict[str, dict[str, Any]] = {
    "mastodon": {"thread": True, "max_characters": 300, "max_parts": 4},
    "bluesky": {"thread": True, "max_parts": 4},
    "matrix": {"thread": True, "max_parts": 4},
}
# Why a type has no image events, where it has none.
NO_IMAGE = {
    "forem": "DEV takes the cover by its URL: nothing is uploaded",
    "standard": "a standard.site document carries no image",
    "weibo": "the Weibo channel sends text only",
    "indexnow": "a ping carries no image",
    "websub": "a ping carries no image",
}
# Why a type keeps no orphan to count, where it keeps none.
NO_ORPHANS = {
    "bluesky": "the PDS deletes a blob no record uses",
    "standard": "the PDS deletes a blob no record uses",
    "forem": "DEV keeps no upload of ours",
    "weibo": "nothing is uploaded",
}
AT_LEAST_ONCE = "a ping is harmless to repeat and is never read back (at least once)"
A_SEND = "a first send is proved by the answer that names its copy; a read comes before any resend"


def paragraphs(type_name: str) -> list[str]:
    """Four paragraphs, each one part of a thread on this type (Matrix holds 2,000 characters a part)."""
    if type_name == "matrix":
        return [f"Paragraph {n} of a long post, at some length. " * 30 for n in ("one", "two", "three", "four")]
    return [p.strip() for p in PARAGRAPHS]


@dataclass
class Expect:
    """What the service must show after an event."""

    live: bool = True
    text: str = ""  # a piece of text the copy shows
    alt: str | None = None  # the image's alt text; None: no image
    paragraphs: tuple[str, ...] = ()  # a thread: each paragraph the thread must show
    dropped: tuple[str, ...] = ()  # ...and those it must no longer show
    pinged: str = ""  # an at-least-once type: the URL pinged by this event
    reads: bool = True  # the run's result should say a read proved it


@dataclass
class Row:
    channel: str
    event: str
    cells: dict[str, str]


@dataclass
class Target:
    """What a life runs against: the settings of a type's channel there, and a reader of what it holds."""

    name: str
    settings: Callable[[str], dict[str, Any]]
    holdings: Callable[[str], Holdings]
    clock: Any
    types: tuple[str, ...]
    serve_site: Callable[[Path], None] = lambda root: None  # where its services fetch the built site from


@dataclass
class Life:
    target: Target
    type_name: str
    folder: Path
    public: PublicSite
    extra: dict[str, Any]
    post: Any = None
    kept: Any = None
    image: bytes = b""
    urls: set[str] = field(default_factory=set)  # every URL the post had
    rows: list[Row] = field(default_factory=list)
    former_id: str | None = None
    pings_before: int = 0  # an at-least-once type's pings before this event
    fetches_before: int = 0  # a feed hub's fetches before this event

    @property
    def client(self) -> Any:
        return TYPES[self.type_name].client_class()

    def run(self, posts: list[Any]) -> Any:
        site = self.folder / "site"
        (site / "img").mkdir(parents=True, exist_ok=True)
        (site / "img" / "cover.png").write_bytes(self.image)
        (site / "feed_rss_created.xml").write_text(feed(posts), encoding="utf-8")  # the build's feed
        self.target.serve_site(site)
        settings = {**self.target.settings(self.type_name), **self.extra}
        options = parse_options(
            {CHANNEL: settings},
            ledger_path=self.folder / "ledger.yml",
            site=Site(SITE, "Example", str(site)),
            sandbox=False,
            sending=True,
        )
        return send(options, posts, ListReporter(), clock=self.target.clock)

    def record(self) -> Record | None:
        return Ledger.read(self.folder / "ledger.yml").record(self.post.key, CHANNEL)

    def event(self, name: str, posts: list[Any], expect: Expect, na: dict[str, str] | None = None) -> None:
        """One run, then each outcome read from the service."""
        self.target.clock.now += 120  # a later run, as a later build would be
        report = self.run(posts)
        result = next((r for r in report.results if r.post_key == self.post.key), None)
        self.rows.append(Row(self.type_name, name, judge(self, expect, result, na or {})))


def feed(posts: list[Any]) -> str:
    """The built site's RSS feed: its posts, and no hub (the hub's fetch is what is judged)."""
    items = "".join(f"<item><title>{p.title}</title><link>{p.url}</link></item>" for p in posts)
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>Example</title>{items}</channel></rss>'


def judge(life: Life, expect: Expect, result: Any, na: dict[str, str]) -> dict[str, str]:
    held = life.target.holdings(life.type_name)
    record = life.record()
    checks = (
        ("0 duplicates", _duplicates),
        ("0 losses", _losses),
        ("0 orphans", _orphans),
        ("proved by a read", _proved),
    )
    cells = {}
    for outcome, check in checks:
        if outcome in na:
            cells[outcome] = f"n/a: {na[outcome]}"
            continue
        problem = check(life, expect, held, record, result)
        cells[outcome] = problem if problem.startswith("n/a") else (f"✗ {problem}" if problem else OK)
    return cells


def _duplicates(life: Life, expect: Expect, held: Holdings, record: Record | None, result: Any) -> str:
    if life.client.default_delivery != "at_most_once":
        return f"n/a: {AT_LEAST_ONCE}"
    copies = held.live(life.urls)
    if len(copies) > 1:
        return f"{len(copies)} copies of the post: {', '.join(c.id for c in copies)}"
    parents = [h.reply_to for h in held.held if h.live and h.reply_to]
    twice = {p for p in parents if parents.count(p) > 1}
    return f"two parts in reply to {sorted(twice)}" if twice else ""


def _losses(life: Life, expect: Expect, held: Holdings, record: Record | None, result: Any) -> str:
    if expect.pinged and held.fetched is not None:  # a feed's hub learns the change from the feed it fetches
        later = held.fetched[life.fetches_before :]
        if not later:
            return "the hub was not pinged"
        if (expect.pinged in later[-1]) != expect.live:
            return f"the feed the hub fetched {'lacks' if expect.live else 'still lists'} {expect.pinged}"
        return ""
    if expect.pinged:
        return "" if expect.pinged in held.pings[life.pings_before :] else f"{expect.pinged} not pinged"
    copies = held.live(life.urls)
    if not expect.live:
        if copies:
            return f"the copy {copies[0].id} is still shown"
        return "" if record is not None and record.state == State.DELETED else f"the ledger says {_state(record)}"
    if not copies:
        return "no copy is shown"
    (copy,) = copies[:1]
    wrong = _shows(life, expect, copy, held)
    if wrong:
        return wrong
    if record is None or record.state != State.DONE or record.review:
        return f"the ledger says {_state(record)}"
    if record.remote_id != copy.id:
        return f"the ledger names {record.remote_id}, the service shows {copy.id}"
    return ""


def _shows(life: Life, expect: Expect, copy: Held, held: Holdings) -> str:
    """What the copy shows against what the post says now."""
    if copy.announces != life.post.url and life.client.edits_in_place:
        return f"the copy links {copy.announces}, not {life.post.url}"
    if expect.text and expect.text not in copy.text:
        return f"the copy does not show {expect.text!r}"
    if expect.alt is None and copy.images:
        return "the copy still shows an image"
    if expect.alt is not None and not any(expect.alt in alt for alt in copy.images) and expect.alt not in copy.text:
        return f"the copy does not show the image with alt text {expect.alt!r}" + (
            f" (it shows {list(copy.images)})" if copy.images else " (no image)"
        )
    if expect.paragraphs:
        shown = "\n".join(part.text for part in [copy, *_chain(copy, held)])
        missing = [p[:40] for p in expect.paragraphs if p[:40] not in shown]
        kept = [p[:40] for p in expect.dropped if p[:40] in shown]
        if missing or kept:
            return f"the thread does not show {missing}" if missing else f"the thread still shows {kept}"
    return ""


def _chain(first: Held, held: Holdings) -> list[Held]:
    """The thread's later parts, each the reply to the one before."""
    found: list[Held] = []
    current = first
    while True:
        nxt = [h for h in held.held if h.live and h.reply_to == current.id]
        if not nxt:
            return found
        current = nxt[0]
        found.append(current)


def _orphans(life: Life, expect: Expect, held: Holdings, record: Record | None, result: Any) -> str:
    if life.type_name in NO_ORPHANS:
        return f"n/a: {NO_ORPHANS[life.type_name]}"
    if life.client.default_delivery != "at_most_once":
        return f"n/a: {AT_LEAST_ONCE}"
    problems = []
    if held.unnamed_uploads:
        problems.append(f"{len(held.unnamed_uploads)} upload(s) no copy names: {', '.join(held.unnamed_uploads)}")
    ours = {h.id for h in held.held if h.announces in life.urls}
    listed = {p.remote_id for p in record.parts} if record is not None and record.state == State.DONE else set()
    ours |= listed
    loose = [h.id for h in _replies(held, ours) if h.id not in listed]
    if loose:
        problems.append(f"thread part(s) no record lists: {', '.join(loose)}")
    return "; ".join(problems)


def _replies(held: Holdings, roots: set[str]) -> list[Held]:
    found, frontier = [], set(roots)
    while frontier:
        layer = held.replies_to(frontier)
        found += layer
        frontier = {h.id for h in layer} - roots
        roots |= frontier
    return found


def _proved(life: Life, expect: Expect, held: Holdings, record: Record | None, result: Any) -> str:
    if life.client.default_delivery != "at_most_once":
        return f"n/a: {AT_LEAST_ONCE}"
    if result is None:
        return "the run changed nothing"
    if "read" in result.detail and ("proved" in result.detail or "confirmed" in result.detail):
        return ""
    return f"the run's result says {result.detail!r}"


def _state(record: Record | None) -> str:
    if record is None:
        return "nothing"
    return f"{record.state.value}" + (f" (review: {record.review})" if record.review else "")


# ---------------------------------------------------------------- the events


def text_na(life: Life) -> str | None:
    return None if life.client.edits_in_place else f"{life.type_name} cannot edit a post in place"


def image_na(life: Life) -> str | None:
    return NO_IMAGE.get(life.type_name) or text_na(life)


def delete_na(life: Life) -> str | None:
    return None if life.client.deletes else f"{life.type_name} cannot delete a post"


EVENTS = (
    "create",
    "edit text",
    "edit image",
    "image swap",
    "image remove",
    "image add",
    "move",
    "delete",
    "restore",
    "thread grow",
    "thread edit",
    "thread shrink",
)


def post_life(life: Life) -> None:
    """The first life: every event of a post that is not a thread."""
    t = life.type_name
    images = t in IMAGE_SETTINGS
    life.extra = {**IMAGE_SETTINGS.get(t, {}), **({"removals": "delete"} if life.client.deletes else {})}
    life.kept = make_post(2, key="blog/kept/", url=SITE + "blog/kept/")
    life.image = png(120, 80)
    picture = {"image": SITE + "img/cover.png", "image_alt": "A harbour at dawn"} if images else {}
    life.post = make_post(1, key="blog/life/", url=SITE + "blog/life/", src="blog/life.md", **picture)
    life.urls = {life.post.url}
    pinging = life.client.default_delivery != "at_most_once"
    create_na = {"proved by a read": A_SEND}

    def step(name: str, na_reason: str | None, change: Callable[[], Expect], na: dict[str, str] | None = None) -> None:
        if na_reason:
            life.rows.append(Row(t, name, {o: f"n/a: {na_reason}" for o in OUTCOMES}))
            return
        expect = change()
        if pinging:
            expect.pinged = life.post.url
        holdings = life.target.holdings(t)
        life.pings_before, life.fetches_before = len(holdings.pings), len(holdings.fetched or [])
        life.event(name, [life.kept, life.post] if expect.live else [life.kept], expect, na)

    def alt() -> str | None:
        return life.post.image_alt if life.post.image else None

    def edit(description: str, **changes: Any) -> Expect:
        life.post = replace(life.post, description=description, **changes)
        return Expect(text=description, alt=alt())

    step("create", None, lambda: Expect(text=life.post.title, alt=alt()), create_na)
    step("edit text", text_na(life), lambda: edit("A corrected summary."))
    step("edit image", image_na(life), lambda: edit("Its image's alt text corrected.", image_alt="A harbour at dusk"))

    def swap() -> Expect:
        life.image = png(160, 90)
        return edit("Another picture.", image_alt="Two boats")

    step("image swap", image_na(life), swap)
    step("image remove", image_na(life), lambda: edit("No picture now.", image=None, image_alt=None))
    step(
        "image add", image_na(life), lambda: edit("A picture again.", image=SITE + "img/cover.png", image_alt="A pier")
    )

    def move() -> Expect:
        life.post = replace(life.post, key="blog/life-moved/", url=SITE + "blog/life-moved/")
        life.urls.add(life.post.url)
        life.public.live.add("/blog/life-moved/")
        # A type that cannot edit keeps the copy as sent, which says the title.
        return Expect(text=life.post.description if life.client.edits_in_place else life.post.title, alt=alt())

    step("move", None, move, {"proved by a read": A_SEND} if not life.client.edits_in_place else None)
    if not life.client.edits_in_place:  # the copy keeps the URL it was sent with (it redirects)
        life.urls = {SITE + "blog/life/", life.post.url}

    def delete() -> Expect:
        life.public.live.discard("/blog/life-moved/")
        before = life.record()
        life.former_id = before.remote_id if before else None
        return Expect(live=False)

    step("delete", delete_na(life), delete)

    def restore() -> Expect:
        announce_again(life)
        life.public.live.add("/blog/life-moved/")
        return Expect(text=life.post.description, alt=alt())

    step("restore", delete_na(life), restore, create_na)


def announce_again(life: Life) -> None:
    """`mkdocs-syndicate resolve POST CHANNEL --retry` on the deleted pair, as the command writes it."""
    with Ledger.open_for_writing(life.folder / "ledger.yml") as ledger:
        current = ledger.record(life.post.key, CHANNEL)
        assert current is not None
        again = resolved(f"({life.post.key}, {CHANNEL})", current, Decision("retry"), "2026-12-07T06:00:00Z", "by hand")
        if isinstance(again, str):
            return  # refused: the restore's cells say what the service shows then
        entry = ledger.posts[life.post.key]
        ledger.apply([Transition(PostRef(life.post.key, entry.url, entry.title), CHANNEL, again)], by_hand=True)


def thread_life(life: Life) -> None:
    """The second life: a long post sent as a thread of three parts, grown to four, one part
    corrected, shrunk to two."""
    t = life.type_name
    if t not in THREAD_SETTINGS:
        why = "a ping has no thread" if t in ("indexnow", "websub") else f"{t} posts no threads"
        for name in ("thread grow", "thread edit", "thread shrink"):
            life.rows.append(Row(t, name, {o: f"n/a: {why}" for o in OUTCOMES}))
        return
    life.extra = dict(THREAD_SETTINGS[t])
    texts = paragraphs(t)
    life.post = make_post(3, key="blog/thread/", url=SITE + "blog/thread/", description="\n\n".join(texts[:3]))
    life.urls = {life.post.url}
    life.image = png(8, 8)
    life.run([life.post])

    def change(name: str, kept: list[str], dropped: tuple[str, ...] = ()) -> None:
        life.post = replace(life.post, description="\n\n".join(kept))
        life.event(name, [life.post], Expect(paragraphs=tuple(kept), dropped=tuple(dropped)))

    change("thread grow", texts[:4])
    corrected = [texts[0], "Corrected: " + texts[1], *texts[2:4]]
    change("thread edit", corrected)
    change("thread shrink", corrected[:2], tuple(texts[2:4]))


@contextlib.contextmanager
def public_site() -> Iterator[PublicSite]:
    """The site as the web sees it, asked through the HTTP proxy: a removal is proved by its 404."""
    site = PublicSite({"/blog/life/", "/blog/kept/", "/blog/thread/"})
    saved = {name: os.environ.get(name) for name in site.env}
    os.environ.update(site.env)
    try:
        yield site
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        site.close()


def lives(target: Target, folder: Path) -> list[Row]:
    """Both lives of every type the target serves, in the table's order."""
    rows: list[Row] = []
    with public_site() as public:
        for type_name in target.types:
            for name, drive in (("post", post_life), ("thread", thread_life)):
                life = Life(target, type_name, folder / target.name / type_name / name, public, {})
                drive(life)
                rows += life.rows
    order = {event: n for n, event in enumerate(EVENTS)}
    return sorted(rows, key=lambda r: (target.types.index(r.channel), order[r.event]))


def emulator_target(sandbox: Any, clock: Any) -> Target:
    """The sandbox's emulators, on the sandbox's clock."""
    from conformance.service import from_emulator

    sandbox.now = clock.time

    def settings(type_name: str) -> dict[str, Any]:
        # WebSub is not in the post-counting suites (channel_specs.NOT_POST_COUNTED); its life is here.
        return (EVERY_TYPE.get(type_name) or spec_of(TYPES[type_name])).raw(sandbox)

    def serve_site(root: Path) -> None:
        sandbox.key_file_root = root  # the hub fetches the feed from the built site, as IndexNow's key

    return Target("emulators", settings, lambda t: from_emulator(sandbox, t), clock, BUILT_IN, serve_site)


BUILT_IN = ("mastodon", "bluesky", "matrix", "forem", "standard", "weibo", "indexnow", "websub")
