"""What the run page shows, from the read models: the run, its rounds, its timeline, whether it is live."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from app.shell.identity import Identity
from domain.runs.run import ADAPTER_READY, RUNNING
from domain.runs.settings import RunDraft, trial_confirmation
from projections.rows import RoundRow, RunDetail
from projections.store import ReadModels

# A run shows Adapter ready and usually Completed right after: keep polling a little so the page sees it.
SETTLING_SECONDS = 30


def is_live(run: RunDetail, now: datetime | None = None) -> bool:
    """Whether the page's parts keep polling: while the run is queued or running, and briefly after."""
    if run.state in RUNNING:
        return True
    if run.state == ADAPTER_READY and run.updated_at:
        changed = datetime.fromisoformat(run.updated_at)
        changed = changed if changed.tzinfo else changed.replace(tzinfo=UTC)
        return ((now or datetime.now(UTC)) - changed).total_seconds() < SETTLING_SECONDS
    return False


def run_page_context(read_models: ReadModels, identity: Identity, run: RunDetail, *, tab: str) -> dict[str, Any]:
    rounds = read_models.rounds(identity.organization_id, run.id)
    return {
        "run": run,
        "live": is_live(run),
        "tab": tab,
        "rounds": rounds,
        "timeline": read_models.timeline(identity.organization_id, run.id) if tab == "timeline" else [],
        "settings": settings_rows(run),
        "time_left": time_left(run, rounds),
        "launch_confirmation": launch_confirmation(run),
        "chart": json.dumps(chart_data(rounds)),
        "identity": identity,
        "section": "runs",
    }


def settings_rows(run: RunDetail) -> list[tuple[str, str]]:
    """000's Run: Rounds, Prompts per round, Answers per prompt, Longest answer, Reward, Starts from."""
    rl = run.settings["training"]["rl"]
    return [
        ("Run", "Training trial" if run.kind == "trial" else "Full training"),
        ("Model", run.model),
        ("Rounds", "1 (a trial)" if run.kind == "trial" else str(rl["rounds"])),
        ("Prompts per round", str(rl["prompts_per_round"])),
        ("Answers per prompt", str(rl["answers_per_prompt"])),
        ("Longest sampled answer", f"{rl['max_answer_tokens']} tokens"),
        ("Reward", run.reward_label),
        (
            "Starts from",
            "the base model, with a new adapter" if run.start_run is None else str(run.start_run),
        ),
    ]


def time_left(run: RunDetail, rounds: list[RoundRow]) -> str:
    """Time left (est.): the mean time of the rounds trained so far, times the rounds still to go."""
    if run.state not in RUNNING:
        return ""
    trained = [r for r in rounds if r.round_number >= 1]
    if not trained:
        return "Estimated once the first round is scored"
    seconds = (
        sum(r.sampling_seconds + r.grading_seconds + r.update_seconds + r.validation_seconds for r in trained)
        / len(trained)
        * max(run.rounds_total - run.rounds_done, 0)
    )
    hours, rest = divmod(round(seconds), 3600)
    return f"{hours} h {rest // 60} min" if hours else f"{max(rest // 60, 1)} min"


def launch_confirmation(run: RunDetail) -> str:
    if run.kind == "trial":
        return trial_confirmation(RunDraft.from_saved(run.settings))
    return (
        f"A full run: {run.rounds_total} rounds, stopped by its time limit of "
        f"{run.settings['training']['time_limit_hours']:g} hours at the latest."
    )


def chart_data(rounds: list[RoundRow]) -> dict[str, list[Any]]:
    """The Reward chart's two lines by round, in percent; round 0 has validation only."""
    ordered = sorted(rounds, key=lambda r: r.round_number)
    return {
        "rounds": [r.round_number for r in ordered],
        "reward": [None if r.reward is None else round(r.reward * 100, 2) for r in ordered],
        "validation": [round(r.validation_reward * 100, 2) for r in ordered],
    }
