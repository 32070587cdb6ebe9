"""The event feed (`GET /api/events`): every event of an organization, in order, as JSON-able data."""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

import msgspec

from domain.runs.run_settings import RunSettings
from domain.storage_keys import storage_key
from projections.base import PLAIN, Event, Projection, jsonable
from projections.directory import directory_entry
from projections.tables import Tx

# Secrets and their hashes stay in the event store: the feed never carries them, even where an event has one.
NEVER_IN_FEED = frozenset({"password_hash", "token_sha256", "secret_ciphertext", "password", "secret"})


def locations_as_keys(value: Any) -> Any:
    """Event data as readers see it: every `location` (an adapter's, a merged model's, at any depth) as its key in
    the storage (domain/storage_keys.py), never the worker's path or the bucket's URL."""
    if isinstance(value, dict):
        return {
            key: storage_key(item)
            if key == "location" and isinstance(item, str)
            else item if type(item) in PLAIN else locations_as_keys(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [item if type(item) in PLAIN else locations_as_keys(item) for item in value]
    return value


def feed_data(value: Any) -> Any:
    """`locations_as_keys(jsonable(value))` in one walk of the event's data, the feed's most frequent work (plain
    values, most of a round's, are taken as they are without a call)."""
    if type(value) in PLAIN:
        return value
    if isinstance(value, RunSettings):
        return feed_data(value.to_api())
    if isinstance(value, dict):
        walked = {}
        for key, item in value.items():
            if type(key) is not str:
                key = str(key)
            if key == "location":
                walked[key] = _location(item)
            else:
                walked[key] = item if type(item) in PLAIN else feed_data(item)
        return walked
    if isinstance(value, list | tuple):
        return [item if type(item) in PLAIN else feed_data(item) for item in value]
    return jsonable(value)


def _encodable(value: Any) -> Any:
    """What the encoder cannot write itself, as `feed_data` writes it; anything else it refuses, as json does."""
    if isinstance(value, RunSettings):
        return feed_data(value)
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_ENCODER = json.JSONEncoder(default=_encodable)  # json.dumps's settings, and the few types the events hold
# Where the encoder's text may differ from `json.dumps(feed_data(...))`: a `location` key, which the feed writes as a
# storage key, and keys that were not text (True, None, NaN: the encoder writes them as JSON does, the walk as str()).
_WALK_NEEDED = ('"location": ', '"true": ', '"false": ', '"null": ', '"NaN": ', 'Infinity": ')


def _refuse(value: Any) -> Any:
    """msgspec's hook for a value it cannot write itself: the feed's walk says what is wrong, as before."""
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# Only for data the decoder read as json_native: msgspec writes a dataclass (a run's settings) or a datetime its own
# way, and such data is never native
_NATIVE = msgspec.json.Encoder(enc_hook=_refuse)
_NATIVE_LOCATION = '"location":'  # msgspec writes no space after a colon


def feed_json(data: dict[str, Any], json_native: bool = False) -> str:
    """`json.dumps(feed_data(data))`, or the same JSON written by a faster encoder (msgspec, compact: it reads as the
    same values) straight from the event's data when the walk would change nothing. That is nearly always: a round's
    data has no location, and an event the decoder read as `json_native` holds no value that the two write
    differently (a NaN, a datetime, a Decimal, a key that is not text)."""
    try:
        if json_native:
            text = _NATIVE.encode(data).decode()
            walk = _NATIVE_LOCATION in text
        else:
            text = _ENCODER.encode(data)
            walk = any(mark in text for mark in _WALK_NEEDED)
    except (TypeError, ValueError, RecursionError):  # the walk and json.dumps say what is wrong, as before
        return json.dumps(feed_data(data))
    return json.dumps(feed_data(data)) if walk else text


def _location(value: Any) -> Any:
    value = jsonable(value)
    return storage_key(value) if isinstance(value, str) else locations_as_keys(value)


def _actor_text(actor: dict[str, Any], json_native: bool) -> str:
    """The actor's JSON: msgspec's where the decoder read the event as `json_native` (its actor too), else json's."""
    if json_native:
        return _NATIVE.encode(actor).decode()
    return _actor_json(tuple(actor.items())) if _all_text(actor) else json.dumps(actor)


def _all_text(actor: dict[str, Any]) -> bool:
    return all(type(key) is str and type(value) is str for key, value in actor.items())


@lru_cache(maxsize=256)
def _actor_json(items: tuple[tuple[str, str], ...]) -> str:
    """An actor's JSON: a page has few actors (the trainer writes most events), each made once."""
    return json.dumps(dict(items))


class Feed(Projection):
    """Every event of an organization, in order, as JSON-able data."""

    name = "feed"

    def apply(self, tx: Tx, event: Event) -> None:
        place = directory_entry(tx, event)
        if place is None:
            return
        data = dict(event.data)  # copied in C, then the few keys taken out, rather than filtered key by key
        data.pop("actor", None)
        if not NEVER_IN_FEED.isdisjoint(data):
            for key in NEVER_IN_FEED.intersection(data):
                del data[key]
        actor = event.actor
        tx.write(  # nothing of the page reads the feed back
            "feed",
            {
                "log_position": event.position,
                "org_id": place["org_id"],
                "event_type": event.type,
                "occurred_at": event.time,
                "aggregate_id": event.aggregate_key,
                "aggregate_version": event.version,
                "actor_json": _actor_text(actor, event.json_native),
                "data_json": feed_json(data, event.json_native),
            },
        )
