"""The log's stored events as the projections read them (`Event`), decoded faster than eventsourcing's mapper.

Catch-up spends most of its decoding in the standard library's JSON scanner (eventsourcing's JSONTranscoder calls
it with an object hook on every JSON object). msgspec's decoder (already a dependency, through litestar) reads the
same bytes three times faster, and the transcodings (`{"_type_": name, "_data_": ...}` objects: UUIDs, datetimes,
a run's settings) are revived afterwards by the transcoder's own hook, bottom-up as the JSON scanner applies it, so
each event decodes to the same values as `mapper.to_domain_event` gives. The stored format is untouched: this only
reads. Whatever this path does not cover (a cipher, compression, a class version to upcast, JSON that msgspec
refuses such as NaN) goes through the mapper as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.persistence import JSONTranscoder, Mapper, Notification, find_id_convertor
from eventsourcing.utils import resolve_topic

from projections.base import Event
from projections.log_pages import LogEntry

# What the mapper adds to or keeps in an event's state that is not its data.
_SKIPPED = frozenset({"originator_id", "originator_version", "timestamp", "originator_topic"})
_TYPE_KEY = "_type_"
_CONTAINERS = (dict, list)
# Transcoded values that msgspec writes as json.dumps does (projections/feed.py): ids. Not a run's settings (a
# dataclass, which msgspec writes field by field, where the feed writes the API body), nor a datetime: the event's one
# datetime is its timestamp, which is not in its data.
_TYPED = b'"_type_":'
_WRITTEN_ALIKE = b'"_type_":"uuid_hex"'
_TIMESTAMP = b'"_type_":"datetime_iso"'
KEYS_KEPT = 100_000  # aggregates whose ids' text a decoder keeps


class EventDecoder:
    """Decodes notifications of one application's log (its mapper) into `Event`s."""

    def __init__(self, mapper: Mapper[Any]) -> None:
        self.mapper = mapper
        transcoder = mapper.transcoder
        # A transcoder of another kind, a cipher or compression: the mapper decodes every event, as before.
        self._fast = type(transcoder) is JSONTranscoder and not mapper.cipher and not mapper.compressor
        self._decode_obj: Callable[[dict[str, Any]], Any] = getattr(transcoder, "_decode_obj", lambda d: d)
        self._json = msgspec.json.Decoder()
        # topic -> the event's class and its name, or None where its class version asks for upcasting (the mapper
        # does that)
        self._classes: dict[str, tuple[type, str] | None] = {}
        self._keys: dict[int, str] = {}  # an aggregate's id (as a number) -> its text, made once per aggregate
        # (topic, the stored id's type) -> eventsourcing's convertor of the id, found once
        self._convertors: dict[tuple[str, type], Callable[[Any], Any]] = {}

    def __call__(self, notification: Notification | LogEntry) -> Event:
        decoded = self._state(notification) if self._fast else None
        named = self._classes.get(notification.topic)
        if decoded is None or named is None:
            return from_domain_event(notification.id, self.mapper.to_domain_event(notification), notification.state)
        state, typed = decoded
        originator_id = notification.originator_id
        convert = self._convertors.get((notification.topic, type(originator_id)))
        if convert is None:
            convert = find_id_convertor(named[0], type(originator_id))
            self._convertors[(notification.topic, type(originator_id))] = convert
        aggregate_id = convert(originator_id)
        timestamp = state.pop("timestamp")
        if not _SKIPPED.isdisjoint(state):  # the decoded state is this event's own: its data once these are out
            for key in _SKIPPED.intersection(state):
                del state[key]
        return Event(
            position=notification.id,
            type=named[1],
            aggregate_id=aggregate_id,
            version=notification.originator_version,
            time=timestamp if type(timestamp) is str else timestamp.isoformat(),
            data=state,
            aggregate_key=self._key(aggregate_id),
            json_native=json_native(notification.state, typed, finite=True),  # msgspec read no NaN or infinity
        )

    def _key(self, aggregate_id: Any) -> str:
        """The id's text: a run's thousand rounds share one (UUID's own __str__ costs a microsecond an event)."""
        if type(aggregate_id) is not UUID:
            return str(aggregate_id)
        number = aggregate_id.int
        key = self._keys.get(number)
        if key is None:
            if len(self._keys) >= KEYS_KEPT:
                self._keys.clear()
            key = self._keys[number] = str(aggregate_id)
        return key

    def _state(self, notification: Notification | LogEntry) -> tuple[dict[str, Any], int] | None:
        """The event's decoded state and how many transcoded values its bytes hold, or None where the mapper must
        decode it. The timestamp stays the text it was stored as (its datetime's isoformat, which is what the
        projections read)."""
        topic = notification.topic
        if topic not in self._classes:
            cls = resolve_topic(topic)
            self._classes[topic] = (cls, cls.__qualname__) if getattr(cls, "class_version", 1) == 1 else None
        if self._classes[topic] is None:
            return None
        raw = notification.state
        try:
            state = self._json.decode(raw)
        except msgspec.DecodeError:  # NaN, infinities, lone surrogates: the standard library's scanner reads them
            return None
        if type(state) is not dict or "class_version" in state:
            return None
        typed = raw.count(_TYPED)
        timestamp = state.get("timestamp")
        if typed == 1 and type(timestamp) is dict and timestamp.get(_TYPE_KEY) == "datetime_iso":
            state["timestamp"] = timestamp["_data_"]  # most events: their timestamp is their one transcoded value
        elif typed:
            # Most events hold their few transcoded values (the timestamp, ids) at the top level; when every
            # "_type_" of the bytes is one of those, nothing deeper needs a walk.
            tops = [key for key, value in state.items() if type(value) is dict and _TYPE_KEY in value]
            if len(tops) == typed and _TYPE_KEY not in state:
                for key in tops:
                    value = state[key]
                    stored_time = key == "timestamp" and value[_TYPE_KEY] == "datetime_iso"
                    state[key] = value["_data_"] if stored_time else self._decode_obj(value)
            else:
                state = self._revive(state)
                if type(state) is not dict:
                    return None
        return state, typed

    def _revive(self, value: Any) -> Any:
        """The JSON scanner's object hook, applied to every object bottom-up."""
        if type(value) is dict:
            for key, item in value.items():
                if type(item) in _CONTAINERS:
                    value[key] = self._revive(item)
            return self._decode_obj(value)
        return [self._revive(item) if type(item) in _CONTAINERS else item for item in value]


def json_native(raw: bytes, typed: int | None = None, finite: bool = False) -> bool:
    """Whether a stored event's data holds only values that msgspec writes as json.dumps does: no NaN or infinity
    (text that merely mentions them counts too) and no transcoded value but ids and the timestamp.
    Read from the stored bytes, so both decoders give the same answer (a cipher's or a compressor's bytes give
    False). An event whose class upcasts is never native: what the upcast gives is not in the bytes. `typed`: the
    count of transcoded values where known; `finite`: msgspec read the bytes, so they hold no NaN or infinity."""
    if not finite and (b"NaN" in raw or b"Infinity" in raw):
        return False
    if typed is None:
        typed = raw.count(_TYPED)
    if typed == 1:  # the timestamp alone: most events
        return _TIMESTAMP in raw
    return raw.count(_TIMESTAMP) == 1 and typed == 1 + raw.count(_WRITTEN_ALIKE)


def from_domain_event(position: int, domain_event: Any, stored: bytes | None = None) -> Event:
    """The projections' `Event` of a domain event as eventsourcing's mapper decodes it from its `stored` state."""
    native = stored is not None and getattr(type(domain_event), "class_version", 1) == 1 and json_native(stored)
    return Event(
        position=position,
        type=type(domain_event).__qualname__,
        aggregate_id=domain_event.originator_id,
        version=domain_event.originator_version,
        time=domain_event.timestamp.isoformat(),
        data={key: value for key, value in domain_event.__dict__.items() if key not in _SKIPPED},
        aggregate_key=str(domain_event.originator_id),
        json_native=native,
    )
