"""What the run page shows, from the read models: the run, its rounds and metrics, samples, timeline, actions.

Each part of the page re-renders alone (an htmx partial). While the run is live (`RunDetail.live`) a part
polls every 2 s, sending the `stamp` of what it shows; when nothing changed the server answers 204 and htmx
swaps nothing. Once the run has ended, the part re-renders without its poll, and polling stops.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from app.runs.progress import progress_of
from app.runs.round_views import RoundViews
from app.runs.steps import loss_chart, objective_of
from app.shell.identity import Identity
from domain.runs import objectives
from domain.runs.launch_words import launch_confirmation as launch_confirmation_words
from domain.runs.launch_words import prompts_per_round_words
from domain.runs.messages import TRIAL_DID_NOT_FINISH
from domain.runs.objectives import OBJECTIVE_NAMES
from domain.runs.reward import training_prompts
from domain.runs.run_settings import OBJECTIVE_BLOCKS
from domain.runs.states import FINISHED_WITH_ADAPTER
from projections.rows import RunDetail, StepRow
from projections.store import ReadModels


def stamp(run: RunDetail) -> str:
    """Changes whenever anything the run page shows changes (every event of a run touches one of these)."""
    merge = run.merge["state"] if run.merge else None
    seen = (run.updated_at, run.state, run.rounds_done, run.trial_report is not None, run.adapter is not None, merge)
    return hashlib.blake2s(repr(seen).encode(), digest_size=6).hexdigest()


# The newest rows a table shows until its reader asks for all (Show all): a live page sends a few kilobytes a
# round rather than every round's row, log line and event (660 KB at 1,000 rounds); at most the rows kept of a run
# (app/runs/round_views.py)
ROUNDS_SHOWN = 50
LOG_LINES_SHOWN = 50
TIMELINE_SHOWN = 100
PARTS_WITH_TIME_LEFT = (None, "status")  # the status line, on its own or in a whole page (of any tab)


def run_page_context(
    read_models: ReadModels, identity: Identity, run: RunDetail, *, tab: str, show_all: bool = False,
    part: str | None = None,
) -> dict[str, Any]:
    """`part`: the one part drawn (None: a whole page, on any tab). `show_all`: the part shows every row (its reader
    chose Show all), not only the newest."""
    # what is drawn from the rounds is read and built when a template shows it, from what it shows alone: the
    # rows of the Rounds table, the Reward chart's points (app/runs/round_views.py)
    state = stamp(run)
    views = RoundViews(read_models, identity.organization_id, run.id, state, show_all=show_all)
    # the Timeline tab reads only the events it shows (the newest, unless Show all), and counts the others
    timeline_length = read_models.timeline_length(identity.organization_id, run.id) if tab == "timeline" else 0
    shown = None if show_all else TIMELINE_SHOWN
    timeline = read_models.timeline(identity.organization_id, run.id, shown) if timeline_length else []
    objective = objective_of(run)
    steps = read_models.steps(identity.organization_id, run.id) if tab == "overview" and objective != "rl" else []
    if objective != "rl" and run.live and not steps:  # the status line says the steps on every tab
        steps_for_status = read_models.steps(identity.organization_id, run.id)
    else:
        steps_for_status = steps
    return {
        "objective": objective,
        "steps": steps,
        "steps_chart": json.dumps(loss_chart(steps)),
        "run": run,
        "live": run.live,
        "stamp": state,
        "tab": tab,
        "timeline": timeline,
        "show_all": show_all,
        "rounds_shown": None if show_all else ROUNDS_SHOWN,  # None: every row (templates slice views.rounds)
        "log_lines_shown": None if show_all else LOG_LINES_SHOWN,
        "timeline_shown": len(timeline),
        "timeline_length": timeline_length,
        "settings": settings_rows(run),
        "progress": progress_of(run, objective, steps_for_status[0] if steps_for_status else None),
        "trial_finished": trial_finished(run),
        "trial_advice": trial_advice(run),
        "score_against_baseline": can_score_against_baseline(run),
        "refusal": None,  # a launch or retry refused: the words, shown beside the run's actions
        "plan_refused": False,  # ... by the plan: with Upgrade, or See plans (templates/auth/plan_notice.html)
        "time_left": shown_time_left(run, objective, views, steps_for_status) if part in PARTS_WITH_TIME_LEFT else "",
        "launch_confirmation": launch_confirmation(run),
        "views": views,
        "trial": trial_rows(run),
        "finished_with_adapter": run.state in FINISHED_WITH_ADAPTER and run.adapter is not None,
        "merge": run.merge,
        "merging": run.merge is not None and run.merge["state"] == "merging",
        "identity": identity,
        "section": "runs",
    }


def settings_rows(run: RunDetail) -> list[tuple[str, str]]:
    """000's Run: Rounds, Prompts per round, Answers per prompt, Longest sampled answer, Reward, Starts from."""
    settings = run.run_settings
    head = [
        ("Run", "Training trial" if run.kind == "trial" else "Full training"),
        ("Model", model_label(run.model)),
    ]
    if not objectives.is_rl(settings.objective):  # an SFT, DPO or Head run: the settings of its own block
        objective = settings.objective
        block = {name: getattr(settings, name) for name in OBJECTIVE_BLOCKS.get(objective, ())}
        return [*head, ("Objective", OBJECTIVE_NAMES.get(objective, objective.upper()))] + [
            (key.replace("_", " ").capitalize(), str(value)) for key, value in block.items() if value is not None
        ]
    passes = (  # several passes a round, the ratio clipped: shown only then (one pass is the product's GRPO)
        [("Epochs", f"{settings.rl_epochs} passes a round, ratio clipped to "
          f"{1 - settings.clip_low:g}-{1 + settings.clip_high:g}")] if settings.rl_epochs > 1 else []
    )
    return [
        *head,
        ("Rounds", "1 (a trial)" if run.kind == "trial" else str(settings.rounds)),
        ("Prompts per round", prompts_per_round_words(settings)),
        ("Answers per prompt", str(settings.answers_per_prompt)),
        ("Longest sampled answer", f"{settings.max_answer_tokens} tokens"),
        *passes,
        ("Reward", run.reward_label or "—"),  # the projection words it (domain.runs.reward.reward_label)
        ("Training prompts", training_prompts(settings.reward, settings.dataset_version)),
        ("Starts from", "the base model" if run.start_run is None else run.start_run_name),
    ]


def model_label(model: str) -> str:
    """A model as people name it: a hub id as is, a local folder by its own name.

    >>> model_label("/srv/verity/data/models/tiny-math"), model_label("Qwen/Qwen2.5-0.5B-Instruct")
    ('tiny-math', 'Qwen/Qwen2.5-0.5B-Instruct')
    """
    return model.rstrip("/").rsplit("/", 1)[-1] if model.startswith(("/", ".")) else model


def duration(seconds: float) -> str:
    """
    >>> duration(30), duration(100), duration(3 * 3600 + 120)
    ('1 min', '2 min', '3 h 2 min')
    """
    hours, rest = divmod(round(seconds), 3600)
    return f"{hours} h {rest // 60} min" if hours else f"{max(round(rest / 60), 1)} min"


def shown_time_left(run: RunDetail, objective: str, views: RoundViews, steps: list[StepRow]) -> str:
    """The status line's Time left (est.), in rounds for RL and in steps for SFT, DPO and Head."""
    if objective != "rl":
        return steps_time_left(run, steps)
    return time_left(run, views.trained_time)


def time_left(run: RunDetail, trained: Callable[[], tuple[int, float]]) -> str:
    """Time left (est.): the mean time of the rounds trained so far (`trained`: how many, and their seconds; asked
    only while the run trains), times the rounds still to go."""
    if run.state not in ("preparing", "training"):
        return ""
    rounds, seconds = trained()
    if not rounds:
        return "estimated once the first round is scored"
    return duration(seconds / rounds * max(run.rounds_total - run.rounds_done, 0))


def steps_time_left(run: RunDetail, steps: list[StepRow]) -> str:
    """An SFT, DPO or Head run's Time left (est.): the seconds per step so far, times the steps still to go."""
    if run.state not in ("preparing", "training"):
        return ""
    if not steps or not steps[0].step:
        return "estimated once the first step is logged"
    latest = steps[0]
    return duration(latest.seconds / latest.step * max(latest.steps - latest.step, 0))


def launch_confirmation(run: RunDetail) -> str:
    """In the objective's own words: rounds for RL, epochs and steps for SFT, DPO and Head."""
    return launch_confirmation_words(run.run_settings)


def trial_rows(run: RunDetail) -> list[tuple[str, str]]:
    """000's Training trial report: the tiles, the seconds of each part, and the full run's estimate."""
    report = run.trial_report
    if not report:
        return []

    def seconds(key: str) -> str:
        value = report.get(key)
        return "—" if value is None else f"{value:.1f} s"

    rows = [
        ("Formatting", report.get("formatting") or "—"),
        ("Seconds per round", seconds("seconds_per_round")),
        peak_memory_row(report),
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


def peak_memory_row(report: dict[str, Any]) -> tuple[str, str]:
    """What the trainer measured: a GPU's peak allocation of its total, or, on a machine with no GPU (no total),
    the training process's peak resident memory, named as such.

    >>> peak_memory_row({"peak_memory_bytes": 3 * 2**30, "gpu_memory_bytes": 80 * 2**30})
    ('Peak GPU memory', '3.00 GiB of 80 GiB (4%)')
    >>> peak_memory_row({"peak_memory_bytes": 3 * 2**29, "gpu_memory_bytes": None})
    ('Peak memory (CPU, process)', '1.50 GiB')
    """
    peak, total = report.get("peak_memory_bytes"), report.get("gpu_memory_bytes")
    if not total:
        return ("Peak memory (CPU, process)", f"{peak / 2**30:.2f} GiB" if peak else "—")
    memory = f"{peak / 2**30:.2f} GiB of {total / 2**30:.0f} GiB ({peak / total:.0%})" if peak else "—"
    return ("Peak GPU memory", memory)


def trial_finished(run: RunDetail) -> bool:
    """A trial finished when it ended well and its report says so: only then is its estimate worth a full run."""
    report = run.trial_report or {}
    return run.kind == "trial" and not run.live and run.state not in ("draft", "failed", "cancelled") and bool(
        report.get("finished")
    )


def trial_advice(run: RunDetail) -> list[str]:
    """The advice under the Training trial report. A trial that ended without finishing says so (000), also when
    the trainer never got to report: its data would not load, its worker died, or it was cancelled."""
    if run.kind != "trial":
        return []
    advice = list((run.trial_report or {}).get("advice") or [])
    ended = not run.live and run.state != "draft"
    if ended and not trial_finished(run) and TRIAL_DID_NOT_FINISH not in advice:
        advice.append(TRIAL_DID_NOT_FINISH)
    return advice


def can_score_against_baseline(run: RunDetail) -> bool:
    """000's Score against baseline: a finished full run's adapter, against the baseline it names."""
    return (
        run.kind == "full"
        and run.state in FINISHED_WITH_ADAPTER
        and run.adapter is not None
        and bool(run.run_settings.baseline)
    )
