"""One evaluation: the base model (or the base with a run's adapter) answers each test example greedily, and the
evaluation's main metric scores every answer (domain/rewards, or the custom metric's sandbox).

`python -m trainer evaluate SPEC.json` writes progress records on stdout (one JSON line each):
`evaluation_started`, then `evaluation_completed` (score, breakdown, per-example results, and the custom metric's
failures when it had some) or `failed`; the per-example results also go to storage at
evaluations/<id>/results.jsonl. A custom metric that fails on an answer fails that answer's whole batch
(domain/rewards/batch_failures.py); one that fails on every answer fails the evaluation, which then has no score.
Model loading, sampling and the prompts' tokens are the run's own (trainer/model_loading.py, trainer/backends.py,
trainer/tokenizing.py), so an evaluation answers as a run's validation does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from domain.rewards.batch_failures import BatchScored, MetricFailures, fail_whole_batches
from domain.rewards.breakdown import breakdown
from domain.rewards.config import NOT_A_REWARD
from domain.rewards.types import AnswerScore, Grader
from trainer.progress import attempted, write_json_line
from trainer.spec import ModelRef, RewardSpec, Row, RunSpec, StartAdapter, Storage
from trainer.tokenizing import answer_text, prompt_ids

log = logging.getLogger(__name__)

PROMPT_CHARACTERS, TEXT_CHARACTERS = 1000, 600  # as the run page's samples shorten them
# How an evaluation, which trains nothing, loads the model and samples: its answers are greedy and one to a prompt;
# a new adapter (on the base model alone) is empty, so its size changes no answer; vLLM takes half the GPU.
EVALUATION_LOADING: dict[str, Any] = {
    "rounds": 0, "prompts_per_round": 1, "validation_sample_size": 0, "answers_per_prompt": 2,
    "learning_rate": 0.0, "micro_batch_size": 1, "lora_rank": 16, "lora_alpha": 32, "loss_type": "grpo",
    "vllm_gpu_memory": 0.5, "quantization": "none",
}


@dataclass(frozen=True)
class EvaluationSpec:
    """Everything one evaluation needs. `reward` is the scoring with its main metric as the metric."""

    evaluation_id: str
    model: ModelRef
    rows: list[Row]
    reward: RewardSpec
    storage: Storage
    adapter: StartAdapter | None = None
    max_answer_tokens: int = 64
    generation_backend: str | None = None
    seed: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvaluationSpec:
        return cls(
            evaluation_id=data["evaluation_id"],
            model=ModelRef(**data["model"]),
            rows=[Row(**row) for row in data["rows"]],
            reward=RewardSpec(**data["reward"]),
            storage=Storage(**data["storage"]),
            adapter=StartAdapter(**data["adapter"]) if data.get("adapter") else None,
            max_answer_tokens=int(data.get("max_answer_tokens", 64)),
            generation_backend=data.get("generation_backend"),
            seed=int(data.get("seed", 0)),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def as_run_spec(self) -> RunSpec:
        """The run spec the model loading and sampling of a run read (its rows are the test rows)."""
        return RunSpec(
            run_id=self.evaluation_id, model=self.model, reward=self.reward, train_rows=self.rows,
            validation_rows=self.rows, storage=self.storage, deadline=float("inf"), start_adapter=self.adapter,
            max_answer_tokens=self.max_answer_tokens, training_window=10**9,
            generation_backend=self.generation_backend, seed=self.seed,  # type: ignore[arg-type]
            **EVALUATION_LOADING,
        )


@dataclass(frozen=True)
class Outcome:
    score: float
    breakdown: dict[str, float]
    results: list[dict[str, Any]] = field(default_factory=list)
    metric_failures: dict[str, Any] | None = None  # MetricFailures.to_dict(), when the metric failed on any answer


class EvaluationFailed(RuntimeError):
    """The evaluation fails with this message, in words."""


Emit = Callable[[dict[str, Any]], None]


def evaluate(spec: EvaluationSpec, emit: Emit) -> bool:
    """Answer, score, write the results; every outcome is also a progress record. Returns whether it succeeded."""
    emit({"type": "evaluation_started", "examples": len(spec.rows)})
    outcome = attempted(lambda: _evaluate(spec), EvaluationFailed, "evaluation", emit)
    if outcome is None:
        return False
    location = _write_results(spec, outcome.results)
    emit({"type": "evaluation_completed", "score": outcome.score, "breakdown": outcome.breakdown,
          "results": outcome.results, "results_location": location, "metric_failures": outcome.metric_failures})
    return True


def _evaluate(spec: EvaluationSpec) -> Outcome:
    import torch

    from trainer.backends import make_backend
    from trainer.model_loading import load_policy, load_tokenizer

    metric = str(spec.reward.config.get("metric", ""))
    if metric in NOT_A_REWARD:
        raise EvaluationFailed(
            f"The {NOT_A_REWARD[metric]} needs a judge model, and this installation has none configured. "
            "Choose another main metric."
        )
    if not spec.rows:
        raise EvaluationFailed("The evaluation has no test examples.")
    grader = _grader(spec.reward)
    torch.manual_seed(spec.seed)
    run_spec = spec.as_run_spec()
    tokenizer = load_tokenizer(run_spec)
    policy = load_policy(run_spec, tokenizer)  # a new adapter starts at zero, so it answers as the base model
    backend = make_backend(run_spec, policy)
    prompts = [prompt_ids(tokenizer, row.prompt) for row in spec.rows]
    answers = [group[0] for group in backend.sample(prompts, 1, spec.max_answer_tokens, True, lambda: False)]
    texts = [answer_text(tokenizer, answer.token_ids) for answer in answers]
    cut_off = [answer.cut_off for answer in answers]
    try:
        scores, failures = score_all(grader, texts, [row.reference for row in spec.rows], cut_off)
    finally:
        if hasattr(grader, "close"):
            grader.close()
    if failures.failed:  # counts only: the metric's words may quote an answer, and logs never hold one
        log.info("the custom metric failed on %d of %d answers", failures.failed, failures.graded)
    if failures.every_answer:
        raise EvaluationFailed(failures.note())
    summary = breakdown([scored.score for scored in scores], texts, cut_off)
    results = [
        {
            "index": index,
            "prompt": _last_user_message(row.prompt)[:PROMPT_CHARACTERS],
            "reference": row.reference[:TEXT_CHARACTERS],
            "answer": text[:TEXT_CHARACTERS],
            "score": round(scored.score.value, 6),
            "parts": scored.score.parts,
            "cut_off": was_cut,
            "failure": scored.score.failure,
            "metric_error": scored.error,
        }
        for index, (row, text, scored, was_cut) in enumerate(zip(spec.rows, texts, scores, cut_off, strict=True))
    ]
    return Outcome(score=summary["score"], breakdown=summary, results=results,
                   metric_failures=failures.to_dict() if failures.failed else None)


def score_all(
    grader: Grader, texts: list[str], references: list[str], cut_off: list[bool]
) -> tuple[list[BatchScored], MetricFailures]:
    """Every answer's score, and the metric's failures. An answer cut off scores 0 without being graded (as in a
    run); a metric failure fails every answer of its batch of graded answers."""
    graded = [i for i, was_cut in enumerate(cut_off) if not was_cut]
    scores, details = _grade(grader, [texts[i] for i in graded], [references[i] for i in graded])
    judged, failures = fail_whole_batches(scores, details)
    results = [BatchScored(AnswerScore(0.0)) for _ in texts]
    for i, scored in zip(graded, judged, strict=True):
        results[i] = scored
    return results, failures


def _grade(grader: Grader, answers: list[str], references: list[str]) -> tuple[list[AnswerScore], list[str]]:
    """The scores, with the metric's words for each failure where the grader has them (a custom metric's sandbox;
    a built-in metric never fails)."""
    from trainer.sandbox import SandboxedMetric

    if isinstance(grader, SandboxedMetric):
        graded = grader.grade(answers, references)
        return [g.score for g in graded], [g.detail for g in graded]
    scores = grader.score_batch(answers, references)
    return scores, [""] * len(scores)


def _grader(reward: RewardSpec) -> Grader:
    from trainer.reward import build_reward

    try:
        return build_reward(reward)
    except ValueError as problem:
        raise EvaluationFailed(str(problem)) from None


def _last_user_message(messages: list[dict]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


def _write_results(spec: EvaluationSpec, results: list[dict[str, Any]]) -> str:
    from trainer.storage import open_storage

    lines = "".join(json.dumps(result) + "\n" for result in results).encode()
    return open_storage(spec.storage).put_bytes(f"evaluations/{spec.evaluation_id}/results.jsonl", lines)


def evaluate_from_file(path: str) -> int:
    spec = EvaluationSpec.from_dict(json.loads(Path(path).read_text()))
    return 0 if evaluate(spec, write_json_line) else 1
