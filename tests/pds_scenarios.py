"""Raw XRPC scenarios run the same way against the reference PDS and against the sandbox's PDS
(tests/test_realserver_bluesky.py compares the two; tests/test_emulators_as_servers.py holds the
emulator to what the PDS answered). Each returns what the server said, step by step, as
(status, error name, message) where the message is the server's own words."""

from __future__ import annotations

from typing import Any

import httpx

from mkdocs_syndicate.sandbox import media_files

POST = "app.bsky.feed.post"
CREATED = "2026-12-01T08:00:00.000Z"
Said = tuple[int, str, str]


class Account:
    """A logged-in account on one server: its PDS (the DID document's), DID and session."""

    def __init__(self, entryway: str, handle: str, password: str) -> None:
        session = httpx.post(
            f"{entryway}/xrpc/com.atproto.server.createSession", json={"identifier": handle, "password": password}
        ).json()
        services = session.get("didDoc", {}).get("service", [])
        self.pds = next((s["serviceEndpoint"] for s in services if s["id"].endswith("atproto_pds")), entryway)
        self.did: str = session["did"]
        self.headers = {"Authorization": f"Bearer {session['accessJwt']}"}

    def call(self, method: str, **body: Any) -> httpx.Response:
        return httpx.post(f"{self.pds}/xrpc/com.atproto.repo.{method}", headers=self.headers, json=body)

    def put(self, rkey: str, record: dict[str, Any], **extra: Any) -> httpx.Response:
        return self.call("putRecord", repo=self.did, collection=POST, rkey=rkey, record=record, **extra)

    def delete(self, rkey: str) -> httpx.Response:
        return self.call("deleteRecord", repo=self.did, collection=POST, rkey=rkey)

    def get(self, rkey: str) -> httpx.Response:
        params = {"repo": self.did, "collection": POST, "rkey": rkey}
        return httpx.get(f"{self.pds}/xrpc/com.atproto.repo.getRecord", params=params)

    def upload(self, data: bytes) -> dict[str, Any]:
        answer = httpx.post(
            f"{self.pds}/xrpc/com.atproto.repo.uploadBlob",
            headers={**self.headers, "Content-Type": "image/png"},
            content=data,
        )
        blob: dict[str, Any] = answer.json()["blob"]
        return blob


def said(answer: httpx.Response, *, words: bool = True) -> Said:
    body = answer.json() if answer.content.strip() else {}
    return answer.status_code, body.get("error", ""), body.get("message", "") if words else ""


def post(text: str, *blobs: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = {"$type": POST, "text": text, "createdAt": CREATED}
    if blobs:
        images = [{"image": blob, "alt": "a grey box"} for blob in blobs]
        record["embed"] = {"$type": "app.bsky.embed.images", "images": images}
    return record


def swap_on_a_deleted_record(account: Account, rkey: str) -> list[Said]:
    """A record written, deleted, then put again with `swapRecord` its old CID; then read."""
    first = account.put(rkey, post("first"))
    steps = [said(first), said(account.delete(rkey), words=False)]
    steps.append(said(account.put(rkey, post("brought back?"), swapRecord=first.json()["cid"])))
    read = said(account.get(rkey))
    return [*steps, (read[0], read[1], "")]


def blobs_their_last_record_stopped_naming(account: Account, rkeys: list[str], size: int) -> list[Said]:
    """Image A on a post that is then deleted, and a new post naming A; image B on a post that
    an edit moves to image C, and a new post naming B; image D on two posts, one deleted, and a
    new post naming D. `size` makes the images this scenario's own (a blob is its bytes)."""
    a, b, c, d = (account.upload(media_files.png(size + n, 3)) for n in range(4))
    steps = [said(account.put(rkeys[0], post("a", a)), words=False)]
    steps.append(said(account.delete(rkeys[0]), words=False))
    steps.append(said(account.put(rkeys[1], post("a again", a))))
    with_b = account.put(rkeys[2], post("b", b))
    steps.append(said(account.put(rkeys[2], post("c", c), swapRecord=with_b.json()["cid"]), words=False))
    steps.append(said(account.put(rkeys[3], post("b again", b))))
    steps += [said(account.put(k, post("d", d)), words=False) for k in rkeys[4:6]]
    steps.append(said(account.delete(rkeys[4]), words=False))
    steps.append(said(account.put(rkeys[6], post("d again", d)), words=False))
    return [
        (status, error, message.replace(a["ref"]["$link"], "A").replace(b["ref"]["$link"], "B"))
        for status, error, message in steps
    ]


def refs_of_a_permanent_and_a_temporary_blob(account: Account, rkeys: list[str], size: int) -> list[Said]:
    """A blob made permanent by one post, then named by another with another type and size; a
    temporary one named so."""
    kept, fresh = account.upload(media_files.png(size, 5)), account.upload(media_files.png(size + 1, 5))
    steps = [said(account.put(rkeys[0], post("kept", kept)), words=False)]
    wrong = {**kept, "mimeType": "image/jpeg", "size": kept["size"] + 1}
    steps.append(said(account.put(rkeys[1], post("kept, described otherwise", wrong)), words=False))
    steps.append(said(account.put(rkeys[2], post("fresh, described otherwise", {**fresh, "mimeType": "image/jpeg"}))))
    return steps


def list_records_limits(account: Account, collection: str = POST) -> list[Said]:
    """listRecords with limits in and out of the lexicon's 1 to 100, and ones that are no integer."""
    steps = []
    for limit in ("0", "101", "-5", "abc", "1", "100", ""):
        params = {"repo": account.did, "collection": collection, "limit": limit}
        answer = httpx.get(f"{account.pds}/xrpc/com.atproto.repo.listRecords", params=params)
        steps.append(said(answer))
    return steps
