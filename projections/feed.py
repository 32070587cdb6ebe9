"""The event feed (`GET /api/events`): every event of an organization, in order, as JSON-able data."""

from __future__ import annotations

import json
from typing import Any

from domain.storage_keys import storage_key
from projections.base import Event, Projection, jsonable
from projections.directory import directory_entry
from projections.tables import Tx

# Secrets and their hashes stay in the event store: the feed never carries them, even where an event has one.
NEVER_IN_FEED = frozenset({"password_hash", "token_sha256", "secret_ciphertext", "password", "secret"})


def locations_as_keys(value: Any) -> Any:
    """Event data as readers see it: every `location` (an adapter's, a merged model's, at any depth) as its key in
    the storage (domain/storage_keys.py), never the worker's path or the bucket's URL."""
    if isinstance(value, dict):
        return {
            key: storage_key(item) if key == "location" and isinstance(item, str) else locations_as_keys(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [locations_as_keys(item) for item in value]
    return value


class Feed(Projection):
    """Every event of an organization, in order, as JSON-able data."""

    name = "feed"

    def apply(self, tx: Tx, event: Event) -> None:
        place = directory_entry(tx, event)
        if place is None:
            return
        data = {key: value for key, value in event.data.items() if key != "actor" and key not in NEVER_IN_FEED}
        tx.upsert(
            "feed",
            {
                "log_position": event.position,
                "org_id": place["org_id"],
                "event_type": event.type,
                "occurred_at": event.time,
                "aggregate_id": str(event.aggregate_id),
                "aggregate_version": event.version,
                "actor_json": json.dumps(event.actor),
                "data_json": json.dumps(locations_as_keys(jsonable(data))),
            },
        )
