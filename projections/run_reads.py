"""The reads of runs: the Runs list, the runs a worker holds, and one run's detail, rounds, samples, steps and
timeline. A mixin of `TableReadModels` (projections/store.py), which gives it `tables`."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any
from uuid import UUID

from domain.runs import messages
from domain.runs.objectives import OBJECTIVE_NAMES
from domain.runs.run import RUNNING
from domain.runs.run_settings import RunSettings
from domain.storage_keys import rollout_key
from projections.rows import (
    ROUND_SECONDS,
    RolloutFileRow,
    RoundRow,
    RunDetail,
    RunRow,
    StepRow,
    TimelineEntry,
    continues_from,
    frozen_from,
    read_row,
)
from projections.tables import Row, Tables

LIVE_STATES = ("queued", "preparing", "training", "saving_adapter")


def is_live(state: str, kind: str, stopped: bool) -> bool:
    """Whether more will happen to a run by itself. A full run that did all its rounds shows Adapter ready and
    then Completed; one that stopped early (time limit, metric failures, memory) stays Adapter ready: it ended.
    """
    return state in LIVE_STATES or (state == "adapter_ready" and kind == "full" and not stopped)


def _json(value: str | None) -> Any:
    return json.loads(value) if value else None


# The rounds table's columns a RoundRow reads: its fields as they are, and two read from JSON (the run's id is the
# one asked for). A run page reads 1,000 rounds at once: one named list, each row made at once (rows.frozen_from).
_ROUND_JSON = ("failures_by_kind", "sandbox_failed_batches")
_ROUND_COLUMNS = (*(f.name for f in fields(RoundRow) if f.name not in ("run_id", *_ROUND_JSON)),
                 *(f"{name}_json" for name in _ROUND_JSON))


def _round_row(run_id: UUID, row: Row) -> RoundRow:
    for name in _ROUND_JSON:
        row[name] = _json(row.pop(f"{name}_json"))
    row["updated"] = bool(row["updated"])
    row["run_id"] = run_id
    return frozen_from(RoundRow, row)


def _run_row(r: Row) -> RunRow:
    return read_row(RunRow, r, rounds_done=max(r["rounds_scored"] - 1, 0))


class RunReads:
    tables: Tables  # provided by TableReadModels

    def runs(self, org_id: UUID, project_id: UUID | None = None) -> list[RunRow]:
        where = {"org_id": str(org_id)}
        if project_id is not None:
            where["project_id"] = str(project_id)
        rows = self.tables.select("runs", where, order=[("created_position", True)])
        return [_run_row(r) for r in rows if r["state"] != "deleted"]  # a deleted draft leaves the list

    def live_runs(self) -> list[RunRow]:
        """Every organization's runs that a worker holds or should hold (Queued, Preparing, Training, Saving
        adapter), oldest first: what the reconciler checks on each pass (index runs_by_state)."""
        rows = [row for state in RUNNING for row in self.tables.select("runs", {"state": state})]
        return [_run_row(r) for r in sorted(rows, key=lambda row: row["created_position"])]

    def merging_runs(self) -> list[UUID]:
        """Every organization's runs whose Merge model is under way (index run_details_by_merge_state)."""
        return [UUID(r["id"]) for r in self.tables.select("run_details", {"merge_state": "merging"})]

    def run(self, org_id: UUID, run_id: UUID) -> RunDetail | None:
        rows = self.tables.select("run_details", {"id": str(run_id), "org_id": str(org_id)})
        if not rows:
            return None
        r = rows[0]
        stop = _json(r["stop_json"])
        adapter = _json(r["adapter_json"])
        done = max(r["rounds_scored"] - 1, 0)
        total = r["rounds_total"]
        settings = json.loads(r["settings_json"])
        objective = RunSettings.from_saved(settings).objective
        ended = None
        stop_log_line = None
        if stop is not None and objective != "rl":  # SFT and DPO: steps, and the last step's adapter
            ended = messages.stopped_steps_line(stop["reason"], stop["after_round"])
            stop_log_line = messages.stopped_steps_log_line(
                OBJECTIVE_NAMES.get(objective, objective.upper()), stop["reason"], stop["after_round"]
            )
        elif stop is not None:
            ended = messages.stopped_line(stop["reason"], stop["after_round"], total, stop["best_round"])
            stop_log_line = messages.stopped_log_line(stop["reason"], stop["after_round"], total, stop["best_round"])
        elif r["state"] in ("adapter_ready", "completed") and r["kind"] == "full" and objective != "rl":
            ended = messages.completed_steps_line(adapter["best_round"] if adapter else 0)
        elif r["state"] in ("adapter_ready", "completed") and r["kind"] == "full":
            ended = messages.completed_line(total, r["best_round"] or 0)
        elif r["state"] == "failed":
            ended = "Failed"
        elif r["state"] == "cancelled":
            ended = "Cancelled"
        kept = None
        if adapter is not None and adapter["best_round"] == 0 and objective == "rl":
            kept = messages.KEPT_STARTING_ADAPTER
        return read_row(
            RunDetail,
            r,
            settings=settings,
            rounds_done=done,
            progress=min(done / total, 1.0) if total else 0.0,
            adapter=adapter,
            ended=ended,
            note=stop["note"] if stop else None,
            stop_reason=stop["reason"] if stop else None,
            stop_log_line=stop_log_line,
            kept_starting_adapter=kept,
            trial_report=_json(r["trial_report_json"]),
            merge=_json(r["merge_json"]),
            duplicates=[UUID(value) for value in json.loads(r["duplicates_json"])],
            live=is_live(r["state"], r["kind"], stop is not None),
            start_run_name=self._run_name(org_id, r["start_run"]),
            continues_from=continues_from(r["state"], r["kind"], objective, stop["reason"] if stop else None,
                                          r["retried_as"], done),
            alarms=_json(r.get("alarms_json")) or [],
        )

    def _run_name(self, org_id: UUID, run_id: str | None) -> str:
        """A run's name as the console shows it ("Untitled run" when it has none); "" for no run."""
        if not run_id:
            return ""
        rows = self.tables.select("run_details", {"id": str(run_id), "org_id": str(org_id)})
        return (rows[0]["name"] or "Untitled run") if rows else ""

    def rounds(self, org_id: UUID, run_id: UUID, after: int | None = None, newest: int | None = None) -> list[RoundRow]:
        """The run's rounds, newest first; `after`: only those numbered above it; `newest`: at most that many."""
        rows = self.tables.select(
            "rounds", {"run_id": str(run_id), "org_id": str(org_id)}, order=[("round_number", True)],
            after=("round_number", after) if after is not None else None, limit=newest, columns=_ROUND_COLUMNS,
        )
        return [_round_row(run_id, r) for r in rows]

    def round_count(self, org_id: UUID, run_id: UUID) -> int:
        return self.tables.count("rounds", {"run_id": str(run_id), "org_id": str(org_id)})

    def round_figures(self, org_id: UUID, run_id: UUID, figures: tuple[str, ...],
                      after: int | None = None) -> dict[str, list[Any]]:
        """The rounds' `figures` alone (columns of their rows), each a list of its values oldest first: what a chart
        draws of the rounds, without the rest of their rows; `after`: only the rounds numbered above it."""
        rows = self.tables.select_values("rounds", {"run_id": str(run_id), "org_id": str(org_id)}, figures,
                                         order=[("round_number", False)],
                                         after=("round_number", after) if after is not None else None)
        return dict(zip(figures, map(list, zip(*rows, strict=True)), strict=True)) if rows else {f: [] for f in figures}

    def round_seconds(self, org_id: UUID, run_id: UUID, after: int | None = None) -> list[tuple[int, float]]:
        """Each round's number and the seconds it took (sampling, grading, update, validation), from those columns
        alone; `after`: only the rounds numbered above it."""
        rows = self.tables.select_values("rounds", {"run_id": str(run_id), "org_id": str(org_id)},
                                         ("round_number", *ROUND_SECONDS),
                                         after=("round_number", after) if after is not None else None)
        return [(row[0], sum(row[1:])) for row in rows]  # summed in ROUND_SECONDS' order, as RoundRow.seconds

    def samples(self, org_id: UUID, run_id: UUID, newest: int | None = None) -> list[RolloutFileRow]:
        """The run's rollout files, newest first (only the `newest` ones where given): the trainer writes
        round-NNN.jsonl for every round it trains (from round 1; round 0 only validates), when it scores the round,
        so the rounds' rows index them."""
        rows = self.tables.select(
            "rounds",
            {"run_id": str(run_id), "org_id": str(org_id)},
            order=[("round_number", True)],
            after=("round_number", 0),
            limit=newest,
            columns=("round_number", "scored_at"),
        )
        return [
            RolloutFileRow(run_id, r["round_number"], rollout_key(run_id, r["round_number"]), r["scored_at"])
            for r in rows
        ]

    def steps(self, org_id: UUID, run_id: UUID) -> list[StepRow]:
        """An SFT or DPO run's steps, newest first."""
        rows = self.tables.select("run_steps", {"run_id": str(run_id), "org_id": str(org_id)}, order=[("step", True)])
        return [read_row(StepRow, r) for r in rows]

    def timeline(self, org_id: UUID, run_id: UUID, newest: int | None = None) -> list[TimelineEntry]:
        """A run's (or a probe's) events in words, oldest first; only the `newest` ones where given."""
        where = {"run_id": str(run_id), "org_id": str(org_id)}
        rows = self.tables.select("timeline", where, order=[("log_position", newest is not None)], limit=newest)
        if newest is not None:
            rows.reverse()
        return [
            TimelineEntry(
                r["log_position"],
                r["occurred_at"],
                r["actor_kind"],
                r["actor_name"],
                r["event_type"],
                r["sentence"],
            )
            for r in rows
        ]

    def timeline_length(self, org_id: UUID, run_id: UUID) -> int:
        """How many events a run's timeline holds."""
        return self.tables.count("timeline", {"run_id": str(run_id), "org_id": str(org_id)})
