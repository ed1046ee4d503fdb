"""The sandbox's injected faults and the quirks it knows (their meaning: sandbox/server.py's
docstring): which fault a request meets, and what it does in place of the service's answer or
after the service has done its work."""

from __future__ import annotations

import json
import os
import signal
import time
from typing import Any

from mkdocs_syndicate.emulator_api import Emulator, Request, Response

QUIRKS = {"commit_delay", "ignore_idempotency_key", "replay_500", "clock_offset", "max_characters", "uncapped_context"}
# The media emulators' (sandbox/mastodon_media.py, sandbox/atproto_blobs.py, sandbox/matrix_media.py).
QUIRKS |= {"media_processing_polls", "media_processing_seconds", "media_always_async", "media_retention"}
QUIRKS |= {"media_processing_fails", "rc_message", "rack_attack"}
QUIRKS |= {"blob_ttl", "image_blob_max_size", "blob_upload_limit", "max_upload_size"}
# The faults that keep a request from the service (the others let it do its work first).
KEPT_FROM_SERVICE = ("status", "drop_before", "kill_before")
FAULT_ACTIONS: tuple[str, ...] = (*KEPT_FROM_SERVICE, "drop_after", "kill_after", "delay_after", "status_after")
# The service's own answer, its work then forgotten: a 200 for an edit or a delete never made; and
# the service's user, by hand, just before the request (an article unpublished, a status deleted).
FAULT_ACTIONS += ("undone_after", "by_hand_before")


def checked_fault(emulator: Emulator, fault: dict[str, Any]) -> None:
    """A fault the sandbox can inject, or ValueError: a misspelt one would leave requests unharmed."""
    if fault.get("action") not in FAULT_ACTIONS:
        raise ValueError(f"unknown fault action {fault.get('action')!r} (known: {', '.join(FAULT_ACTIONS)})")
    if fault["action"] == "by_hand_before" and fault.get("hand") not in emulator.hands:
        known = ", ".join(emulator.hands) or "none"
        raise ValueError(f"{emulator.name} knows no {fault.get('hand')!r} by hand (known: {known})")


def take_fault(
    faults: list[dict[str, Any]], channel: str, line: str, creating: tuple[str, ...]
) -> dict[str, Any] | None:
    """The first fault of `channel` that the request `line` ("METHOD path") meets, counted (and
    removed from `faults` when used up); a fault without `match` meets the `creating` requests."""
    for fault in faults:
        if fault["channel"] != channel:
            continue
        match = fault.get("match")
        if match is not None and match not in line:
            continue
        if match is None and not any(line.startswith(c) for c in creating):
            continue
        if fault.get("skip", 0) > 0:  # the first `skip` such requests pass unharmed
            fault["skip"] -= 1
            continue
        fault["times"] -= 1
        if fault["times"] <= 0:
            faults.remove(fault)
        return fault
    return None


def fault_before(emulator: Emulator, action: str, fault: dict[str, Any]) -> Response | None:
    """A fault in place of the service: an injected answer, or no answer at all."""
    if action == "status":
        status = int(fault["status"])
        if status == 429 and "headers" not in fault:
            return emulator.rate_limited(fault)
        return Response(status, fault.get("body", {"error": f"injected {status}"}), fault.get("headers", {}))
    if action == "kill_before":
        os.kill(int(fault["pid"]), signal.SIGKILL)
    return None  # drop_before, kill_before


def served(emulator: Emulator, request: Request, fault: dict[str, Any]) -> Response:
    """The service's answer to `request`: after the user's `hand` under `by_hand_before`; under
    `undone_after`, with everything the request did to the emulator's state put back as it was
    (its answer says done, a read says otherwise)."""
    action = fault.get("action")
    if action == "by_hand_before":
        emulator.hands[fault["hand"]](emulator, request)
    if action != "undone_after":
        return emulator.handle(request)
    mine = emulator.state
    kept = json.loads(json.dumps(mine))
    response = emulator.handle(request)
    mine.clear()
    mine.update(kept)
    return response


def fault_after(action: str, fault: dict[str, Any], response: Response) -> Response | None:
    """A fault once the service has done its work: its answer lost, late or replaced."""
    if action == "kill_after":
        os.kill(int(fault["pid"]), signal.SIGKILL)
    if action in ("undone_after", "by_hand_before"):  # the service's own answer
        return response
    if action == "delay_after":
        time.sleep(float(fault.get("seconds", 5)))
        return response
    if action == "status_after":  # without a status: the service's own, with another body
        return Response(int(fault.get("status", response.status)), fault.get("body"), fault.get("headers", {}))
    return None  # drop_after, kill_after
