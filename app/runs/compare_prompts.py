"""The prompts compared runs all drew: how often each run drew it and its mean score in each, and, opened, each
round's answers of every run side by side, read from the rollout files as the Prompts tab reads them.

A prompt is named by its number in the runs' training prompts, so prompts compare only where that number names the
same prompt in every run (app/runs/compare_settings.py's prompts_apart).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from app.runs.compare import ComparedRun
from app.runs.compare_settings import prompts_apart
from app.runs.prompts import ANSWERS_SHOWN, PROMPTS_SHOWN
from app.runs.samples import PromptSample, SamplesUnreadable, read_prompt
from projections.prompt_reads import PromptDrawRow, PromptHistoryRow
from projections.store import ReadModels


@dataclass(frozen=True)
class SharedPrompt:
    """A prompt every compared run drew: its history in each run, in the runs' order."""

    prompt_index: int
    histories: list[PromptHistoryRow]

    @property
    def draws(self) -> int:
        return sum(history.draws for history in self.histories)


@dataclass(frozen=True)
class SharedPrompts:
    prompts: list[SharedPrompt]  # the most drawn first
    apart: str | None  # why no prompt is compared, when a prompt number names different prompts in the runs


def shared_prompts(read_models: ReadModels, org_id: UUID, runs: Sequence[ComparedRun]) -> SharedPrompts:
    apart = prompts_apart([run.settings for run in runs])
    if apart is not None:
        return SharedPrompts([], apart)
    histories = [{h.prompt_index: h for h in read_models.prompt_histories(org_id, run.run.id)} for run in runs]
    common = set(histories[0]).intersection(*histories[1:])
    prompts = [SharedPrompt(index, [history[index] for history in histories]) for index in common]
    return SharedPrompts(sorted(prompts, key=lambda p: (-p.draws, p.prompt_index)), None)


def shared_prompts_json(shared: SharedPrompts, runs: Sequence[ComparedRun]) -> dict[str, Any]:
    return {
        "apart": shared.apart,
        "shared": [
            {"index": prompt.prompt_index, "runs": [
                {"run_id": str(run.run.id), "times_drawn": history.draws, "mean_score": history.mean_score,
                 "pass_share": history.pass_share, "verdict": history.verdict}
                for run, history in zip(runs, prompt.histories, strict=True)
            ]}
            for prompt in shared.prompts
        ],
    }


def shared_prompts_context(shared: SharedPrompts) -> dict[str, Any]:
    return {"shared_prompts": shared.prompts[:PROMPTS_SHOWN], "shared_prompts_total": len(shared.prompts),
            "prompts_apart": shared.apart}


@dataclass(frozen=True)
class RunAnswers:
    """One run's draw of the prompt in a round, with its answers (or why they could not be read); no draw when the
    run did not draw it that round."""

    run: ComparedRun
    draw: PromptDrawRow | None
    sample: PromptSample | None = None
    error: str | None = None


@dataclass(frozen=True)
class ComparedRound:
    round_number: int
    answers: list[RunAnswers]  # one a run, in the runs' order


def opened_shared_prompt(read_models: ReadModels, org_id: UUID, runs: Sequence[ComparedRun], storage: Any,
                         prompt_index: int, show_all: bool) -> dict[str, Any] | None:
    """An opened prompt: round by round (newest first), each run's answers side by side with their scores; the
    newest rounds only until Show all. None when some run never drew it (or prompts are not compared)."""
    if prompts_apart([run.settings for run in runs]) is not None:
        return None
    draws = [read_models.prompt_draws(org_id, run.run.id, prompt_index).get(prompt_index) or [] for run in runs]
    if not all(draws):
        return None
    by_round = [{draw.round_number: draw for draw in run_draws} for run_draws in draws]
    numbers = sorted({number for drawn in by_round for number in drawn}, reverse=True)
    read = numbers if show_all else numbers[:ANSWERS_SHOWN]
    files = [read_models.samples(org_id, run.run.id) for run in runs]
    rounds = [
        ComparedRound(number, [_answers(storage, run, run_files, drawn.get(number))
                               for run, run_files, drawn in zip(runs, files, by_round, strict=True)])
        for number in read
    ]
    samples = (a.sample for r in rounds for a in r.answers if a.sample is not None)
    return {
        "prompt_index": prompt_index,
        "compared_rounds": rounds,
        "rounds_hidden": len(numbers) - len(read),
        "rounds_total": len(numbers),
        "prompt_text": next(samples, None),
    }


def _answers(storage: Any, run: ComparedRun, files: list[Any], draw: PromptDrawRow | None) -> RunAnswers:
    if draw is None:
        return RunAnswers(run, None)
    try:
        return RunAnswers(run, draw, read_prompt(storage, files, draw.round_number, draw.position))
    except SamplesUnreadable as problem:
        return RunAnswers(run, draw, error=str(problem))
