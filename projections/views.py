"""The projections: how each event changes the read-model rows. Written once against `Tx` (memory or SQL).

Every projection is named; its position in the log is saved in the same transaction as its rows. The directory
comes first in every page, so the others may read it (it tells which organization a run belongs to).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from uuid import UUID

from domain.runs import messages, objectives
from domain.runs.reward import reward_label
from domain.runs.run import status_line
from domain.storage_keys import storage_key
from projections.base import Event, Handler, Projection
from projections.catalog import catalog_projections
from projections.evaluations import evaluation_projections
from projections.tables import Tx


def jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _str(value: Any) -> str | None:
    return str(value) if value is not None else None


class Directory(Projection):
    """Which organization each aggregate belongs to; a run's name and rounds (for the timeline's words)."""

    name = "directory"

    def __init__(self) -> None:
        self.handlers = {
            "Organization.Created": self._organization,
            "Project.Created": self._project,
            "Run.Saved": self._run,
            "Run.Edited": self._run_edited,
        }

    def _organization(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "directory",
            {
                "aggregate_id": str(e.aggregate_id),
                "org_id": str(e.aggregate_id),
                "kind": "organization",
                "name": e.data["name"],
                "total_rounds": None,
            },
        )

    def _project(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "directory",
            {
                "aggregate_id": str(e.aggregate_id),
                "org_id": str(e.data["org_id"]),
                "kind": "project",
                "name": e.data["name"],
                "total_rounds": None,
            },
        )

    def _run(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "directory",
            {
                "aggregate_id": str(e.aggregate_id),
                "org_id": str(e.data["org_id"]),
                "kind": "run",
                "name": e.data["settings"]["name"],
                "total_rounds": _total_rounds(e.data["settings"]),
            },
        )

    def _run_edited(self, tx: Tx, e: Event) -> None:
        tx.update(
            "directory",
            {"aggregate_id": str(e.aggregate_id)},
            {"name": e.data["settings"]["name"], "total_rounds": _total_rounds(e.data["settings"])},
        )


def _total_rounds(settings: dict[str, Any]) -> int:
    return 1 if settings["kind"] == "trial" else int(settings["training"]["rl"]["rounds"])


def _reward_label(tx: Tx, settings: dict[str, Any]) -> str:
    """An RL run's reward ("Token F1 · Q&A", a custom one "exact_year (v2) · Q&A"); SFT, DPO and Head have no
    reward, so "" (the console shows "—"). A custom metric version's name and number never change, and the
    catalog applies each page before the runs (all_projections), so a rebuild words it as the live view did."""
    if _objective(settings) != objectives.RL:
        return ""
    reward = settings["training"]["rl"]["reward"]
    if not reward:
        return ""
    version = tx.get("custom_metric_versions", {"id": str(reward["custom_metric"])}) if reward.get(
        "custom_metric"
    ) else None
    return reward_label(reward, f"{version['metric_name']} (v{version['number']})" if version else None)


def _objective(settings: dict[str, Any]) -> str:
    return str(settings["training"].get("objective", objectives.RL))


class OrganizationsAndProjects(Projection):
    name = "organizations"

    def __init__(self) -> None:
        self.handlers = {
            "Organization.Created": self._created,
            "Organization.PlanChanged": self._plan,
            "Project.Created": self._project,
            "Project.RunDefaultsSet": self._project_run_defaults,
        }

    def _created(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "organizations",
            {"id": str(e.aggregate_id), "name": e.data["name"], "plan": e.data["plan"], "created_at": e.time},
        )

    def _plan(self, tx: Tx, e: Event) -> None:
        tx.update("organizations", {"id": str(e.aggregate_id)}, {"plan": e.data["plan"]})

    def _project(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "projects",
            {
                "id": str(e.aggregate_id),
                "org_id": str(e.data["org_id"]),
                "name": e.data["name"],
                "model": e.data["model"],
                "revision": e.data["revision"],
                "vision": int(bool(e.data["vision"])),
                "created_at": e.time,
                "run_defaults": None,
            },
        )

    def _project_run_defaults(self, tx: Tx, e: Event) -> None:
        tx.update("projects", {"id": str(e.aggregate_id)}, {"run_defaults": json.dumps(e.data["defaults"])})


class RunStates(Projection):
    """The part of a run that both Runs and Run detail show: its state, status line and best round."""

    table = ""

    def _state(self, tx: Tx, e: Event, state: str, **values: Any) -> None:
        row = tx.get(self.table, {"id": str(e.aggregate_id)})
        if row is None:
            return
        row.update(values)
        row["state"] = state
        row["status_line"] = status_line(state, row["rounds_scored"], row["rounds_total"])
        row["updated_at"] = e.time
        tx.update(self.table, {"id": row["id"]}, {key: value for key, value in row.items() if key != "id"})

    def _state_handlers(self) -> dict[str, Handler]:
        def to(state: str) -> Handler:
            return lambda tx, e: self._state(tx, e, state)

        return {
            "Run.Launched": to("queued"),
            "Run.Queued": to("queued"),
            "Run.Preparing": to("preparing"),
            "Run.SavingAdapter": to("saving_adapter"),
            "Run.Cancelled": to("cancelled"),
            "Run.Deleted": to("deleted"),  # the Runs list leaves it out; its page and timeline stay
            "Run.Completed": to("completed"),
            "Run.RoundScored": self._round_scored,
            "Run.StepLogged": self._step_logged,
        }

    def _step_logged(self, tx: Tx, e: Event) -> None:
        """An SFT or DPO step: the run trains, "Training · step N / M" (the domain's status line)."""
        row = tx.get(self.table, {"id": str(e.aggregate_id)})
        if row is None:
            return
        step = e.data["step"]
        values: dict[str, Any] = {
            "state": "training",
            "status_line": f"Training · step {step['step']} / {step['steps']}",
            "updated_at": e.time,
        }
        if "steps_logged" in row:  # the Runs list counts steps; Run detail reads them from run_steps
            values |= {"steps_logged": step["step"], "steps_total": step["steps"]}
        tx.update(self.table, {"id": row["id"]}, values)

    def _round_scored(self, tx: Tx, e: Event) -> None:
        row = tx.get(self.table, {"id": str(e.aggregate_id)})
        if row is None:
            return
        result = e.data["result"]
        best = e.data["best_round"]
        values: dict[str, Any] = {"rounds_scored": result["round_number"] + 1, "best_round": best}
        if best == result["round_number"]:
            values["best_validation"] = result["validation_reward"]
        self._state(tx, e, "training", **values)


class Runs(RunStates):
    name = "runs"
    table = "runs"

    def __init__(self) -> None:
        self.handlers = {
            **self._state_handlers(),
            "Run.Saved": self._saved,
            "Run.Edited": self._edited,
            "Run.Stopped": lambda tx, e: self._state(tx, e, "saving_adapter"),
            "Run.Failed": lambda tx, e: self._state(tx, e, "failed"),
            "Run.AdapterReady": lambda tx, e: self._state(tx, e, "adapter_ready"),
        }

    def _saved(self, tx: Tx, e: Event) -> None:
        settings = e.data["settings"]
        total = _total_rounds(settings)
        tx.upsert(
            "runs",
            {
                "id": str(e.aggregate_id),
                "org_id": str(e.data["org_id"]),
                "project_id": str(e.data["project_id"]),
                "name": settings["name"],
                "kind": settings["kind"],
                "state": "draft",
                "status_line": status_line("draft", 0, total),
                "rounds_total": total,
                "rounds_scored": 0,
                "best_round": None,
                "best_validation": None,
                "reward_label": _reward_label(tx, settings),
                "objective": _objective(settings),
                "steps_logged": 0,
                "steps_total": None,
                "created_at": e.time,
                "updated_at": e.time,
                "created_position": e.position,
            },
        )

    def _edited(self, tx: Tx, e: Event) -> None:
        settings = e.data["settings"]
        total = _total_rounds(settings)
        tx.update(
            "runs",
            {"id": str(e.aggregate_id)},
            {
                "name": settings["name"],
                "kind": settings["kind"],
                "rounds_total": total,
                "status_line": status_line("draft", 0, total),
                "reward_label": _reward_label(tx, settings),
                "objective": _objective(settings),
                "updated_at": e.time,
            },
        )


class RunDetails(RunStates):
    name = "run_details"
    table = "run_details"

    def __init__(self) -> None:
        self.handlers = {
            **self._state_handlers(),
            "Run.Saved": self._saved,
            "Run.Edited": self._edited,
            "Run.Launched": lambda tx, e: self._state(tx, e, "queued", launched_at=e.time),
            "Run.Stopped": self._stopped,
            "Run.Failed": lambda tx, e: self._state(tx, e, "failed", failure=e.data["message"], ended_at=e.time),
            "Run.AdapterReady": lambda tx, e: self._state(
                tx, e, "adapter_ready", adapter_json=json.dumps(_adapter(e.data))
            ),
            "Run.Completed": lambda tx, e: self._state(tx, e, "completed", ended_at=e.time),
            "Run.Cancelled": lambda tx, e: self._state(tx, e, "cancelled", ended_at=e.time),
            "Run.Retried": lambda tx, e: tx.update(
                "run_details", {"id": str(e.aggregate_id)}, {"retried_as": str(e.data["new_run_id"])}
            ),
            "Run.TrialReported": lambda tx, e: tx.update(
                "run_details",
                {"id": str(e.aggregate_id)},
                {"trial_report_json": json.dumps(e.data["report"])},
            ),
            "Run.MergeRequested": lambda tx, e: self._merge(tx, e, "merging", best_round=e.data["best_round"]),
            "Run.ModelMerged": lambda tx, e: self._merge(
                tx, e, "merged", location=storage_key(e.data["location"]), files=e.data["files"],
                size_bytes=e.data["size_bytes"],
            ),
            "Run.MergeFailed": lambda tx, e: self._merge(tx, e, "failed", message=e.data["message"]),
        }

    def _merge(self, tx: Tx, e: Event, state: str, **values: Any) -> None:
        """Merge model's state on the run page: each event keeps what the one before said (the best round)."""
        row = tx.get("run_details", {"id": str(e.aggregate_id)})
        if row is None:
            return
        before = json.loads(row["merge_json"]) if row["merge_json"] and state != "merging" else {}
        merge = {**before, **values, "state": state, "at": e.time}
        tx.update(
            "run_details",
            {"id": row["id"]},
            {"merge_state": state, "merge_json": json.dumps(merge), "updated_at": e.time},
        )

    def _settings_columns(self, tx: Tx, settings: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": settings["name"],
            "kind": settings["kind"],
            "settings_json": json.dumps(jsonable(settings)),
            "reward_label": _reward_label(tx, settings),
            "start_run": settings["training"]["rl"]["start_run"],
            "rounds_total": _total_rounds(settings),
        }

    def _saved(self, tx: Tx, e: Event) -> None:
        settings = e.data["settings"]
        row = {
            "id": str(e.aggregate_id),
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
        tx.update("run_details", {"id": str(e.aggregate_id)}, {**columns, "updated_at": e.time})

    def _stopped(self, tx: Tx, e: Event) -> None:
        stop = {key: e.data[key] for key in ("reason", "note", "after_round", "best_round")}
        self._state(tx, e, "saving_adapter", stop_json=json.dumps(stop))


def _adapter(data: dict[str, Any]) -> dict[str, Any]:
    adapter = {key: data[key] for key in ("best_round", "location", "sha256", "size_bytes")}
    return {**adapter, "location": storage_key(adapter["location"])}


class Rounds(Projection):
    name = "rounds"

    def __init__(self) -> None:
        self.handlers = {"Run.RoundScored": self._scored}

    def _scored(self, tx: Tx, e: Event) -> None:
        place = tx.get("directory", {"aggregate_id": str(e.aggregate_id)})
        if place is None:
            return
        result = e.data["result"]
        total = place["total_rounds"]
        tx.upsert(
            "rounds",
            {
                "run_id": str(e.aggregate_id),
                "round_number": result["round_number"],
                "org_id": place["org_id"],
                "rounds_total": total,
                "reward": result.get("reward"),
                "signal": result.get("signal"),
                "cut_off": result.get("cut_off"),
                "metric_failures": result.get("metric_failures", 0),
                "updated": int(bool(result.get("updated"))),
                "loss": result.get("loss"),
                "validation_reward": result["validation_reward"],
                "best_round": e.data["best_round"],
                **{
                    key: result.get(key, 0.0)
                    for key in ("sampling_seconds", "grading_seconds", "update_seconds", "validation_seconds")
                },
                "mean_answer_tokens": result.get("mean_answer_tokens"),
                "token_entropy": result.get("token_entropy"),
                "peak_memory_bytes": result.get("peak_memory_bytes"),
                "accuracy": result.get("accuracy"),
                "log_line": messages.round_log_line(result, total, e.data["best_round"]),
                "scored_at": e.time,
            },
        )


class Samples(Projection):
    """The index of rollout files: the trainer writes round-NNN.jsonl for every round it trains."""

    name = "samples"

    def __init__(self) -> None:
        self.handlers = {"Run.RoundScored": self._scored}

    def _scored(self, tx: Tx, e: Event) -> None:
        number = e.data["result"]["round_number"]
        place = tx.get("directory", {"aggregate_id": str(e.aggregate_id)})
        if number < 1 or place is None:
            return
        tx.upsert(
            "rollout_files",
            {
                "run_id": str(e.aggregate_id),
                "round_number": number,
                "org_id": place["org_id"],
                "written_at": e.time,
                "path": f"runs/{e.aggregate_id}/rollouts/round-{number:03d}.jsonl",
            },
        )


class Timeline(Projection):
    """The audit of each run: every event with its time, its actor and a sentence."""

    name = "timeline"

    def apply(self, tx: Tx, event: Event) -> None:
        if not event.type.startswith("Run."):
            return
        place = tx.get("directory", {"aggregate_id": str(event.aggregate_id)})
        if place is None:
            return
        actor = event.actor
        tx.upsert(
            "timeline",
            {
                "log_position": event.position,
                "org_id": place["org_id"],
                "run_id": str(event.aggregate_id),
                "occurred_at": event.time,
                "actor_kind": actor["kind"],
                "actor_id": actor["id"],
                "actor_name": actor["name"],
                "event_type": event.type.removeprefix("Run."),
                "sentence": sentence(
                    event, actor["name"], place["total_rounds"], _objective_of(tx, event), name=place["name"]
                ),
            },
        )


def _objective_of(tx: Tx, e: Event) -> str:
    """The run's objective, from the Runs view (applied before the timeline) or the event's own settings."""
    if "settings" in e.data:
        return _objective(e.data["settings"])
    row = tx.get("runs", {"id": str(e.aggregate_id)})
    return str(row["objective"]) if row is not None else objectives.RL


def sentence(e: Event, who: str, total_rounds: int, objective: str = objectives.RL, name: str = "") -> str:
    """`name`: the run's name as the directory holds it (after an edit, the new one)."""
    data = e.data
    kind = "trial" if data.get("settings", {}).get("kind") == "trial" else "run"
    if objective != objectives.RL and (words := _tuning_sentence(e, who, objective)) is not None:
        return words
    match e.type.removeprefix("Run."):
        case "Saved" if data.get("retry_of"):
            return f"{who} retried run {str(data['retry_of'])[:8]}: a new run with the same settings."
        case "Saved" if data.get("duplicate_of"):
            return (
                f"{who} duplicated run {str(data['duplicate_of'])[:8]} as the new draft "
                f"“{data['settings']['name'] or 'Untitled'}”."
            )
        case "Saved":
            return f"{who} saved the {kind} draft “{data['settings']['name'] or 'Untitled'}”."
        case "Edited" if data.get("changes"):
            return f"{who} edited the draft “{name or 'Untitled'}”: {', '.join(data['changes'])}."
        case "Edited":
            return f"{who} edited the draft “{name or 'Untitled'}”."
        case "Deleted":
            return f"{who} deleted the draft “{name or 'Untitled'}”: it left the Runs list; its history stays here."
        case "Launched":
            return f"{who} launched the run."
        case "Queued":
            return f"{who} put the run on its provider's queue."
        case "Preparing":
            return f"{who} started preparing the run: GPU, model and data."
        case "RoundScored" if data["result"]["round_number"] == 0:
            return f"Round 0 scored the starting adapter: validation reward {data['result']['validation_reward']:.4f}."
        case "RoundScored":
            result = data["result"]
            return (
                f"Round {result['round_number']} of {total_rounds} scored: reward {result['reward']:.4f}, "
                f"validation reward {result['validation_reward']:.4f} (best round {data['best_round']})."
            )
        case "Stopped":
            line = messages.stopped_line(data["reason"], data["after_round"], total_rounds, data["best_round"])
            return f"{line}. {data['note']}".strip()
        case "SavingAdapter":
            return f"{who} finished training and is saving the adapter."
        case "AdapterReady":
            line = (
                f"The adapter of round {data['best_round']} is ready: {data['size_bytes']:,} bytes, "
                f"SHA-256 {data['sha256'][:12]}."
            )
            return f"{line} {data.get('note') or ''}".strip()  # the note says why, when the reconciler kept it
        case "Completed":
            return "The run completed."
        case "Failed":
            return f"The run failed: {data['message']}"
        case "Cancelled":
            return f"{who} cancelled the run."
        case "Retried":
            return f"{who} retried the run as run {str(data['new_run_id'])[:8]}."
        case "MergeRequested":
            unit = "round" if objective == objectives.RL else "step"
            return f"{who} asked for the adapter of {unit} {data['best_round']} to be merged into the base model."
        case "ModelMerged":
            count = len(data["files"])
            return (
                f"The merged model is written to {storage_key(data['location'])}: "
                f"{count} file{'' if count == 1 else 's'}, "
                f"{data['size_bytes']:,} bytes."
            )
        case "MergeFailed":
            return str(data["message"])
        case "TrialReported":
            finished = data["report"].get("finished")
            return "The trial reported its measures." if finished else "The trial reported that it did not finish."
    return f"{who}: {e.type}."


def _tuning_sentence(e: Event, who: str, objective: str) -> str | None:
    """The sentences of SFT and DPO runs that differ from RL's: steps, not rounds; the last step's adapter."""
    data, name = e.data, objectives.OBJECTIVE_NAMES[objective]
    match e.type.removeprefix("Run."):
        case "Saved" if not data.get("retry_of") and not data.get("duplicate_of"):
            kind = "trial" if data["settings"].get("kind") == "trial" else "run"
            return f"{who} saved the {name} {kind} draft “{data['settings']['name'] or 'Untitled'}”."
        case "StepLogged":
            return messages.step_sentence(data["step"])
        case "Stopped":
            line = messages.stopped_steps_line(data["reason"], data["after_round"])
            return f"{line}. {data['note']}".strip()
        case "AdapterReady":
            return (
                f"The adapter of step {data['best_round']} is ready: {data['size_bytes']:,} bytes, "
                f"SHA-256 {data['sha256'][:12]}."
            )
    return None


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
        place = tx.get("directory", {"aggregate_id": str(event.aggregate_id)})
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


def access_projections() -> list[Projection]:
    from projections.access import Access  # it builds on this module's Projection

    return [Access()]


def steps_projections() -> list[Projection]:
    from projections.steps import Steps  # it builds on this module's Projection

    return [Steps()]


def all_projections() -> list[Projection]:
    """In the order they apply each page: the directory first."""
    return [
        Directory(),
        OrganizationsAndProjects(),
        # datasets and custom metrics (projections/catalog.py): before the runs, which word a custom reward by
        # its metric's name and version, and before the feed
        *catalog_projections(),
        Runs(),
        RunDetails(),
        Rounds(),
        Samples(),
        Timeline(),
        *access_projections(),  # members and API tokens (projections/access.py)
        *steps_projections(),  # SFT and DPO steps (projections/steps.py)
        *evaluation_projections(),  # evaluations and training loops (projections/evaluations.py)
        Feed(),
    ]
