"""standard.site emulator: the sandbox's PDS (sandbox/bluesky.py) for the `standard` channel type."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from mkdocs_syndicate.emulator_api import Request, Response
from mkdocs_syndicate.sandbox.atproto_account import APP_PASSWORD, DID, HANDLE
from mkdocs_syndicate.sandbox.bluesky import COLLECTION, BlueskyEmulator


class StandardEmulator(BlueskyEmulator):
    """The same PDS for the `standard` channel type (standard.site's `site.standard.publication`
    and `site.standard.document` records, which a PDS stores like any collection it has no
    lexicon for). Its own instance, under `/standard`, because the shared suites and the sandbox
    give each channel type its emulator and state; a `site.standard.document`'s `bskyPostRef`
    names a post of the Bluesky emulator's, which a getRecord here reads as the real PDS reads a
    record it does not hold: from the network (the AppView)."""

    name = "standard"
    also_at: tuple[str, ...] = ("standard-pds",)
    public_pages: tuple[str, ...] = ()
    creating = ("POST /xrpc/com.atproto.repo.putRecord",)  # the documents (the publication: createRecord, once)
    collection = "site.standard.document"

    @classmethod
    def client_options(cls, url: str, public_base: str) -> Mapping[str, object]:
        return {"service": f"{url}/standard", "handle": HANDLE, "app_password": APP_PASSWORD, "keep_session": False}

    def received(self, state: dict[str, Any], public_base: str) -> list[dict[str, Any]]:
        documents = state.get("collections", {}).get(self.collection, {})
        publications = state.get("collections", {}).get("site.standard.publication", {})
        urls = {f"at://{DID}/site.standard.publication/{k}": p["value"].get("url", "") for k, p in publications.items()}

        def announces(value: dict[str, Any]) -> str:
            site = str(value.get("site", ""))
            return str(urls.get(site, site)).rstrip("/") + str(value.get("path", ""))

        return [
            {
                "id": rkey,
                "remote_id": f"at://{DID}/{self.collection}/{rkey}",
                "text": str(r["value"].get("title", "")),
                "announces": announces(r["value"]),
                "at": r.get("at"),
                "link": None,
            }
            for rkey, r in sorted(documents.items(), key=lambda item: item[1].get("at") or 0)
        ]

    def _standard_get(self, request: Request) -> Response:
        answer = self._get_record(request)
        bluesky = self.server.emulators.get("bluesky")
        if answer.status == 400 and request.arg("collection") == COLLECTION and isinstance(bluesky, BlueskyEmulator):
            return bluesky._get_record(request)  # not held here: read from the network
        return answer


StandardEmulator._OPEN = {
    **BlueskyEmulator._OPEN,
    ("GET", "com.atproto.repo.getRecord"): lambda emulator, request: StandardEmulator._standard_get(
        cast(StandardEmulator, emulator), request
    ),
}
