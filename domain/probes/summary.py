"""What a scored probe keeps in its event: a few numbers for the whole probe and a few per prompt, never the
answers (those go to a file in the organization's storage, `answers_key`).

The trainer measures it (trainer/probe.py); the domain checks its shape here before it is recorded:

- `prompts`, `answers_per_prompt`, `answers`, `graded`: how many of each;
- `varied_prompts` / `varied_share`: prompts whose answers did not all score the same (the signal GRPO would have);
- `mean_score`, `histogram` (HISTOGRAM_BINS counts of answers by score: [0, 0.1), ..., [0.9, 1.0]),
  `cut_off_share`, `metric_failures` and `failures_by_kind`;
- `grading_seconds_per_answer` ({"median", "p95"} over the prompts, each prompt's answers graded together),
  `sampling_seconds`, `grading_seconds`, and `sandbox_batches` (a custom metric's batches by outcome, or None);
- `per_prompt`: parallel lists, one item per prompt in the order sampled: `index` (in the source's prompts),
  `mean`, `spread` (highest minus lowest score), `std` (the scores' standard deviation) and `varied`;
- `answers_key`: the answers file's key in the storage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HISTOGRAM_BINS = 10
PER_PROMPT = ("index", "mean", "spread", "std", "varied")


def answers_key(probe_id: str) -> str:
    """
    >>> answers_key("p1")
    'probes/p1/answers.jsonl'
    """
    return f"probes/{probe_id}/answers.jsonl"


def histogram_bin(score: float) -> int:
    """The bin of a score in [0, 1]; 1.0 goes in the last.

    >>> [histogram_bin(s) for s in (0.0, 0.05, 0.1, 0.95, 1.0)]
    [0, 0, 1, 9, 9]
    """
    return min(int(score * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)


def _share(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"A probe's {name} is a share from 0 to 1, not {value!r}.")
    return float(value)


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"A probe's {name} is a count, not {value!r}.")
    return value


def checked_summary(summary: Mapping[str, Any], most_prompts: int, answers_per_prompt: int) -> dict[str, Any]:
    """The summary as recorded, or ValueError in words: at most the probe's prompts, its answers per prompt.

    >>> good = {"prompts": 2, "answers_per_prompt": 2, "answers": 4, "graded": 4, "varied_prompts": 1,
    ...         "varied_share": 0.5, "mean_score": 0.25, "histogram": [3, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    ...         "cut_off_share": 0.0, "metric_failures": 0, "failures_by_kind": {},
    ...         "grading_seconds_per_answer": {"median": 0.001, "p95": 0.002}, "sampling_seconds": 1.5,
    ...         "grading_seconds": 0.004, "sandbox_batches": None, "answers_key": "probes/p/answers.jsonl",
    ...         "per_prompt": {"index": [3, 0], "mean": [0.5, 0.0], "spread": [1.0, 0.0], "std": [0.5, 0.0],
    ...                        "varied": [True, False]}}
    >>> checked_summary(good, 2, 2)["varied_share"]
    0.5
    >>> checked_summary({**good, "prompts": 3}, 2, 2)
    Traceback (most recent call last):
    ...
    ValueError: A probe of at most 2 prompts can't report 3.
    """
    prompts = _count(summary.get("prompts"), "prompt count")
    if not 1 <= prompts <= most_prompts:
        raise ValueError(f"A probe of at most {most_prompts} prompts can't report {prompts}.")
    if summary.get("answers_per_prompt") != answers_per_prompt:
        raise ValueError(f"The probe samples {answers_per_prompt} answers per prompt.")
    answers = _count(summary.get("answers"), "answer count")
    if answers != prompts * answers_per_prompt:
        raise ValueError("A probe's answers are its prompts times its answers per prompt.")
    histogram = summary.get("histogram")
    if not isinstance(histogram, list) or len(histogram) != HISTOGRAM_BINS or sum(
            _count(n, "histogram count") for n in histogram) != answers:
        raise ValueError(f"A probe's histogram has {HISTOGRAM_BINS} counts that add up to its answers.")
    per_prompt = summary.get("per_prompt")
    if not isinstance(per_prompt, Mapping) or any(
            not isinstance(per_prompt.get(key), list) or len(per_prompt[key]) != prompts for key in PER_PROMPT):
        raise ValueError(f"A probe's per-prompt numbers ({', '.join(PER_PROMPT)}) have one item per prompt.")
    varied = _count(summary.get("varied_prompts"), "varied prompt count")
    if varied != sum(bool(v) for v in per_prompt["varied"]):
        raise ValueError("A probe's varied prompts are those its per-prompt numbers mark varied.")
    seconds = summary.get("grading_seconds_per_answer")
    if not isinstance(seconds, Mapping) or not {"median", "p95"} <= set(seconds):
        raise ValueError("A probe's grading seconds per answer give a median and a 95th percentile.")
    kinds = summary.get("failures_by_kind") or {}
    if not isinstance(kinds, Mapping):
        raise ValueError("A probe's metric failures by kind are counts by kind.")
    return {
        "prompts": prompts,
        "answers_per_prompt": answers_per_prompt,
        "answers": answers,
        "graded": _count(summary.get("graded"), "graded answer count"),
        "varied_prompts": varied,
        "varied_share": _share(summary.get("varied_share"), "varied share"),
        "mean_score": _share(summary.get("mean_score"), "mean score"),
        "histogram": [int(n) for n in histogram],
        "cut_off_share": _share(summary.get("cut_off_share"), "cut-off share"),
        "metric_failures": _count(summary.get("metric_failures"), "metric failure count"),
        "failures_by_kind": {str(k): _count(v, "failure count") for k, v in kinds.items()},
        "grading_seconds_per_answer": {"median": float(seconds["median"]), "p95": float(seconds["p95"])},
        "sampling_seconds": float(summary.get("sampling_seconds") or 0.0),
        "grading_seconds": float(summary.get("grading_seconds") or 0.0),
        "sandbox_batches": dict(summary["sandbox_batches"]) if summary.get("sandbox_batches") else None,
        "answers_key": str(summary.get("answers_key") or ""),
        "per_prompt": {
            "index": [int(i) for i in per_prompt["index"]],
            "mean": [float(m) for m in per_prompt["mean"]],
            "spread": [float(s) for s in per_prompt["spread"]],
            "std": [float(s) for s in per_prompt["std"]],
            "varied": [bool(v) for v in per_prompt["varied"]],
        },
    }
