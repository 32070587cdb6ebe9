"""Run detail (`run_details`): everything a run's page shows of one run, from its settings to its merged model."""

from __future__ import annotations

import json
from typing import Any

from domain.runs.run import status_line
from domain.runs.run_settings import RunSettings
from domain.storage_keys import storage_key
from projections.base import Event, jsonable
from projections.run_settings import run_reward_label
from projections.runs import RunStates
from projections.tables import Tx


def _str(value: Any) -> str | None:
    return str(value) if value is not None else None


class RunDetails(RunStates):
    name = "run_details"

    def __init__(self) -> None:
        self.handlers = {
            **self._shared_handlers(),
            "Run.Launched": lambda tx, e: self._state(tx, e, "queued", launched_at=e.time),
            "Run.Stopped": self._stopped,
            "Run.Continued": self._continued,
            "Run.Failed": lambda tx, e: self._state(tx, e, "failed", failure=e.data["message"], ended_at=e.time),
            "Run.AdapterReady": lambda tx, e: self._state(
                tx, e, "adapter_ready", adapter_json=json.dumps(_adapter(e.data))
            ),
            "Run.Completed": lambda tx, e: self._state(tx, e, "completed", ended_at=e.time),
            "Run.Cancelled": lambda tx, e: self._state(tx, e, "cancelled", ended_at=e.time),
            "Run.Retried": lambda tx, e: tx.update(
                "run_details", {"id": e.aggregate_key}, {"retried_as": str(e.data["new_run_id"])}
            ),
            "Run.TrialReported": lambda tx, e: tx.update(
                "run_details",
                {"id": e.aggregate_key},
                {"trial_report_json": json.dumps(e.data["report"])},
            ),
            "Run.MergeRequested": lambda tx, e: self._merge(tx, e, "merging", best_round=e.data["best_round"]),
            "Run.ModelMerged": lambda tx, e: self._merge(
                tx, e, "merged", location=storage_key(e.data["location"]), files=e.data["files"],
                size_bytes=e.data["size_bytes"],
            ),
            "Run.MergeFailed": lambda tx, e: self._merge(tx, e, "failed", message=e.data["message"]),
            "Run.AlarmRaised": self._alarm_raised,
            "Run.AlarmCleared": lambda tx, e: self._alarms(tx, e, lambda alarm: alarm["kind"] != e.data["kind"]),
        }

    def _alarm_raised(self, tx: Tx, e: Event) -> None:
        """The banner's words as the domain wrote them (domain/runs/alarms.py), with the round and the time."""
        raised = {key: e.data[key] for key in ("kind", "title", "round", "seen", "advice")}
        self._alarms(tx, e, lambda alarm: alarm["kind"] != raised["kind"], {**raised, "at": e.time})

    def _alarms(self, tx: Tx, e: Event, keep: Any, added: dict[str, Any] | None = None) -> None:
        """The alarms standing (`alarms_json`, migrations/019), those `keep` keeps and `added`; the stamp of the
        run page moves with `updated_at`, so its banner is drawn again."""
        row = tx.get("run_details", {"id": e.aggregate_key})
        if row is None:
            return
        standing = [alarm for alarm in json.loads(row.get("alarms_json") or "[]") if keep(alarm)]
        standing += [added] if added is not None else []
        tx.update("run_details", {"id": row["id"]}, {"alarms_json": json.dumps(standing), "updated_at": e.time})

    def _merge(self, tx: Tx, e: Event, state: str, **values: Any) -> None:
        """Merge model's state on the run page: each event keeps what the one before said (the best round)."""
        row = tx.get("run_details", {"id": e.aggregate_key})
        if row is None:
            return
        before = json.loads(row["merge_json"]) if row["merge_json"] and state != "merging" else {}
        merge = {**before, **values, "state": state, "at": e.time}
        tx.update(
            "run_details",
            {"id": row["id"]},
            {"merge_state": state, "merge_json": json.dumps(merge), "updated_at": e.time},
        )

    def _settings_columns(self, tx: Tx, settings: RunSettings) -> dict[str, Any]:
        return {
            "name": settings.name,
            "kind": settings.kind,
            "settings_json": json.dumps(jsonable(settings)),
            "reward_label": run_reward_label(tx, settings),
            "start_run": settings.start_run,
            "rounds_total": settings.effective_rounds,
        }

    def _saved(self, tx: Tx, e: Event) -> None:
        settings = e.data["settings"]
        row = {
            "id": e.aggregate_key,
            "org_id": str(e.data["org_id"]),
            "project_id": str(e.data["project_id"]),
            "model": e.data["model"],
            "state": "draft",
            "rounds_scored": 0,
            "best_round": None,
            "best_validation": None,
            "adapter_json": None,
            "stop_json": None,
            "failure": None,
            "trial_report_json": None,
            "merge_state": None,
            "merge_json": None,
            "retry_of": _str(e.data.get("retry_of")),
            "retried_as": None,
            "duplicate_of": _str(e.data.get("duplicate_of")),
            "duplicates_json": "[]",
            "launched_at": None,
            "ended_at": None,
            "created_at": e.time,
            "updated_at": e.time,
            **self._settings_columns(tx, settings),
        }
        row["status_line"] = status_line("draft", 0, row["rounds_total"])
        tx.upsert("run_details", row)
        if row["duplicate_of"] is not None:
            source = tx.get("run_details", {"id": row["duplicate_of"]})
            if source is not None:
                duplicates = [*json.loads(source["duplicates_json"]), row["id"]]
                tx.update("run_details", {"id": source["id"]}, {"duplicates_json": json.dumps(duplicates)})

    def _edited(self, tx: Tx, e: Event) -> None:
        columns = self._settings_columns(tx, e.data["settings"])
        columns["status_line"] = status_line("draft", 0, columns["rounds_total"])
        tx.update("run_details", {"id": e.aggregate_key}, {**columns, "updated_at": e.time})

    def _continued(self, tx: Tx, e: Event) -> None:
        """Continue from round N: running again, with its new Rounds or Time limit; the adapter kept so far stays."""
        columns = self._settings_columns(tx, e.data["settings"])
        self._state(tx, e, "queued", stop_json=None, failure=None, ended_at=None, **columns)

    def _stopped(self, tx: Tx, e: Event) -> None:
        stop = {key: e.data[key] for key in ("reason", "note", "after_round", "best_round")}
        self._state(tx, e, "saving_adapter", stop_json=json.dumps(stop))


def _adapter(data: dict[str, Any]) -> dict[str, Any]:
    adapter = {key: data[key] for key in ("best_round", "location", "sha256", "size_bytes")}
    return {**adapter, "location": storage_key(adapter["location"])}
