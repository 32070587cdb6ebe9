"""What the run page shows, from the read models: the run, its rounds and metrics, samples, timeline, actions.

Each part of the page re-renders alone (an htmx partial). While the run is live (`RunDetail.live`) a part
polls every 2 s, sending the `stamp` of what it shows; when nothing changed the server answers 204 and htmx
swaps nothing. Once the run has ended, the part re-renders without its poll, and polling stops.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from app.runs.metrics import reward_chart, small_charts, tiles, trends
from app.runs.steps import loss_chart, objective_of
from app.shell.identity import Identity
from domain.runs.run import FINISHED_WITH_ADAPTER
from domain.runs.settings import RunDraft, trial_confirmation
from projections.rows import RoundRow, RunDetail
from projections.store import ReadModels


def stamp(run: RunDetail) -> str:
    """Changes whenever anything the run page shows changes (every event of a run touches one of these)."""
    merge = run.merge["state"] if run.merge else None
    seen = (run.updated_at, run.state, run.rounds_done, run.trial_report is not None, run.adapter is not None, merge)
    return hashlib.blake2s(repr(seen).encode(), digest_size=6).hexdigest()


def run_page_context(read_models: ReadModels, identity: Identity, run: RunDetail, *, tab: str) -> dict[str, Any]:
    rounds = read_models.rounds(identity.organization_id, run.id) if tab == "overview" else []
    objective = objective_of(run)
    steps = read_models.steps(identity.organization_id, run.id) if tab == "overview" and objective != "rl" else []
    return {
        "objective": objective,
        "steps": steps,
        "steps_chart": json.dumps(loss_chart(steps)),
        "run": run,
        "live": run.live,
        "stamp": stamp(run),
        "tab": tab,
        "rounds": rounds,
        "best": best_round_row(run, rounds),
        "timeline": read_models.timeline(identity.organization_id, run.id) if tab == "timeline" else [],
        "settings": settings_rows(run),
        "time_left": time_left(run, rounds),
        "launch_confirmation": launch_confirmation(run),
        "chart": json.dumps(reward_chart(rounds)),
        "trained": any(r.round_number >= 1 for r in rounds),
        "round_zero": next((r for r in rounds if r.round_number == 0), None),
        "trends": trends(rounds),
        "tiles": tiles(rounds),
        "small_charts": [json.dumps(chart) for chart in small_charts(rounds)],
        "trial": trial_rows(run),
        "finished_with_adapter": run.state in FINISHED_WITH_ADAPTER and run.adapter is not None,
        "merge": run.merge,
        "merging": run.merge is not None and run.merge["state"] == "merging",
        "identity": identity,
        "section": "runs",
    }


def best_round_row(run: RunDetail, rounds: list[RoundRow]) -> RoundRow | None:
    return next((r for r in rounds if r.round_number == run.best_round), None)


def settings_rows(run: RunDetail) -> list[tuple[str, str]]:
    """000's Run: Rounds, Prompts per round, Answers per prompt, Longest sampled answer, Reward, Starts from."""
    training = run.settings["training"]
    head = [
        ("Run", "Training trial" if run.kind == "trial" else "Full training"),
        ("Model", model_label(run.model)),
    ]
    rl = training.get("rl")
    if training.get("objective", "rl") != "rl" or not rl:  # an SFT or DPO run: its own block, as saved
        block = training.get(training.get("objective", "")) or {}
        return [*head, ("Objective", str(training.get("objective", "")).upper())] + [
            (key.replace("_", " ").capitalize(), str(value)) for key, value in block.items() if value is not None
        ]
    return [
        *head,
        ("Rounds", "1 (a trial)" if run.kind == "trial" else str(rl["rounds"])),
        ("Prompts per round", str(rl["prompts_per_round"])),
        ("Answers per prompt", str(rl["answers_per_prompt"])),
        ("Longest sampled answer", f"{rl['max_answer_tokens']} tokens"),
        ("Reward", run.reward_label or "—"),
        ("Starts from", "the base model" if run.start_run is None else "the run"),
    ]


def model_label(model: str) -> str:
    """A model as people name it: a hub id as is, a local folder by its own name.

    >>> model_label("/srv/verity/data/models/tiny-math"), model_label("Qwen/Qwen2.5-0.5B-Instruct")
    ('tiny-math', 'Qwen/Qwen2.5-0.5B-Instruct')
    """
    return model.rstrip("/").rsplit("/", 1)[-1] if model.startswith(("/", ".")) else model


def duration(seconds: float) -> str:
    """
    >>> duration(30), duration(150), duration(3 * 3600 + 120)
    ('1 min', '3 min', '3 h 2 min')
    """
    hours, rest = divmod(round(seconds), 3600)
    return f"{hours} h {rest // 60} min" if hours else f"{max(round(rest / 60), 1)} min"


def time_left(run: RunDetail, rounds: list[RoundRow]) -> str:
    """Time left (est.): the mean time of the rounds trained so far, times the rounds still to go."""
    if run.state not in ("preparing", "training"):
        return ""
    trained = [r for r in rounds if r.round_number >= 1]
    if not trained:
        return "estimated once the first round is scored"
    mean = sum(r.sampling_seconds + r.grading_seconds + r.update_seconds + r.validation_seconds for r in trained)
    return duration(mean / len(trained) * max(run.rounds_total - run.rounds_done, 0))


def launch_confirmation(run: RunDetail) -> str:
    if run.kind == "trial":
        return trial_confirmation(RunDraft.from_saved(run.settings))
    return (
        f"A full run: {run.rounds_total} rounds, stopped by its time limit of "
        f"{run.settings['training']['time_limit_hours']:g} hours at the latest."
    )


def trial_rows(run: RunDetail) -> list[tuple[str, str]]:
    """000's Training trial report: the tiles, the seconds of each part, and the full run's estimate."""
    report = run.trial_report
    if not report:
        return []

    def seconds(key: str) -> str:
        value = report.get(key)
        return "—" if value is None else f"{value:.1f} s"

    peak, total = report.get("peak_memory_bytes"), report.get("gpu_memory_bytes")
    memory = "—"
    if peak:
        memory = f"{peak / 2**30:.2f} GiB"
        if total:
            memory += f" of {total / 2**30:.0f} GiB ({peak / total:.0%})"
    rows = [
        ("Formatting", report.get("formatting") or "—"),
        ("Seconds per round", seconds("seconds_per_round")),
        ("Peak GPU memory", memory),
        ("Sampling", seconds("sampling_seconds")),
        ("Grading", seconds("grading_seconds")),
        ("Update", seconds("update_seconds")),
        ("Validation", seconds("validation_seconds")),
    ]
    if report.get("finished"):
        full = report.get("full_training_seconds")
        rounds = report.get("full_training_rounds")
        cost = report.get("full_gpu_cost")
        rows.append(("Full training time", "—" if full is None else f"{duration(full)} for {rounds} rounds"))
        rows.append(("Full GPU cost", "— (this GPU has no price)" if cost is None else f"${cost:,.2f}"))
    return rows
