"""The projections of evaluations and training loops, and their reads (same rules as projections/base.py).

Each evaluation and loop is filed under its organization in the shared directory, so the event feed carries them.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from domain.evaluations.benchmarks import BENCHMARKS
from domain.evaluations.evaluation import STATUS_NAMES as EVALUATION_STATUS
from domain.evaluations.scoring import main_metric_label
from domain.loops.loop import STATUS_NAMES as LOOP_STATUS
from domain.loops.rules import best_round
from domain.rewards.batch_failures import MetricFailures
from projections.base import Event, Handler, Projection
from projections.directory import file_in_directory
from projections.tables import Tables, Tx


def _source_label(source: dict[str, Any]) -> str:
    if source["kind"] == "benchmark":
        return f"{BENCHMARKS.get(source['name'], source['name'])} ({source.get('count')} problems)"
    return f"{source.get('label', 'Dataset version')} · test examples"


def source_key(source: dict[str, Any]) -> str:
    """"dataset_version:<id>" or "benchmark:<name>": what a run's Baseline must have tested."""
    if source["kind"] == "benchmark":
        return f"benchmark:{source['name']}"
    return f"dataset_version:{source.get('id')}"


class ProjectWork(Projection):
    """An evaluation, a loop or an experiment: a row of a project's, named after its projection and filed in the
    directory under its organization, queued when created; its state then moves, and each change stamps `updated_at`."""

    kind: str  # as the directory files it

    def _create(self, tx: Tx, e: Event, **columns: Any) -> None:
        d = e.data
        file_in_directory(tx, e, self.kind, d["name"])
        tx.upsert(self.name, {
            "id": str(e.aggregate_id), "org_id": str(d["org_id"]), "project_id": str(d["project_id"]),
            "name": d["name"], "state": "queued", **columns, "created_at": e.time, "updated_at": e.time,
        })

    def _set(self, tx: Tx, e: Event, **values: Any) -> None:
        tx.update(self.name, {"id": str(e.aggregate_id)}, {"updated_at": e.time, **values})

    def _state(self, tx: Tx, e: Event, state: str, **values: Any) -> None:
        self._set(tx, e, state=state, **values)

    def _created(self, tx: Tx, e: Event) -> None:
        raise NotImplementedError

    def _created_and_failed(self, aggregate: str) -> dict[str, Handler]:
        """The handlers every kind of work shares: `aggregate`'s Created event, and its Failed event's message."""
        return {
            f"{aggregate}.Created": self._created,
            f"{aggregate}.Failed": lambda tx, e: self._state(tx, e, "failed", failure=e.data["message"]),
        }


class Evaluations(ProjectWork):
    name = "evaluations"
    kind = "evaluation"

    def __init__(self) -> None:
        self.handlers = self._created_and_failed("Evaluation") | {
            "Evaluation.Started": lambda tx, e: self._state(tx, e, "running"),
            "Evaluation.Completed": self._completed,
            "Evaluation.Cancelled": lambda tx, e: self._state(tx, e, "cancelled"),
        }

    def _created(self, tx: Tx, e: Event) -> None:
        d = e.data
        self._create(
            tx, e, model=d["model"], source_label=_source_label(d["source"]), source_key=source_key(d["source"]),
            scoring_json=json.dumps(d["scoring"]), main_metric=d["main_metric"],
            metric_label=main_metric_label(d["scoring"], d["main_metric"]), adapter_run=_str(d.get("adapter_run")),
            baseline_id=_str(d.get("baseline_id")), score=None, breakdown_json=None, failure=None,
            metric_failures_json=None,
        )

    def _completed(self, tx: Tx, e: Event) -> None:
        row = tx.get("evaluations", {"id": str(e.aggregate_id)})
        metric_failures = e.data.get("metric_failures")  # absent from events recorded before it was kept
        self._state(tx, e, "completed", score=e.data["score"], breakdown_json=json.dumps(e.data["breakdown"]),
                    metric_failures_json=json.dumps(metric_failures) if metric_failures else None)
        for result in e.data["results"]:
            tx.upsert("evaluation_results", {
                "evaluation_id": str(e.aggregate_id), "example_index": int(result["index"]),
                "org_id": row["org_id"] if row else "", "prompt": result["prompt"], "reference": result["reference"],
                "answer": result["answer"], "score": float(result["score"]), "cut_off": int(bool(result["cut_off"])),
                "failure": result.get("failure"), "metric_error": result.get("metric_error"),
            })


class Loops(ProjectWork):
    name = "loops"
    kind = "loop"

    def __init__(self) -> None:
        self.handlers = self._created_and_failed("TrainingLoop") | {
            "TrainingLoop.RoundStarted": self._round_started,
            "TrainingLoop.Benchmarking": lambda tx, e: self._state(tx, e, "benchmarking"),
            "TrainingLoop.RoundScored": self._round_scored,
            "TrainingLoop.Ended": lambda tx, e: self._state(tx, e, e.data["status"]),
            "TrainingLoop.Stopped": lambda tx, e: self._state(tx, e, "stopped"),
        }

    def _created(self, tx: Tx, e: Event) -> None:
        d = e.data
        self._create(
            tx, e, benchmark=d["benchmark"], score_column=d["score_column"], target=d["target"],
            max_rounds=d["max_rounds"], give_up_after=d["give_up_after"],
            reclaim_storage=int(bool(d["reclaim_storage"])), failure=None, best_round=None, rounds_run=0,
        )

    def _round_started(self, tx: Tx, e: Event) -> None:
        loop = tx.get("loops", {"id": str(e.aggregate_id)})
        number = int(e.data["number"])
        previous = tx.get("loop_rounds", {"loop_id": str(e.aggregate_id), "round_number": number - 1})
        if previous is not None and previous.get("ended_at") is None:
            tx.update("loop_rounds", {"loop_id": str(e.aggregate_id), "round_number": number - 1}, {"ended_at": e.time})
        tx.upsert("loop_rounds", {
            "loop_id": str(e.aggregate_id), "round_number": number, "org_id": loop["org_id"] if loop else "",
            "run_id": str(e.data["run_id"]), "evaluation_id": None, "score": None, "started_at": e.time,
            "ended_at": None,
        })
        self._state(tx, e, "training", rounds_run=number)

    def _round_scored(self, tx: Tx, e: Event) -> None:
        key = {"loop_id": str(e.aggregate_id), "round_number": int(e.data["number"])}
        tx.update("loop_rounds", key, {"score": e.data["score"], "ended_at": e.time})
        self._set(tx, e, best_round=e.data["best_round"])


class LoopEvaluationLinks(Projection):
    """A round's evaluation id, from the loop's Benchmarking event."""

    name = "loop_evaluation_links"

    def __init__(self) -> None:
        self.handlers = {"TrainingLoop.Benchmarking": self._linked}

    def _linked(self, tx: Tx, e: Event) -> None:
        tx.update("loop_rounds", {"loop_id": str(e.aggregate_id), "round_number": int(e.data["number"])},
                  {"evaluation_id": str(e.data["evaluation_id"])})


class Experiments(ProjectWork):
    name = "experiments"
    kind = "experiment"

    def __init__(self) -> None:
        self.handlers = self._created_and_failed("Experiment") | {
            "Experiment.Measuring": lambda tx, e: self._state(
                tx, e, "measuring", baseline_id=str(e.data["evaluation_id"])),
            "Experiment.BaseMeasured": lambda tx, e: self._set(tx, e, base_score=e.data["score"]),
            "Experiment.Training": lambda tx, e: self._state(tx, e, "training", run_id=str(e.data["run_id"])),
            "Experiment.Evaluating": lambda tx, e: self._state(
                tx, e, "evaluating", evaluation_id=str(e.data["evaluation_id"]),
                training_ended=e.data.get("training_ended")),
            "Experiment.Completed": lambda tx, e: self._state(tx, e, "completed",
                                                             adapter_score=e.data["adapter_score"]),
            "Experiment.Stopped": lambda tx, e: self._state(tx, e, "stopped"),
        }

    def _created(self, tx: Tx, e: Event) -> None:
        from domain.experiments.commands import reward_line

        d = e.data
        self._create(
            tx, e, source_label=_source_label(d["source"]),
            metric_label=main_metric_label(d["scoring"], d["main_metric"]),
            reward_line=reward_line(d["scoring"], d["main_metric"], d["reward"], d["reward_is_main_metric"]),
            trains=int(d.get("reused_run") is None), baseline_id=_str(d.get("baseline_id")),
            run_id=_str(d.get("reused_run")), evaluation_id=None, training_ended=None, base_score=None,
            adapter_score=None, failure=None,
        )


def evaluation_projections() -> list[Any]:
    return [Evaluations(), Loops(), LoopEvaluationLinks(), Experiments()]


def _experiment_view(tables: Tables, row: dict[str, Any]) -> dict[str, Any]:
    """With the run's round while it trains ("Round 3 of 20") and the difference once compared."""
    from domain.experiments.experiment import LIVE, STATUS_NAMES

    run = tables.select("runs", {"id": row["run_id"]})[0] if row["run_id"] else None
    training_round = None
    if run is not None and row["state"] == "training":
        current = min(max(int(run["rounds_scored"]), 1), int(run["rounds_total"]))
        training_round = f"Round {current} of {run['rounds_total']}"
    base, adapter = row["base_score"], row["adapter_score"]
    return {
        **row, "status": STATUS_NAMES[row["state"]], "live": row["state"] in LIVE, "training_round": training_round,
        "run_status": run["status_line"] if run else None,
        "difference": adapter - base if base is not None and adapter is not None else None,
    }


def experiments(tables: Tables, org_id: UUID) -> list[dict[str, Any]]:
    rows = tables.select("experiments", {"org_id": str(org_id)}, order=[("created_at", True)])
    return [_experiment_view(tables, row) for row in rows]


def experiment(tables: Tables, org_id: UUID, experiment_id: UUID) -> dict[str, Any] | None:
    rows = tables.select("experiments", {"org_id": str(org_id), "id": str(experiment_id)})
    return _experiment_view(tables, rows[0]) if rows else None


def _str(value: Any) -> str | None:
    return str(value) if value is not None else None


# --- reads ---------------------------------------------------------------------------------------------------------
def _evaluation_view(row: dict[str, Any]) -> dict[str, Any]:
    """With the custom metric's failures, when it had some, and what the page says of them."""
    failures = json.loads(row["metric_failures_json"]) if row.get("metric_failures_json") else None
    return {**row, "status": EVALUATION_STATUS[row["state"]], "breakdown": json.loads(row["breakdown_json"] or "{}"),
            "live": row["state"] in ("queued", "running"), "metric_failures": failures,
            "metric_failures_note": MetricFailures.from_dict(failures).note() if failures else None}


def evaluations(tables: Tables, org_id: UUID) -> list[dict[str, Any]]:
    rows = tables.select("evaluations", {"org_id": str(org_id)}, order=[("created_at", True)])
    return [_evaluation_view(row) for row in rows]


def evaluation(tables: Tables, org_id: UUID, evaluation_id: UUID) -> dict[str, Any] | None:
    rows = tables.select("evaluations", {"org_id": str(org_id), "id": str(evaluation_id)})
    return _evaluation_view(rows[0]) if rows else None


def running_evaluations(tables: Tables) -> list[dict[str, Any]]:
    """Every organization's evaluations a worker is scoring now (a loop's and an experiment's too)."""
    return tables.select("evaluations", {"state": "running"}, order=[("updated_at", False)])


def evaluation_results(tables: Tables, evaluation_id: UUID) -> list[dict[str, Any]]:
    return tables.select("evaluation_results", {"evaluation_id": str(evaluation_id)}, order=[("example_index", False)])


def comparison(tables: Tables, org_id: UUID, evaluation_id: UUID) -> dict[str, Any] | None:
    """Score against baseline: the adapter's evaluation beside its baseline, with the difference, per example too."""
    adapter = evaluation(tables, org_id, evaluation_id)
    if adapter is None or not adapter["baseline_id"]:
        return None
    baseline = evaluation(tables, org_id, UUID(adapter["baseline_id"]))
    if baseline is None:
        return None
    base_results = {r["example_index"]: r for r in evaluation_results(tables, UUID(baseline["id"]))}
    rows = []
    for result in evaluation_results(tables, evaluation_id):
        before = base_results.get(result["example_index"])
        rows.append({**result, "baseline_answer": before["answer"] if before else "",
                     "baseline_score": before["score"] if before else None,
                     "difference": result["score"] - before["score"] if before else None})
    difference = (
        adapter["score"] - baseline["score"] if adapter["score"] is not None and baseline["score"] is not None else None
    )
    return {"adapter": adapter, "baseline": baseline, "difference": difference, "rows": rows}


def _loop_view(row: dict[str, Any], rounds: list[dict[str, Any]]) -> dict[str, Any]:
    scores = [r["score"] for r in rounds]
    best = best_round(scores)
    first = next((s for s in scores if s is not None), None)
    return {
        **row, "status": LOOP_STATUS[row["state"]], "live": row["state"] in ("queued", "training", "benchmarking"),
        "benchmark_name": BENCHMARKS.get(row["benchmark"], row["benchmark"]), "best_round": best,
        "best_score": scores[best - 1] if best else None,
        "gain_over_first": (scores[best - 1] - first) if best and first is not None else None,
    }


def loops(tables: Tables, org_id: UUID) -> list[dict[str, Any]]:
    rows = tables.select("loops", {"org_id": str(org_id)}, order=[("created_at", True)])
    return [_loop_view(row, loop_rounds(tables, UUID(row["id"]))) for row in rows]


def loop(tables: Tables, org_id: UUID, loop_id: UUID) -> dict[str, Any] | None:
    rows = tables.select("loops", {"org_id": str(org_id), "id": str(loop_id)})
    return _loop_view(rows[0], loop_rounds(tables, loop_id)) if rows else None


def loop_rounds(tables: Tables, loop_id: UUID) -> list[dict[str, Any]]:
    """Oldest first, each with its delta to the previous scored round and whether it is the BEST round."""
    rows = tables.select("loop_rounds", {"loop_id": str(loop_id)}, order=[("round_number", False)])
    best = best_round([r["score"] for r in rows])
    previous: float | None = None
    for row in rows:
        row["delta"] = row["score"] - previous if row["score"] is not None and previous is not None else None
        row["is_best"] = row["round_number"] == best
        if row["score"] is not None:
            previous = row["score"]
    return rows


def completed_baselines(
    tables: Tables, org_id: UUID, dataset_version: str | None = None, *, every_source: bool = False
) -> list[tuple[str, str]]:
    """(evaluation id, "Baseline · gsm8k-mini v3 · test examples · 41%") for each completed evaluation of the base
    model of the run's dataset version, newest first: what a full run's Baseline select offers. With no version
    (the built-in Math Pairs task), the Math Pairs held-out baselines; with `every_source`, those of any test
    examples (an experiment that reuses a baseline takes its test examples too)."""
    wanted = f"dataset_version:{dataset_version}" if dataset_version else "benchmark:math_pairs_held_out"
    where = {"org_id": str(org_id), "state": "completed"} | ({} if every_source else {"source_key": wanted})
    rows = tables.select("evaluations", where, order=[("created_at", True)])
    return [
        (row["id"], f"{row['name']} · {row['source_label']} · {row['metric_label']} · {row['score'] * 100:.0f}%")
        for row in rows
        if row["adapter_run"] is None
    ]
