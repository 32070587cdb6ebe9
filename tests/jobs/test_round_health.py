"""A round's reward health (its metric failures by kind, a custom metric's sandbox batches by outcome) travels from
the trainer's progress line to the RoundResult the Run.RoundScored event holds; a round recorded before has none."""

from __future__ import annotations

import csv
import io
import json
from uuid import uuid4

from app.runs.exports import rounds_csv
from domain.runs.progress import RoundResult
from jobs.recording import round_result
from projections.rows import RoundRow
from trainer.progress import PhaseSeconds, RoundScored, record_from_dict, record_to_dict


def test_a_rounds_failures_by_kind_and_sandbox_batches_reach_the_run_event() -> None:
    record = RoundScored(
        round=3, rounds=20, reward=0.41, signal=0.62, cut_off=0.02, metric_failures=10, graded_answers=128,
        failure_kinds=["execution", "timeout"], updated=True, loss=0.012, validation_reward=0.47, best_round=3,
        seconds=PhaseSeconds(81.2, 2.1, 64.0, 9.5), mean_answer_tokens=4.0, token_entropy=1.0, peak_memory_bytes=0,
        failures_by_kind={"execution": 2, "timeout": 8}, sandbox_batches={"execution": 1, "scored": 14, "timeout": 1},
    )
    line = json.loads(json.dumps(record_to_dict(record)))  # as the supervisor reads the trainer's stdout

    result = round_result(record_from_dict(line))  # type: ignore[arg-type]

    assert result.failures_by_kind == {"execution": 2, "timeout": 8}
    assert result.sandbox_batches == {"execution": 1, "scored": 14, "timeout": 1}
    stored_before = {key: value for key, value in result.to_dict().items()
                     if key not in ("failures_by_kind", "sandbox_batches")}
    assert RoundResult.from_dict(stored_before).failures_by_kind is None
    assert RoundResult.from_dict(stored_before).sandbox_batches is None


def test_rounds_csv_writes_counts_by_kind_as_json() -> None:
    rows = [RoundRow(
        run_id=uuid4(), round_number=1, rounds_total=2, reward=0.4, signal=0.5, cut_off=0.0, metric_failures=2,
        updated=True, loss=0.01, validation_reward=0.5, best_round=1, sampling_seconds=1.0, grading_seconds=1.0,
        update_seconds=1.0, validation_seconds=1.0, mean_answer_tokens=4.0, token_entropy=1.0, peak_memory_bytes=0,
        scored_at="2026-12-05T00:00:00+00:00", failures_by_kind={"timeout": 2},
        sandbox_batches=3, sandbox_failed_batches={"timeout": 1},
    )]
    (line,) = csv.DictReader(io.StringIO(rounds_csv(rows)))
    assert json.loads(line["failures_by_kind"]) == {"timeout": 2} and line["sandbox_batches"] == "3"
    assert json.loads(line["sandbox_failed_batches"]) == {"timeout": 1}
