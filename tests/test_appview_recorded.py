"""The sandbox's AppView emulator against an answer recorded from Bluesky's real AppView
(tests/data/appview-thread.json: tests/test_realserver_appview.py run with
SYNDICATE_RECORD_APPVIEW set, docs/development.md), for a run without the realserver tier: the
same thread, the same shape, field by field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from appview_thread import announced, differences, emulated, shape

RECORDED = Path(__file__).parent / "data" / "appview-thread.json"


@pytest.mark.http
def test_the_emulator_answers_getpostthread_as_the_recorded_appview(sandbox, tmp_path):
    answer, names = emulated(sandbox, announced(sandbox, tmp_path / "sent"))
    assert differences(shape(answer, names), json.loads(RECORDED.read_text())) == []
