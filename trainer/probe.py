"""A reward probe: the prompts a run's first round would take, `answers_per_prompt` answers to each sampled once as
a round samples them, every answer scored with the reward, and what that tells of the signal GRPO would have.

`python -m trainer probe SPEC.json` writes progress records on stdout (one JSON line each): `probe_started`, then
`probe_scored` (the summary, domain/probes/summary.py) or `failed` (in words). The answers go to storage at
probes/<id>/answers.jsonl, one line per prompt, as a rollout file's (trainer/rollouts.py). Loading, sampling and
scoring are the run's own (trainer/model_loading.py, trainer/backends.py, trainer/scoring.py), and the prompts are
the ones a run with the same seed and Prompts per round draws first (trainer/schedule.py), so a probe sees what a
run's round 1 would see, within sampling noise.
"""

from __future__ import annotations

import json
import logging
import statistics
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from domain.rewards.config import NOT_A_REWARD
from trainer.progress import attempted, write_json_line
from trainer.score_rules import nearest_rank
from trainer.spec import ModelRef, RewardSpec, Row, RunSpec, StartAdapter, Storage

log = logging.getLogger(__name__)

HISTOGRAM_BINS = 10  # as domain/probes/summary.py checks it
# How a probe, which trains nothing, loads the model (as an evaluation does): a new adapter on the base model is
# empty, so its size changes no answer.
PROBE_LOADING: dict[str, Any] = {
    "rounds": 0, "validation_sample_size": 0, "learning_rate": 0.0, "micro_batch_size": 1, "lora_rank": 16,
    "lora_alpha": 32, "loss_type": "grpo", "vllm_gpu_memory": 0.5, "quantization": "none",
}


@dataclass(frozen=True)
class ProbeSpec:
    """Everything one probe needs. `rows`: the source's prompts (a run's training rows); the probe takes `prompts`
    of them as a run's first round with this seed would."""

    probe_id: str
    model: ModelRef
    rows: list[Row]
    reward: RewardSpec
    storage: Storage
    prompts: int
    answers_per_prompt: int
    max_answer_tokens: int
    seed: int = 0
    adapter: StartAdapter | None = None
    generation_backend: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProbeSpec:
        return cls(
            probe_id=data["probe_id"], model=ModelRef(**data["model"]), rows=[Row(**row) for row in data["rows"]],
            reward=RewardSpec(**data["reward"]), storage=Storage(**data["storage"]), prompts=int(data["prompts"]),
            answers_per_prompt=int(data["answers_per_prompt"]), max_answer_tokens=int(data["max_answer_tokens"]),
            seed=int(data.get("seed", 0)), adapter=StartAdapter(**data["adapter"]) if data.get("adapter") else None,
            generation_backend=data.get("generation_backend"),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def as_run_spec(self) -> RunSpec:
        """The run spec the model loading and sampling of a run read."""
        return RunSpec(
            run_id=self.probe_id, model=self.model, reward=self.reward, train_rows=self.rows,
            validation_rows=self.rows, storage=self.storage, deadline=float("inf"), start_adapter=self.adapter,
            prompts_per_round=self.prompts, answers_per_prompt=self.answers_per_prompt,
            max_answer_tokens=self.max_answer_tokens, training_window=10**9,
            generation_backend=self.generation_backend, seed=self.seed,  # type: ignore[arg-type]
            **PROBE_LOADING,
        )


class ProbeFailed(RuntimeError):
    """The probe fails with this message, in words."""


def probe(spec: ProbeSpec, emit=write_json_line) -> bool:
    """Sample, score, write the answers; every outcome is also a progress record. Returns whether it succeeded."""
    emit({"type": "probe_started", "prompts": spec.prompts})
    summary = attempted(lambda: _probe(spec), ProbeFailed, "probe", emit)
    if summary is None:
        return False
    emit({"type": "probe_scored", "summary": summary})
    return True


def _probe(spec: ProbeSpec) -> dict[str, Any]:
    import torch

    from trainer.backends import make_backend
    from trainer.failures import RunFailed
    from trainer.model_loading import PolicyUnloadable, StartAdapterMismatch, load_policy, load_tokenizer
    from trainer.reward import build_reward, try_reward_on_reference
    from trainer.sampling import SamplingOutOfMemory
    from trainer.schedule import PromptSchedule
    from trainer.tokenizing import prompt_ids

    metric = str(spec.reward.config.get("metric", ""))
    if metric in NOT_A_REWARD:
        raise ProbeFailed(f"The {NOT_A_REWARD[metric]} can't be an RL reward. Choose a reward metric.")
    if not spec.rows:
        raise ProbeFailed("The probe has no prompts to sample.")
    try:
        grader = build_reward(spec.reward)
        try_reward_on_reference(spec.reward, grader, spec.rows[0].reference)  # as a run does, before the model
    except ValueError as problem:
        raise ProbeFailed(str(problem)) from None
    try:
        torch.manual_seed(spec.seed)
        run_spec = spec.as_run_spec()
        tokenizer = load_tokenizer(run_spec)
        try:
            policy = load_policy(run_spec, tokenizer, trains="linear")  # as a run loads it
        except (StartAdapterMismatch, PolicyUnloadable) as problem:
            raise ProbeFailed(str(problem)) from None
        try:
            backend = make_backend(run_spec, policy)
        except RunFailed as problem:
            raise ProbeFailed(str(problem)) from None
        indices = PromptSchedule(len(spec.rows), spec.prompts, spec.seed).next_round()  # a run's round 1
        rows = [spec.rows[i] for i in indices]
        # the worker's log says when loading ended and sampling began (a cancel's story reads from it)
        log.info("sampling %d prompts × %d answers of up to %d tokens", len(rows), spec.answers_per_prompt,
                 spec.max_answer_tokens)
        started = time.perf_counter()
        try:
            answers = backend.sample([prompt_ids(tokenizer, row.prompt) for row in rows], spec.answers_per_prompt,
                                     spec.max_answer_tokens, False, lambda: False)
        except SamplingOutOfMemory:
            raise ProbeFailed(
                f"Sampling {spec.answers_per_prompt} answers of up to {spec.max_answer_tokens} tokens does not fit "
                "in this GPU's memory. Choose fewer answers per prompt or a shorter longest sampled answer."
            ) from None
        sampling_seconds = time.perf_counter() - started
        graded = _grade_each_prompt(tokenizer, grader, answers, [row.reference for row in rows])
    finally:
        if "grader" in locals() and hasattr(grader, "close"):
            grader.close()  # a custom metric's sandbox processes
    summary = probe_summary(indices, graded, sampling_seconds)
    summary["answers_key"] = _write_answers(spec, rows, graded)
    return summary


@dataclass
class GradedPrompt:
    """One prompt's answers and their scores (trainer/scoring.py's ScoredRound of one prompt), and the seconds the
    grading of its answers took."""

    scored: Any  # ScoredRound
    seconds: float


def _grade_each_prompt(tokenizer, grader, answers, references) -> list[GradedPrompt]:
    """Each prompt's answers graded together, timed apart: the grading seconds per answer come as a distribution."""
    from trainer.scoring import score_answers

    graded = []
    for group, reference in zip(answers, references, strict=True):
        started = time.perf_counter()
        scored = score_answers(tokenizer, grader, [group], [reference])
        graded.append(GradedPrompt(scored, time.perf_counter() - started))
    return graded


def probe_summary(indices: list[int], graded: list[GradedPrompt], sampling_seconds: float) -> dict[str, Any]:
    """The numbers a probe's event keeps (domain/probes/summary.py), less the answers' key.

    >>> import torch
    >>> from trainer.sampling import SampledAnswer
    >>> from trainer.scoring import ScoredRound
    >>> def prompt(scores, cut=(False, False)):
    ...     answers = [[SampledAnswer([1, 2], c) for c in cut]]
    ...     return GradedPrompt(ScoredRound([], answers, [], torch.tensor([scores]), [[None, None]], 2), 0.002)
    >>> s = probe_summary([4, 1], [prompt([1.0, 0.0]), prompt([0.0, 0.0], (True, False))], 1.25)
    >>> s["varied_prompts"], s["varied_share"], s["mean_score"], s["cut_off_share"], s["histogram"]
    (1, 0.5, 0.25, 0.25, [3, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    >>> s["per_prompt"]
    {'index': [4, 1], 'mean': [0.5, 0.0], 'spread': [1.0, 0.0], 'std': [0.5, 0.0], 'varied': [True, False]}
    """
    from trainer.grpo import varied_groups

    scores = [[float(r) for r in g.scored.rewards[0]] for g in graded]  # [prompts][answers]
    flat = [s for group in scores for s in group]
    varied = [bool(v) for g in graded for v in varied_groups(g.scored.rewards)]
    histogram = [0] * HISTOGRAM_BINS
    for score in flat:
        histogram[min(int(score * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)] += 1
    failures: Counter[str] = Counter()
    batches: Counter[str] | None = None
    for g in graded:
        failures.update(g.scored.failures_by_kind or {})
        if g.scored.sandbox_batches is not None:
            batches = (batches or Counter()) + Counter(g.scored.sandbox_batches)
    answers = len(flat)
    per_answer = sorted(g.seconds / max(len(g.scored.answers[0]), 1) for g in graded)
    return {
        "prompts": len(graded),
        "answers_per_prompt": len(scores[0]) if scores else 0,
        "answers": answers,
        "graded": sum(g.scored.graded for g in graded),
        "varied_prompts": sum(varied),
        "varied_share": sum(varied) / len(varied) if varied else 0.0,
        "mean_score": round(sum(flat) / answers, 6) if answers else 0.0,
        "histogram": histogram,
        "cut_off_share": sum(a.cut_off for g in graded for a in g.scored.answers[0]) / answers if answers else 0.0,
        "metric_failures": sum(failures.values()),
        "failures_by_kind": dict(sorted(failures.items())),
        "grading_seconds_per_answer": {"median": round(statistics.median(per_answer), 6) if per_answer else 0.0,
                                       "p95": round(nearest_rank(per_answer, 0.95), 6)},
        "sampling_seconds": round(sampling_seconds, 4),
        "grading_seconds": round(sum(g.seconds for g in graded), 4),
        "sandbox_batches": dict(sorted(batches.items())) if batches is not None else None,
        "per_prompt": {
            "index": list(indices),
            "mean": [round(statistics.fmean(group), 4) for group in scores],
            "spread": [round(max(group) - min(group), 4) for group in scores],
            "std": [round(statistics.pstdev(group), 4) for group in scores],
            "varied": varied,
        },
    }


def _write_answers(spec: ProbeSpec, rows: list[Row], graded: list[GradedPrompt]) -> str:
    """The answers file, a rollout file's lines (trainer/rollouts.py); → its key in the storage."""
    from trainer.rollouts import rollout_lines
    from trainer.storage import open_storage

    key = f"probes/{spec.probe_id}/answers.jsonl"
    lines = "".join(rollout_lines([row], g.scored) for row, g in zip(rows, graded, strict=True))
    open_storage(spec.storage).put_bytes(key, lines.encode())
    return key


def probe_from_file(path: str) -> int:
    spec = ProbeSpec.from_dict(json.loads(Path(path).read_text()))
    return 0 if probe(spec) else 1
