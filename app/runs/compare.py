"""Compare runs (`/runs/compare?run=<id>&run=<id>`, `GET /api/runs/compare`): two to six runs of one project, their
settings side by side (those that differ first), round by round their reward, validation, signal, cut-off share,
answer length and seconds on one chart each, a line a run, and the prompts they all drew (app/runs/compare_prompts.py).

Only runs of the viewer's organization are found (another's look like none), and only runs of one project compare:
their models are the same, so their numbers mean the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from app.runs.compare_settings import SettingsCompared, settings_compared
from domain.errors import DomainError, NotFound
from domain.runs.run_settings import RunSettings
from projections.rows import RoundRow, RunDetail
from projections.store import ReadModels

FEWEST_RUNS, MOST_RUNS = 2, 6
# one color a run, the same on every chart and beside its name in the tables
RUN_COLORS = ("#2952cc", "#b35900", "#1a7f37", "#7a3fbf", "#be123c", "#0f766e")


class RunsNotComparable(DomainError):
    """The runs asked for cannot be compared (too few, too many, of different projects): answered 400."""


@dataclass(frozen=True)
class ComparedRun:
    run: RunDetail
    settings: RunSettings
    rounds: list[RoundRow]  # oldest first, round 0 (the starting adapter's validation) included
    label: str  # the run's name on the charts: its name, with its id's start where two runs share one
    color: str


def runs_to_compare(read_models: ReadModels, org_id: UUID, run_ids: Sequence[UUID]) -> list[ComparedRun]:
    """The runs asked for, in the order asked (a run named twice counts once), with their rounds; refused in words
    when they are too few or too many, not all of this organization, or not all of one project."""
    ids = list(dict.fromkeys(run_ids))
    if len(ids) < FEWEST_RUNS:
        raise RunsNotComparable("Choose at least two runs to compare.")
    if len(ids) > MOST_RUNS:
        raise RunsNotComparable(f"Compare at most {MOST_RUNS} runs at a time; you chose {len(ids)}.")
    runs = []
    for run_id in ids:
        run = read_models.run(org_id, run_id)
        if run is None:
            raise NotFound(f"There is no run {run_id} in this organization.")
        runs.append(run)
    if len({run.project_id for run in runs}) > 1:
        raise RunsNotComparable(
            "These runs belong to different projects, whose models differ: compare runs of one project."
        )
    names = [run.name or "Untitled run" for run in runs]
    return [
        ComparedRun(
            run=run,
            settings=RunSettings.from_saved(run.settings),
            rounds=sorted(read_models.rounds(org_id, run.id), key=lambda r: r.round_number),
            label=name if names.count(name) == 1 else f"{name} · {str(run.id)[:8]}",
            color=RUN_COLORS[place],
        )
        for place, (run, name) in enumerate(zip(runs, names, strict=True))
    ]


def compared_settings(runs: Sequence[ComparedRun]) -> SettingsCompared:
    """The runs' settings side by side, worded as the run page words them where a value alone says little."""
    words = [
        {"reward": run.run.reward_label, "start_run": run.run.start_run_name, "kind": _kind_words(run.run.kind)}
        for run in runs
    ]
    return settings_compared([run.settings for run in runs], words)


def _kind_words(kind: str) -> str:
    return "Training trial" if kind == "trial" else "Full training"


@dataclass(frozen=True)
class RoundSeries:
    """A number each round gives, as one chart draws it for every run."""

    key: str  # its name in the API's answer
    title: str
    label: str  # what the chart shows, in words (the chart's accessible name)
    unit: str  # the y axis's title; "%" draws it from 0 to 100%
    value: Callable[[RoundRow], float | None]
    from_round_zero: bool = False  # round 0 is the starting adapter: it has a validation and nothing else


def _share(value: float | None) -> float | None:
    return None if value is None else round(value * 100, 2)


def _seconds(r: RoundRow) -> float:
    return r.sampling_seconds + r.grading_seconds + r.update_seconds + r.validation_seconds


SERIES = (
    RoundSeries("reward", "Reward", "Mean training score of each round's sampled answers, by round", "%",
                lambda r: r.reward),
    RoundSeries("validation", "Validation", "Mean score on the fixed validation prompts by round (round 0: the "
                "starting adapter)", "%", lambda r: r.validation_reward, from_round_zero=True),
    RoundSeries("signal", "Signal", "Share of prompt groups that taught, their answers not all scored alike, by round",
                "%", lambda r: r.signal),
    RoundSeries("cut_off", "Cut-off share", "Share of sampled answers cut off at the longest sampled answer, by "
                "round", "%", lambda r: r.cut_off),
    RoundSeries("answer_tokens", "Answer length", "Mean tokens per sampled answer, by round", "tokens",
                lambda r: r.mean_answer_tokens),
    RoundSeries("seconds", "Seconds per round", "Seconds each round took: sampling, grading, update and validation",
                "seconds", _seconds),
)


def _rounds_of(run: ComparedRun, series: RoundSeries) -> list[RoundRow]:
    return [r for r in run.rounds if r.round_number >= (0 if series.from_round_zero else 1)]


def round_charts(runs: Sequence[ComparedRun]) -> list[dict[str, Any]]:
    """One chart a series, a line a run, over the rounds any of them scored (app/static/charts.js draws them); a
    run that had not reached a round has a gap there."""
    charts = []
    for series in SERIES:
        rounds = sorted({r.round_number for run in runs for r in _rounds_of(run, series)})
        lines = []
        for run in runs:
            by_round = {r.round_number: series.value(r) for r in _rounds_of(run, series)}
            values = [by_round.get(number) for number in rounds]
            shown = [_share(v) if series.unit == "%" else (None if v is None else round(v, 2)) for v in values]
            lines.append({"name": run.label, "y": shown, "color": run.color})
        # named "heading", not "title": charts.js draws a chart with a title small, without its legend of runs
        charts.append({
            "key": series.key, "heading": series.title, "label": series.label, "x": rounds, "series": lines,
            "percent": series.unit == "%", "y_title": series.unit,
            "empty": not any(v is not None for line in lines for v in line["y"]),
        })
    return charts


def comparison_json(runs: Sequence[ComparedRun], settings: SettingsCompared, prompts: dict[str, Any]) -> dict[str, Any]:
    """`GET /api/runs/compare`: the settings that differ and those shared, each run's rounds with the six numbers
    (shares from 0 to 1, as the other endpoints give them), and the prompts every run drew."""
    return {
        "runs": [
            {"id": str(run.run.id), "name": run.run.name, "state": run.run.state, "status": run.run.status_line,
             "best_round": run.run.best_round, "best_validation": run.run.best_validation,
             "rounds": [
                 {"round": r.round_number, **{
                     series.key: series.value(r) if r.round_number >= 1 or series.from_round_zero else None
                     for series in SERIES
                 }}
                 for r in run.rounds
             ]}
            for run in runs
        ],
        "project_id": str(runs[0].run.project_id),
        "settings": {
            "differing": [{"setting": s.name, "label": s.label, "values": list(s.values)} for s in settings.differing],
            "shared": [{"setting": s.name, "label": s.label, "value": s.values[0]} for s in settings.shared],
        },
        "prompts": prompts,
    }
