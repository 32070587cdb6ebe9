"""The reward probes' read model (migrations/020, 023) and its reads: one row a probe (the directory files it under
its organization, so the timeline and the event feed carry its events); its summary as the Scored event holds it,
with the verdict in words (domain/probes/verdict.py) and the prompts most informative first, read on demand."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from domain.probes.probe import LIVE, STATUS_NAMES
from domain.probes.verdict import most_informative_first, verdict
from domain.runs.reward import reward_label
from projections.base import Event, Projection
from projections.tables import Tables, Tx


def source_label(source: dict[str, Any]) -> str:
    """
    >>> source_label({"kind": "math_pairs"}), source_label({"kind": "dataset_version", "label": "gsm v2"})
    ('Math Pairs (built-in task)', 'gsm v2 · training examples')
    """
    if source.get("kind") == "math_pairs":
        return "Math Pairs (built-in task)"
    return f"{source.get('label', 'Dataset version')} · training examples"


class Probes(Projection):
    name = "probes"

    def __init__(self) -> None:
        self.handlers = {
            "Probe.Saved": self._saved,
            "Probe.Sampling": lambda tx, e: self._set(tx, e, state="sampling"),
            "Probe.Scored": lambda tx, e: self._set(
                tx, e, state="scored", summary_json=json.dumps(e.data["summary"]),
                varied_share=float(e.data["summary"]["varied_share"])),
            "Probe.Failed": lambda tx, e: self._set(tx, e, state="failed", failure=e.data["message"]),
            "Probe.Cancelled": lambda tx, e: self._set(tx, e, state="cancelled", cancelled_by=e.actor["name"]),
        }

    def _saved(self, tx: Tx, e: Event) -> None:
        d = e.data
        reward = d["reward"]
        version = tx.get("custom_metric_versions", {"id": str(reward["custom_metric"])}) if reward.get(
            "custom_metric") else None
        custom = f"{version['metric_name']} (v{version['number']})" if version else None
        tx.upsert(self.name, {
            "id": str(e.aggregate_id), "org_id": str(d["org_id"]), "project_id": str(d["project_id"]),
            "name": d["name"], "model": d["model"], "source_label": source_label(d["source"]),
            "source_json": json.dumps(d["source"]), "reward_json": json.dumps(reward),
            "reward_label": reward_label(reward, custom),
            "adapter_run": str(d["adapter_run"]) if d.get("adapter_run") else None, "prompts": int(d["prompts"]),
            "answers_per_prompt": int(d["answers_per_prompt"]), "max_answer_tokens": int(d["max_answer_tokens"]),
            "seed": int(d["seed"]), "state": "queued", "summary_json": None, "varied_share": None, "failure": None,
            "cancelled_by": None, "created_at": e.time, "updated_at": e.time,
        })

    def _set(self, tx: Tx, e: Event, **values: Any) -> None:
        tx.update(self.name, {"id": str(e.aggregate_id)}, {"updated_at": e.time, **values})


# --- reads ---------------------------------------------------------------------------------------------------------
def _view(row: dict[str, Any]) -> dict[str, Any]:
    summary = json.loads(row["summary_json"]) if row.get("summary_json") else None
    return {
        **{k: v for k, v in row.items() if not k.endswith("_json")},
        "source": json.loads(row["source_json"]), "reward": json.loads(row["reward_json"]),
        "status": STATUS_NAMES[row["state"]], "live": row["state"] in LIVE, "summary": summary,
        "verdict": verdict(summary).to_dict() if summary else None,
    }


def probes(tables: Tables, org_id: UUID) -> list[dict[str, Any]]:
    rows = tables.select("probes", {"org_id": str(org_id)}, order=[("created_at", True)])
    return [_view(row) for row in rows]


def probe(tables: Tables, org_id: UUID, probe_id: UUID) -> dict[str, Any] | None:
    rows = tables.select("probes", {"org_id": str(org_id), "id": str(probe_id)})
    return _view(rows[0]) if rows else None


def informative_prompts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The probe's prompts from most to least informative, each with its place in the answers file (`line`)."""
    per_prompt = summary["per_prompt"]
    return [
        {"line": i, **{key: per_prompt[key][i] for key in ("index", "mean", "spread", "std", "varied")}}
        for i in most_informative_first(per_prompt)
    ]
