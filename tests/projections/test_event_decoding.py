"""Catch-up's faster decoding and feed encoding give what eventsourcing's mapper and `json.dumps` give."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from decimal import Decimal
from uuid import uuid4

import pytest

from projections.event_decoding import EventDecoder
from projections.feed import feed_data, feed_json
from projections.runner import decode
from tests.projections.test_page_batching import mixed_history


def test_the_decoder_gives_the_mappers_events(stack, round_result, owner):
    last = mixed_history(stack, round_result, owner)
    notifications = stack.verity.notification_log.select(start=1, limit=last)
    decoder = EventDecoder(stack.verity.mapper)
    assert [decoder(n) for n in notifications] == [decode(stack.verity, n) for n in notifications]


def test_values_deeper_than_the_top_level_and_nan_decode_as_the_mapper_decodes_them(stack):
    [notification] = stack.verity.notification_log.select(start=1, limit=1)
    decoder = EventDecoder(stack.verity.mapper)
    typed = '{"_type_":"uuid_hex","_data_":"' + uuid4().hex + '"}'
    deeper = '{"deep":[{"id":' + typed + '},{"_type_":"decimal_str","_data_":"1.5"}]}'
    for extra in (deeper, '{"nan":NaN,"big":123456789012345678901234567890}'):
        state = notification.state[:-1] + b"," + extra[1:].encode()
        changed = type(notification)(
            id=notification.id, originator_id=notification.originator_id,
            originator_version=notification.originator_version, topic=notification.topic, state=state,
        )
        assert decoder(changed) == decode(stack.verity, changed)
    deep = decoder(changed).data
    assert deep["big"] == 123456789012345678901234567890 and math.isnan(deep["nan"])


@pytest.mark.parametrize(
    "data",
    [
        {"a": 1, "b": [1, 2.5, None, True, "é"], "c": {"d": uuid4(), "e": datetime.now(UTC), "f": (1, 2)}},
        {"location": "/data/storage/runs/x/adapter", "x": 1},
        {"adapter": {"location": "s3://bucket/runs/x", "sha256": "00"}},
        {"deep": [[{"location": "/a/b"}]]},
        {"keys": {True: 1, None: 2, 1.5: 4, float("nan"): 5, uuid4(): 6}},
        {"numbers": [float("inf"), float("nan"), 10**30]},
        {"text": 'he said "location": no'},
    ],
)
def test_the_feeds_json_is_json_dumps_of_the_walked_data(data):
    assert feed_json(data) == json.dumps(feed_data(data))


@pytest.mark.parametrize(
    "data",
    [
        {"a": 1, "b": [1, 2.5e-05, 1e22, None, True, "é“”", 10**30], "c": {"d": uuid4(), "f": (1, 2)}, "n": {}},
        {"location": "/data/storage/runs/x/adapter", "x": 1},
        {"adapter": {"location": "s3://bucket/runs/x", "sha256": "00"}},
        {"text": 'he said "location": no'},
    ],
)
def test_json_native_data_is_written_faster_as_the_same_values(data):
    """An event the decoder read as json_native is written by msgspec: other text, the same JSON values."""
    assert json.loads(feed_json(data, json_native=True)) == json.loads(json.dumps(feed_data(data)))


def test_only_events_without_values_written_differently_are_json_native(stack, round_result, owner):
    last = mixed_history(stack, round_result, owner)
    decoder = EventDecoder(stack.verity.mapper)
    events = [decoder(n) for n in stack.verity.notification_log.select(start=1, limit=last)]
    rounds = [event for event in events if event.type == "Run.RoundScored"]
    assert rounds and all(event.json_native for event in rounds)  # their ids and timestamp: written alike
    # a run's settings: msgspec would write the dataclass field by field, the feed writes the API body
    settings = [event for event in events if "settings" in event.data]
    assert settings and not any(event.json_native for event in settings)
    [notification] = stack.verity.notification_log.select(start=1, limit=1)
    assert decoder(notification).json_native
    for extra in ('{"when":{"_type_":"datetime_iso","_data_":"2026-01-01T00:00:00+00:00"}}',
                  '{"deep":[{"_type_":"decimal_str","_data_":"1.5"}]}', '{"nan":NaN}'):
        state = notification.state[:-1] + b"," + extra[1:].encode()
        changed = type(notification)(
            id=notification.id, originator_id=notification.originator_id,
            originator_version=notification.originator_version, topic=notification.topic, state=state,
        )
        assert not decoder(changed).json_native, extra


def test_the_feed_refuses_what_it_refused():
    with pytest.raises(TypeError, match="Decimal"):
        feed_json({"amount": Decimal("1.5")})
