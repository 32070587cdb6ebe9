"""The re-scorings' read model (migrations/021) and its reads: one row a re-scoring, filed in the directory under
its organization so the event feed carries its events; its summary as the Scored event holds it, read on demand."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from domain.rescorings.rescoring import LIVE, STATUS_NAMES
from domain.runs.reward import reward_label
from projections.base import Event, Projection
from projections.directory import file_in_directory
from projections.tables import Tables, Tx


def _label(tx: Tx, reward: dict[str, Any]) -> str:
    """The reward in the console's words, a custom metric by its name and version."""
    if not reward:
        return "No reward"
    version = tx.get("custom_metric_versions", {"id": str(reward["custom_metric"])}) if reward.get(
        "custom_metric") else None
    return reward_label(reward, f"{version['metric_name']} (v{version['number']})" if version else None)


class Rescorings(Projection):
    name = "rescorings"

    def __init__(self) -> None:
        self.handlers = {
            "Rescoring.Saved": self._saved,
            "Rescoring.Scoring": lambda tx, e: self._set(tx, e, state="scoring"),
            "Rescoring.Scored": lambda tx, e: self._set(
                tx, e, state="scored", summary_json=json.dumps(e.data["summary"]),
                moved_share=float(e.data["summary"]["moved_share"])),
            "Rescoring.Failed": lambda tx, e: self._set(tx, e, state="failed", failure=e.data["message"]),
        }

    def _saved(self, tx: Tx, e: Event) -> None:
        d = e.data
        file_in_directory(tx, e, "rescoring", d["name"])
        tx.upsert(self.name, {
            "id": str(e.aggregate_id), "org_id": str(d["org_id"]), "project_id": str(d["project_id"]),
            "name": d["name"], "source_kind": d["source"]["kind"], "source_id": str(d["source"]["id"]),
            "source_name": d["source"]["name"], "old_reward_label": _label(tx, d["old_reward"]),
            "reward_json": json.dumps(d["reward"]), "reward_label": _label(tx, d["reward"]),
            "rounds": len(d["rounds"]), "state": "queued", "summary_json": None, "moved_share": None,
            "failure": None, "created_at": e.time, "updated_at": e.time,
        })

    def _set(self, tx: Tx, e: Event, **values: Any) -> None:
        tx.update(self.name, {"id": str(e.aggregate_id)}, {"updated_at": e.time, **values})


# --- reads ---------------------------------------------------------------------------------------------------------
def _view(row: dict[str, Any]) -> dict[str, Any]:
    return {
        **{k: v for k, v in row.items() if not k.endswith("_json")},
        "reward": json.loads(row["reward_json"]), "status": STATUS_NAMES[row["state"]],
        "live": row["state"] in LIVE, "summary": json.loads(row["summary_json"]) if row.get("summary_json") else None,
        "source_page": f"/{'probes' if row['source_kind'] == 'probe' else 'runs'}/{row['source_id']}",
    }


def rescorings(tables: Tables, org_id: UUID) -> list[dict[str, Any]]:
    rows = tables.select("rescorings", {"org_id": str(org_id)}, order=[("created_at", True)])
    return [_view(row) for row in rows]


def rescoring(tables: Tables, org_id: UUID, rescoring_id: UUID) -> dict[str, Any] | None:
    rows = tables.select("rescorings", {"org_id": str(org_id), "id": str(rescoring_id)})
    return _view(rows[0]) if rows else None


def per_round(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The summary's per-round lists as one row a round.

    >>> per_round({"per_round": {"round": [1, 2], "signal_old": [0.5, 0.25], "signal_new": [1.0, 0.0]}})
    [{'round': 1, 'signal_old': 0.5, 'signal_new': 1.0}, {'round': 2, 'signal_old': 0.25, 'signal_new': 0.0}]
    """
    columns = summary["per_round"]
    return [{key: values[i] for key, values in columns.items()} for i in range(len(columns["round"]))]
