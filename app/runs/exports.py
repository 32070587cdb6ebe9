"""What a finished run gives away: its history (rounds and events as CSV and JSON) and its adapter as an archive.

The adapter archive holds the adapter's files as the trainer saved them (adapter_config.json,
adapter_model.safetensors, ...) under `adapter/`, and `run.json`: the run's settings, best round and checksum.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import asdict, fields
from typing import Any

from projections.rows import RoundRow, RunDetail, TimelineEntry

_ROUND_FIELDS = [f.name for f in fields(RoundRow) if f.name not in ("run_id",)]
# every field of the round, and its log line (written from them when read) where it always stood: before scored_at
ROUND_COLUMNS = [*_ROUND_FIELDS[:_ROUND_FIELDS.index("scored_at")], "log_line",
                 *_ROUND_FIELDS[_ROUND_FIELDS.index("scored_at"):]]
EVENT_COLUMNS = [f.name for f in fields(TimelineEntry)]


class AdapterUnavailable(Exception):
    """Why the adapter can't be downloaded, in words for the page."""


def _csv(columns: list[str], rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    # a cell holding counts by kind ({"timeout": 2}) is written as JSON, which a spreadsheet or script can read back
    writer.writerows({k: json.dumps(v) if isinstance(v, dict) else v for k, v in row.items()} for row in rows)
    return out.getvalue()


def rounds_csv(rounds: list[RoundRow]) -> str:
    """One line per round, oldest first, every field of the round log line."""
    return _csv(ROUND_COLUMNS, _round_dicts(rounds))


def _round_dicts(rounds: list[RoundRow]) -> list[dict[str, Any]]:
    """Each round's fields and its log line, oldest first."""
    return [{**asdict(r), "log_line": r.log_line} for r in sorted(rounds, key=lambda r: r.round_number)]


def events_csv(timeline: list[TimelineEntry]) -> str:
    return _csv(EVENT_COLUMNS, [asdict(e) for e in timeline])


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def history_json(run: RunDetail, rounds: list[RoundRow], timeline: list[TimelineEntry]) -> dict[str, Any]:
    return {
        "run": _jsonable(asdict(run)),
        "rounds": _jsonable(_round_dicts(rounds)),
        "events": _jsonable([asdict(e) for e in timeline]),
    }


def adapter_prefix(run: RunDetail) -> str:
    return f"runs/{run.id}/adapter/"


def adapter_archive(run: RunDetail, storage: Any) -> bytes:
    """A zip of the run's adapter and its config; raises AdapterUnavailable with the reason."""
    if run.adapter is None:
        raise AdapterUnavailable("This run has no adapter yet.")
    if storage is None:
        raise AdapterUnavailable("This console has no storage configured, so it can't read the adapter.")
    prefix = adapter_prefix(run)
    keys = [key for key in storage.keys(prefix) if not key.endswith(".partial")]
    if not keys:
        raise AdapterUnavailable(f"The adapter is not in the storage this console uses ({prefix}).")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key in keys:
            # read_lines yields the file in consecutive bounded pieces: joined, they are the file's bytes
            archive.writestr(f"adapter/{key[len(prefix) :]}", b"".join(storage.read_lines(key)))
        config = {
            "run_id": str(run.id),
            "name": run.name,
            "model": run.model,
            "best_round": run.adapter["best_round"],
            "sha256": run.adapter["sha256"],
            "size_bytes": run.adapter["size_bytes"],
            "settings": run.settings,
        }
        archive.writestr("run.json", json.dumps(_jsonable(config), indent=2))
    return buffer.getvalue()


def archive_name(run: RunDetail) -> str:
    slug = "".join(c if c.isalnum() or c in "-_" else "-" for c in (run.name or "run")).strip("-") or "run"
    return f"{slug}-{str(run.id)[:8]}-adapter.zip"
