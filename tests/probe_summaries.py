"""A scored probe's summary as the jobs record it (domain/probes/summary.py), for tests that need a probe scored
without sampling: the probe's own tests, the re-scorings of a probe's answers, the walk of every route."""

from __future__ import annotations

from uuid import UUID

from domain.probes.summary import answers_key


def summary(probe_id: UUID, varied: list[bool], prompts: int = 2) -> dict:
    """Two prompts of four answers each by default; `varied[i]`: whether prompt i's answers differ."""
    return {
        "prompts": prompts, "answers_per_prompt": 4, "answers": prompts * 4, "graded": prompts * 4,
        "varied_prompts": sum(varied), "varied_share": sum(varied) / prompts, "mean_score": 0.25,
        "histogram": [prompts * 4 - 2, 0, 0, 0, 0, 0, 0, 0, 0, 2], "cut_off_share": 0.0, "metric_failures": 0,
        "failures_by_kind": {}, "grading_seconds_per_answer": {"median": 0.001, "p95": 0.002},
        "sampling_seconds": 1.0, "grading_seconds": 0.01, "sandbox_batches": None,
        "answers_key": answers_key(str(probe_id)),
        "per_prompt": {"index": list(range(prompts)), "mean": [0.5 if v else 0.0 for v in varied],
                       "spread": [1.0 if v else 0.0 for v in varied], "std": [0.5 if v else 0.0 for v in varied],
                       "varied": varied},
    }
